//! `--conformance`: the MCP conformance suite's fixtures over stdio, as a gateway that
//! fronts the server sees them.

use serde_json::{Value, json};

use crate::Session;

/// The fixture tools, in name order.
const FIXTURE_TOOLS: [&str; 28] = [
    "json_schema_2020_12_tool",
    "test_audio_content",
    "test_custom_headers",
    "test_elicitation",
    "test_elicitation_sep1034_defaults",
    "test_elicitation_sep1330_enums",
    "test_embedded_resource",
    "test_error_handling",
    "test_image_content",
    "test_input_required_result_capabilities",
    "test_input_required_result_elicitation",
    "test_input_required_result_list_roots",
    "test_input_required_result_multi_round",
    "test_input_required_result_multiple_inputs",
    "test_input_required_result_request_state",
    "test_input_required_result_sampling",
    "test_input_required_result_tampered_state",
    "test_logging_tool",
    "test_missing_capability",
    "test_multiple_content_types",
    "test_sampling",
    "test_simple_text",
    "test_streaming_elicitation",
    "test_tool_with_logging",
    "test_tool_with_progress",
    "test_trigger_prompt_change",
    "test_trigger_resource_update",
    "test_trigger_tool_change",
];

fn start() -> Session {
    Session::start_with(&["--conformance"], json!({ "sampling": {}, "elicitation": {} }))
}

fn names(list: &Value, key: &str, name: &str) -> Vec<String> {
    let items = list[key].as_array().unwrap_or_else(|| panic!("a {key} list: {list}"));
    items.iter().map(|item| item[name].as_str().expect("a name").to_owned()).collect()
}

#[test]
fn lists_the_fixtures_beside_the_sample_tools() {
    let mut session = start();
    let mut expected_tools: Vec<&str> = test_peers::SAMPLE_SERVER_TOOLS.iter().chain(&FIXTURE_TOOLS).copied().collect();
    expected_tools.sort_unstable();
    assert_eq!(session.tool_names(), (expected_tools.iter().map(|&name| name.to_owned()).collect(), 1));

    let (prompts, _) = session.request("prompts/list", json!({}));
    assert_eq!(
        names(&prompts, "prompts", "name"),
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
        ]
    );
    let (resources, _) = session.request("resources/list", json!({}));
    assert_eq!(
        names(&resources, "resources", "uri"),
        ["test://static-text", "test://static-binary", "test://watched-resource"]
    );
    let (templates, _) = session.request("resources/templates/list", json!({}));
    assert_eq!(names(&templates, "resourceTemplates", "uriTemplate"), ["test://template/{id}/data"]);

    let (read, _) = session.request("resources/read", json!({ "uri": "test://template/123/data" }));
    let text: Value = serde_json::from_str(read["contents"][0]["text"].as_str().expect("text contents")).unwrap();
    assert_eq!(text, json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" }));
    let (prompt, _) = session.request(
        "prompts/get",
        json!({ "name": "test_prompt_with_arguments", "arguments": { "arg1": "a", "arg2": "b" } }),
    );
    assert_eq!(prompt["messages"][0]["content"]["text"], "Prompt with arguments: arg1='a', arg2='b'");
}

#[test]
fn the_sample_tools_still_answer() {
    let mut session = start();
    assert_eq!(session.call("echo", json!({ "text": "hi" }))["content"][0]["text"], "hi");
    assert_eq!(
        session.call("test_simple_text", json!({})),
        json!({ "content": [{ "type": "text", "text": "This is a simple text response for testing." }], "isError": false })
    );
}

#[test]
fn sampling_is_asked_of_the_client_during_the_call() {
    let mut session = start();
    let mut sampling_requests = Vec::new();
    let (answer, _) = session.request_answering(
        "tools/call",
        json!({ "name": "test_sampling", "arguments": { "prompt": "What is 2+2?" } }),
        |request| {
            sampling_requests.push(request.clone());
            json!({ "role": "assistant", "content": { "type": "text", "text": "4" }, "model": "it", "stopReason": "endTurn" })
        },
    );
    assert_eq!(answer, json!({ "content": [{ "type": "text", "text": "LLM response: 4" }], "isError": false }));
    let [request] = sampling_requests.as_slice() else { panic!("one sampling request: {sampling_requests:?}") };
    assert_eq!(request["method"], "sampling/createMessage");
    // rmcp adds `_meta.progressToken` to tie the request to the call (SEP-2260).
    let mut params = request["params"].clone();
    params.as_object_mut().expect("params").remove("_meta");
    assert_eq!(
        params,
        json!({ "messages": [{ "role": "user", "content": { "type": "text", "text": "What is 2+2?" } }], "maxTokens": 100 })
    );
}

#[test]
fn logging_and_progress_come_before_the_answer() {
    let mut session = start();
    let (answer, notifications) = session.request(
        "tools/call",
        json!({ "name": "test_tool_with_logging", "arguments": {}, "_meta": { "progressToken": "p1" } }),
    );
    assert_eq!(answer["content"][0]["text"], "Tool with logging executed successfully");
    let logged: Vec<&Value> = notifications.iter().map(|message| &message["params"]["data"]).collect();
    assert_eq!(logged, ["Tool execution started", "Tool processing data", "Tool execution completed"]);

    let (answer, notifications) = session.request(
        "tools/call",
        json!({ "name": "test_tool_with_progress", "arguments": {}, "_meta": { "progressToken": "p2" } }),
    );
    assert_eq!(answer["content"][0]["text"], "p2");
    let progress: Vec<(&Value, &Value)> = notifications
        .iter()
        .map(|message| (&message["params"]["progressToken"], &message["params"]["progress"]))
        .collect();
    assert_eq!(progress, [(&json!("p2"), &json!(0.0)), (&json!("p2"), &json!(50.0)), (&json!("p2"), &json!(100.0))]);
}

/// A gateway that serves a 2026-07-28 client can forward its requests, `_meta` included,
/// on a session that began with `initialize`: the fixtures then answer as on 2026-07-28.
#[test]
fn requests_tagged_2026_get_input_required_results() {
    let mut session = start();
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { "elicitation": {} }
    });
    let round1 = session.call_with("test_input_required_result_elicitation", json!({ "_meta": meta }));
    assert_eq!(round1["resultType"], "input_required", "{round1}");
    assert_eq!(round1["inputRequests"]["user_name"]["method"], "elicitation/create");
    assert_eq!(round1["inputRequests"]["user_name"]["params"]["message"], "What is your name?");

    let round2 = session.call_with(
        "test_input_required_result_elicitation",
        json!({
            "_meta": meta,
            "inputResponses": { "user_name": { "action": "accept", "content": { "name": "Alice" } } }
        }),
    );
    assert_eq!(round2["content"], json!([{ "type": "text", "text": "Hello, Alice!" }]), "{round2}");

    // The same fixture on the session's own protocol cannot ask for input.
    let legacy = session.call("test_input_required_result_elicitation", json!({}));
    assert_eq!(legacy["code"], -32600, "{legacy}");
}

impl Session {
    /// Calls `tool` with no arguments and `extra` (such as `_meta`) merged into the params.
    fn call_with(&mut self, tool: &str, extra: Value) -> Value {
        let mut params = json!({ "name": tool, "arguments": {} });
        params.as_object_mut().expect("an object").extend(extra.as_object().expect("an object").clone());
        self.request("tools/call", params).0
    }
}
