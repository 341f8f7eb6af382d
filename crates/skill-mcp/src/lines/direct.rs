//! What each side of a connection reads directly: a client the results of the tool calls
//! it sent, a server the tool calls it is sent; and what each side's lane takes.

use std::collections::HashSet;
use std::future::Future;

use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientNotification, ClientRequest, JsonRpcMessage, JsonRpcNotification,
    JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// What one side of a connection reads directly, and what it keeps of the messages it
/// sends in order to do so.
pub(crate) trait Direct: ServiceRole {
    /// What this side keeps of the requests it sent.
    type Sent: Default + Send;

    /// Notes `message`, about to be sent.
    fn sent(sent: &mut Self::Sent, message: &TxJsonRpcMessage<Self>);

    /// `line` read as the message it holds, when it is one this side reads directly.
    fn read(sent: &mut Self::Sent, line: &str) -> Option<RxJsonRpcMessage<Self>>;

    /// `message`, read, unless this side's lane takes it.
    fn divert(sent: &mut Self::Sent, message: RxJsonRpcMessage<Self>) -> Option<RxJsonRpcMessage<Self>>;

    /// Nothing more can be read.
    fn ended(sent: &mut Self::Sent);

    /// The transport closes: its lane finishes.
    fn finish(sent: &mut Self::Sent) -> impl Future<Output = ()> + Send + 'static;
}

/// What a client keeps of the tool calls it sent.
#[derive(Default)]
pub(crate) struct Calls {
    /// Those rmcp sent, by id, until their answer comes or they are cancelled.
    pub(super) rmcp: HashSet<RequestId>,
    /// Those the lane sent, whose answers go to it.
    pub(super) lane: super::lane::Pending,
}

/// A client reads the results of the tool calls it sent, and hands the answers to the
/// lane's to the lane.
impl Direct for rmcp::RoleClient {
    type Sent = Calls;

    fn sent(calls: &mut Calls, message: &ClientJsonRpcMessage) {
        let calls = &mut calls.rmcp;
        match message {
            JsonRpcMessage::Request(JsonRpcRequest { id, request: ClientRequest::CallToolRequest(_), .. }) => {
                calls.insert(id.clone());
            }
            JsonRpcMessage::Notification(JsonRpcNotification {
                notification: ClientNotification::CancelledNotification(cancelled),
                ..
            }) => {
                if let Some(id) = &cancelled.params.request_id {
                    calls.remove(id);
                }
            }
            _ => {}
        }
    }

    fn read(calls: &mut Calls, line: &str) -> Option<RxJsonRpcMessage<Self>> {
        #[derive(Deserialize)]
        struct Answer<'a> {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId,
            #[serde(borrow)]
            result: Option<&'a RawValue>,
            #[serde(default, deserialize_with = "present")]
            error: bool,
            #[serde(default, deserialize_with = "present")]
            method: bool,
        }
        let answer: Answer<'_> = serde_json::from_str(line).ok()?;
        if answer.method || !(calls.rmcp.remove(&answer.id) || calls.lane.contains(&answer.id)) || answer.error {
            return None;
        }
        let result = serde_json::from_str::<CallToolResult>(answer.result?.get()).ok()?;
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: ServerResult::CallToolResult(result),
        }))
    }

    fn divert(calls: &mut Calls, message: RxJsonRpcMessage<Self>) -> Option<RxJsonRpcMessage<Self>> {
        calls.lane.answer(message)
    }

    fn ended(calls: &mut Calls) {
        calls.lane.close();
    }

    fn finish(calls: &mut Calls) -> impl Future<Output = ()> + Send + 'static {
        calls.lane.close();
        std::future::ready(())
    }
}

/// A server reads tool calls, and hands them to its lane when it has one.
#[cfg(feature = "server")]
impl Direct for rmcp::RoleServer {
    type Sent = Option<std::sync::Arc<super::ServedCalls>>;

    fn sent(_: &mut Self::Sent, _: &TxJsonRpcMessage<Self>) {}

    fn read(_: &mut Self::Sent, line: &str) -> Option<RxJsonRpcMessage<Self>> {
        #[derive(Deserialize)]
        struct Call<'a> {
            jsonrpc: JsonRpcVersion2_0,
            id: RequestId,
            #[serde(borrow)]
            method: std::borrow::Cow<'a, str>,
            params: Option<rmcp::model::CallToolRequestParams>,
            #[serde(default, deserialize_with = "present")]
            result: bool,
            #[serde(default, deserialize_with = "present")]
            error: bool,
        }
        let call: Call<'_> = serde_json::from_str(line).ok()?;
        if call.method != "tools/call" || call.result || call.error {
            return None;
        }
        let mut params = call.params?;
        // rmcp keeps a request's `_meta` in its extensions, not in its params.
        let meta = params.meta.take();
        let mut request = rmcp::model::CallToolRequest::new(params);
        if let Some(meta) = meta {
            request.extensions.insert(meta);
        }
        Some(JsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: call.jsonrpc,
            id: call.id,
            request: ClientRequest::CallToolRequest(request),
        }))
    }

    fn divert(lane: &mut Self::Sent, message: RxJsonRpcMessage<Self>) -> Option<RxJsonRpcMessage<Self>> {
        match lane {
            Some(lane) => lane.take(message),
            None => Some(message),
        }
    }

    fn ended(_: &mut Self::Sent) {}

    fn finish(lane: &mut Self::Sent) -> impl Future<Output = ()> + Send + 'static {
        let lane = lane.clone();
        async move {
            if let Some(lane) = lane {
                lane.finish().await;
            }
        }
    }
}

/// Whether a field is there at all (rmcp tells messages apart by which fields they hold).
fn present<'de, D: Deserializer<'de>>(field: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(field).map(|_| true)
}

#[cfg(test)]
mod tests {
    use rmcp::RoleClient;
    use rmcp::model::{CallToolRequestParams, CancelledNotification, CancelledNotificationParam};
    use rmcp::transport::async_rw::JsonRpcMessageCodec;
    use serde_json::{Value, json};
    use tokio_util::bytes::BytesMut;
    use tokio_util::codec::Decoder as _;

    use super::*;

    /// What rmcp's own codec makes of `line`.
    fn rmcp_reads<Role: ServiceRole>(line: &Value) -> RxJsonRpcMessage<Role> {
        let mut buf = BytesMut::from(format!("{line}\n").as_bytes());
        JsonRpcMessageCodec::<RxJsonRpcMessage<Role>>::default().decode(&mut buf).unwrap().unwrap()
    }

    fn call_sent(calls: &mut Calls, id: i64) {
        let request =
            ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(CallToolRequestParams::new("echo")));
        RoleClient::sent(calls, &JsonRpcMessage::request(request, RequestId::Number(id)));
    }

    fn client_reads(calls: &mut Calls, line: &Value) -> Option<RxJsonRpcMessage<RoleClient>> {
        RoleClient::read(calls, &line.to_string())
    }

    #[test]
    fn a_tool_calls_result_reads_directly_as_rmcp_reads_it() {
        let results = [
            json!({"content": [{"type": "text", "text": "hi"}]}),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "x", "_meta": {"k": 1}}], "structuredContent": {"n": 1.5}, "isError": false, "_meta": {"m": "v"}}),
            json!({"content": [{"type": "image", "data": "AAAA", "mimeType": "image/png"}], "isError": true}),
            json!({"structuredContent": null}),
        ];
        for (id, result) in (1..).zip(results) {
            let line = json!({"jsonrpc": "2.0", "id": id, "result": result});
            let mut calls = Calls::default();
            call_sent(&mut calls, id);
            let direct = client_reads(&mut calls, &line).unwrap_or_else(|| panic!("{line} was not read directly"));
            let rmcp = rmcp_reads::<RoleClient>(&line);
            assert!(
                matches!(&direct, JsonRpcMessage::Response(response) if matches!(response.result, ServerResult::CallToolResult(_)))
            );
            assert_eq!(serde_json::to_value(&direct).unwrap(), serde_json::to_value(&rmcp).unwrap(), "{line}");
            assert!(calls.rmcp.is_empty(), "the answered call is forgotten");
        }
    }

    #[test]
    fn other_answers_are_left_to_rmcp_and_their_calls_forgotten() {
        let mut calls = Calls::default();
        // Not a call this side sent: a tools/list result.
        assert!(client_reads(&mut calls, &json!({"jsonrpc": "2.0", "id": 9, "result": {"tools": []}})).is_none());

        // A call answered with input_required, with an error, or with no known field.
        let answers = [
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "inputRequests": {}}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "unknown tool"}}),
            json!({"jsonrpc": "2.0", "id": 3, "result": {"other": true}}),
            json!({"jsonrpc": "2.0", "id": 4, "result": {"content": []}, "error": {"code": 1, "message": "both"}}),
        ];
        for (id, answer) in (1..).zip(answers) {
            call_sent(&mut calls, id);
            assert!(client_reads(&mut calls, &answer).is_none(), "{answer}");
            assert!(calls.rmcp.is_empty(), "the call of {answer} is forgotten");
        }

        // A request of the server's that shares a pending call's id is not that call's answer.
        call_sent(&mut calls, 5);
        assert!(
            client_reads(&mut calls, &json!({"jsonrpc": "2.0", "id": 5, "method": "ping", "result": {}})).is_none()
        );
        assert!(calls.rmcp.contains(&RequestId::Number(5)));
    }

    #[test]
    fn a_cancelled_call_is_forgotten() {
        let mut calls = Calls::default();
        call_sent(&mut calls, 7);
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(Some(RequestId::Number(7)), None));
        RoleClient::sent(
            &mut calls,
            &JsonRpcMessage::notification(ClientNotification::CancelledNotification(cancelled)),
        );
        assert!(calls.rmcp.is_empty());
    }

    #[cfg(feature = "server")]
    #[test]
    fn a_tool_call_reads_directly_as_rmcp_reads_it() {
        use rmcp::RoleServer;

        use crate::lines::check_against_rmcp;
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}),
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "echo", "_meta": {"progressToken": 3}, "requestState": "s"}}),
        ];
        for request in requests {
            let direct = RoleServer::read(&mut None, &request.to_string()).unwrap_or_else(|| panic!("{request}"));
            assert!(matches!(
                &direct,
                JsonRpcMessage::Request(JsonRpcRequest { request: ClientRequest::CallToolRequest(_), .. })
            ));
            // Read as rmcp reads it, `_meta` kept where rmcp keeps it (which the wire form
            // does not show).
            check_against_rmcp(request.to_string().as_bytes());
        }
        for other in [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo"}, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}),
            json!({"jsonrpc": "2.0", "method": "tools/call", "params": {"name": "echo"}}),
        ] {
            assert!(RoleServer::read(&mut None, &other.to_string()).is_none(), "{other}");
        }
    }
}
