//! The official MCP TypeScript SDK's client (npm `@modelcontextprotocol/sdk`, its latest
//! release, run by `tests/fixtures/gateway/ts_client.mjs`) in front of `omniagent mcp
//! serve`, over stdio and streamable HTTP: it lists the tools, calls them, follows a long
//! call's progress and cancels a call, and the cancellation reaches the upstream.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_peers::{sample_server_or_panic as sample_server, server_everything_or_panic as server_everything};

use super::{HttpGateway, run_client, text_of};
use crate::Home;

/// What the sample server writes on stderr when a `sleep` is cancelled.
const SLEEP_CANCELLED: &str = "mcp-sample-server: sleep cancelled";

/// A home whose agent has the sample server (`sample__*`) and server-everything
/// (`everything__*`), whose `trigger-long-running-operation` reports progress.
fn home() -> Home {
    Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    sample:\n      command: {}\n    everything:\n      command: {}\n",
        sample_server().display(),
        server_everything().display()
    ))
}

/// The client's plan: two calls, a long one with progress, and a `sleep` cancelled once
/// the sample server reports that it has begun, then one more call.
fn plan() -> Value {
    json!({
        "calls": [["sample__add", {"a": 2, "b": 3}], ["everything__echo", {"message": "hi"}]],
        "progress": ["everything__trigger-long-running-operation", {"duration": 0.3, "steps": 3}],
        "cancel": ["sample__sleep", {"ms": 60000}],
        "after_cancel": ["sample__echo", {"text": "still here"}],
        "stderr_awaited": SLEEP_CANCELLED,
    })
}

/// Runs the TypeScript SDK client against `target` (`["stdio", command, args...]` or
/// `["http", url]`) with [`plan`], and returns what it printed and its stderr (with the
/// stdio server's).
fn ts_client(target: &[&str], env: &[(&str, &str)]) -> (Value, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/ts_client.mjs");
    let mut command = Command::new(if cfg!(windows) { "node.exe" } else { "node" });
    command.arg(script).arg(test_peers::mcp_ts_sdk_or_panic()).args(target).envs(env.iter().copied());
    run_client(command, "the TypeScript SDK client", &plan())
}

/// What the plan must give over either transport.
fn check(out: &Value, log: &str) {
    let tools: Vec<&str> = out["tools"].as_array().unwrap().iter().map(|tool| tool.as_str().unwrap()).collect();
    for expected in ["sample__add", "sample__sleep", "everything__echo", "everything__trigger-long-running-operation"] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    let calls = &out["calls"];
    assert_eq!((text_of(&calls[0]), &calls[0]["structuredContent"]), ("5", &json!({"sum": 5})), "{log}");
    assert_eq!(text_of(&calls[1]), "Echo: hi");

    let progress = &out["progress"];
    assert!(text_of(&progress["result"]).starts_with("Long running operation completed"), "{progress}");
    // The SDK hands notifications to their handler a turn after it reads them, and a
    // result at once: the last step's progress, sent just before the result, may come
    // after the call has ended, when no handler is left to take it.
    let steps: Vec<(u64, u64)> = progress["notifications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| (step["progress"].as_u64().unwrap(), step["total"].as_u64().unwrap()))
        .collect();
    assert!(!steps.is_empty(), "no progress reached the client: {progress}");
    assert!(steps.iter().all(|&(step, total)| (1..=3).contains(&step) && total == 3), "{steps:?}");
    assert!(steps.windows(2).all(|pair| pair[0].0 < pair[1].0), "in order: {steps:?}");

    let cancelled = out["cancel"]["error"].as_str().unwrap_or_else(|| panic!("the call was not cancelled: {out}"));
    assert!(cancelled.to_lowercase().contains("abort"), "{cancelled}");
    assert_eq!(text_of(&out["after_cancel"]), "still here", "the session outlives the cancelled call");
}

#[test]
fn the_typescript_sdk_lists_calls_follows_progress_and_cancels_over_stdio() {
    let home = home();
    let home_dir = home.path().to_str().unwrap();
    // `-vv` logs the upstreams' stderr, where the sample server says it was cancelled.
    let (out, stderr) =
        ts_client(&["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve", "-vv"], &[("OMNIAGENT_HOME", home_dir)]);
    check(&out, &stderr);
    assert_eq!(out["server"], json!("omniagent"), "{out}");
    assert_eq!(out["stderr_seen"], json!(true), "no cancellation upstream:\n{stderr}");
}

#[test]
fn the_typescript_sdk_lists_calls_follows_progress_and_cancels_over_http() {
    let home = home();
    let gateway = HttpGateway::start(&home, &["-vv"], &[]);
    let (out, stderr) = ts_client(&["http", &gateway.url()], &[]);
    check(&out, &format!("{stderr}\n{}", gateway.stderr.lock().unwrap()));
    let started = Instant::now();
    while !gateway.stderr.lock().unwrap().contains(SLEEP_CANCELLED) {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no cancellation upstream:\n{}",
            gateway.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
