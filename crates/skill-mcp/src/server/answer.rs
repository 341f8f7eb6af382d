//! What the outcome of a client's request becomes for the client: an upstream's answer
//! passed up as it is, or the agent's failure as MCP expects it.

use rmcp::ErrorData;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use skill_core::ToolError;

use super::caller::{Caller, PassedUp};

/// What an upstream answered the caller's request with that goes to the caller as it
/// is, if anything: an `input_required` for a 2026-07-28 client, or a JSON-RPC error.
pub(super) fn passed_up<R: From<rmcp::model::InputRequiredResult>>(caller: &Caller) -> Option<Result<R, ErrorData>> {
    caller.passed_up().map(|answer| match answer {
        PassedUp::InputRequired(asked) => Ok(asked.into()),
        PassedUp::Error(error) => Err(error),
    })
}

/// A failed call's error as MCP expects it: an unknown name is the host's mistake
/// (invalid params); anything else, arguments that fail the tool's input schema
/// included, is an `isError` result carrying the message, which the model reads and can
/// correct its call by (SEP-1303: input validation failures are tool execution errors).
pub(super) fn call_error(error: ToolError) -> Result<CallToolResponse, ErrorData> {
    match error {
        ToolError::NotFound { .. } => Err(ErrorData::invalid_params(error.to_string(), None)),
        other => Ok(failed_call(other.to_string()).into()),
    }
}

/// A call's result that failed with `message` (`isError`), for the model to read.
pub(super) fn failed_call(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A failure of a prompt or resource request: an unknown name (which the agent names
/// as the kind of item it looked for), bad arguments, a withheld item (whose message
/// names the command that reviews it) and a refused one (whose message names the rule,
/// the wait) are invalid params; anything else an internal
/// error with the message.
pub(super) fn item_error(error: ToolError) -> ErrorData {
    match error {
        ToolError::NotFound { .. }
        | ToolError::InvalidArguments { .. }
        | ToolError::Withheld { .. }
        | ToolError::Refused { .. } => ErrorData::invalid_params(error.to_string(), None),
        other => ErrorData::internal_error(other.to_string(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn not_found() -> ToolError {
        ToolError::not_found(skill_core::ItemKind::Tool, "x")
    }

    #[test]
    fn only_an_unknown_tool_is_a_protocol_error() {
        let unknown = call_error(not_found()).expect_err("invalid params");
        assert_eq!(unknown.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        let invalid = ToolError::InvalidArguments { tool: "t".to_owned(), problems: vec!["/a: wrong".to_owned()] };
        let Ok(CallToolResponse::Complete(result)) = call_error(invalid) else { panic!("an isError result") };
        assert_eq!(result.is_error, Some(true));
        assert_eq!(
            result.content[0].as_text().map(|text| text.text.as_str()),
            Some("invalid arguments for `t`: /a: wrong")
        );
    }
}
