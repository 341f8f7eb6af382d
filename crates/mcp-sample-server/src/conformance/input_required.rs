//! The multi-round fixtures of SEP-2322 (protocol 2026-07-28): tools that answer an
//! `InputRequiredResult` first, and complete when the client calls again with the
//! answers in `inputResponses` (and the `requestState` they were given).
//!
//! Before 2026-07-28 rmcp turns an `InputRequiredResult` into error -32600, so these
//! tools only work on the 2026 lifecycle.

use std::time::Duration;

use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, InputRequest, InputResponses,
        RequestStateCodec, SealOptions,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::conformance::client_requests::{self, accepted_field, input_required};

/// How long a sealed `requestState` stays valid.
const STATE_TTL: Duration = Duration::from_secs(600);

/// A multi-round fixture tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum InputRequiredTool {
    Elicitation,
    Sampling,
    ListRoots,
    RequestState,
    MultipleInputs,
    MultiRound,
    TamperedState,
    Capabilities,
}

impl InputRequiredTool {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Elicitation => "test_input_required_result_elicitation",
            Self::Sampling => "test_input_required_result_sampling",
            Self::ListRoots => "test_input_required_result_list_roots",
            Self::RequestState => "test_input_required_result_request_state",
            Self::MultipleInputs => "test_input_required_result_multiple_inputs",
            Self::MultiRound => "test_input_required_result_multi_round",
            Self::TamperedState => "test_input_required_result_tampered_state",
            Self::Capabilities => "test_input_required_result_capabilities",
        }
    }

    pub(super) fn description(self) -> &'static str {
        match self {
            Self::Elicitation => "Asks the client for a name (elicitation, key user_name), then greets it",
            Self::Sampling => "Asks the client to sample the capital of France (key capital_question)",
            Self::ListRoots => "Asks the client for its roots (key client_roots)",
            Self::RequestState => "Asks for a confirmation with a sealed requestState; answers state-ok",
            Self::MultipleInputs => "Asks for a name, a sampled greeting and the roots at once, with a requestState",
            Self::MultiRound => "Asks for a name, then for a favorite color, each round with a new requestState",
            Self::TamperedState => {
                "Asks for a confirmation with an HMAC-sealed requestState; a changed state is an error"
            }
            Self::Capabilities => "Asks only for what the request's client capabilities allow",
        }
    }
}

/// Seals and opens `requestState` with a per-process random key (HMAC-SHA256), bound to
/// the tool, so a client can neither forge nor move state between tools.
pub(super) struct RequestStates {
    codec: RequestStateCodec,
}

impl std::fmt::Debug for RequestStates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestStates").finish_non_exhaustive()
    }
}

impl RequestStates {
    pub(super) fn new() -> Result<Self, getrandom::Error> {
        let mut key = [0_u8; RequestStateCodec::MIN_KEY_LENGTH];
        getrandom::fill(&mut key)?;
        Ok(Self { codec: RequestStateCodec::new_unchecked(key.to_vec()) })
    }

    fn seal(&self, tool: InputRequiredTool, state: &Value) -> Result<String, McpError> {
        let options = SealOptions::new().associated_data(tool.name().as_bytes()).ttl(STATE_TTL);
        self.codec
            .seal_json_with(state, &options)
            .map_err(|error| McpError::internal_error(format!("cannot seal requestState: {error}"), None))
    }

    /// The state the client echoed; an error if it is missing, forged or expired.
    fn open(&self, tool: InputRequiredTool, sealed: Option<&str>) -> Result<Value, McpError> {
        let sealed = sealed.ok_or_else(|| McpError::invalid_params("requestState is missing", None))?;
        self.codec.open_json_with(sealed, tool.name().as_bytes()).map_err(|error| {
            McpError::invalid_params(format!("requestState failed its integrity check: {error}"), None)
        })
    }
}

const NAME_KEY: &str = "user_name";
const CAPITAL_KEY: &str = "capital_question";
const ROOTS_KEY: &str = "client_roots";
const CONFIRM_KEY: &str = "confirm";
const GREETING_KEY: &str = "greeting";
const STEP1_KEY: &str = "step1";
const STEP2_KEY: &str = "step2";

fn ask_name() -> Result<InputRequest, McpError> {
    client_requests::elicitation("What is your name?", "name", "string")
}

fn ask_confirmation() -> Result<InputRequest, McpError> {
    client_requests::elicitation("Please confirm", "ok", "boolean")
}

pub(super) fn call(
    states: &RequestStates,
    tool: InputRequiredTool,
    request: &CallToolRequestParams,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let responses = Responses(request.input_responses.as_ref());
    let done = |text: String| Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
    match tool {
        InputRequiredTool::Elicitation => match responses.get(NAME_KEY) {
            None => Ok(input_required([(NAME_KEY, ask_name()?)], None).into()),
            Some(answer) => done(format!("Hello, {}!", name_in(answer)?)),
        },
        InputRequiredTool::Sampling => match responses.get(CAPITAL_KEY) {
            None => {
                let question = client_requests::sampling("What is the capital of France?", 100)?;
                Ok(input_required([(CAPITAL_KEY, question)], None).into())
            }
            Some(answer) => done(format!("The client answered: {}", sampled_text_in(CAPITAL_KEY, answer)?)),
        },
        InputRequiredTool::ListRoots => match responses.get(ROOTS_KEY) {
            None => Ok(input_required([(ROOTS_KEY, client_requests::list_roots()?)], None).into()),
            Some(answer) => done(format!("The client's roots: {}", roots_in(answer)?)),
        },
        InputRequiredTool::RequestState | InputRequiredTool::TamperedState => match responses.get(CONFIRM_KEY) {
            None => {
                let state = states.seal(tool, &json!({ "asked": CONFIRM_KEY }))?;
                Ok(input_required([(CONFIRM_KEY, ask_confirmation()?)], Some(state)).into())
            }
            Some(answer) => {
                states.open(tool, request.request_state.as_deref())?;
                let confirmed = accepted_field(answer, "ok").ok_or_else(|| not_answered(CONFIRM_KEY, "`ok`"))?;
                done(format!("state-ok: the requestState verified, confirmed={confirmed}"))
            }
        },
        InputRequiredTool::MultipleInputs => multiple_inputs(states, request, responses),
        InputRequiredTool::MultiRound => multi_round(states, request, responses),
        InputRequiredTool::Capabilities => {
            if !responses.is_empty() {
                return done(format!("Received answers for: {}", responses.keys().join(", ")));
            }
            let capabilities = context.client_capabilities().unwrap_or_default();
            let mut requests = Vec::new();
            if capabilities.sampling.is_some() {
                requests.push((GREETING_KEY, client_requests::sampling("Generate a greeting", 50)?));
            }
            if capabilities.elicitation.is_some() {
                requests.push((NAME_KEY, ask_name()?));
            }
            if capabilities.roots.is_some() {
                requests.push((ROOTS_KEY, client_requests::list_roots()?));
            }
            if requests.is_empty() {
                return done(
                    "The client declared none of sampling, elicitation and roots, so nothing was asked".to_owned(),
                );
            }
            Ok(input_required(requests, None).into())
        }
    }
}

/// Asks for a name, a greeting and the roots at once; asks again for any that are missing.
fn multiple_inputs(
    states: &RequestStates,
    request: &CallToolRequestParams,
    responses: Responses<'_>,
) -> Result<CallToolResponse, McpError> {
    let tool = InputRequiredTool::MultipleInputs;
    if !responses.is_empty() {
        states.open(tool, request.request_state.as_deref())?;
    }
    let (name, greeting, roots) = (responses.get(NAME_KEY), responses.get(GREETING_KEY), responses.get(ROOTS_KEY));
    if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
        let text = format!(
            "Hello, {}! The greeting: {}. The roots: {}",
            name_in(name)?,
            sampled_text_in(GREETING_KEY, greeting)?,
            roots_in(roots)?
        );
        return Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
    }
    let mut missing = Vec::new();
    if name.is_none() {
        missing.push((NAME_KEY, ask_name()?));
    }
    if greeting.is_none() {
        missing.push((GREETING_KEY, client_requests::sampling("Generate a greeting", 50)?));
    }
    if roots.is_none() {
        missing.push((ROOTS_KEY, client_requests::list_roots()?));
    }
    let state = states.seal(tool, &json!({ "asked": [NAME_KEY, GREETING_KEY, ROOTS_KEY] }))?;
    Ok(input_required(missing, Some(state)).into())
}

/// Round 1 asks for a name, round 2 (with the name) for a color, round 3 completes; the
/// state of each round carries what the earlier rounds learned.
fn multi_round(
    states: &RequestStates,
    request: &CallToolRequestParams,
    responses: Responses<'_>,
) -> Result<CallToolResponse, McpError> {
    let tool = InputRequiredTool::MultiRound;
    let ask_step1 = || -> Result<CallToolResponse, McpError> {
        let state = states.seal(tool, &json!({ "round": 1 }))?;
        let step1 = client_requests::elicitation("Step 1: What is your name?", "name", "string")?;
        Ok(input_required([(STEP1_KEY, step1)], Some(state)).into())
    };
    if responses.is_empty() {
        return ask_step1();
    }
    let state = states.open(tool, request.request_state.as_deref())?;
    match state.get("round").and_then(Value::as_u64) {
        Some(1) => {
            let Some(answer) = responses.get(STEP1_KEY) else { return ask_step1() };
            let name = accepted_field(answer, "name").ok_or_else(|| not_answered(STEP1_KEY, "`name`"))?;
            let state = states.seal(tool, &json!({ "round": 2, "name": name }))?;
            let step2 = client_requests::elicitation("Step 2: What is your favorite color?", "color", "string")?;
            Ok(input_required([(STEP2_KEY, step2)], Some(state)).into())
        }
        Some(2) => {
            let name = state.get("name").and_then(Value::as_str).unwrap_or("someone");
            let Some(answer) = responses.get(STEP2_KEY) else {
                let step2 = client_requests::elicitation("Step 2: What is your favorite color?", "color", "string")?;
                let state = states.seal(tool, &state)?;
                return Ok(input_required([(STEP2_KEY, step2)], Some(state)).into());
            };
            let color = accepted_field(answer, "color").ok_or_else(|| not_answered(STEP2_KEY, "`color`"))?;
            let text = format!("{name}'s favorite color is {color}");
            Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
        }
        _ => Err(McpError::invalid_params("requestState names no round of this tool", None)),
    }
}

/// The answers a call carries, `inputResponses`.
#[derive(Debug, Clone, Copy)]
struct Responses<'a>(Option<&'a InputResponses>);

impl<'a> Responses<'a> {
    fn get(self, key: &str) -> Option<&'a Value> {
        self.0.and_then(|responses| responses.get(key))
    }

    fn is_empty(self) -> bool {
        self.0.is_none_or(InputResponses::is_empty)
    }

    fn keys(self) -> Vec<&'a str> {
        client_requests::response_keys(self.0)
    }
}

fn not_answered(key: &str, what: &str) -> McpError {
    McpError::invalid_params(format!("inputResponses.{key} is not an accepted elicitation result with {what}"), None)
}

/// The name in an answer to [`ask_name`]; declining is no error, a malformed answer is.
fn name_in(answer: &Value) -> Result<String, McpError> {
    match answer.get("action").and_then(Value::as_str) {
        Some("decline" | "cancel") => Ok("stranger".to_owned()),
        _ => accepted_field(answer, "name").ok_or_else(|| not_answered(NAME_KEY, "a `name`")),
    }
}

fn sampled_text_in<'a>(key: &str, answer: &'a Value) -> Result<&'a str, McpError> {
    client_requests::sampled_text(answer).ok_or_else(|| {
        McpError::invalid_params(format!("inputResponses.{key} is not a sampling result with text content"), None)
    })
}

/// The root URIs of a `roots/list` result, comma-separated.
fn roots_in(answer: &Value) -> Result<String, McpError> {
    let roots = answer.get("roots").and_then(Value::as_array).ok_or_else(|| {
        McpError::invalid_params(format!("inputResponses.{ROOTS_KEY} is not a roots/list result"), None)
    })?;
    let uris: Vec<&str> = roots.iter().filter_map(|root| root.get("uri").and_then(Value::as_str)).collect();
    Ok(if uris.is_empty() { "none".to_owned() } else { uris.join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_states_refuse_tampering() {
        let states = RequestStates::new().unwrap();
        let tool = InputRequiredTool::TamperedState;
        let sealed = states.seal(tool, &json!({ "round": 1 })).unwrap();
        assert_eq!(states.open(tool, Some(&sealed)).unwrap(), json!({ "round": 1 }));
        let refused = |sealed: Option<&str>, tool| states.open(tool, sealed).unwrap_err().code.0;
        assert_eq!(refused(Some(&format!("{sealed}-TAMPERED")), tool), -32602);
        assert_eq!(refused(Some(&sealed), InputRequiredTool::RequestState), -32602);
        assert_eq!(refused(None, tool), -32602);
    }

    #[test]
    fn answers() {
        assert_eq!(name_in(&json!({ "action": "accept", "content": { "name": "Alice" } })).unwrap(), "Alice");
        assert_eq!(name_in(&json!({ "action": "decline" })).unwrap(), "stranger");
        assert_eq!(name_in(&json!(12345)).unwrap_err().code.0, -32602);
        assert_eq!(
            roots_in(&json!({ "roots": [{ "uri": "file:///a" }, { "uri": "file:///b" }] })).unwrap(),
            "file:///a, file:///b"
        );
        assert_eq!(roots_in(&json!({})).unwrap_err().code.0, -32602);
    }
}
