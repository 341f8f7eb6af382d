//! Behaviour tests of `skill-mcp` against real MCP servers, driven through
//! `skill_core::Agent` exactly as a host uses it: each server is configured by a
//! `ServerConfig` read from JSON, as users write it.
//!
//! The peers are `mcp-sample-server` (this workspace's rmcp server, whose tools provoke
//! crashes, hangs, stderr floods and tool list changes) and the MCP reference server
//! `@modelcontextprotocol/server-everything`, over stdio and streamable HTTP. `cargo xtask
//! test` builds and fetches both and passes their paths in `OMNIAGENT_MCP_SAMPLE_SERVER`
//! and `OMNIAGENT_SERVER_EVERYTHING`; see the `test-peers` crate for where the tests look otherwise.
//! Also PyPI `mcp-server-sqlite`, in the virtual environment `cargo xtask peers` makes.

mod everything;
mod faults;
mod isolation;
mod pinned;
mod process_table;
mod processes;
mod sandbox;
mod secrets;
mod sqlite;
mod tools;

use std::path::Path;

use serde_json::{Value, json};
use skill_core::{Agent, Content, InitReport, ToolOutput};
use skill_mcp::{McpSkill, ServerConfig};

/// The name every test gives its server: tools are `sample__<tool>`.
const SAMPLE: &str = "sample";

/// A server configuration, read from JSON as a user writes it.
fn server_config(json: Value) -> ServerConfig {
    serde_json::from_value(json.clone()).unwrap_or_else(|error| panic!("{json} is a valid server config: {error}"))
}

/// `base` with the settings of `extra` (`timeout`, `required_env`, …) added, read as a
/// server configuration.
fn config_with(mut base: Value, extra: Value) -> ServerConfig {
    if let (Some(fields), Value::Object(extra)) = (base.as_object_mut(), extra) {
        fields.extend(extra);
    }
    server_config(base)
}

/// `mcp-sample-server` with `args`, and any other settings in `extra`.
fn sample_config(args: &[&str], extra: Value) -> ServerConfig {
    config_with(json!({"command": test_peers::sample_server_or_panic(), "args": args}), extra)
}

/// The sample server started through `sh`, which appends its pid to `pid_log` and then
/// becomes the server (`exec`, same pid), so the test learns every server started, even
/// one that never answers. Its sandbox lets it write the log's folder.
fn logged_sample_config(pid_log: &Path, args: &[&str], extra: Value) -> ServerConfig {
    let mut shell_args = vec![json!("-c"), json!(r#"echo $$ >> "$PID_LOG" && exec "$0" "$@""#)];
    shell_args.push(json!(test_peers::sample_server_or_panic()));
    shell_args.extend(args.iter().map(|arg| json!(arg)));
    let sandbox = json!({"write": [pid_log.parent()]});
    config_with(
        json!({"command": "/bin/sh", "args": shell_args, "env": {"PID_LOG": pid_log}, "sandbox": sandbox}),
        extra,
    )
}

/// The pids `sh` logged for [`logged_sample_config`], in start order.
fn logged_pids(pid_log: &Path) -> Vec<i32> {
    let log = std::fs::read_to_string(pid_log).unwrap_or_default();
    log.lines().map(|line| line.parse().expect("a pid per line")).collect()
}

/// An agent with the sample server started by `args`, initialized; panics unless it loaded.
async fn sample_agent(args: &[&str], extra: Value) -> Agent {
    let agent = Agent::builder().with_compiled_skill(McpSkill::new(SAMPLE, sample_config(args, extra))).build();
    let report = agent.init_compiled_skills().await;
    assert_loaded(&report, SAMPLE);
    agent
}

fn assert_loaded(report: &InitReport, name: &str) {
    assert_eq!(report.loaded, [name], "skipped: {:?}", report.skipped);
}

/// The text of an output that holds exactly one text block.
fn only_text(output: &ToolOutput) -> &str {
    match output.content.as_slice() {
        [Content::Text { text, .. }] => text,
        other => panic!("expected one text block, got {other:?}"),
    }
}

/// Calls `tool` of the sample server and returns its text; panics on any failure.
async fn call_text(agent: &Agent, tool: &str, arguments: Value) -> String {
    let name = format!("{SAMPLE}__{tool}");
    let output = agent.call_tool(&name, arguments).await.unwrap_or_else(|error| panic!("{name} failed: {error}"));
    assert!(!output.is_error, "{name} reported an error: {output:?}");
    only_text(&output).to_owned()
}

/// The sample server's process id, from its `pid` tool.
async fn server_pid(agent: &Agent) -> i32 {
    call_text(agent, "pid", json!({})).await.parse().expect("`pid` answers a number")
}
