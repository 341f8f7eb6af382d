//! Real MCP servers under the default sandbox profile, configured as their users write
//! them, each listed and called through the gateway by the Python SDK's client:
//! server-filesystem (its folder as `write`), server-memory (its file's folder as
//! `write`), server-everything, sequential-thinking started with `npx -y` (from an npm
//! cache the peers hold), PyPI `mcp-server-time` and `mcp-server-git` (its repository as
//! `write`) and a FastMCP server. Each upstream is seen confined while it runs.
//!
//! Starting Python and Node servers takes seconds of CPU each; on a shared machine a
//! start may take long, so the servers are given a start-up bound of two minutes (what is
//! tested is that they work confined, not how fast they start).

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

/// The config of `servers` (each a YAML mapping under its name, indented by six), each
/// with a start-up bound of two minutes.
fn config(servers: &[(&str, String)]) -> String {
    let mut config = "storage: {backend: memory}\ncompiled: {memory: {enabled: false}}\n\
                      skills: {packs: [], tools: false}\nmcp:\n  servers:\n"
        .to_owned();
    for (name, settings) in servers {
        config.push_str(&format!("    {name}:\n      timeout: {{startup: 2m}}\n{settings}"));
    }
    config
}

/// Serves `home` over HTTP and has the Python SDK's client run `plan`; asserts that each
/// of `servers` lists tools, that no call failed and that each upstream (as many as
/// `servers`) runs confined. The client's output, with the logs for messages.
fn listed_and_called_confined(home: &Home, servers: &[&str], plan: Value) -> (Value, String) {
    let gateway = HttpGateway::start(home, &[], &[]);
    let (out, stderr) = python_with_stderr("legacy", &["http", &gateway.url()], plan, &[]);
    let log = format!("{stderr}\n{}", gateway.stderr.lock().unwrap());
    let tools = listed(&out, "tools", "name");
    for server in servers {
        let prefix = format!("{server}__");
        assert!(tools.iter().any(|tool| tool.starts_with(&prefix)), "{server} lists no tool: {tools:?}\n{log}");
    }
    for call in out["calls"].as_array().unwrap() {
        assert_eq!(call.get("isError"), Some(&json!(false)), "{call}\n{log}");
    }
    // Each upstream still runs, and runs confined.
    let upstreams = children(gateway.child.id());
    assert_eq!(upstreams.len(), servers.len(), "{upstreams:?}\n{log}");
    for pid in upstreams {
        let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let command = String::from_utf8_lossy(&command).replace('\0', " ");
        assert!(test_peers::is_confined(pid), "{command} runs unconfined");
    }
    (out, log)
}

#[test]
fn npm_servers_under_the_default_sandbox_are_listed_and_called_through_the_gateway() {
    let home = Home::new();
    let notes = home.path().join("notes");
    let memory = home.path().join("memory");
    for folder in [&notes, &memory] {
        std::fs::create_dir(folder).unwrap();
    }
    let memory_file = memory.join("memory.jsonl");
    let home = home.with_config(&config(&[
        (
            "filesystem",
            format!(
                "      command: '{}'\n      args: ['{notes}']\n      sandbox: {{write: ['{notes}']}}\n",
                test_peers::server_filesystem_or_panic().display(),
                notes = notes.display(),
            ),
        ),
        (
            "memory",
            format!(
                "      command: '{}'\n      env: {{MEMORY_FILE_PATH: '{}'}}\n      sandbox: {{write: ['{}']}}\n",
                test_peers::server_memory_or_panic().display(),
                memory_file.display(),
                memory.display(),
            ),
        ),
        ("everything", format!("      command: '{}'\n", test_peers::server_everything_or_panic().display())),
        (
            "thinking",
            format!(
                "      command: npx\n      args: [-y, '{}']\n      env: {{npm_config_cache: '{}', npm_config_offline: 'true'}}\n",
                test_peers::sequential_thinking_spec(),
                test_peers::sequential_thinking_npm_cache_or_panic().display(),
            ),
        ),
    ]));
    let note = notes.join("today.md");
    let thought =
        json!({"thought": "Two and two.", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1});
    let plan = json!({"calls": [
        ["filesystem__write_file", {"path": note, "content": "written confined"}],
        ["filesystem__read_text_file", {"path": note}],
        ["memory__create_entities", {"entities": [{"name": "Lyon", "entityType": "city", "observations": ["by the Rhône"]}]}],
        ["memory__read_graph", {}],
        ["everything__echo", {"message": "hi"}],
        ["thinking__sequentialthinking", thought]
    ]});
    let servers = ["filesystem", "memory", "everything", "thinking"];
    let (out, log) = listed_and_called_confined(&home, &servers, plan);
    let calls = out["calls"].as_array().unwrap();
    let text = |index: usize| text_of(&calls[index]);
    assert_eq!(std::fs::read_to_string(&note).unwrap(), "written confined");
    assert!(text(1).contains("written confined"), "{}", calls[1]);
    assert!(text(3).contains("by the Rhône"), "{}", calls[3]);
    assert!(std::fs::read_to_string(&memory_file).unwrap().contains("Lyon"), "server-memory wrote its file\n{log}");
    assert!(text(4).contains("hi"), "{}", calls[4]);
    let thinking: Value = serde_json::from_str(text(5)).unwrap_or_else(|error| panic!("{error}: {}", calls[5]));
    assert_eq!(thinking["thoughtNumber"], json!(1), "{thinking}");
}

#[test]
fn pypi_and_fastmcp_servers_under_the_default_sandbox_are_listed_and_called_through_the_gateway() {
    let home = Home::new();
    let repository = home.path().join("repository");
    git_repository(&repository);
    std::fs::write(repository.join("notes.md"), "a note\n").unwrap();
    let python = test_peers::mcp_servers_time_git_python_or_panic();
    let fastmcp = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/fastmcp_apps.py");
    let home = home.with_config(&config(&[
        (
            "time",
            format!(
                "      command: '{}'\n      args: [-m, mcp_server_time, --local-timezone, Europe/Paris]\n",
                python.display()
            ),
        ),
        (
            "git",
            format!(
                "      command: '{}'\n      args: [-m, mcp_server_git, --repository, '{repository}']\n      \
                 sandbox: {{write: ['{repository}']}}\n",
                python.display(),
                repository = repository.display(),
            ),
        ),
        (
            "charts",
            format!(
                "      command: '{}'\n      args: ['{}']\n",
                test_peers::mcp_python_or_panic().display(),
                fastmcp.display()
            ),
        ),
    ]));
    let repo_path = repository.to_str().unwrap();
    let plan = json!({"calls": [
        ["time__convert_time", {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}],
        ["git__git_add", {"repo_path": repo_path, "files": ["notes.md"]}],
        ["git__git_commit", {"repo_path": repo_path, "message": "A confined commit"}],
        ["git__git_log", {"repo_path": repo_path}],
        ["charts__show-chart", {"series": "rainfall"}]
    ]});
    let (out, _) = listed_and_called_confined(&home, &["time", "git", "charts"], plan);
    let calls = out["calls"].as_array().unwrap();
    let text = |index: usize| text_of(&calls[index]);
    let converted: Value = serde_json::from_str(text(0)).unwrap();
    assert_eq!(converted["target"]["datetime"].as_str().unwrap().get(11..16), Some("21:00"), "{converted}");
    assert!(text(3).contains("A confined commit") && text(3).contains("The first commit"), "{}", calls[3]);
    assert!(text(4).contains("rainfall"), "{}", calls[4]);
}
