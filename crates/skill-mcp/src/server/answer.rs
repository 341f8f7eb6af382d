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

/// A failed call's error as MCP expects it: an unknown name or bad arguments are the
/// caller's mistake (invalid params); anything else is the tool's failure, an `isError`
/// result carrying the message.
pub(super) fn call_error(error: ToolError) -> Result<CallToolResponse, ErrorData> {
    match error {
        ToolError::NotFound { .. } | ToolError::InvalidArguments { .. } => Err(item_error(error)),
        other => Ok(failed_call(other.to_string()).into()),
    }
}

/// A call's result that failed with `message` (`isError`), for the model to read.
pub(super) fn failed_call(message: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}

/// A failure of a prompt or resource request: unknown names and bad arguments are
/// invalid params, as for tools; anything else an internal error with the message.
pub(super) fn item_error(error: ToolError) -> ErrorData {
    match error {
        ToolError::NotFound { .. } | ToolError::InvalidArguments { .. } => {
            ErrorData::invalid_params(error.to_string(), None)
        }
        other => ErrorData::internal_error(other.to_string(), None),
    }
}
