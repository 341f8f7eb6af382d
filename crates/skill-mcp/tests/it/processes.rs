//! Processes: a server and the processes it started end with it, whether the agent is
//! closed, dropped without closing, or the server crashed and was restarted; and a
//! server's process group is killed before the server is reaped, never after.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::process_table::{assert_all_gone, has_sigkill_pending, is_gone, is_present_as_ours, is_running};
use crate::{call_text, sample_agent, server_pid};

/// How long the order of a crashed server's cleanup is watched.
const WATCH: Duration = Duration::from_millis(300);

/// The server's pid and the pid of the `sleep 3600` it started in its process group.
async fn server_and_grandchild(agent: &skill_core::Agent) -> [i32; 2] {
    let grandchild: i32 =
        call_text(agent, "spawn_child", json!({})).await.parse().expect("`spawn_child` answers a pid");
    let server = server_pid(agent).await;
    assert!(is_running(server) && is_running(grandchild), "server {server} and grandchild {grandchild} run");
    [server, grandchild]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_the_server_and_its_grandchildren() {
    let agent = sample_agent(&[], json!({})).await;
    let pids = server_and_grandchild(&agent).await;
    let failures = agent.close().await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_all_gone(&pids, "after close, the server and its grandchild").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_agent_ends_the_server_and_its_grandchildren() {
    let agent = sample_agent(&[], json!({})).await;
    let pids = server_and_grandchild(&agent).await;
    drop(agent);
    assert_all_gone(&pids, "after the agent was dropped, the server and its grandchild").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_leaves_no_process_behind() {
    let agent = sample_agent(&[], json!({})).await;
    let crashed = server_and_grandchild(&agent).await;
    agent.call_tool("sample__crash", json!({})).await.expect_err("the crash fails the call");
    let restarted = server_and_grandchild(&agent).await;
    assert_ne!(restarted[0], crashed[0]);
    assert_all_gone(&crashed, "after the crash and restart, the old server and its grandchild").await;
    assert!(restarted.iter().all(|pid| is_running(*pid)), "the restarted server {restarted:?} runs");
    agent.close().await;
    assert_all_gone(&restarted, "after close, the restarted server and its grandchild").await;
}

/// A crashed server is reaped only after its process group was killed, so the group's id
/// never names someone else's group when it is signalled: until then the unreaped server
/// holds the id, which the kernel cannot hand to another process. Seen from outside: as
/// soon as the crashed server is reaped, its grandchild is dead or has SIGKILL pending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_server_is_reaped_only_after_its_group_was_killed() {
    let agent = sample_agent(&[], json!({})).await;
    let [crashed, grandchild] = server_and_grandchild(&agent).await;
    agent.call_tool("sample__crash", json!({})).await.expect_err("the crash fails the call");
    let watched = Instant::now();
    while watched.elapsed() < WATCH {
        // The server first, then the grandchild: the grandchild's state is then at least
        // as late as the server's.
        let reaped = !is_present_as_ours(crashed);
        let killed = is_gone(grandchild) || has_sigkill_pending(grandchild);
        assert!(
            !reaped || killed,
            "the crashed server {crashed} was reaped before its grandchild {grandchild} was killed"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    // The crash is cleaned up in the background, else by the next call at the latest.
    server_and_grandchild(&agent).await;
    assert_all_gone(&[crashed, grandchild], "after the next call, the crashed server and its grandchild").await;
    agent.close().await;
}
