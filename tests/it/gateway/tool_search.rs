//! `serve.tool_search` through the gateway, with the Python SDK as the host: two tools
//! are listed in place of the agent's (with the markdown skills' own), the first finds
//! the others and the second calls them.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_peers::sample_server_or_panic as sample_server;

use super::{listed, python, sample_home, text_of};
use crate::Home;

/// With tool search, a host lists `search_tools`, `call_tool` and the markdown skills'
/// tools, in either era. A search finds the upstream's `echo` first, by a word of its
/// name, with its input schema; a word of descriptions alone finds `add` too, and a
/// word of no tool finds nothing. `call_tool` calls what the search found, and a tool's
/// own name still calls it. The model's mistakes come back as results with `isError`
/// that say what was wrong, for the model to correct: a name that is no tool's (with
/// where to find one), arguments the tool does not take, a search without words.
#[test]
fn tool_search_lists_two_tools_that_find_and_call_the_rest() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nserve: {{tool_search: true}}\n\
         mcp:\n  servers:\n    sample:\n      command: {}\n",
        sample_server().display()
    ));
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let plan = json!({"calls": [
        ["search_tools", {"query": "echo"}],
        ["search_tools", {"query": "integers", "limit": 5}],
        ["search_tools", {"query": "zebra"}],
        ["call_tool", {"name": "sample__echo", "arguments": {"text": "through call_tool"}}],
        ["sample__echo", {"text": "by its own name"}],
        ["call_tool", {"name": "sample__nothing"}],
        ["search_tools", {"query": " "}],
        ["call_tool", {"name": "sample__echo", "arguments": {"text": 5}}],
        ["call_tool", {"name": "sample__refuse", "arguments": {"message": "`n` must be even"}}],
    ]});
    for mode in ["legacy", "2026-07-28"] {
        let out = python(mode, &serve, plan.clone(), &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
        let tools = listed(&out, "tools", "name");
        assert_eq!(tools, ["call_tool", "search_tools", "skills__activate", "skills__read"], "{mode}");

        let calls = out["calls"].as_array().unwrap();
        let found = |call: usize| calls[call]["structuredContent"]["tools"].as_array().cloned().unwrap_or_default();
        let echo = &found(0)[0];
        assert_eq!(echo["name"], json!("sample__echo"), "{mode}: {}", calls[0]);
        assert_eq!(echo["inputSchema"]["required"], json!(["text"]), "{mode}: {echo}");
        let names = |call: usize| found(call).iter().map(|tool| tool["name"].clone()).collect::<Vec<Value>>();
        assert!(names(1).contains(&json!("sample__add")), "{mode}: {}", calls[1]);
        assert_eq!((names(2), &calls[2]["structuredContent"]["matched"]), (vec![], &json!(0)), "{mode}");

        assert_eq!(text_of(&calls[3]), "through call_tool", "{mode}");
        assert_eq!(text_of(&calls[4]), "by its own name", "{mode}");
        let failed = |call: usize| {
            assert_eq!(calls[call]["isError"], json!(true), "{mode}: {}", calls[call]);
            text_of(&calls[call])
        };
        let error = failed(5);
        assert!(error.contains("sample__nothing") && error.contains("`search_tools` finds"), "{mode}: {error}");
        assert!(failed(6).contains("`query`"), "{mode}: {}", calls[6]);
        assert!(failed(7).contains("/text: 5 is not of type"), "{mode}: {}", calls[7]);
        // An upstream's own refusal of the arguments (`-32602`) is the model's to read too.
        assert!(failed(8).contains("MCP server `sample`: `n` must be even"), "{mode}: {}", calls[8]);
    }
}

/// Tool search is off unless asked for: without it every tool is listed and
/// `search_tools` is no tool; `--tool-search` asks for it as the config does.
#[test]
fn tool_search_is_off_unless_asked_for() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nmcp:\n  servers:\n    sample:\n      command: {}\n",
        sample_server().display()
    ));
    let serve = |flags: &[&'static str]| [&["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"], flags].concat();
    let plan = json!({"calls": [["search_tools", {"query": "echo"}]]});
    let env = [("OMNIAGENT_HOME", home.path().to_str().unwrap())];
    let out = python("legacy", &serve(&[]), plan.clone(), &env);
    let tools = listed(&out, "tools", "name");
    assert!(tools.contains(&"sample__echo") && !tools.contains(&"search_tools"), "{tools:?}");
    assert!(out["calls"][0]["error"].as_str().is_some_and(|error| error.contains("search_tools")), "{out}");

    let out = python("legacy", &serve(&["--tool-search"]), plan, &env);
    assert_eq!(listed(&out, "tools", "name"), ["call_tool", "search_tools", "skills__activate", "skills__read"]);
    assert_eq!(out["calls"][0]["structuredContent"]["tools"][0]["name"], json!("sample__echo"), "{out}");
}

/// Our own MCP client in front of a gateway with tool search: a tool that an upstream
/// adds while the gateway runs is found by the next searches, and `call_tool` calls it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_upstream_is_found() {
    let home = sample_home("60s");
    let config: skill_mcp::ServerConfig = serde_json::from_value(json!({
        "command": env!("CARGO_BIN_EXE_omniagent"),
        "args": ["mcp", "serve", "--tool-search"],
        "env": {"OMNIAGENT_HOME": home.path()}
    }))
    .unwrap();
    let agent = skill_core::Agent::builder().with_compiled_skill(skill_mcp::McpSkill::new("gw", config)).build();
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.loaded, ["gw"], "{:?}", report.skipped);
    let search = || async {
        let found = agent.call_tool("gw__search_tools", json!({"query": "fresh"})).await.unwrap();
        let found = found.structured_content.unwrap()["tools"].as_array().unwrap().clone();
        found.iter().map(|tool| tool["name"].clone()).collect::<Vec<Value>>()
    };
    assert_eq!(search().await, Vec::<Value>::new());

    let call =
        |name: &str, arguments: Value| agent.call_tool("gw__call_tool", json!({"name": name, "arguments": arguments}));
    call("sample__add_tool", json!({"name": "fresh"})).await.unwrap();
    let started = Instant::now();
    while search().await != [json!("sample__fresh")] {
        assert!(started.elapsed() < Duration::from_secs(10), "the new tool was never found");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let output = call("sample__fresh", json!({"k": 1})).await.unwrap();
    assert_eq!(output, skill_core::ToolOutput::text(r#"{"k":1}"#));
    agent.close().await;
}
