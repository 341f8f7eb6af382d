//! A server whose definitions the trust lock holds, offered from the lock before it
//! starts (the gateway's instant start): its tools, prompts, resources and templates are
//! listed with no process running, the first read starts it, and that first start is no
//! list change for the agent's clients when its lists read as the lock's, while the
//! server's own `list_changed` always is.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use skill_core::trust::PinnedSkill;
use skill_core::{Agent, Trust, TrustMode, TrustSettings};
use skill_mcp::{McpSkill, UpstreamState};

use super::tools::LIST_CHANGED_BOUND;
use super::{SAMPLE, assert_loaded, call_text, sample_config};

/// The origin the tests pin the sample server under.
const ORIGIN: &str = "stdio:mcp-sample-server --conformance";

/// An agent with the sample server (serving the conformance fixtures) pinned in the lock
/// at `lock`, offered from what the lock holds when it holds its definitions and
/// `from_lock`; and the server's health.
async fn pinned_agent(lock: &Path, from_lock: bool) -> (Agent, skill_mcp::Health) {
    let trust = Trust::open(TrustSettings::new(lock)).expect("the lock reads");
    let mut skill = McpSkill::new(SAMPLE, sample_config(&["--conformance"], json!({})));
    if let Some(recorded) = trust.recorded(ORIGIN).filter(|_| from_lock) {
        skill = skill.with_pinned(recorded);
    }
    let health = skill.health();
    let agent = Agent::builder()
        .trust(trust)
        .pinned(SAMPLE, PinnedSkill { origin: ORIGIN.to_owned(), mode: TrustMode::OnFirstUse })
        .with_compiled_skill(skill)
        .build();
    assert_loaded(&agent.init_compiled_skills().await, SAMPLE);
    (agent, health)
}

/// What the agent lists, each list as JSON.
fn lists(agent: &Agent) -> [Value; 4] {
    let mut tools: Vec<(String, String)> =
        agent.tools().iter().map(|tool| (tool.name().to_owned(), tool.description().to_owned())).collect();
    tools.sort();
    let prompts: Vec<Value> = agent.prompts().iter().map(|prompt| json!(prompt.info())).collect();
    // The lock keeps resources in the order of their URIs, a server in its own.
    let mut resources = agent.resources();
    resources.sort_by(|a, b| a.uri.cmp(&b.uri));
    [json!(tools), json!(prompts), json!(resources), json!(agent.resource_templates())]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_and_templates_are_listed_from_the_lock_and_a_read_starts_the_server() {
    let folder = tempfile::tempdir().unwrap();
    let lock = folder.path().join("tools.lock");
    let (live, _) = pinned_agent(&lock, true).await;
    let seen = lists(&live);
    live.close().await;
    let recorded =
        Trust::open(TrustSettings::new(&lock)).unwrap().recorded(ORIGIN).expect("the first sight is recorded");
    assert!(recorded.resources.iter().any(|resource| resource["uri"] == "test://static-text"), "{recorded:?}");

    let (agent, health) = pinned_agent(&lock, true).await;
    assert_eq!(health.now().state, UpstreamState::Idle, "listing starts nothing");
    for (list, (from_lock, live)) in
        ["tools", "prompts", "resources", "templates"].iter().zip(lists(&agent).iter().zip(&seen))
    {
        assert_eq!(from_lock, live, "the lock's {list} read as the live ones");
    }
    assert!(agent.resources().iter().any(|resource| resource.uri == "omniagent://sample/test://static-text"));

    let read = agent.read_resource("omniagent://sample/test://static-text").await.expect("the resource reads");
    assert_eq!(health.now().starts, 1, "the first read starts the server");
    let text = serde_json::to_value(&read.contents[0]).unwrap();
    assert_eq!(text["uri"], "omniagent://sample/test://static-text", "{text}");
    agent.close().await;
}

/// The first start after the lock's lists were offered relists the server: the same
/// lists are no change. The server's own `list_changed` (the conformance fixture
/// `test_trigger_tool_change`, which changes nothing) is one each time. The first call
/// both starts the server and has it announce, so two relistings follow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_that_lists_what_the_lock_held_is_no_change_but_the_servers_own_announcement_is() {
    let folder = tempfile::tempdir().unwrap();
    let lock = folder.path().join("tools.lock");
    let (live, _) = pinned_agent(&lock, true).await;
    live.close().await;

    let (agent, health) = pinned_agent(&lock, true).await;
    let before = *agent.changes().borrow();
    assert_eq!(health.now().state, UpstreamState::Idle);
    for (heard, relistings) in [(1, 2), (2, 3)] {
        let answer = call_text(&agent, "test_trigger_tool_change", json!({})).await;
        assert_eq!(answer, "announced that the Tools list changed");
        let started = Instant::now();
        while health.now().relistings < relistings {
            assert!(started.elapsed() < LIST_CHANGED_BOUND, "{relistings} relistings: {:?}", health.now());
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let now = *agent.changes().borrow();
        assert_eq!(now.tools, before.tools + heard, "the server's own announcements, and nothing else");
        assert_eq!(now.resources, before.resources + heard);
    }
    assert_eq!(health.now().starts, 1);
    agent.close().await;
}
