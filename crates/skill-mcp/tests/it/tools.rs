//! Tools: listed with their MCP source, called with results passed through unchanged,
//! listed across pages, and updated when the server says its list changed (in both
//! protocol eras), unless the agent is closed by then.

use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use serde_json::{Value, json};
use skill_core::{
    Agent, BoxError, Prompt, ResourceCatalog, Secrets, Skill, SkillHandle, SourceKind, Tool, ToolContext, ToolOutput,
    ToolSource,
};
use skill_mcp::McpSkill;

use crate::{SAMPLE, assert_loaded, call_text, sample_agent, sample_config};

/// How long a `tools/list_changed` may take to reach the agent's tools.
pub(super) const LIST_CHANGED_BOUND: Duration = Duration::from_secs(5);

/// The agent's tools as `(agent-level name, source)`.
fn tools_of(agent: &Agent) -> Vec<(String, ToolSource)> {
    agent.tools().iter().map(|tool| (tool.name().to_owned(), tool.source().clone())).collect()
}

/// What the agent should list for the sample server's `tools`.
fn expected_tools(tools: &[&str]) -> Vec<(String, ToolSource)> {
    tools
        .iter()
        .map(|tool| {
            let source = ToolSource { kind: SourceKind::Mcp, skill: SAMPLE.to_owned(), tool: (*tool).to_owned() };
            (format!("{SAMPLE}__{tool}"), source)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_are_listed_with_their_mcp_source() {
    let agent = sample_agent(&[], json!({})).await;
    assert_eq!(tools_of(&agent), expected_tools(&test_peers::SAMPLE_SERVER_TOOLS));
    let echo = agent.find_tool("sample__echo").expect("echo is registered");
    assert_eq!(serde_json::to_value(echo.source()).unwrap(), json!({"kind": "mcp", "skill": "sample", "tool": "echo"}));
    assert_eq!(echo.description(), "Answer with `text` unchanged");
    assert_eq!(echo.input_schema()["required"], json!(["text"]));
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_pass_through_unchanged() {
    let agent = sample_agent(&[], json!({})).await;
    let check = async |tool: &str, arguments: Value, expected: Value| {
        let output = agent.call_tool(&format!("{SAMPLE}__{tool}"), arguments).await.expect("the call succeeds");
        assert_eq!(serde_json::to_value(&output).unwrap(), expected, "{tool}");
    };
    check(
        "echo",
        json!({"text": "héllo\nworld"}),
        json!({"content": [{"type": "text", "text": "héllo\nworld"}], "isError": false}),
    )
    .await;
    check(
        "add",
        json!({"a": 2, "b": 40}),
        json!({"content": [{"type": "text", "text": "42"}], "structuredContent": {"sum": 42}, "isError": false}),
    )
    .await;
    // A tool-level error is a result with `isError`, not a failed call.
    check(
        "env",
        json!({"name": "OMNIAGENT_SURELY_UNSET"}),
        json!({"content": [{"type": "text", "text": "OMNIAGENT_SURELY_UNSET is not set"}], "isError": true}),
    )
    .await;
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_page_of_the_tool_list_is_read() {
    let agent = sample_agent(&["--page-size", "2"], json!({})).await;
    assert_eq!(tools_of(&agent), expected_tools(&test_peers::SAMPLE_SERVER_TOOLS));
    assert_eq!(call_text(&agent, "echo", json!({"text": "paged"})).await, "paged");
    agent.close().await;
}

/// What the client declares reaches the server in both eras (on 2026-07-28 in every
/// request's `_meta`, before it in `initialize`): its name, and elicitation in both
/// modes; with the gateway, sampling too, which it forwards to its own client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_declares_itself_and_elicitation_in_both_eras() {
    let mut capabilities = json!({"elicitation": {"form": {}, "url": {}}});
    if cfg!(feature = "server") {
        capabilities["sampling"] = json!({});
    }
    for settings in [json!({}), json!({"protocol_version": "2025-11-25"})] {
        let agent = sample_agent(&[], settings.clone()).await;
        let declared: Value = serde_json::from_str(&call_text(&agent, "client", json!({})).await).unwrap();
        assert_eq!(declared["clientInfo"]["name"], "omniagent", "{settings}");
        assert_eq!(declared["clientInfo"]["version"], env!("CARGO_PKG_VERSION"), "{settings}");
        assert_eq!(declared["capabilities"], capabilities, "{settings}");
        agent.close().await;
    }
}

/// In both protocol eras: by default the connection speaks 2026-07-28, where the
/// change comes on a `subscriptions/listen` stream; pinned to 2025-11-25 it comes unasked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_the_server_adds_reaches_the_agent() {
    a_tool_the_server_adds_reaches_the_agent_in(json!({}), "2026-07-28").await;
    a_tool_the_server_adds_reaches_the_agent_in(json!({"protocol_version": "2025-11-25"}), "2025-11-25").await;
}

async fn a_tool_the_server_adds_reaches_the_agent_in(settings: Value, era: &str) {
    let agent = sample_agent(&[], settings).await;
    assert_eq!(call_text(&agent, "protocol_version", json!({})).await, era);
    assert_eq!(call_text(&agent, "add_tool", json!({"name": "extra"})).await, "added");
    let started = Instant::now();
    while agent.find_tool("sample__extra").is_err() {
        assert!(
            started.elapsed() < LIST_CHANGED_BOUND,
            "sample__extra did not appear within {LIST_CHANGED_BOUND:?}; tools: {:?}",
            tools_of(&agent)
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut with_extra = test_peers::SAMPLE_SERVER_TOOLS.to_vec();
    with_extra.push("extra");
    with_extra.sort_unstable();
    assert_eq!(tools_of(&agent), expected_tools(&with_extra));
    let output = agent.call_tool("sample__extra", json!({"x": 1})).await.expect("the new tool answers");
    assert_eq!(output, ToolOutput::text(r#"{"x":1}"#));
    agent.close().await;
}

/// How long a closed agent is watched for a tool a late `tools/list_changed` announced.
const LATE_BOUND: Duration = Duration::from_secs(1);

/// The sample server as a skill whose `close` first has the server add the tool `late`
/// and announce it with `tools/list_changed`, then waits [`LATE_BOUND`] for the tool to
/// reach the agent, which is closed by then: the agent clears its lists before it closes
/// its skills, and a server may speak at any time until its skill is closed.
struct AnnouncesAsItCloses {
    inner: McpSkill,
    handle: Option<SkillHandle>,
    add_tool: Option<Arc<dyn Tool>>,
}

#[async_trait]
impl Skill for AnnouncesAsItCloses {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn description(&self) -> &str {
        self.inner.description()
    }

    fn source_type(&self) -> SourceKind {
        self.inner.source_type()
    }

    fn set_agent(&mut self, handle: SkillHandle) {
        self.handle = Some(handle.clone());
        self.inner.set_agent(handle);
    }

    fn set_secrets(&mut self, secrets: Secrets) {
        self.inner.set_secrets(secrets);
    }

    async fn init(&mut self) -> Result<(), BoxError> {
        self.inner.init().await?;
        self.add_tool = self.inner.tools().into_iter().find(|tool| tool.name() == "add_tool");
        Ok(())
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.inner.tools()
    }

    fn prompts(&self) -> Vec<Arc<dyn Prompt>> {
        self.inner.prompts()
    }

    fn resources(&self) -> ResourceCatalog {
        self.inner.resources()
    }

    async fn close(&mut self) -> Result<(), BoxError> {
        let add_tool = self.add_tool.as_ref().expect("the sample server has `add_tool`");
        let source = ToolSource { kind: SourceKind::Mcp, skill: SAMPLE.to_owned(), tool: "add_tool".to_owned() };
        let context = ToolContext::new(format!("{SAMPLE}__add_tool"), source);
        let added = add_tool.call(&context, json!({"name": "late"})).await.expect("the server adds `late`");
        assert_eq!(added, ToolOutput::text("added"));
        let agent = self.handle.as_ref().and_then(SkillHandle::agent).expect("the agent is alive as it closes");
        let started = Instant::now();
        while started.elapsed() < LATE_BOUND && agent.find_tool("sample__late").is_err() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        self.inner.close().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_after_close_registers_nothing() {
    let skill = AnnouncesAsItCloses {
        inner: McpSkill::new(SAMPLE, sample_config(&[], json!({}))),
        handle: None,
        add_tool: None,
    };
    let agent = Agent::builder().with_compiled_skill(skill).build();
    assert_loaded(&agent.init_compiled_skills().await, SAMPLE);
    assert_eq!(tools_of(&agent), expected_tools(&test_peers::SAMPLE_SERVER_TOOLS));

    let failures = agent.close().await;
    assert!(failures.is_empty(), "{failures:?}");
    assert_eq!(tools_of(&agent), [], "a closed agent took the tools of a late tools/list_changed");
}
