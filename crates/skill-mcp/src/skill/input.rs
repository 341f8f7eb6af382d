//! A 2026-07-28 server asks for input by answering a call with `input_required`
//! (SEP-2322) rather than by sending requests: each request is answered here, and the
//! call is made again with the answers and the server's `requestState`.
//!
//! With the gateway, a 2026-07-28 client gets the `input_required` itself and calls
//! again with its answers; a 2025-11-25 client is asked through requests. Otherwise the
//! person's elicitor answers an elicitation (or it is declined), the roots are none, and
//! a sampling fails the call.

use rmcp::model::{InputRequest, InputRequiredResult, InputResponses};
use serde_json::{Value, json};

use crate::connection::Person;

/// The most rounds of input one call may take before it fails.
pub(super) const MAX_ROUNDS: usize = rmcp::model::DEFAULT_MRTR_MAX_ROUNDS;

/// What a request that may ask for input was answered with.
pub(super) enum Answer<T> {
    /// Its result.
    Complete(T),
    /// A request for input, to answer before it is made again.
    InputRequired(InputRequiredResult),
}

/// Makes a request (`tools/call`, `prompts/get`, `resources/read`) with `send`, given
/// the answers so far, until it completes: each `input_required` is answered
/// here, or for a gateway client on 2026-07-28 passed up to it as it is (the request
/// then fails here, and the gateway answers with what was passed up).
pub(super) async fn until_complete<T, Sent>(
    server: &str,
    person: &Person,
    mut send: impl FnMut(Option<InputResponses>, Option<String>) -> Sent,
) -> Result<T, skill_core::ToolError>
where
    Sent: Future<Output = Result<Answer<T>, skill_core::ToolError>>,
{
    let failed = |why: String| skill_core::ToolError::failed(format!("MCP server `{server}` asked for {why}"));
    #[cfg(feature = "server")]
    let caller = crate::server::Caller::current();
    #[cfg(feature = "server")]
    let (mut responses, mut state) = caller.as_ref().and_then(crate::server::Caller::answers).unwrap_or_default();
    #[cfg(not(feature = "server"))]
    let (mut responses, mut state) = (None, None);
    for _round in 0..MAX_ROUNDS {
        match send(responses.take(), state.take()).await? {
            Answer::Complete(result) => return Ok(result),
            #[cfg(feature = "server")]
            Answer::InputRequired(asked)
                if caller.as_ref().is_some_and(crate::server::Caller::takes_input_required) =>
            {
                if let Some(caller) = &caller {
                    caller.pass_up(crate::server::PassedUp::InputRequired(asked));
                }
                return Err(failed("input from the calling client".to_owned()));
            }
            Answer::InputRequired(asked) => (responses, state) = answer(asked, person).await.map_err(failed)?,
        }
    }
    Err(skill_core::ToolError::failed(format!("MCP server `{server}` still asked for input after {MAX_ROUNDS} rounds")))
}

/// The answers to what `asked` asks, and the state to send back with them.
pub(super) async fn answer(
    asked: InputRequiredResult,
    person: &Person,
) -> Result<(Option<InputResponses>, Option<String>), String> {
    let mut responses = InputResponses::new();
    for (key, request) in asked.input_requests.unwrap_or_default() {
        let response = answer_one(request, person).await.map_err(|why| format!("input `{key}`: {why}"))?;
        responses.insert(key, response);
    }
    Ok(((!responses.is_empty()).then_some(responses), asked.request_state))
}

#[cfg(feature = "server")]
async fn answer_one(request: InputRequest, person: &Person) -> Result<Value, String> {
    let Some(caller) = crate::server::Caller::current() else { return unanswered(request, person).await };
    let answered = match request {
        InputRequest::Elicitation(request) => {
            caller.create_elicitation(request.params).await.map(|answer| json!(answer))
        }
        InputRequest::CreateMessage(request) => caller.create_message(request.params).await.map(|answer| json!(answer)),
        InputRequest::ListRoots(_) => caller.list_roots().await.map(|answer| json!(answer)),
        _ => return Err("an input request of a kind this client does not know".to_owned()),
    };
    answered.map_err(|error| error.message.into_owned())
}

#[cfg(not(feature = "server"))]
async fn answer_one(request: InputRequest, person: &Person) -> Result<Value, String> {
    unanswered(request, person).await
}

/// The answer outside a gateway call: the person's to an elicitation, no roots; a
/// sampling fails the call.
async fn unanswered(request: InputRequest, person: &Person) -> Result<Value, String> {
    match request {
        InputRequest::Elicitation(request) => Ok(json!(person.elicit(request.params).await)),
        InputRequest::ListRoots(_) => Ok(json!({"roots": []})),
        _ => Err("the server asked for a sampling, which only a gateway client can give".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_caller_an_elicitation_is_declined_and_the_state_comes_back() {
        let asked: InputRequiredResult = serde_json::from_value(json!({
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {"method": "elicitation/create", "params": {
                    "message": "Sure?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
                }},
                "where": {"method": "roots/list"}
            },
            "requestState": "opaque-1"
        }))
        .unwrap();
        let person = Person { server: "s".to_owned(), elicitor: None };
        let (responses, state) = answer(asked, &person).await.unwrap();
        assert_eq!(json!(responses), json!({"confirm": {"action": "decline"}, "where": {"roots": []}}));
        assert_eq!(state.as_deref(), Some("opaque-1"));
    }
}
