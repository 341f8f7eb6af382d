//! Which failures of a `server/discover` probe say the server is of the `initialize` era.
//!
//! The 2026-07-28 backward-compatibility rules (basic/versioning, and each transport's
//! page) make any answer to the probe that is neither a discover result nor a recognized
//! modern error the mark of a legacy server, which the client then starts with
//! `initialize`. rmcp's auto mode falls back only on a correlated JSON-RPC error (and on
//! an HTTP 4xx other than 401 and 403, which its transport turns into one); these are the
//! other answers that mean the same.

use rmcp::service::ClientInitializeError;
use rmcp::transport::streamable_http_client::StreamableHttpError;

/// The start of rmcp's message for a 2xx JSON body that is not a JSON-RPC message.
const NOT_JSON_RPC: &str = "could not parse JSON response as ServerJsonRpcMessage";

/// Whether `error`, the failure of a start in auto mode, says the server answered
/// `server/discover` as only a server of the `initialize` era would: with a result that is
/// not a discover result (the conformance suite's 2025-11-25 servers answer an empty
/// object), a response or error of another id, or an HTTP body that is not JSON-RPC.
///
/// A login that is required (401, 403), a modern rejection (an unsupported version, a
/// missing capability, mismatched headers), a server error and a transport that fails
/// are not: falling back would hide what is wrong.
pub(super) fn answered_as_legacy(error: &ClientInitializeError) -> bool {
    match error {
        ClientInitializeError::ExpectedInitResult(Some(_))
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => true,
        ClientInitializeError::TransportError { error, .. } => {
            match error.error.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(StreamableHttpError::UnexpectedContentType(_)) => true,
                Some(StreamableHttpError::UnexpectedServerResponse(message)) => message.starts_with(NOT_JSON_RPC),
                _ => false,
            }
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{EmptyObject, ErrorCode, ErrorData, RequestId, ServerResult};
    use rmcp::transport::DynamicTransportError;

    use super::*;

    fn http_failure(error: StreamableHttpError<reqwest::Error>) -> ClientInitializeError {
        let error = DynamicTransportError::from_parts(
            "rmcp::transport::worker::WorkerTransport<Client>",
            std::any::TypeId::of::<StreamableHttpError<reqwest::Error>>(),
            Box::new(error),
        );
        ClientInitializeError::TransportError { error, context: "send discover request".into() }
    }

    #[test]
    fn answers_only_a_legacy_server_gives_are_legacy() {
        let legacy = [
            ClientInitializeError::ExpectedInitResult(Some(ServerResult::EmptyResult(EmptyObject {}))),
            ClientInitializeError::UncorrelatedErrorResponse {
                expected: RequestId::Number(0),
                received: RequestId::Number(7),
            },
            http_failure(StreamableHttpError::UnexpectedContentType(Some("text/html".to_owned()))),
            http_failure(StreamableHttpError::UnexpectedServerResponse(
                format!("{NOT_JSON_RPC}: missing field `jsonrpc`: {{}}").into(),
            )),
        ];
        for error in legacy {
            assert!(answered_as_legacy(&error), "{error}");
        }
    }

    #[test]
    fn logins_modern_rejections_and_broken_transports_are_not_legacy() {
        let not_legacy = [
            ClientInitializeError::JsonRpcError(ErrorData::new(ErrorCode::HEADER_MISMATCH, "mismatch", None)),
            ClientInitializeError::NoCompatibleProtocolVersion { client_supported: vec![], server_supported: vec![] },
            ClientInitializeError::ConnectionClosed("discover response".to_owned()),
            ClientInitializeError::ExpectedInitResult(None),
            http_failure(StreamableHttpError::UnexpectedServerResponse("HTTP 401 Unauthorized: log in".into())),
            http_failure(StreamableHttpError::AuthRequired(
                rmcp::transport::streamable_http_client::AuthRequiredError::new("Bearer".to_owned()),
            )),
        ];
        for error in not_legacy {
            assert!(!answered_as_legacy(&error), "{error}");
        }
    }
}
