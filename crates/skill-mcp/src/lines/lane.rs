//! Tool calls past rmcp's service loops, on the stdio transport itself: the lane.
//!
//! Through rmcp, a `tools/call` through the gateway crosses two service loops. The one
//! serving the gateway's client spawns a task for the request, takes its answer back over
//! a channel and spawns another task to write it; the one talking to the upstream takes
//! the request over a channel, spawns a task to write it, and hands the answer back over
//! another. Those hops were a fifth of the gateway's work on a call. On the lane, the
//! transport that reads a call starts the gateway's handler for it at once and writes its
//! answer ([`ServedCalls`]), and the upstream's request is written by the call itself and
//! its answer handed back by the transport that reads it ([`UpstreamLane`]).
//!
//! What a call does is the same either way: the gateway's handler is rmcp's dispatch of
//! the request (every check of it), the upstream request is the one rmcp would write,
//! and cancellation, progress and the requests and messages between the two sides still
//! go through rmcp. Only sessions of the `initialize` era take the lane: on 2026-07-28 a
//! request carries its own lifecycle, and the requests a server sends during a call are
//! tied to it, which rmcp's loops keep track of. rmcp's task-local note of the request a
//! handler serves, which only its HTTP transport reads, is not made on the lane.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, CancelledNotificationParam, JsonRpcMessage, JsonRpcVersion2_0,
    NumberOrString, ProgressToken, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::RxJsonRpcMessage;
use rmcp::{Peer, RoleClient};
use tokio::sync::oneshot;

use super::Output;

/// The ids of the lane's requests start here: rmcp numbers its own from 0, one at a
/// time, and never gets this far, so the two never meet on one connection.
const FIRST_ID: i64 = 1 << 32;

/// How a call sent on the lane was answered.
type Answer = Result<ServerResult, ServiceError>;

/// The lane's calls waiting for their answers.
#[derive(Default)]
struct Waiting {
    calls: HashMap<RequestId, oneshot::Sender<Answer>>,
    /// How many calls the lane has sent.
    sent: i64,
    /// Nothing more can be read: no answer is coming.
    closed: bool,
}

/// The calls in flight on one connection's lane, which its transport answers.
#[derive(Clone, Default)]
pub(crate) struct Pending(Arc<Mutex<Waiting>>);

impl Pending {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `id` is a call of the lane's.
    pub(super) fn contains(&self, id: &RequestId) -> bool {
        self.lock().calls.contains_key(id)
    }

    /// Hands the answer in `message` to the lane's call it answers; gives `message`
    /// back when it answers none.
    pub(super) fn answer(&self, message: RxJsonRpcMessage<RoleClient>) -> Option<RxJsonRpcMessage<RoleClient>> {
        let (call, answer) = match message {
            JsonRpcMessage::Response(response) => match self.take(&response.id) {
                Some(waiting) => (waiting, Ok(response.result)),
                None => return Some(JsonRpcMessage::Response(response)),
            },
            JsonRpcMessage::Error(error) => match error.id.as_ref().and_then(|id| self.take(id)) {
                Some(waiting) => (waiting, Err(ServiceError::McpError(error.error))),
                None => return Some(JsonRpcMessage::Error(error)),
            },
            other => return Some(other),
        };
        // A call that stopped waiting misses it.
        let _ = call.send(answer);
        None
    }

    /// The waiting call that `id` answers, taken from those waiting: by its id, or, as
    /// rmcp also accepts, by its number written as a string.
    fn take(&self, id: &RequestId) -> Option<oneshot::Sender<Answer>> {
        let mut waiting = self.lock();
        waiting.calls.remove(id).or_else(|| match id {
            RequestId::String(text) => waiting.calls.remove(&RequestId::Number(text.parse().ok()?)),
            RequestId::Number(_) => None,
        })
    }

    /// Nothing more can be read: every call waiting fails, and every later one.
    pub(super) fn close(&self) {
        let mut waiting = self.lock();
        waiting.closed = true;
        waiting.calls.clear();
    }
}

/// One upstream connection's lane: where its calls are written and answered.
#[derive(Clone)]
pub(crate) struct UpstreamLane {
    pending: Pending,
    output: Output,
}

impl<R> super::Lines<RoleClient, R> {
    /// The lane of this client transport.
    pub(crate) fn lane(&self) -> UpstreamLane {
        UpstreamLane { pending: self.read.decoder().sent.lane.clone(), output: self.output.clone() }
    }
}

impl UpstreamLane {
    /// Writes the `tools/call` of `params` as rmcp would, with `meta` added to their
    /// own, a fresh id and the same number as its progress token; its answer comes to
    /// the [`LaneCall`].
    pub(crate) async fn send(
        &self,
        mut params: CallToolRequestParams,
        meta: Option<RequestMetaObject>,
    ) -> Result<LaneCall, ServiceError> {
        let (answered, answer) = oneshot::channel();
        // Waiting before it is written: the answer may come first.
        let number = {
            let mut waiting = self.pending.lock();
            if waiting.closed {
                return Err(ServiceError::TransportClosed);
            }
            let number = FIRST_ID + waiting.sent;
            waiting.sent += 1;
            waiting.calls.insert(RequestId::Number(number), answered);
            number
        };
        let token = ProgressToken(NumberOrString::Number(number));
        let call =
            LaneCall { id: RequestId::Number(number), token: token.clone(), answer, pending: self.pending.clone() };
        // One `_meta`, as rmcp writes it: the params' own, and over it the caller's and
        // the progress token.
        let merged = params.meta.get_or_insert_with(RequestMetaObject::new);
        if let Some(meta) = meta {
            merged.extend(meta);
        }
        merged.set_progress_token(token);
        // Written in one pass: rmcp writes a request's params into a JSON value first,
        // to merge their `_meta` with the one it keeps beside them.
        let line =
            CallLine { jsonrpc: JsonRpcVersion2_0, id: &call.id, method: CallToolRequestMethod, params: &params };
        match self.output.write(&line).await {
            Ok(()) => Ok(call),
            Err(error) => {
                tracing::debug!("could not write a tool call: {error}");
                Err(ServiceError::TransportClosed)
            }
        }
    }
}

/// A `tools/call` request as the lane writes it.
#[derive(serde::Serialize)]
struct CallLine<'a> {
    jsonrpc: JsonRpcVersion2_0,
    id: &'a RequestId,
    method: CallToolRequestMethod,
    params: &'a CallToolRequestParams,
}

/// A call sent on the lane, until its answer comes (dropped, it waits no more).
pub(crate) struct LaneCall {
    id: RequestId,
    /// The progress token it was sent with: its id's number.
    token: ProgressToken,
    answer: oneshot::Receiver<Answer>,
    pending: Pending,
}

impl LaneCall {
    /// The call's id.
    pub(crate) fn id(&self) -> &RequestId {
        &self.id
    }

    /// The progress token it was sent with.
    pub(crate) fn progress_token(&self) -> ProgressToken {
        self.token.clone()
    }

    /// Its answer within `bound`; after it, the server is told the call is cancelled,
    /// as rmcp tells it. A transport that ended first gives `TransportClosed`.
    pub(crate) async fn response(mut self, bound: Duration, peer: &Peer<RoleClient>) -> Answer {
        match tokio::time::timeout(bound, &mut self.answer).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_closed)) => Err(ServiceError::TransportClosed),
            Err(_elapsed) => {
                let reason = rmcp::service::RequestHandle::<RoleClient>::REQUEST_TIMEOUT_REASON.to_owned();
                let cancelled = CancelledNotificationParam::new(Some(self.id.clone()), Some(reason));
                // A server that is gone needs no cancellation.
                let _ = peer.notify_cancelled(cancelled).await;
                Err(ServiceError::Timeout { timeout: bound })
            }
        }
    }
}

impl Drop for LaneCall {
    fn drop(&mut self) {
        self.pending.lock().calls.remove(&self.id);
    }
}

#[cfg(feature = "server")]
pub(crate) use served::{AnswerCall, ServedCalls};

#[cfg(feature = "server")]
mod served {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock, PoisonError};
    use std::time::Duration;

    use futures_util::future::BoxFuture;
    use rmcp::model::{
        ClientNotification, ClientRequest, ErrorData, GetExtensions, GetMeta, JsonRpcMessage, JsonRpcRequest,
        RequestId, ServerJsonRpcMessage, ServerResult,
    };
    use rmcp::service::{RequestContext, RxJsonRpcMessage};
    use rmcp::{Peer, RoleServer};
    use tokio_util::sync::CancellationToken;
    use tokio_util::task::TaskTracker;

    use crate::lines::{Lines, Output};

    /// How long a closing transport waits for the calls in flight to be answered, as
    /// rmcp waits for its own.
    const DRAIN_BOUND: Duration = Duration::from_secs(5);

    /// Answers a `tools/call` request as the server's handler answers it.
    pub(crate) type AnswerCall = Arc<
        dyn Fn(ClientRequest, RequestContext<RoleServer>) -> BoxFuture<'static, Result<ServerResult, ErrorData>>
            + Send
            + Sync,
    >;

    /// A server transport's lane: the tool calls it reads, answered by the server's
    /// handler and written back by the transport, past rmcp's service loop.
    pub(crate) struct ServedCalls {
        answer: AnswerCall,
        /// The session's client, once it has initialized: until then, calls go through
        /// rmcp.
        peer: OnceLock<Peer<RoleServer>>,
        /// The calls being answered, by id, each cancelled by its client's
        /// `notifications/cancelled`.
        running: Mutex<HashMap<RequestId, CancellationToken>>,
        tasks: TaskTracker,
        /// Cancels the calls left once the transport closes: as through rmcp, a gateway
        /// that stops first lets the calls in flight be answered, within a bound.
        stop: CancellationToken,
        output: Output,
    }

    impl<R> Lines<RoleServer, R> {
        /// This transport, answering tool calls with `answer` on its lane once
        /// [`ServedCalls::ready`] is told the session's client.
        pub(crate) fn answering_calls(mut self, answer: AnswerCall) -> (Self, Arc<ServedCalls>) {
            let calls = Arc::new(ServedCalls {
                answer,
                peer: OnceLock::new(),
                running: Mutex::default(),
                tasks: TaskTracker::new(),
                stop: CancellationToken::new(),
                output: self.output.clone(),
            });
            self.read.decoder_mut().sent = Some(Arc::clone(&calls));
            (self, calls)
        }
    }

    impl ServedCalls {
        /// The session's client has initialized: its calls take the lane from now on.
        pub(crate) fn ready(&self, peer: Peer<RoleServer>) {
            let _ = self.peer.set(peer);
        }

        fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
            self.running.lock().unwrap_or_else(PoisonError::into_inner)
        }

        /// Takes `message` when it is a tool call of an initialized session, and starts
        /// answering it; notes a cancellation of a call it answers (and gives it back,
        /// for the server's handler to hear as well).
        pub(in crate::lines) fn take(
            self: &Arc<Self>,
            message: RxJsonRpcMessage<RoleServer>,
        ) -> Option<RxJsonRpcMessage<RoleServer>> {
            match message {
                JsonRpcMessage::Request(request) if matches!(request.request, ClientRequest::CallToolRequest(_)) => {
                    self.start(request)
                }
                JsonRpcMessage::Notification(notification) => {
                    if let ClientNotification::CancelledNotification(cancelled) = &notification.notification
                        && let Some(id) = &cancelled.params.request_id
                        && let Some(call) = self.running().remove(id)
                    {
                        call.cancel();
                    }
                    Some(JsonRpcMessage::Notification(notification))
                }
                other => Some(other),
            }
        }

        /// Starts answering `request`, as rmcp's service loop would: with the request's
        /// `_meta` and extensions in its context and a cancellation token of its own.
        /// A request of a session not yet initialized, or one that names its own
        /// protocol version (2026-07-28), is given back.
        fn start(self: &Arc<Self>, mut request: JsonRpcRequest<ClientRequest>) -> Option<RxJsonRpcMessage<RoleServer>> {
            let peer = self.peer.get().filter(|peer| peer.peer_info().is_some());
            let Some(peer) = peer.filter(|_| request.request.get_meta().protocol_version().is_none()) else {
                return Some(JsonRpcMessage::Request(request));
            };
            let id = request.id;
            let cancelled = self.stop.child_token();
            let mut context = RequestContext::new(id.clone(), peer.clone());
            context.ct = cancelled.clone();
            // Taken out, not swapped for an empty one as rmcp does: that would make the
            // extensions' map for a request that came without `_meta`.
            context.meta = request.request.extensions_mut().remove().unwrap_or_default();
            context.extensions = std::mem::take(request.request.extensions_mut());
            self.running().insert(id.clone(), cancelled.clone());
            let answered = (self.answer)(request.request, context);
            let calls = Arc::clone(self);
            self.tasks.spawn(async move {
                let answer = match answered.await {
                    Ok(result) => ServerJsonRpcMessage::response(result, id.clone()),
                    Err(error) => ServerJsonRpcMessage::error(error, Some(id.clone())),
                };
                // A cancelled call is not answered.
                if calls.running().remove(&id).is_none() || cancelled.is_cancelled() {
                    return;
                }
                if let Err(error) = calls.output.write(&answer).await {
                    tracing::warn!(%id, "could not write the answer to a tool call: {error}");
                }
            });
            None
        }

        /// Waits, within [`DRAIN_BOUND`], for the calls in flight to be answered, then
        /// cancels those left.
        pub(crate) async fn finish(&self) {
            self.tasks.close();
            if tokio::time::timeout(DRAIN_BOUND, self.tasks.wait()).await.is_err() {
                tracing::warn!("tool calls were still running as the client's session closed");
            }
            self.stop.cancel();
        }
    }
}

#[cfg(test)]
mod tests {
    use rmcp::ServiceExt;
    use rmcp::model::{CallToolRequest, ClientRequest};
    use serde_json::{Value, json};
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;
    use crate::lines::Lines;

    /// A call of `echo`, with `_meta` of its own.
    fn echo(text: &str) -> CallToolRequestParams {
        let arguments = json!({"text": text}).as_object().cloned().unwrap();
        let mut params = CallToolRequestParams::new("echo").with_arguments(arguments);
        params.meta = Some(serde_json::from_value(json!({"traceparent": "own", "kept": 1})).unwrap());
        params
    }

    /// A client whose transport's other end is a line reader and writer (the server's).
    async fn client_of_raw_server() -> (
        rmcp::service::RunningService<RoleClient, ()>,
        UpstreamLane,
        tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
        tokio::io::WriteHalf<tokio::io::DuplexStream>,
    ) {
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (read, write) = tokio::io::split(ours);
        let lines = Lines::<RoleClient, _>::new(read, write);
        let lane = lines.lane();
        let (server_read, mut server_write) = tokio::io::split(theirs);
        let mut server_lines = BufReader::new(server_read).lines();
        let serving = async {
            let initialize: Value = serde_json::from_str(&server_lines.next_line().await.unwrap().unwrap()).unwrap();
            let result = json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "raw", "version": "0"}});
            let answer = json!({"jsonrpc": "2.0", "id": initialize["id"], "result": result});
            server_write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
            server_lines.next_line().await.unwrap().unwrap()
        };
        let (client, initialized) = tokio::join!(async { ().serve(lines).await.unwrap() }, serving);
        assert!(initialized.contains("notifications/initialized"));
        (client, lane, server_lines, server_write)
    }

    #[tokio::test]
    async fn a_lane_call_is_written_as_rmcp_writes_it_and_its_answer_comes_back_to_it() {
        let (client, lane, mut server_lines, mut server_write) = client_of_raw_server().await;
        let meta = || Some(serde_json::from_value::<RequestMetaObject>(json!({"traceparent": "t"})).unwrap());
        let call = lane.send(echo("hi"), meta()).await.unwrap();
        let mut written: Value = serde_json::from_str(&server_lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(
            (&written["id"], &written["params"]["_meta"]["progressToken"]),
            (&json!(FIRST_ID), &json!(FIRST_ID))
        );
        assert_eq!(call.progress_token(), ProgressToken(NumberOrString::Number(FIRST_ID)));
        let mut options = rmcp::service::PeerRequestOptions::no_options();
        options.meta = meta();
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(echo("hi")));
        let through_rmcp = client.peer().send_cancellable_request(request, options).await.unwrap();
        let mut rmcp_wrote: Value = serde_json::from_str(&server_lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(rmcp_wrote["id"], json!(through_rmcp.id), "rmcp numbers its own requests");
        for message in [&mut written, &mut rmcp_wrote] {
            message["id"] = json!("id");
            message["params"]["_meta"]["progressToken"] = json!("token");
        }
        assert_eq!(written, rmcp_wrote, "the lane writes what rmcp writes");
        assert_eq!(written["params"]["_meta"], json!({"traceparent": "t", "kept": 1, "progressToken": "token"}));

        // rmcp's own request, sent meanwhile, is answered through rmcp, and the lane's
        // answer (its id written as a string, which rmcp accepts too) reaches the lane.
        let listed = tokio::spawn({
            let peer = client.peer().clone();
            async move { peer.list_tools(None).await }
        });
        let list: Value = serde_json::from_str(&server_lines.next_line().await.unwrap().unwrap()).unwrap();
        assert!(list["id"].as_i64().unwrap() < FIRST_ID, "{list}");
        let answers = [
            json!({"jsonrpc": "2.0", "id": FIRST_ID.to_string(), "result": {"content": [{"type": "text", "text": "hi"}]}}),
            json!({"jsonrpc": "2.0", "id": list["id"], "result": {"tools": []}}),
        ];
        for answer in answers {
            server_write.write_all(format!("{answer}\n").as_bytes()).await.unwrap();
        }
        let result = call.response(Duration::from_secs(10), client.peer()).await.unwrap();
        let ServerResult::CallToolResult(result) = result else { panic!("{result:?}") };
        assert_eq!(serde_json::to_value(&result.content).unwrap(), json!([{"type": "text", "text": "hi"}]));
        assert!(listed.await.unwrap().unwrap().tools.is_empty());

        // An error answers its call; a late answer to a call that stopped waiting goes
        // nowhere.
        let call = lane.send(echo("bad"), None).await.unwrap();
        let id = call.id().clone();
        server_lines.next_line().await.unwrap().unwrap();
        let refusal = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32602, "message": "no"}});
        server_write.write_all(format!("{refusal}\n").as_bytes()).await.unwrap();
        let refused = call.response(Duration::from_secs(10), client.peer()).await;
        assert!(matches!(refused, Err(ServiceError::McpError(error)) if error.message == "no"));
        drop(lane.send(echo("dropped"), None).await.unwrap());
        assert!(lane.pending.lock().calls.is_empty(), "a call that stopped waiting is forgotten");
    }

    #[tokio::test]
    async fn a_lane_call_times_out_with_a_cancellation_and_fails_when_the_server_goes() {
        let (client, lane, mut server_lines, server_write) = client_of_raw_server().await;
        let call = lane.send(echo("slow"), None).await.unwrap();
        server_lines.next_line().await.unwrap().unwrap();
        let timed_out = call.response(Duration::from_millis(1), client.peer()).await;
        assert!(matches!(timed_out, Err(ServiceError::Timeout { .. })), "{timed_out:?}");
        let cancelled: Value = serde_json::from_str(&server_lines.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(cancelled["method"], "notifications/cancelled");
        assert_eq!(cancelled["params"]["requestId"], FIRST_ID);

        let call = lane.send(echo("lost"), None).await.unwrap();
        drop((server_lines, server_write));
        let lost = call.response(Duration::from_secs(10), client.peer()).await;
        assert!(matches!(lost, Err(ServiceError::TransportClosed)), "{lost:?}");
        assert!(matches!(lane.send(echo("late"), None).await, Err(ServiceError::TransportClosed)));
    }

    #[cfg(feature = "server")]
    mod served {
        use rmcp::model::CallToolResult;
        use rmcp::service::RequestContext;
        use rmcp::{RoleServer, ServerHandler, Service as _};

        use super::*;

        /// A server whose one tool waits for a word on a channel or for its cancellation;
        /// a tool called `bad` refuses its arguments.
        #[derive(Clone)]
        struct Waits(Arc<tokio::sync::Mutex<tokio::sync::mpsc::Receiver<()>>>);

        impl ServerHandler for Waits {
            fn get_info(&self) -> rmcp::model::ServerConfig {
                rmcp::model::ServerConfig::new(rmcp::model::ServerCapabilities::builder().enable_tools().build())
            }

            async fn call_tool(
                &self,
                request: CallToolRequestParams,
                context: RequestContext<RoleServer>,
            ) -> Result<rmcp::model::CallToolResponse, rmcp::ErrorData> {
                if request.name == "bad" {
                    return Err(rmcp::ErrorData::invalid_params("no such arguments", None));
                }
                // A cancelled call takes no word meant for the next.
                tokio::select! {
                    biased;
                    () = context.ct.cancelled() => return Err(rmcp::ErrorData::internal_error("cancelled", None)),
                    _ = async { self.0.lock().await.recv().await } => {}
                }
                let text = rmcp::model::ContentBlock::Text(rmcp::model::TextContent::new(request.name.to_string()));
                Ok(CallToolResult::success(vec![text]).into())
            }
        }

        /// What a raw client reads next: the JSON of the gateway's next line.
        async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>) -> Value {
            serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap()
        }

        #[tokio::test]
        async fn served_calls_are_answered_on_the_lane_cancelled_ones_not_at_all() {
            use std::sync::atomic::{AtomicUsize, Ordering};
            let (go, waiting) = tokio::sync::mpsc::channel(4);
            let server = Waits(Arc::new(tokio::sync::Mutex::new(waiting)));
            let answered = Arc::new(AtomicUsize::new(0));
            let answer: AnswerCall = {
                let (server, answered) = (server.clone(), Arc::clone(&answered));
                Arc::new(move |request, context| {
                    let (server, answered) = (server.clone(), Arc::clone(&answered));
                    Box::pin(async move {
                        answered.fetch_add(1, Ordering::SeqCst);
                        server.handle_request(request, context).await
                    })
                })
            };
            let (ours, theirs) = tokio::io::duplex(64 * 1024);
            let (read, write) = tokio::io::split(ours);
            let (lines, calls) = Lines::<RoleServer, _>::new(read, write).answering_calls(answer);
            let serving = tokio::spawn(async move {
                let running = server.serve(lines).await.unwrap();
                calls.ready(running.peer().clone());
                running.waiting().await.unwrap();
            });
            let (client_read, mut client) = tokio::io::split(theirs);
            let mut client_lines = BufReader::new(client_read).lines();
            async fn send(client: &mut tokio::io::WriteHalf<tokio::io::DuplexStream>, line: Value) {
                client.write_all(format!("{line}\n").as_bytes()).await.unwrap();
            }
            let call = |id: i64, name: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name}});
            send(
                &mut client,
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
                "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}),
            )
            .await;
            assert_eq!(next(&mut client_lines).await["id"], 0);
            send(&mut client, json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;

            // Until the lane is told the session's client, calls go through rmcp; then
            // through the lane, and an error goes back as it is.
            for id in 1.. {
                send(&mut client, call(id, "bad")).await;
                let refused = next(&mut client_lines).await;
                assert_eq!(refused["error"]["message"], "no such arguments", "{refused}");
                if answered.load(Ordering::SeqCst) > 0 {
                    break;
                }
            }

            // A call its client cancels is not answered; the next one is.
            let started = answered.load(Ordering::SeqCst);
            send(&mut client, call(100, "first")).await;
            while answered.load(Ordering::SeqCst) == started {
                tokio::task::yield_now().await;
            }
            send(
                &mut client,
                json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 100}}),
            )
            .await;
            send(&mut client, call(101, "second")).await;
            // The second call started: the cancellation, read before it, is heard.
            while answered.load(Ordering::SeqCst) < started + 2 {
                tokio::task::yield_now().await;
            }
            go.send(()).await.unwrap();
            let second = next(&mut client_lines).await;
            assert_eq!((&second["id"], &second["result"]["content"][0]["text"]), (&json!(101), &json!("second")));

            // A client whose input ends still gets the answer of the call in flight.
            send(&mut client, call(102, "third")).await;
            while answered.load(Ordering::SeqCst) < started + 3 {
                tokio::task::yield_now().await;
            }
            client.shutdown().await.unwrap();
            go.send(()).await.unwrap();
            assert_eq!(next(&mut client_lines).await["id"], 102);
            assert!(client_lines.next_line().await.unwrap().is_none(), "nothing more is written");
            serving.await.unwrap();
        }
    }
}
