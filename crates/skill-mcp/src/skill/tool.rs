//! [`McpTool`]: one tool of an MCP server, and how a call of it goes: the call bound,
//! cancellation when the caller gives up, its route (progress, requests, log messages),
//! `input_required` rounds, and what a failure says.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, ProgressToken, RequestId, RequestMetaObject, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::Value;
use skill_core::{Icon, ItemKind, Tool, ToolAnnotations, ToolContext, ToolError, ToolOutput};

use super::Shared;
use super::input::{self, Answer};
use crate::connection::Connection;
use crate::lines::LaneCall;
use crate::route::CallRoute;
use crate::wire::{icons_from_rmcp, meta_from_rmcp, tool_output, wire_into};

/// How many turns a call's route outlives its answer when the server sent notifications
/// or requests while it ran: rmcp handles each in a task of its own, spawned before the
/// answer was delivered (a turn each lets them run; a timer would cost every such call).
const NOTIFICATION_YIELDS: usize = 4;

/// How much longer the route of a call whose server reports progress outlives the answer:
/// on a busy multi-threaded runtime the task with the last report (sent just before the
/// answer) may not have run within the turns above. Only such calls wait.
const PROGRESS_GRACE: Duration = Duration::from_millis(20);

/// What a `tools/call` gets in its `_meta` besides its own: with the gateway, what a
/// 2026-07-28 server (`stateless`) is told of the calling client (its capabilities and
/// log level), which an older server has no use for.
fn caller_meta(stateless: bool) -> Option<RequestMetaObject> {
    #[cfg(feature = "server")]
    if stateless && let Some(caller) = crate::server::Caller::current() {
        return Some(caller.upstream_meta());
    }
    let _ = stateless;
    None
}

/// A `tools/call` sent, through rmcp or on the connection's lane.
enum InFlight {
    Rmcp(Box<RequestHandle<RoleClient>>),
    Lane(LaneCall),
}

impl InFlight {
    fn id(&self) -> &RequestId {
        match self {
            InFlight::Rmcp(handle) => &handle.id,
            InFlight::Lane(call) => call.id(),
        }
    }

    fn progress_token(&self) -> ProgressToken {
        match self {
            InFlight::Rmcp(handle) => handle.progress_token.clone(),
            InFlight::Lane(call) => call.progress_token(),
        }
    }

    /// The answer within `bound`; after it, the server hears the call is cancelled.
    async fn response(self, bound: Duration, peer: &Peer<RoleClient>) -> Result<ServerResult, ServiceError> {
        match self {
            InFlight::Rmcp(handle) => handle.await_response().await,
            InFlight::Lane(call) => call.response(bound, peer).await,
        }
    }
}

/// Sends `notifications/cancelled` for the request `id` when dropped before it is
/// answered (`id` is then still set): the caller stopped waiting.
struct CancelOnDrop<'a> {
    peer: &'a Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("the caller stopped waiting".to_owned());
                // A server that is gone needs no cancellation.
                let _ = peer.notify_cancelled(rmcp::model::CancelledNotificationParam::new(Some(id), reason)).await;
            });
        }
    }
}

/// One tool of an MCP server.
pub struct McpTool {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    annotations: ToolAnnotations,
    meta: Option<Value>,
    icons: Vec<Icon>,
    shared: Arc<Shared>,
    /// Whether it is the trust lock's definition, offered before the server started: a
    /// call of it, once the server started, is refused when the server's own definition
    /// is withheld ([`Shared::refuse_withheld`]).
    stand_in: bool,
}

impl McpTool {
    /// The server's `tool`; without icons of its own, it shows the server's
    /// (`server_icons`), which a host would otherwise never see through the gateway.
    pub(super) fn new(tool: rmcp::model::Tool, server_icons: &[Icon], shared: Arc<Shared>) -> Self {
        let icons = match icons_from_rmcp(tool.icons) {
            own if own.is_empty() => server_icons.to_vec(),
            own => own,
        };
        Self {
            name: tool.name.to_string(),
            title: tool.title.clone(),
            description: tool.description.as_deref().unwrap_or_default().to_owned(),
            input_schema: Value::Object((*tool.input_schema).clone()),
            output_schema: tool.output_schema.as_ref().map(|schema| Value::Object((**schema).clone())),
            annotations: tool.annotations.as_ref().and_then(|hints| wire_into(hints).ok()).unwrap_or_default(),
            meta: meta_from_rmcp(tool.meta),
            icons,
            shared,
            stand_in: false,
        }
    }

    /// The tool as a stand-in: the definition the trust lock recorded, offered until
    /// the server starts.
    pub(super) fn stand_in(mut self) -> Self {
        self.stand_in = true;
        self
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool").field("server", &self.shared.server).field("name", &self.name).finish()
    }
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.input_schema
    }

    fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.annotations
    }

    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }

    fn meta(&self) -> Option<&Value> {
        self.meta.as_ref()
    }

    fn icons(&self) -> &[Icon] {
        &self.icons
    }

    /// Calls the tool on the server with the call timeout (a stand-in's call, once the
    /// server started, only if the agent does not withhold the server's own definition
    /// of the tool); a timeout sends
    /// `notifications/cancelled`. After a timeout or a crash the server is restarted by
    /// the next call; the failed call is never replayed. A server that answers
    /// `input_required` is answered and called again (see [`input::until_complete`]).
    async fn call(&self, context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        let server = &self.shared.server;
        let connection = self.shared.connection().await.map_err(|error| {
            let logged = crate::stderr::logged_under_call(error.stderr());
            ToolError::failed(format!("MCP server `{server}` is not available: {error}{logged}"))
        })?;
        if self.stand_in {
            self.shared.refuse_withheld(ItemKind::Tool, &self.name)?;
        }
        let arguments = match arguments {
            Value::Object(arguments) => arguments,
            _ => serde_json::Map::new(),
        };
        let response = input::until_complete(server, &self.shared.person, |responses, state| {
            let mut params = CallToolRequestParams::new(self.name.clone()).with_arguments(arguments.clone());
            (params.input_responses, params.request_state) = (responses, state);
            crate::wire::with_trace(&mut params);
            self.send(&connection, params)
        })
        .await?;
        match response {
            Ok(ServerResult::CallToolResult(result)) => tool_output(result).map_err(|error| {
                ToolError::failed(format!("MCP server `{server}` sent an unreadable result: {error}"))
            }),
            failed => Err(self.failure(failed, &connection, context).await),
        }
    }
}

impl McpTool {
    /// Sends one `tools/call` with the call timeout. The server's progress, requests and
    /// log messages for it reach whoever waits for it, from before the request goes out.
    ///
    /// Its future is the one [`input::until_complete`] awaits, with nothing around it:
    /// each wrapper would hold (and copy) its several KB once more on every call. So it
    /// answers in the shape that takes, and is never `Err`: a failed exchange is the
    /// answer's, for [`Self::failure`].
    async fn send(
        &self,
        connection: &Connection,
        params: CallToolRequestParams,
    ) -> Result<Answer<Result<ServerResult, ServiceError>>, ToolError> {
        let bound = self.shared.config.timeouts.call;
        let meta = caller_meta(connection.is_stateless());
        let mut route = CallRoute::current().map(|route| self.shared.calls.enter(route));
        let heard = connection.heard();
        let sent = match connection.lane() {
            Some(lane) => lane.send(params, meta).await.map(InFlight::Lane),
            None => {
                let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
                let mut options = PeerRequestOptions::with_timeout(bound);
                options.meta = meta;
                connection
                    .peer
                    .send_cancellable_request(request, options)
                    .await
                    .map(|handle| InFlight::Rmcp(Box::new(handle)))
            }
        };
        let sent = match sent {
            Ok(sent) => sent,
            Err(error) => return Ok(Answer::Complete(Err(error))),
        };
        // A caller that gives up (drops this future) cancels the call on the server.
        let mut unanswered = CancelOnDrop { peer: &connection.peer, id: Some(sent.id().clone()) };
        if let Some(route) = &mut route {
            route.sent(sent.progress_token());
        }
        let response = sent.response(bound, &connection.peer).await;
        if let Some(route) = route {
            // rmcp hands each notification to a task of its own: those that came before
            // the answer (progress, log messages) get to find their call. When the
            // connection read none since the request went out, no such task waits.
            if heard.is_none() || connection.heard() != heard {
                for _ in 0..NOTIFICATION_YIELDS {
                    tokio::task::yield_now().await;
                }
            }
            if route.heard_progress() {
                tokio::time::sleep(PROGRESS_GRACE).await;
            }
        }
        unanswered.id = None;
        Ok(match response {
            Ok(ServerResult::InputRequiredResult(asked)) => Answer::InputRequired(asked),
            response => Answer::Complete(response),
        })
    }

    /// What a call refused for want of the OAuth `scope` tells the caller. A login that
    /// keeps its tokens in a file is told of the scope, so that the next `omniagent mcp
    /// login` asks for it beside those held (step-up); otherwise the scope is for the
    /// config's `oauth.scopes`.
    async fn step_up(&self, scope: String) -> String {
        let server = &self.shared.server;
        let noted = match self.shared.endpoint.token_file().cloned() {
            Some(tokens) => {
                let named = scope.clone();
                skill_core::off_runtime(move || tokens.step_up(&named)).await.is_ok_and(|noted| noted == Ok(true))
            }
            None => false,
        };
        if noted {
            format!(
                "MCP server `{server}` needs the OAuth scopes `{scope}` for this call: run \
                 `omniagent mcp login {server}` to grant them"
            )
        } else {
            format!(
                "MCP server `{server}` needs the OAuth scopes `{scope}` for this call: add them to \
                 `mcp.servers.{server}.oauth.scopes` and run `omniagent mcp login {server}`"
            )
        }
    }

    /// What a `tools/call` that brought no result tells the caller; a connection that
    /// failed is discarded, so the next call starts the server afresh.
    async fn failure(
        &self,
        response: Result<ServerResult, ServiceError>,
        connection: &Arc<Connection>,
        context: &ToolContext,
    ) -> ToolError {
        let server = &self.shared.server;
        // A gateway client gets the server's refusal as the server sent it, except a
        // refusal of the arguments, which is the model's to read and correct (SEP-1303).
        // A refusal of a retry that carries the client's own answers to `input_required`
        // (`inputResponses`, `requestState`) is the client's protocol error, and is its.
        #[cfg(feature = "server")]
        if let (Err(ServiceError::McpError(error)), Some(caller)) = (&response, crate::server::Caller::current())
            && (error.code != rmcp::model::ErrorCode::INVALID_PARAMS || caller.answers().is_some())
        {
            caller.pass_up(crate::server::PassedUp::Error(error.clone()));
        }
        match response {
            Ok(_) => ToolError::failed(format!("MCP server `{server}` answered tools/call with something else")),
            Err(ServiceError::Timeout { timeout }) => {
                self.shared.discard(connection).await;
                ToolError::Timeout { after: timeout }
            }
            // The server found the arguments (or the answers of a retry) invalid: the
            // caller's mistake, as a schema check's would be.
            Err(ServiceError::McpError(error)) if error.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                let problems = vec![format!("MCP server `{server}`: {}", error.message)];
                ToolError::InvalidArguments { tool: context.name.clone(), problems }
            }
            Err(ServiceError::McpError(error)) => {
                ToolError::failed(format!("MCP server `{server}`: {}", error.message))
            }
            Err(error) if let Some(scope) = crate::connection::missing_scope(&error) => {
                ToolError::failed(self.step_up(scope).await)
            }
            // The tokens stopped working (revoked, or the server moved to another
            // authorization server, whose tokens these are not).
            Err(error) if error.is_authorization_required() => ToolError::failed(format!(
                "MCP server `{server}`: {}",
                crate::Error::LoginRequired { server: server.clone() }
            )),
            Err(error) if !connection.is_alive() || matches!(error, ServiceError::TransportClosed) => {
                let stderr = connection.stderr().await;
                self.shared.discard(connection).await;
                let failure = format!("MCP server `{server}` stopped during the call; it restarts on the next call");
                crate::stderr::log_tail(server, &failure, &stderr);
                ToolError::failed(format!("{failure}{}", crate::stderr::logged_under_call(&stderr)))
            }
            Err(error) => ToolError::failed(format!("MCP server `{server}`: {}", self.shared.endpoint.shown(&error))),
        }
    }
}
