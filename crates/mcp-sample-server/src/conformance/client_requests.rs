//! Asking the client something: with a request of the server's own on a session that
//! began with `initialize`, with an `InputRequiredResult` on protocol 2026-07-28 (where
//! the client calls again with the answer in `inputResponses`).

use std::{collections::BTreeMap, time::Duration};

use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{InputRequest, InputRequests, InputRequiredResult, InputResponses},
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::conformance::is_2026;

/// How long the server waits for the client to answer one of its requests.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(30);

/// An input request from its JSON form, `{"method": …, "params": …}`.
pub(super) fn input_request(method: &str, params: Value) -> Result<InputRequest, McpError> {
    serde_json::from_value(json!({ "method": method, "params": params }))
        .map_err(|error| McpError::internal_error(format!("fixture {method} request is invalid: {error}"), None))
}

/// An `elicitation/create` request for one required field of type `field_type`.
pub(super) fn elicitation(message: &str, field: &str, field_type: &str) -> Result<InputRequest, McpError> {
    input_request(
        "elicitation/create",
        json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": { field: { "type": field_type } },
                "required": [field]
            }
        }),
    )
}

/// A `sampling/createMessage` request with one user message.
pub(super) fn sampling(prompt: &str, max_tokens: u32) -> Result<InputRequest, McpError> {
    input_request(
        "sampling/createMessage",
        json!({
            "messages": [{ "role": "user", "content": { "type": "text", "text": prompt } }],
            "maxTokens": max_tokens
        }),
    )
}

pub(super) fn list_roots() -> Result<InputRequest, McpError> {
    input_request("roots/list", json!({}))
}

/// An `InputRequiredResult` with these input requests and, if given, a request state.
pub(super) fn input_required(
    requests: impl IntoIterator<Item = (&'static str, InputRequest)>,
    request_state: Option<String>,
) -> InputRequiredResult {
    let requests: InputRequests = requests.into_iter().map(|(key, request)| (key.to_owned(), request)).collect();
    InputRequiredResult::new(Some(requests), request_state)
}

/// The answer to an input request, or the result that asks the client for it.
#[derive(Debug)]
pub(super) enum Asked {
    Answered(Value),
    InputRequired(InputRequiredResult),
}

/// Asks the client `request`. On 2026-07-28 the answer is `input_responses[key]` when the
/// client sent it, else an `InputRequiredResult` under `key`. Before that the server sends
/// the request itself and waits for the answer. `Err` is a message for a tool error.
pub(super) async fn ask(
    context: &RequestContext<RoleServer>,
    input_responses: Option<&InputResponses>,
    key: &'static str,
    request: InputRequest,
) -> Result<Asked, String> {
    let capabilities = context.client_capabilities().unwrap_or_default();
    let (capability, declared) = match &request {
        InputRequest::CreateMessage(_) => ("sampling", capabilities.sampling.is_some()),
        InputRequest::Elicitation(_) => ("elicitation", capabilities.elicitation.is_some()),
        InputRequest::ListRoots(_) => ("roots", capabilities.roots.is_some()),
        _ => ("an unknown", false),
    };
    if !declared {
        return Err(format!("the client did not declare the {capability} capability"));
    }
    if is_2026(context) {
        return Ok(match input_responses.and_then(|responses| responses.get(key)) {
            Some(answer) => Asked::Answered(answer.clone()),
            None => Asked::InputRequired(input_required([(key, request)], None)),
        });
    }
    let sent = send(context, request);
    let answer = tokio::select! {
        answer = tokio::time::timeout(ANSWER_TIMEOUT, sent) => {
            answer.map_err(|_elapsed| format!("the client did not answer within {ANSWER_TIMEOUT:?}"))?
        }
        () = context.ct.cancelled() => Err("the call was cancelled".to_owned()),
    }?;
    Ok(Asked::Answered(answer))
}

/// Sends `request` to the client (sessions that began with `initialize` only).
async fn send(context: &RequestContext<RoleServer>, request: InputRequest) -> Result<Value, String> {
    let peer = &context.peer;
    let answer = match request {
        #[allow(deprecated, reason = "sampling is still part of protocol 2025-11-25")]
        InputRequest::CreateMessage(request) => peer.create_message(request.params).await.map(|answer| json!(answer)),
        InputRequest::Elicitation(request) => peer.create_elicitation(request.params).await.map(|answer| json!(answer)),
        #[allow(deprecated, reason = "roots are still part of protocol 2025-11-25")]
        InputRequest::ListRoots(_) => peer.list_roots().await.map(|answer| json!(answer)),
        _ => return Err("the fixture asks for something this server cannot send".to_owned()),
    };
    answer.map_err(|error| format!("the client's answer failed: {error}"))
}

/// `content[field]` of an accepted elicitation result, as text.
pub(super) fn accepted_field(answer: &Value, field: &str) -> Option<String> {
    if answer.get("action")? != "accept" {
        return None;
    }
    match answer.get("content")?.get(field)? {
        Value::String(text) => Some(text.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The text of a `sampling/createMessage` result (`content` is one block or, since
/// 2025-11-25, a list of blocks).
pub(super) fn sampled_text(answer: &Value) -> Option<&str> {
    let content = answer.get("content")?;
    let block = if content.is_array() { content.get(0)? } else { content };
    block.get("text")?.as_str()
}

/// The elicitation result as the fixtures print it: `action=…, content=…`.
pub(super) fn describe_elicitation(answer: &Value) -> String {
    let action = answer.get("action").and_then(Value::as_str).unwrap_or("none");
    let content = answer.get("content").cloned().unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    format!("action={action}, content={content}")
}

/// The keys of `input_responses`, for messages.
pub(super) fn response_keys(input_responses: Option<&InputResponses>) -> Vec<&str> {
    input_responses.map(BTreeMap::keys).into_iter().flatten().map(String::as_str).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_keep_their_wire_form() {
        let check = |request: Result<InputRequest, McpError>, expected: Value| {
            assert_eq!(serde_json::to_value(request.unwrap()).unwrap(), expected);
        };
        check(
            elicitation("What is your name?", "name", "string"),
            json!({
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "What is your name?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": { "name": { "type": "string" } },
                        "required": ["name"]
                    }
                }
            }),
        );
        check(
            sampling("Generate a greeting", 50),
            json!({
                "method": "sampling/createMessage",
                "params": {
                    "messages": [{ "role": "user", "content": { "type": "text", "text": "Generate a greeting" } }],
                    "maxTokens": 50
                }
            }),
        );
        check(list_roots(), json!({ "method": "roots/list" }));
    }

    #[test]
    fn reads_answers() {
        let accepted = json!({ "action": "accept", "content": { "name": "Alice", "ok": true } });
        assert_eq!(accepted_field(&accepted, "name").as_deref(), Some("Alice"));
        assert_eq!(accepted_field(&accepted, "ok").as_deref(), Some("true"));
        assert_eq!(accepted_field(&accepted, "color"), None);
        assert_eq!(accepted_field(&json!({ "action": "decline" }), "name"), None);
        assert_eq!(accepted_field(&json!(12345), "name"), None);
        assert_eq!(
            sampled_text(&json!({ "role": "assistant", "content": { "type": "text", "text": "Paris" } })),
            Some("Paris")
        );
        assert_eq!(sampled_text(&json!({ "content": [{ "type": "text", "text": "Paris" }] })), Some("Paris"));
        assert_eq!(describe_elicitation(&json!({ "action": "cancel" })), "action=cancel, content={}");
    }
}
