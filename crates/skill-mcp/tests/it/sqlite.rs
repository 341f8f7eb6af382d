//! PyPI `mcp-server-sqlite`, on the MCP Python SDK 1.x as its users run it: it declares
//! resources but has no `resources/templates/list` handler, and answers it with
//! `-32601`. That listing counts as empty; everything else it offers loads.

use serde_json::json;
use skill_core::{Agent, ResourceContents};
use skill_mcp::McpSkill;

use crate::{assert_loaded, only_text, server_config};

fn tool_names(agent: &Agent) -> Vec<String> {
    let mut names: Vec<String> = agent.tools().iter().map(|tool| tool.name().to_owned()).collect();
    names.sort();
    names
}

/// The memo resource's text.
async fn memo(agent: &Agent) -> String {
    let resources = agent.resources();
    let read = agent.read_resource(&resources[0].uri).await.expect("the memo reads");
    match &read.contents[0] {
        ResourceContents::Text { text, .. } => text.clone(),
        other => panic!("a text memo, not {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_templates_loads_its_tools_prompt_and_resource() {
    let folder = tempfile::tempdir().unwrap();
    let config = server_config(json!({
        "command": test_peers::mcp_server_sqlite_python_or_panic(),
        "args": ["-c", "from mcp_server_sqlite import main; main()", "--db-path", folder.path().join("test.db")],
        // The database is made there: its sandbox lets it write that folder.
        "sandbox": {"write": [folder.path()]},
    }));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("sqlite", config)).build();
    assert_loaded(&agent.init_compiled_skills().await, "sqlite");
    let expected: Vec<String> =
        test_peers::MCP_SERVER_SQLITE_TOOLS.iter().map(|tool| format!("sqlite__{tool}")).collect();
    assert_eq!(tool_names(&agent), expected);
    let prompts: Vec<String> = agent.prompts().iter().map(|prompt| prompt.name().to_owned()).collect();
    assert_eq!(prompts, ["sqlite__mcp-demo"]);
    assert_eq!(agent.resources().len(), 1, "{:?}", agent.resources());
    assert!(agent.resource_templates().is_empty());

    let create = json!({"query": "CREATE TABLE cities (name TEXT)"});
    agent.call_tool("sqlite__create_table", create).await.unwrap();
    agent.call_tool("sqlite__write_query", json!({"query": "INSERT INTO cities VALUES ('Lyon')"})).await.unwrap();
    let rows = agent.call_tool("sqlite__read_query", json!({"query": "SELECT name FROM cities"})).await.unwrap();
    assert!(only_text(&rows).contains("Lyon"), "{rows:?}");

    // An insight is in the memo the resource reads.
    let insight = json!({"insight": "Lyon is in France"});
    agent.call_tool("sqlite__append_insight", insight).await.unwrap();
    assert!(memo(&agent).await.contains("Lyon is in France"));
    agent.close().await;
}
