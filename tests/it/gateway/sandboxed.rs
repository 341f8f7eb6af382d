//! Real MCP servers under the default sandbox profile, configured as their users write
//! them, each listed and called through the gateway by the Python SDK's client:
//! server-filesystem (its folder as `write`), server-memory (its file's folder as
//! `write`), server-everything, sequential-thinking started with `npx -y` (from an npm
//! cache the peers hold), PyPI `mcp-server-time` and `mcp-server-git` (its repository as
//! `write`) and a FastMCP server. Each upstream is seen confined while it runs.

use std::path::Path;

use serde_json::{Value, json};

use super::{HttpGateway, listed, python_with_stderr, text_of};
use crate::Home;

/// The children of process `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
        let listed = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        found.extend(listed.split_whitespace().map(|child| child.parse::<u32>().unwrap()));
    }
    found
}

/// A git repository in `dir` with one commit of `README.md`.
fn git_repository(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    for args in [&["init", "--quiet"][..], &["add", "README.md"], &["commit", "--quiet", "-m", "The first commit"]] {
        let output = std::process::Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "init.defaultBranch=main"])
            .args(args)
            .current_dir(dir)
            .output()
            .expect("git runs");
        assert!(output.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    }
}

#[test]
fn real_servers_under_the_default_sandbox_are_listed_and_called_through_the_gateway() {
    let home = Home::new();
    let notes = home.path().join("notes");
    let memory = home.path().join("memory");
    let repository = home.path().join("repository");
    for folder in [&notes, &memory] {
        std::fs::create_dir(folder).unwrap();
    }
    git_repository(&repository);
    std::fs::write(repository.join("notes.md"), "a note\n").unwrap();
    let memory_file = memory.join("memory.jsonl");
    let python = test_peers::mcp_servers_time_git_python_or_panic();
    let fastmcp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/fastmcp_apps.py");
    let home = home.with_config(&format!(
        "storage: {{backend: memory}}
compiled: {{memory: {{enabled: false}}}}
skills: {{packs: [], tools: false}}
mcp:
  servers:
    filesystem:
      command: '{filesystem}'
      args: ['{notes}']
      sandbox: {{write: ['{notes}']}}
    memory:
      command: '{memory_server}'
      env: {{MEMORY_FILE_PATH: '{memory_file}'}}
      sandbox: {{write: ['{memory}']}}
    everything:
      command: '{everything}'
    thinking:
      command: npx
      args: [-y, '{thinking}']
      env: {{npm_config_cache: '{npm_cache}', npm_config_offline: 'true'}}
    time:
      command: '{python}'
      args: [-m, mcp_server_time, --local-timezone, Europe/Paris]
    git:
      command: '{python}'
      args: [-m, mcp_server_git, --repository, '{repository}']
      sandbox: {{write: ['{repository}']}}
    charts:
      command: '{fastmcp_python}'
      args: ['{fastmcp}']
",
        filesystem = test_peers::server_filesystem_or_panic().display(),
        notes = notes.display(),
        memory_server = test_peers::server_memory_or_panic().display(),
        memory_file = memory_file.display(),
        memory = memory.display(),
        everything = test_peers::server_everything_or_panic().display(),
        thinking = test_peers::sequential_thinking_spec(),
        npm_cache = test_peers::sequential_thinking_npm_cache_or_panic().display(),
        python = python.display(),
        repository = repository.display(),
        fastmcp_python = test_peers::mcp_python_or_panic().display(),
        fastmcp = fastmcp.display(),
    ));
    let note = notes.join("today.md");
    let repo_path = repository.to_str().unwrap();
    let thought =
        json!({"thought": "Two and two.", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1});
    let plan = json!({
        "calls": [
            ["filesystem__write_file", {"path": note, "content": "written confined"}],
            ["filesystem__read_text_file", {"path": note}],
            ["memory__create_entities", {"entities": [{"name": "Lyon", "entityType": "city", "observations": ["by the Rhône"]}]}],
            ["memory__read_graph", {}],
            ["everything__echo", {"message": "hi"}],
            ["thinking__sequentialthinking", thought],
            ["time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}],
            ["git__git_add", {"repo_path": repo_path, "files": ["notes.md"]}],
            ["git__git_commit", {"repo_path": repo_path, "message": "A confined commit"}],
            ["git__git_log", {"repo_path": repo_path}],
            ["charts__show-chart", {"series": "rainfall"}]
        ],
    });
    let gateway = HttpGateway::start(&home, &[], &[]);
    let (out, stderr) = python_with_stderr("legacy", &["http", &gateway.url()], plan, &[]);
    let log = || format!("{stderr}\n{}", gateway.stderr.lock().unwrap());

    let tools = listed(&out, "tools", "name");
    for server in ["filesystem", "memory", "everything", "thinking", "time", "git", "charts"] {
        let prefix = format!("{server}__");
        assert!(tools.iter().any(|tool| tool.starts_with(&prefix)), "{server} lists no tool: {tools:?}\n{}", log());
    }
    let calls = out["calls"].as_array().unwrap();
    for call in calls {
        assert_eq!(call.get("isError"), Some(&json!(false)), "{call}\n{}", log());
    }
    let text = |index: usize| text_of(&calls[index]);
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "written confined");
    assert!(text(1).contains("written confined"), "{}", calls[1]);
    assert!(text(3).contains("by the Rhône"), "{}", calls[3]);
    assert!(std::fs::read_to_string(&memory_file).unwrap().contains("Lyon"), "server-memory wrote its file");
    assert!(text(4).contains("hi"), "{}", calls[4]);
    let thinking: Value = serde_json::from_str(text(5)).unwrap_or_else(|error| panic!("{error}: {}", calls[5]));
    assert_eq!(thinking["thoughtNumber"], json!(1), "{thinking}");
    let converted: Value = serde_json::from_str(text(6)).unwrap();
    assert_eq!(converted["target"]["datetime"].as_str().unwrap().get(11..16), Some("21:00"), "{converted}");
    assert!(text(9).contains("A confined commit") && text(9).contains("The first commit"), "{}", calls[9]);
    assert!(text(10).contains("rainfall"), "{}", calls[10]);

    // Each upstream still runs, and runs confined.
    let upstreams = children(gateway.child.id());
    assert_eq!(upstreams.len(), 7, "{upstreams:?}\n{}", log());
    for pid in upstreams {
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        assert!(
            test_peers::is_confined(pid),
            "{} runs unconfined",
            String::from_utf8_lossy(&command).replace('\0', " ")
        );
    }
}
