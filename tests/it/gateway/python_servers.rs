//! MCP servers on PyPI behind the gateway, as their users run them: `mcp-server-sqlite`
//! (on the MCP Python SDK 1.x, which has no `resources/templates/list` handler and
//! answers it with `-32601`), `mcp-server-time` and `mcp-server-git`, each left to find
//! its own protocol era. The Python SDK's client lists and calls them through the gateway.

use std::path::Path;

use serde_json::{Value, json};

use super::{listed, python_with_stderr, text_of};
use crate::Home;

/// A git repository in `dir` with one commit of `README.md`.
fn git_repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(status.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&status.stderr));
    };
    git(&["init", "--quiet"]);
    git(&["add", "README.md"]);
    git(&["commit", "--quiet", "-m", "The first commit"]);
}

#[test]
fn sqlite_time_and_git_servers_from_pypi_are_listed_and_called_through_the_gateway() {
    let home = Home::new();
    let repository = home.path().join("repository");
    git_repository(&repository);
    let sqlite_python = test_peers::mcp_server_sqlite_python_or_panic();
    let python = test_peers::mcp_servers_time_git_python_or_panic();
    // The database's folder is the one its sandbox lets it write.
    let data = home.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let database = data.join("test.db");
    let home = home.with_config(&format!(
        "storage: {{backend: memory}}
compiled: {{memory: {{enabled: false}}}}
skills: {{packs: []}}
mcp:
  servers:
    sqlite:
      command: {sqlite_python}
      args: [-c, 'from mcp_server_sqlite import main; main()', --db-path, {database}]
      sandbox: {{write: [{data}]}}
    time:
      command: {python}
      args: [-m, mcp_server_time, --local-timezone, Europe/Paris]
    git:
      command: {python}
      args: [-m, mcp_server_git, --repository, {repository}]
",
        sqlite_python = sqlite_python.display(),
        python = python.display(),
        database = database.display(),
        data = data.display(),
        repository = repository.display(),
    ));
    let repo_path = repository.to_str().unwrap();
    let plan = json!({
        "calls": [
            ["sqlite__create_table", {"query": "CREATE TABLE cities (name TEXT, country TEXT)"}],
            ["sqlite__write_query", {"query": "INSERT INTO cities VALUES ('Lyon', 'France')"}],
            ["sqlite__read_query", {"query": "SELECT name, country FROM cities"}],
            ["time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}],
            ["git__git_status", {"repo_path": repo_path}],
            ["git__git_log", {"repo_path": repo_path}]
        ],
        "prompts": [["sqlite__mcp-demo", {"topic": "cities"}]],
    });
    let omniagent = env!("CARGO_BIN_EXE_omniagent");
    let home_dir = home.path().to_str().unwrap();
    let (out, stderr) =
        python_with_stderr("legacy", &["stdio", omniagent, "mcp", "serve"], plan, &[("OMNIAGENT_HOME", home_dir)]);

    // mcp-server-sqlite: its six tools, its prompt and its resource, though it fails
    // resources/templates/list (logged once, and counted as no templates).
    let tools = listed(&out, "tools", "name");
    let sqlite_tools: Vec<&str> = tools.iter().filter_map(|name| name.strip_prefix("sqlite__")).collect();
    assert_eq!(sqlite_tools, test_peers::MCP_SERVER_SQLITE_TOOLS, "{tools:?}\n{stderr}");
    let of_sqlite = |list: &str, field: &str, prefix: &str| -> Vec<String> {
        listed(&out, list, field).into_iter().filter(|name| name.starts_with(prefix)).map(str::to_owned).collect()
    };
    assert_eq!(of_sqlite("prompts", "name", "sqlite__"), ["sqlite__mcp-demo"]);
    let resources = of_sqlite("resources", "uri", "omniagent://sqlite/");
    assert_eq!(resources.len(), 1, "{resources:?}");
    assert!(resources[0].starts_with("omniagent://sqlite/memo"), "{resources:?}");
    assert_eq!(stderr.matches("resources/templates/list failed").count(), 1, "{stderr}");

    let calls = out["calls"].as_array().unwrap();
    for call in calls {
        assert_eq!(call.get("isError"), Some(&json!(false)), "{call}\n{stderr}");
    }
    let rows = text_of(&calls[2]);
    assert!(rows.contains("Lyon") && rows.contains("France"), "{rows}");
    let prompt = &out["prompt_results"][0]["messages"][0]["content"]["text"];
    assert!(prompt.as_str().unwrap().contains("cities"), "{prompt}");

    // mcp-server-time and mcp-server-git, listed and called.
    assert!(tools.contains(&"time__get_current_time") && tools.contains(&"time__convert_time"), "{tools:?}");
    let converted: Value = serde_json::from_str(text_of(&calls[3])).unwrap();
    assert_eq!(converted["target"]["timezone"], json!("Asia/Tokyo"), "{converted}");
    assert_eq!(converted["target"]["datetime"].as_str().unwrap().get(11..16), Some("21:00"), "{converted}");
    assert!(tools.contains(&"git__git_status") && tools.contains(&"git__git_log"), "{tools:?}");
    assert!(text_of(&calls[4]).contains("On branch main"), "{}", calls[4]);
    assert!(text_of(&calls[5]).contains("The first commit"), "{}", calls[5]);
}
