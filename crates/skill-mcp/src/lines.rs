//! MCP over newline-delimited JSON, the stdio transport (an upstream server's pipes, and
//! the gateway's own stdin and stdout): rmcp's framing and rules, with the two messages
//! on every tool call's path read directly.
//!
//! rmcp reads each line as its whole message union: untagged enums that buffer the
//! message and try each variant in turn (a `tools/call` result is the sixteenth of
//! twenty). That was half a client's work per call. Here a tool call's result (on the
//! client side, for a call this transport sent) and a tool call's request (on the
//! server side) are read as their own types. Every other line, and every line the direct
//! read refuses, goes to rmcp's codec, so what is accepted, ignored or answered as
//! invalid stays rmcp's.

use std::collections::HashSet;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::StreamExt;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientNotification, ClientRequest, ErrorData, JsonRpcMessage,
    JsonRpcNotification, JsonRpcRequest, JsonRpcResponse, JsonRpcVersion2_0, RequestId, ServerResult,
};
use rmcp::service::{RxJsonRpcMessage, ServiceRole, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::{DEFAULT_MAX_LINE_LENGTH, JsonRpcMessageCodec, JsonRpcMessageCodecError};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::Mutex;
use tokio_util::bytes::{Buf, BytesMut};
use tokio_util::codec::{Decoder, FramedRead};

/// The stdio transport of one side of an MCP connection: messages read from `R`,
/// written to `W`, one JSON text per line.
pub(crate) struct Lines<Role: Direct, R, W> {
    read: FramedRead<R, Decode<Role>>,
    write: Arc<Mutex<Option<W>>>,
    heard: Heard,
    /// An invalid-request answer not yet written; `receive` finishes it first, so a
    /// cancelled `receive` loses no answer.
    reply: Option<Pin<Box<dyn Future<Output = io::Result<()>> + Send>>>,
}

impl<Role: Direct, R: AsyncRead, W> Lines<Role, R, W> {
    pub(crate) fn new(read: R, write: W) -> Self {
        let decode = Decode::new(DEFAULT_MAX_LINE_LENGTH, Role::Sent::default());
        let write = Arc::new(Mutex::new(Some(write)));
        Self { read: FramedRead::new(read, decode), write, heard: Heard::default(), reply: None }
    }

    /// The count of the requests and notifications this transport reads.
    pub(crate) fn heard(&self) -> Heard {
        self.heard.clone()
    }
}

/// How many requests and notifications a transport has read from its peer. rmcp handles
/// each in a task of its own: a caller that finds the count unchanged since its request
/// went out knows that no such task, for anything read before its answer, is still to run.
#[derive(Clone, Default)]
pub(crate) struct Heard(Arc<AtomicU64>);

impl Heard {
    pub(crate) fn count(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn note(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

impl<Role, R, W> Transport<Role> for Lines<Role, R, W>
where
    Role: Direct,
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<Role>) -> impl Future<Output = io::Result<()>> + Send + 'static {
        Role::sent(&mut self.read.decoder_mut().sent, &item);
        // Written out now, not in the future: rmcp spawns the future inside one of its
        // own, and each copy of it would otherwise hold the message (about 500 bytes).
        let line = serde_json::to_vec(&item).map(|mut line| {
            line.push(b'\n');
            line
        });
        let write = Arc::clone(&self.write);
        async move {
            let line = line?;
            let mut write = write.lock().await;
            let write =
                write.as_mut().ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "Transport is closed"))?;
            write.write_all(&line).await?;
            write.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<Role>> {
        loop {
            if let Some(reply) = self.reply.as_mut() {
                reply.await.ok()?;
                self.reply = None;
            }
            match self.read.next().await? {
                Ok(Line::Message(message)) => {
                    if matches!(message, JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_)) {
                        self.heard.note();
                    }
                    return Some(message);
                }
                Ok(Line::Invalid) => {
                    let answer =
                        TxJsonRpcMessage::<Role>::error(ErrorData::invalid_request("Invalid request", None), None);
                    self.reply = Some(Box::pin(self.send(answer)));
                }
                Ok(Line::Oversized) => {
                    tracing::error!(
                        max_line_length = DEFAULT_MAX_LINE_LENGTH,
                        "incoming message exceeded the maximum line length, discarding it"
                    );
                }
                Err(error) => {
                    tracing::error!("error reading from stream: {error}");
                    return None;
                }
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.write.lock().await.take();
        Ok(())
    }
}

/// What one side of a connection reads directly, and what it keeps of the messages it
/// sends in order to do so.
pub(crate) trait Direct: ServiceRole {
    /// What this side keeps of the requests it sent.
    type Sent: Default + Send;

    /// Notes `message`, about to be sent.
    fn sent(sent: &mut Self::Sent, message: &TxJsonRpcMessage<Self>);

    /// `line` read as the message it holds, when it is one this side reads directly.
    fn read(sent: &mut Self::Sent, line: &str) -> Option<RxJsonRpcMessage<Self>>;
}

/// A client reads the results of the tool calls it sent, whose ids it keeps until
/// their answer comes or it cancels them.
impl Direct for rmcp::RoleClient {
    type Sent = HashSet<RequestId>;

    fn sent(calls: &mut HashSet<RequestId>, message: &ClientJsonRpcMessage) {
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

    fn read(calls: &mut HashSet<RequestId>, line: &str) -> Option<RxJsonRpcMessage<Self>> {
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
        if answer.method || !calls.remove(&answer.id) || answer.error {
            return None;
        }
        let result = serde_json::from_str::<CallToolResult>(answer.result?.get()).ok()?;
        Some(JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: answer.jsonrpc,
            id: answer.id,
            result: ServerResult::CallToolResult(result),
        }))
    }
}

/// A server reads tool calls.
#[cfg(feature = "server")]
impl Direct for rmcp::RoleServer {
    type Sent = ();

    fn sent((): &mut (), _: &TxJsonRpcMessage<Self>) {}

    fn read((): &mut (), line: &str) -> Option<RxJsonRpcMessage<Self>> {
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
}

/// Reads each line of `text` as the transport reads it and as rmcp's codec alone reads
/// it, and panics where the two differ: for the fuzz targets (built with `--cfg fuzzing`)
/// and the tests only. The client reads each line as though its `id` were one of its
/// calls.
///
/// Both must accept, ignore or refuse as invalid the same lines, and accept each as the
/// same message. The one difference allowed: a tool call's answer that also holds the
/// fields of a result rmcp tries first is read as the tool call's result.
#[cfg(all(any(fuzzing, test), feature = "server"))]
pub fn check_against_rmcp(text: &[u8]) {
    use rmcp::model::RequestMetaObject;
    use rmcp::{RoleClient, RoleServer};

    /// What the transport's decoder makes of `line`, `sent` being what its side keeps.
    fn ours<Role: Direct>(sent: Role::Sent, line: &[u8]) -> Option<Line<Role>> {
        Decode::<Role>::new(usize::MAX, sent)
            .decode(&mut BytesMut::from([line, b"\n"].concat().as_slice()))
            .expect("no I/O")
    }

    /// What rmcp's codec alone makes of `line`.
    fn theirs<Role: ServiceRole>(line: &[u8]) -> Option<Line<Role>> {
        rmcp_read(&mut JsonRpcMessageCodec::default(), &mut BytesMut::from([line, b"\n"].concat().as_slice()))
    }

    /// A read as one comparable value: the message's wire form, `"invalid"` or `"ignored"`.
    fn outcome<Role: ServiceRole>(read: &Option<Line<Role>>) -> serde_json::Value {
        match read {
            Some(Line::Message(message)) => serde_json::to_value(message).expect("a message serializes"),
            Some(Line::Invalid) => "invalid".into(),
            Some(Line::Oversized) => unreachable!("no bound"),
            None => "ignored".into(),
        }
    }

    fn tool_result(read: &Option<Line<RoleClient>>) -> bool {
        let Some(Line::Message(JsonRpcMessage::Response(response))) = read else { return false };
        matches!(response.result, ServerResult::CallToolResult(_))
    }

    fn tool_call_meta(
        read: &Option<Line<RoleServer>>,
    ) -> Option<(Option<RequestMetaObject>, Option<RequestMetaObject>)> {
        let Some(Line::Message(JsonRpcMessage::Request(request))) = read else { return None };
        let ClientRequest::CallToolRequest(call) = &request.request else { return None };
        Some((call.params.meta.clone(), call.extensions.get::<RequestMetaObject>().cloned()))
    }

    for line in text.split(|byte| *byte == b'\n') {
        let id = serde_json::from_slice::<serde_json::Value>(line)
            .ok()
            .and_then(|message| serde_json::from_value::<RequestId>(message.get("id")?.clone()).ok());
        let (client, rmcp_client) = (ours::<RoleClient>(id.into_iter().collect(), line), theirs::<RoleClient>(line));
        let another_result =
            matches!(rmcp_client, Some(Line::Message(JsonRpcMessage::Response(_)))) && !tool_result(&rmcp_client);
        if !(tool_result(&client) && another_result) {
            assert_eq!(outcome(&client), outcome(&rmcp_client));
        }
        let (server, rmcp_server) = (ours::<RoleServer>((), line), theirs::<RoleServer>(line));
        assert_eq!(outcome(&server), outcome(&rmcp_server));
        assert_eq!(tool_call_meta(&server), tool_call_meta(&rmcp_server), "where a tool call's `_meta` is kept");
    }
}

/// Whether a field is there at all (rmcp tells messages apart by which fields they hold).
fn present<'de, D: Deserializer<'de>>(field: D) -> Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(field).map(|_| true)
}

/// One line read.
enum Line<Role: ServiceRole> {
    Message(RxJsonRpcMessage<Role>),
    /// JSON that is no message: answered as an invalid request, as rmcp does.
    Invalid,
    /// A line longer than the bound, skipped.
    Oversized,
}

/// Splits lines, bounded like rmcp's, and reads each: directly where it can, through
/// rmcp's codec otherwise.
struct Decode<Role: Direct> {
    max_line: usize,
    /// How much of the buffer holds no newline.
    scanned: usize,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    sent: Role::Sent,
    rmcp: JsonRpcMessageCodec<RxJsonRpcMessage<Role>>,
}

impl<Role: Direct> Decode<Role> {
    /// Lines of at most `max_line` bytes, read by a side that keeps `sent`.
    fn new(max_line: usize, sent: Role::Sent) -> Self {
        Self { max_line, scanned: 0, discarding: false, sent, rmcp: JsonRpcMessageCodec::default() }
    }
}

impl<Role: Direct> Decoder for Decode<Role> {
    type Item = Line<Role>;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line<Role>>> {
        loop {
            let end = buf.len().min(self.max_line.saturating_add(1));
            let newline = buf[self.scanned..end].iter().position(|byte| *byte == b'\n');
            let Some(newline) = newline.map(|at| self.scanned + at) else {
                self.scanned = 0;
                if self.discarding {
                    buf.advance(end);
                    if buf.is_empty() {
                        return Ok(None);
                    }
                    continue;
                }
                if buf.len() > self.max_line {
                    buf.advance(end);
                    self.discarding = true;
                    return Ok(Some(Line::Oversized));
                }
                self.scanned = end;
                return Ok(None);
            };
            self.scanned = 0;
            let mut line = buf.split_to(newline + 1);
            if std::mem::take(&mut self.discarding) {
                continue;
            }
            let text = line[..newline].strip_suffix(b"\r").unwrap_or(&line[..newline]);
            // Text only: serde skips the fields it ignores unchecked, where rmcp, which
            // buffers every field, refuses a line that is not UTF-8.
            let direct = std::str::from_utf8(text).ok().and_then(|text| Role::read(&mut self.sent, text));
            if let Some(message) = direct {
                return Ok(Some(Line::Message(message)));
            }
            if let Some(read) = rmcp_read(&mut self.rmcp, &mut line) {
                return Ok(Some(read));
            }
        }
    }

    /// An unfinished last line is dropped: it holds no whole message.
    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line<Role>>> {
        let line = self.decode(buf)?;
        if line.is_none() {
            buf.clear();
        }
        Ok(line)
    }
}

/// `line` (with its newline) read by rmcp's codec: `None` when rmcp ignores it (a
/// notification its compatibility rules skip, or no JSON at all).
fn rmcp_read<Role: ServiceRole>(
    codec: &mut JsonRpcMessageCodec<RxJsonRpcMessage<Role>>,
    line: &mut BytesMut,
) -> Option<Line<Role>> {
    match codec.decode(line) {
        Ok(message) => message.map(Line::Message),
        Err(JsonRpcMessageCodecError::Serde(error))
            if matches!(error.classify(), serde_json::error::Category::Data | serde_json::error::Category::Io) =>
        {
            tracing::debug!("protocol error on incoming message: {error}");
            Some(Line::Invalid)
        }
        Err(error) => {
            tracing::debug!("ignoring unparsable incoming message: {error}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::RoleClient;
    use rmcp::model::{CallToolRequestParams, CancelledNotification, CancelledNotificationParam};
    use serde_json::{Value, json};
    use tokio::io::AsyncReadExt;

    use super::*;

    /// What rmcp's own codec makes of `line`.
    fn rmcp_reads<Role: ServiceRole>(line: &Value) -> RxJsonRpcMessage<Role> {
        let mut buf = BytesMut::from(format!("{line}\n").as_bytes());
        JsonRpcMessageCodec::<RxJsonRpcMessage<Role>>::default().decode(&mut buf).unwrap().unwrap()
    }

    fn call_sent(calls: &mut HashSet<RequestId>, id: i64) {
        let request =
            ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(CallToolRequestParams::new("echo")));
        RoleClient::sent(calls, &JsonRpcMessage::request(request, RequestId::Number(id)));
    }

    fn client_reads(calls: &mut HashSet<RequestId>, line: &Value) -> Option<RxJsonRpcMessage<RoleClient>> {
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
            let mut calls = HashSet::new();
            call_sent(&mut calls, id);
            let direct = client_reads(&mut calls, &line).unwrap_or_else(|| panic!("{line} was not read directly"));
            let rmcp = rmcp_reads::<RoleClient>(&line);
            assert!(
                matches!(&direct, JsonRpcMessage::Response(response) if matches!(response.result, ServerResult::CallToolResult(_)))
            );
            assert_eq!(serde_json::to_value(&direct).unwrap(), serde_json::to_value(&rmcp).unwrap(), "{line}");
            assert!(calls.is_empty(), "the answered call is forgotten");
        }
    }

    #[test]
    fn other_answers_are_left_to_rmcp_and_their_calls_forgotten() {
        let mut calls = HashSet::new();
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
            assert!(calls.is_empty(), "the call of {answer} is forgotten");
        }

        // A request of the server's that shares a pending call's id is not that call's answer.
        call_sent(&mut calls, 5);
        assert!(
            client_reads(&mut calls, &json!({"jsonrpc": "2.0", "id": 5, "method": "ping", "result": {}})).is_none()
        );
        assert!(calls.contains(&RequestId::Number(5)));
    }

    #[test]
    fn a_cancelled_call_is_forgotten() {
        let mut calls = HashSet::new();
        call_sent(&mut calls, 7);
        let cancelled = CancelledNotification::new(CancelledNotificationParam::new(Some(RequestId::Number(7)), None));
        RoleClient::sent(
            &mut calls,
            &JsonRpcMessage::notification(ClientNotification::CancelledNotification(cancelled)),
        );
        assert!(calls.is_empty());
    }

    #[cfg(feature = "server")]
    #[test]
    fn a_tool_call_reads_directly_as_rmcp_reads_it() {
        use rmcp::RoleServer;
        let requests = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "x"}}}),
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "echo", "_meta": {"progressToken": 3}, "requestState": "s"}}),
        ];
        for request in requests {
            let direct = RoleServer::read(&mut (), &request.to_string()).unwrap_or_else(|| panic!("{request}"));
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
            assert!(RoleServer::read(&mut (), &other.to_string()).is_none(), "{other}");
        }
    }

    /// The fuzz target's seeds, checked here too: what they hold is read as rmcp reads it.
    #[cfg(feature = "server")]
    #[test]
    fn the_fuzz_seeds_read_as_rmcp_reads_them() {
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/mcp_lines");
        let mut checked = 0;
        for seed in std::fs::read_dir(seeds).unwrap() {
            check_against_rmcp(&std::fs::read(seed.unwrap().path()).unwrap());
            checked += 1;
        }
        assert!(checked > 5, "the seeds are there");
    }

    fn decoder(max_line: usize) -> Decode<RoleClient> {
        Decode::new(max_line, HashSet::new())
    }

    const PING: &str = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n";

    #[test]
    fn lines_rmcp_ignores_are_skipped_within_one_read_of_the_buffer() {
        let mut decode = decoder(DEFAULT_MAX_LINE_LENGTH);
        let mut buf =
            BytesMut::from(format!("not json\n\r\n{{\"method\":\"$/logTrace\",\"params\":{{}}}}\n{PING}").as_bytes());
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Message(JsonRpcMessage::Request(_)))));
        assert!(buf.is_empty());
    }

    #[test]
    fn json_that_is_no_message_is_invalid() {
        let mut buf = BytesMut::from(&b"{\"jsonrpc\":\"2.0\",\"foo\":1}\n"[..]);
        assert!(matches!(decoder(DEFAULT_MAX_LINE_LENGTH).decode(&mut buf).unwrap(), Some(Line::Invalid)));
    }

    #[test]
    fn an_oversized_line_is_skipped_whole_and_the_next_read() {
        let mut decode = decoder(PING.len());
        let long = "x".repeat(3 * PING.len());
        // In one buffer.
        let mut buf = BytesMut::from(format!("{long}\n{PING}").as_bytes());
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Oversized)));
        assert!(matches!(decode.decode(&mut buf).unwrap(), Some(Line::Message(_))));
        // Arriving in pieces.
        let mut buf = BytesMut::new();
        let mut lines = Vec::new();
        for piece in [&long[..10], &long[10..], "\n", &PING[..5], &PING[5..]] {
            buf.extend_from_slice(piece.as_bytes());
            while let Some(line) = decode.decode(&mut buf).unwrap() {
                lines.push(line);
            }
        }
        assert!(matches!(lines[..], [Line::Oversized, Line::Message(_)]));
        assert!(buf.is_empty());
    }

    #[tokio::test]
    async fn invalid_json_is_answered_and_the_connection_goes_on() {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(ours);
        let mut transport = Lines::<RoleClient, _, _>::new(read, write);
        theirs.write_all(format!("{{\"jsonrpc\":\"2.0\",\"foo\":1}}\n{PING}").as_bytes()).await.unwrap();
        assert!(matches!(transport.receive().await, Some(JsonRpcMessage::Request(_))));
        let mut answer = vec![0; 4096];
        let read = theirs.read(&mut answer).await.unwrap();
        let answer: Value = serde_json::from_slice(&answer[..read]).unwrap();
        assert_eq!(answer["error"]["code"], -32600, "{answer}");
        drop(theirs);
        assert!(transport.receive().await.is_none(), "the end of the stream ends the transport");
    }

    #[tokio::test]
    async fn requests_and_notifications_are_counted_answers_are_not() {
        let (ours, mut theirs) = tokio::io::duplex(4096);
        let (read, write) = tokio::io::split(ours);
        let mut transport = Lines::<RoleClient, _, _>::new(read, write);
        let heard = transport.heard();
        let lines = [
            json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
        ];
        for (line, count) in lines.iter().zip([0, 0, 1, 2]) {
            theirs.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            assert!(transport.receive().await.is_some(), "{line}");
            assert_eq!(heard.count(), count, "after {line}");
        }
    }
}
