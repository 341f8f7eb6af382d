//! Faults: a server that crashes, hangs, floods stderr, fails or stays silent at start-up.
//! Each failure is reported promptly with the server's own words where it has any, and
//! the next call gets a fresh server. Each server runs under the default sandbox (no
//! setting turns it off), which the tests that reach a running server check.

use std::time::{Duration, Instant};

use serde_json::json;
use skill_core::{Agent, ToolError};
use skill_mcp::McpSkill;

use crate::process_table::{assert_all_gone, is_gone};
use crate::{SAMPLE, call_text, logged_pids, logged_sample_config, sample_agent, server_pid};

/// The bound on a whole test that could deadlock (a stderr pipe nobody drains).
const DEADLOCK_BOUND: Duration = Duration::from_secs(60);

/// Starts the sample server with `args` (and `extra` settings) in an agent that must
/// skip it; returns the reason and how long `init_compiled_skills` took, once the
/// server's process is gone (and reaped).
async fn skip_reason(args: &[&str], extra: serde_json::Value) -> (String, Duration) {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let pid_log = scratch.path().join("pids");
    let config = logged_sample_config(&pid_log, args, extra);
    let agent = Agent::builder().with_compiled_skill(McpSkill::new(SAMPLE, config)).build();
    let started = Instant::now();
    let report = agent.init_compiled_skills().await;
    let took = started.elapsed();
    assert!(report.loaded.is_empty(), "{:?} loaded", report.loaded);
    let [skipped] = report.skipped.as_slice() else { panic!("one skipped skill expected: {:?}", report.skipped) };
    assert_eq!(skipped.skill, SAMPLE);
    assert_eq!(agent.skipped(), report.skipped);
    let pids = logged_pids(&pid_log);
    assert_eq!(pids.len(), 1, "one server started: {pids:?}");
    assert_all_gone(&pids, "the skipped server").await;
    (skipped.reason.clone(), took)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_the_call_at_once_and_the_next_call_restarts_the_server() {
    let agent = sample_agent(&[], json!({})).await;
    let crashed_pid = server_pid(&agent).await;
    assert!(test_peers::is_confined(crashed_pid), "the server runs unconfined");

    let started = Instant::now();
    let error = agent.call_tool("sample__crash", json!({})).await.expect_err("the crash fails the call");
    let took = started.elapsed();
    let ToolError::Failed { message } = &error else { panic!("expected ToolError::Failed, got {error:?}") };
    assert!(message.contains("MCP server `sample`"), "{message}");
    assert!(took < Duration::from_secs(1), "the crash was reported after {took:?}");

    assert_eq!(call_text(&agent, "echo", json!({"text": "again"})).await, "again");
    assert_ne!(server_pid(&agent).await, crashed_pid, "the crashed server answered");
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_times_out_on_time_and_the_next_call_restarts_the_server() {
    let agent = sample_agent(&[], json!({"timeout": {"call": "500ms"}})).await;
    let hung_pid = server_pid(&agent).await;
    assert!(test_peers::is_confined(hung_pid), "the server runs unconfined");

    let started = Instant::now();
    let error = agent.call_tool("sample__hang", json!({})).await.expect_err("hang never answers");
    let took = started.elapsed();
    assert!(
        matches!(error, ToolError::Timeout { after } if after == Duration::from_millis(500)),
        "expected a 500ms timeout, got {error:?}"
    );
    // The call gives up on time even though the hung server takes a second to stop
    // (it exits a second after stdin ends): its shutdown does not count against the call.
    assert!(
        (Duration::from_millis(450)..Duration::from_secs(1)).contains(&took),
        "the 500ms timeout fired after {took:?}"
    );

    assert_eq!(call_text(&agent, "echo", json!({"text": "after"})).await, "after");
    let restarted_pid = server_pid(&agent).await;
    assert_ne!(restarted_pid, hung_pid, "the hung server answered");
    agent.close().await;
    // `close` waits for the hung server's shutdown too, not only for the current server.
    for pid in [hung_pid, restarted_pid] {
        assert!(is_gone(pid), "server {pid} outlived close");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabytes_of_stderr_during_a_call_do_not_block_the_server() {
    tokio::time::timeout(DEADLOCK_BOUND, async {
        let agent = sample_agent(&[], json!({})).await;
        assert_eq!(call_text(&agent, "stderr", json!({"megabytes": 10})).await, "wrote 10 MB");
        assert_eq!(call_text(&agent, "echo", json!({"text": "still here"})).await, "still here");
        assert!(test_peers::is_confined(server_pid(&agent).await), "the server runs unconfined");
        agent.close().await;
    })
    .await
    .expect("a stderr flood deadlocked the server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_megabytes_of_stderr_before_start_up_do_not_block_it() {
    tokio::time::timeout(DEADLOCK_BOUND, async {
        let agent = sample_agent(&["--stderr-at-start", "10"], json!({})).await;
        assert_eq!(call_text(&agent, "echo", json!({"text": "up"})).await, "up");
        assert!(test_peers::is_confined(server_pid(&agent).await), "the server runs unconfined");
        agent.close().await;
    })
    .await
    .expect("a stderr flood at start-up deadlocked it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_up_is_skipped_saying_why_without_its_stderr() {
    // What the server printed stays out of the reason, which a gateway's clients may
    // read; it is logged (see the binary's tests).
    let (reason, _) = skip_reason(&["--exit-at-start"], json!({})).await;
    assert_eq!(
        reason,
        "init failed: start-up failed: the server exited before it answered (exit status: 7); it ran sandboxed, and a path outside sandbox.read and sandbox.write, or sandbox.network, may be why (sandbox: off tells)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_be_started_is_skipped_saying_why_once() {
    let config = serde_json::from_value(json!({"command": "/nonexistent/mcp-server"})).unwrap();
    let agent = Agent::builder().with_compiled_skill(McpSkill::new(SAMPLE, config)).build();
    let report = agent.init_compiled_skills().await;
    let [skipped] = report.skipped.as_slice() else { panic!("one skipped skill expected: {:?}", report.skipped) };
    assert_eq!(
        skipped.reason,
        "init failed: cannot start `/nonexistent/mcp-server`: No such file or directory (os error 2)"
    );
}

/// A `url` server that nothing listens at: the reason says so, without the type names
/// of rmcp's transport.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_url_that_refuses_connections_is_skipped_saying_so() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = serde_json::from_value(json!({"url": format!("http://127.0.0.1:{port}/mcp")})).unwrap();
    let agent = Agent::builder().with_compiled_skill(McpSkill::new(SAMPLE, config)).build();
    let report = agent.init_compiled_skills().await;
    let [skipped] = report.skipped.as_slice() else { panic!("one skipped skill expected: {:?}", report.skipped) };
    assert!(skipped.reason.contains("Connection refused"), "{}", skipped.reason);
    assert!(!skipped.reason.contains("rmcp::"), "{}", skipped.reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_is_skipped_when_start_up_times_out() {
    let (reason, took) = skip_reason(&["--silent"], json!({"timeout": {"startup": "500ms"}})).await;
    assert_eq!(reason, "init failed: start-up timed out after 500ms");
    assert!(
        (Duration::from_millis(450)..Duration::from_millis(1500)).contains(&took),
        "the 500ms start-up timeout fired after {took:?}"
    );
}
