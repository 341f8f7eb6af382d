//! A span per MCP request the gateway serves, as the OpenTelemetry semantic conventions
//! for MCP describe a server's (`{mcp.method.name} {target}`, kind server): rmcp serves
//! [`Served`], whose handler starts the span before the gateway's handler answers the
//! request and ends it with the answer. The span's trace context becomes the request's
//! own, so that the calls the request makes (their spans, the upstreams they reach) are
//! its children.
//!
//! The gateway knows no tracer: whoever serves it gives [`RequestSpans`]
//! ([`Gateway::with_request_spans`]); without them a request costs one branch more.

// Logging (`logging/setLevel`) is deprecated by 2026-07-28, but the gateway answers
// 2025-11-25 clients, which use it.
#![allow(deprecated)]

use std::sync::Arc;

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelledNotificationParam, CompleteRequestParams, CompleteResult,
    CustomNotification, DiscoverResult, GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams,
    GetSkillResult, InitializeRequestParams, InitializeResult, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use skill_core::trace::TraceParent;

use super::Gateway;
use super::announce::session_of;

/// Starts the span of each MCP request the gateway serves.
pub trait RequestSpans: Send + Sync {
    /// Starts the span of `request`.
    fn start(&self, request: &McpRequest<'_>) -> Box<dyn RequestSpan>;
}

/// The span of one request, until it is answered.
pub trait RequestSpan: Send {
    /// The span's trace context: the parent of what the request does.
    fn trace(&self) -> TraceParent;

    /// Ends the span with how the request was answered.
    fn end(self: Box<Self>, outcome: RequestOutcome<'_>);
}

/// One MCP request, as its span describes it.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct McpRequest<'a> {
    /// The method (`tools/list`, `initialize`, ...): `mcp.method.name`.
    pub method: &'a str,
    /// The tool or prompt it names (`tools/call`, `prompts/get`), which the span's name
    /// ends with.
    pub target: Option<&'a str>,
    /// The resource it names (`resources/read`, `resources/subscribe`, ...):
    /// `mcp.resource.uri`.
    pub resource_uri: Option<&'a str>,
    /// The JSON-RPC id of the request: `jsonrpc.request.id`.
    pub id: &'a rmcp::model::RequestId,
    /// The `Mcp-Session-Id` it came with (HTTP, 2025-11-25): `mcp.session.id`.
    pub session: Option<&'a str>,
    /// The protocol version the client and the gateway speak: `mcp.protocol.version`.
    pub protocol_version: Option<&'a str>,
    /// `pipe` over stdio, `tcp` over HTTP: `network.transport`.
    pub transport: &'static str,
    /// The client, by its name (`""` over stdio and for the open HTTP server).
    pub client: &'a str,
    /// The trace context the request came with (its `_meta.traceparent`, else its HTTP
    /// `traceparent` header): the span's parent.
    pub parent: Option<TraceParent>,
}

/// How a request was answered.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum RequestOutcome<'a> {
    /// With a result.
    Answered,
    /// With a tool's result marked as an error (`isError`).
    ToolError,
    /// With a JSON-RPC error.
    Error {
        /// Its code.
        code: i32,
        /// Its message.
        message: &'a str,
    },
}

/// The trace context of the request being served, which its calls are made under: the
/// request's span's once [`Served`] started one.
#[derive(Debug, Clone, Copy)]
pub(super) struct RequestTrace(pub(super) TraceParent);

/// The gateway as rmcp serves it: every request answered by [`Gateway`]'s handler, in
/// its span when the gateway has [`RequestSpans`]. What is not a request (the server's
/// description, notifications) goes to the gateway as it is.
#[derive(Clone)]
pub(super) struct Served(pub(super) Gateway);

/// What a request names besides its method: the tool or prompt, or the resource.
#[derive(Clone, Copy, Default)]
struct Names<'a> {
    target: Option<&'a str>,
    resource_uri: Option<&'a str>,
}

/// Whether an answer is a tool's result marked as an error.
trait ToolErrorResult {
    fn is_tool_error(&self) -> bool {
        false
    }
}

impl ToolErrorResult for CallToolResponse {
    fn is_tool_error(&self) -> bool {
        matches!(self, CallToolResponse::Complete(result) if result.is_error == Some(true))
    }
}

macro_rules! plain_answers {
    ($($answer:ty),*) => { $(impl ToolErrorResult for $answer {})* };
}

plain_answers!(
    (),
    InitializeResult,
    DiscoverResult,
    CompleteResult,
    GetPromptResponse,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceResponse,
    ListToolsResult,
    ListSkillsResult,
    GetSkillResult
);

impl Served {
    /// Answers the request of `context` (its method `method`) with `answer`, in its span
    /// when requests are traced.
    async fn traced<T: ToolErrorResult, F: Future<Output = Result<T, ErrorData>>>(
        &self,
        method: &str,
        names: Names<'_>,
        mut context: RequestContext<RoleServer>,
        answer: impl FnOnce(RequestContext<RoleServer>) -> F,
    ) -> Result<T, ErrorData> {
        let Some(spans) = &self.0.request_spans else { return answer(context).await };
        let span = self.start(spans.as_ref(), method, names, &context);
        context.extensions.insert(RequestTrace(span.trace()));
        let answered = answer(context).await;
        span.end(match &answered {
            Ok(result) if result.is_tool_error() => RequestOutcome::ToolError,
            Ok(_) => RequestOutcome::Answered,
            Err(error) => RequestOutcome::Error { code: error.code.0, message: &error.message },
        });
        answered
    }

    /// Starts the span of the request of `context`.
    fn start(
        &self,
        spans: &dyn RequestSpans,
        method: &str,
        names: Names<'_>,
        context: &RequestContext<RoleServer>,
    ) -> Box<dyn RequestSpan> {
        let session = session_of(&context.extensions);
        let version = context.protocol_version().or_else(|| context.meta.protocol_version());
        let client = self.0.client_of(&context.extensions);
        spans.start(&McpRequest {
            method,
            target: names.target,
            resource_uri: names.resource_uri,
            id: &context.id,
            session: (!session.is_empty()).then_some(session.as_str()),
            protocol_version: version.as_ref().map(ProtocolVersion::as_str),
            transport: if self.0.fixed_client.is_some() { "pipe" } else { "tcp" },
            client: &client,
            parent: super::handler::trace_of(context),
        })
    }
}

const NONE: Names<'static> = Names { target: None, resource_uri: None };

// Each request the gateway answers, in its span; the methods' names are the protocol's.
impl ServerHandler for Served {
    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), ErrorData> {
        self.traced("ping", NONE, context, |context| self.0.ping(context)).await
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.traced("initialize", NONE, context, |context| self.0.initialize(request, context)).await
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        self.traced("server/discover", NONE, context, |context| self.0.discover(context)).await
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.traced("completion/complete", NONE, context, |context| self.0.complete(request, context)).await
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.traced("logging/setLevel", NONE, context, |context| self.0.set_level(request, context)).await
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let name = request.name.clone();
        let names = Names { target: Some(&name), ..NONE };
        self.traced("prompts/get", names, context, |context| self.0.get_prompt(request, context)).await
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.traced("prompts/list", NONE, context, |context| self.0.list_prompts(request, context)).await
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.traced("resources/list", NONE, context, |context| self.0.list_resources(request, context)).await
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let list = |context| self.0.list_resource_templates(request, context);
        self.traced("resources/templates/list", NONE, context, list).await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.clone();
        let names = Names { resource_uri: Some(&uri), ..NONE };
        self.traced("resources/read", names, context, |context| self.0.read_resource(request, context)).await
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let Some(spans) = &self.0.request_spans else { return self.0.listen(context).await };
        // A subscription is answered when it ends: its span covers it whole.
        let span = self.start(spans.as_ref(), "subscriptions/listen", NONE, context.request_context());
        let listened = self.0.listen(context).await;
        span.end(match &listened {
            Ok(()) => RequestOutcome::Answered,
            Err(error) => RequestOutcome::Error { code: error.code.0, message: &error.message },
        });
        listened
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri.clone();
        let names = Names { resource_uri: Some(&uri), ..NONE };
        self.traced("resources/subscribe", names, context, |context| self.0.subscribe(request, context)).await
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let uri = request.uri.clone();
        let names = Names { resource_uri: Some(&uri), ..NONE };
        self.traced("resources/unsubscribe", names, context, |context| self.0.unsubscribe(request, context)).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.clone();
        let names = Names { target: Some(&name), ..NONE };
        self.traced("tools/call", names, context, |context| self.0.call_tool(request, context)).await
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.traced("tools/list", NONE, context, |context| self.0.list_tools(request, context)).await
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        self.traced("skills/list", NONE, context, |context| self.0.list_skills(request, context)).await
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.traced("skills/get", NONE, context, |context| self.0.get_skill(request, context)).await
    }

    async fn on_cancelled(&self, notification: CancelledNotificationParam, context: NotificationContext<RoleServer>) {
        self.0.on_cancelled(notification, context).await;
    }

    async fn on_progress(&self, notification: ProgressNotificationParam, context: NotificationContext<RoleServer>) {
        self.0.on_progress(notification, context).await;
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.0.on_initialized(context).await;
    }

    async fn on_roots_list_changed(&self, context: NotificationContext<RoleServer>) {
        self.0.on_roots_list_changed(context).await;
    }

    async fn on_custom_notification(&self, notification: CustomNotification, context: NotificationContext<RoleServer>) {
        self.0.on_custom_notification(notification, context).await;
    }
}

impl Gateway {
    /// Starts a span for every request the gateway answers with `spans`.
    #[must_use]
    pub fn with_request_spans(self, spans: Arc<dyn RequestSpans>) -> Self {
        Self { request_spans: Some(spans), ..self }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use rmcp::ClientServiceExt as _;
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::ClientLifecycleMode;
    use skill_core::{Agent, CallContext, CallLayer, MemorySkill};

    use super::*;
    use crate::server::AgentFactory;

    /// Keeps each request's span as it started and ended, and each call's trace context.
    #[derive(Default)]
    struct Recorded {
        spans: Mutex<Vec<String>>,
        calls: Mutex<Vec<Option<TraceParent>>>,
    }

    /// A request's span: where it is kept, what it describes, its trace context.
    struct Span(Arc<Recorded>, String, TraceParent);

    impl RequestSpans for Arc<Recorded> {
        fn start(&self, request: &McpRequest<'_>) -> Box<dyn RequestSpan> {
            let named = format!(
                "{} {} {} {}",
                request.method,
                request.target.unwrap_or("-"),
                request.transport,
                request.parent.map_or("-".to_owned(), |parent| parent.to_string()),
            );
            let own =
                TraceParent { trace_id: [7; 16], span_id: [self.spans.lock().unwrap().len() as u8 + 1; 8], flags: 1 };
            Box::new(Span(Arc::clone(self), named, own))
        }
    }

    impl RequestSpan for Span {
        fn trace(&self) -> TraceParent {
            self.2
        }

        fn end(self: Box<Self>, outcome: RequestOutcome<'_>) {
            let ended = match outcome {
                RequestOutcome::Answered => "answered".to_owned(),
                RequestOutcome::ToolError => "tool error".to_owned(),
                RequestOutcome::Error { code, .. } => format!("error {code}"),
            };
            self.0.spans.lock().unwrap().push(format!("{} {ended}", self.1));
        }
    }

    impl CallLayer for Recorded {
        fn check(&self, call: &CallContext<'_>) -> Result<(), skill_core::ToolError> {
            self.calls.lock().unwrap().push(call.caller.trace);
            Ok(())
        }
    }

    #[tokio::test]
    async fn each_request_is_answered_in_its_span_and_its_calls_in_its_trace() {
        let recorded = Arc::new(Recorded::default());
        let layer = Arc::clone(&recorded);
        let factory: AgentFactory = Arc::new(move |_| {
            let layer = Arc::clone(&layer) as Arc<dyn CallLayer>;
            Box::pin(async move {
                let agent = Agent::builder().layer(layer).with_compiled_skill(MemorySkill::new()).build();
                agent.init_compiled_skills().await;
                Ok(agent)
            })
        });
        let gateway = Gateway::new(factory, None).with_request_spans(Arc::new(Arc::clone(&recorded)));
        let served = Served(Gateway { fixed_client: Some(String::new()), ..gateway });
        let (client_end, server_end) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let running = rmcp::ServiceExt::serve(served, server_end).await.unwrap();
            let _ = running.waiting().await;
        });
        let client = ().serve_with_lifecycle(client_end, ClientLifecycleMode::Initialize).await.unwrap();
        client.list_tools(None).await.unwrap();
        let parent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut call = CallToolRequestParams::new("memory__recall")
            .with_arguments(serde_json::from_str(r#"{"key": "k"}"#).unwrap());
        call.meta = Some(serde_json::from_str(&format!(r#"{{"traceparent": "{parent}"}}"#)).unwrap());
        client.call_tool(call).await.unwrap();
        assert!(client.call_tool(CallToolRequestParams::new("memory__nope")).await.is_err());
        client.cancel().await.unwrap();
        let _ = server.await;

        assert_eq!(
            *recorded.spans.lock().unwrap(),
            [
                "initialize - pipe - answered".to_owned(),
                "tools/list - pipe - answered".to_owned(),
                // Nothing is remembered under the key: the tool answers `isError`.
                format!("tools/call memory__recall pipe {parent} tool error"),
                "tools/call memory__nope pipe - error -32602".to_owned(),
            ]
        );
        // The calls are made in their requests' spans.
        let span = |n: u8| Some(TraceParent { trace_id: [7; 16], span_id: [n; 8], flags: 1 });
        assert_eq!(*recorded.calls.lock().unwrap(), [span(3), span(4)]);
    }
}
