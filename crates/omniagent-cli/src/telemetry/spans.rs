//! A span per call, and with the gateway a span per MCP request around the calls it
//! makes, with the MCP and GenAI semantic conventions, exported over OTLP.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use opentelemetry::trace::{
    Span as _, SpanContext, SpanId, SpanKind, Status, TraceContextExt as _, TraceFlags, TraceId, TraceState,
    Tracer as _, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use skill_core::trace::TraceParent;
use skill_core::{CallContext, CallOutput, ItemKind, ToolError};

use super::export::{SpanQueue, TokioHttp, otlp_error, signal_url};
use super::layer::error_kind;
use crate::HostError;
use crate::config::OtlpConfig;

/// The tracer, and the queue its finished spans go through.
#[derive(Debug)]
pub(super) struct Spans {
    tracer: SdkTracer,
    queue: SpanQueue,
    /// Kept so that the tracer's provider lives as long as the process's telemetry.
    _provider: SdkTracerProvider,
}

impl Spans {
    /// Starts the span export of `otlp` on the current runtime.
    pub(super) fn start(otlp: &OtlpConfig) -> Result<Self, HostError> {
        let mut exporter = opentelemetry_otlp::SpanExporter::builder().with_http().with_http_client(TokioHttp::new()?);
        if let Some(url) = signal_url(otlp.endpoint.as_deref(), "v1/traces") {
            exporter = exporter.with_endpoint(url);
        }
        let exporter = exporter.build().map_err(otlp_error)?;
        let resource = resource();
        let queue = SpanQueue::start(exporter, &resource);
        let provider = SdkTracerProvider::builder().with_resource(resource).with_span_processor(queue.clone()).build();
        let tracer = provider.tracer("omniagent");
        Ok(Self { tracer, queue, _provider: provider })
    }

    /// The counter of spans dropped.
    pub(super) fn dropped(&self) -> Arc<AtomicU64> {
        self.queue.dropped()
    }

    /// Starts the span of `call`, a child of `parent` (the client's trace) when there is
    /// one, and gives its trace context, which the call passes on.
    pub(super) fn start_call(&self, call: &CallContext<'_>, parent: Option<TraceParent>) -> (CallSpan, TraceParent) {
        let context = remote_parent(parent);
        let item = &call.item;
        let mut attributes = Vec::with_capacity(8);
        let name = match item.kind {
            ItemKind::Tool => {
                attributes.push(KeyValue::new("mcp.method.name", "tools/call"));
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                attributes.push(KeyValue::new("gen_ai.tool.name", item.name.to_owned()));
                format!("execute_tool {}", item.name)
            }
            ItemKind::Prompt => {
                attributes.push(KeyValue::new("mcp.method.name", "prompts/get"));
                attributes.push(KeyValue::new("gen_ai.prompt.name", item.name.to_owned()));
                format!("prompts/get {}", item.name)
            }
            _ => {
                attributes.push(KeyValue::new("mcp.method.name", "resources/read"));
                attributes.push(KeyValue::new("mcp.resource.uri", item.name.to_owned()));
                "resources/read".to_owned()
            }
        };
        if let Some(source) = item.source {
            attributes.push(KeyValue::new("omniagent.source", source.kind.as_str()));
        }
        attributes.push(KeyValue::new("omniagent.skill", item.skill.to_owned()));
        attributes.push(KeyValue::new("omniagent.client", call.caller.client.clone()));
        attributes.push(KeyValue::new("omniagent.agent", call.agent.to_owned()));
        if let Some(session) = &call.caller.session {
            attributes.push(KeyValue::new("mcp.session.id", session.clone()));
        }
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Internal)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &context);
        let current = trace_of(&span);
        (CallSpan(span), current)
    }

    /// Starts the span of an MCP request the gateway answers (kind server), a child of
    /// the trace it came in when there is one.
    #[cfg(feature = "mcp")]
    pub(super) fn start_request(&self, request: &skill_mcp::server::McpRequest<'_>) -> RequestSpan {
        let mut attributes = Vec::with_capacity(10);
        attributes.push(KeyValue::new("mcp.method.name", request.method.to_owned()));
        attributes.push(KeyValue::new("jsonrpc.request.id", request.id.to_string()));
        attributes.push(KeyValue::new("network.transport", request.transport));
        attributes.push(KeyValue::new("omniagent.client", request.client.to_owned()));
        if let Some(session) = request.session {
            attributes.push(KeyValue::new("mcp.session.id", session.to_owned()));
        }
        if let Some(version) = request.protocol_version {
            attributes.push(KeyValue::new("mcp.protocol.version", version.to_owned()));
        }
        if let Some(uri) = request.resource_uri {
            attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
        }
        let name = match request.target {
            Some(target) => {
                if request.method == "tools/call" {
                    attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
                    attributes.push(KeyValue::new("gen_ai.tool.name", target.to_owned()));
                } else {
                    attributes.push(KeyValue::new("gen_ai.prompt.name", target.to_owned()));
                }
                format!("{} {target}", request.method)
            }
            None => request.method.to_owned(),
        };
        let span = self
            .tracer
            .span_builder(name)
            .with_kind(SpanKind::Server)
            .with_attributes(attributes)
            .start_with_context(&self.tracer, &remote_parent(request.parent));
        let trace = trace_of(&span);
        RequestSpan { span, trace }
    }

    /// Sends the spans that wait.
    pub(super) async fn shutdown(&self) {
        self.queue.shutdown().await;
    }
}

/// A call's span, until the call ends.
pub(super) struct CallSpan(opentelemetry_sdk::trace::Span);

impl CallSpan {
    /// Ends the span with how the call ended: an error (or a tool's `isError` result)
    /// sets `error.type` and the error status.
    pub(super) fn end(mut self, outcome: &Result<CallOutput, ToolError>) {
        match outcome {
            Ok(CallOutput::Tool(output)) if output.is_error => {
                self.0.set_attribute(KeyValue::new("error.type", "tool_error"));
                self.0.set_status(Status::error("the tool reported an error"));
            }
            Ok(_) => {}
            Err(error) => {
                self.0.set_attribute(KeyValue::new("error.type", error_kind(error)));
                self.0.set_status(Status::error(error.to_string()));
            }
        }
        self.0.end();
    }
}

/// The span of an MCP request, until it is answered.
#[cfg(feature = "mcp")]
pub(super) struct RequestSpan {
    span: opentelemetry_sdk::trace::Span,
    trace: TraceParent,
}

#[cfg(feature = "mcp")]
impl skill_mcp::server::RequestSpan for RequestSpan {
    fn trace(&self) -> TraceParent {
        self.trace
    }

    /// Ends the span: a JSON-RPC error sets `error.type` and `rpc.response.status_code`
    /// to its code, and the error status with its message; a tool's `isError` result
    /// sets `error.type` `tool_error`.
    fn end(mut self: Box<Self>, outcome: skill_mcp::server::RequestOutcome<'_>) {
        use skill_mcp::server::RequestOutcome;
        match outcome {
            RequestOutcome::ToolError => {
                self.span.set_attribute(KeyValue::new("error.type", "tool_error"));
                self.span.set_status(Status::error("the tool reported an error"));
            }
            RequestOutcome::Error { code, message } => {
                self.span.set_attribute(KeyValue::new("error.type", code.to_string()));
                self.span.set_attribute(KeyValue::new("rpc.response.status_code", code.to_string()));
                self.span.set_status(Status::error(message.to_owned()));
            }
            _ => {}
        }
        self.span.end();
    }
}

/// The context of a span whose parent is `parent`, a span of another process; a new
/// trace without one.
fn remote_parent(parent: Option<TraceParent>) -> Context {
    parent.map_or_else(Context::new, |parent| {
        Context::new().with_remote_span_context(SpanContext::new(
            TraceId::from_bytes(parent.trace_id),
            SpanId::from_bytes(parent.span_id),
            TraceFlags::new(parent.flags),
            true,
            TraceState::default(),
        ))
    })
}

/// The trace context of `span`, which what it covers is made under.
fn trace_of(span: &opentelemetry_sdk::trace::Span) -> TraceParent {
    let own = span.span_context();
    TraceParent {
        trace_id: own.trace_id().to_bytes(),
        span_id: own.span_id().to_bytes(),
        flags: own.trace_flags().to_u8(),
    }
}

/// The process as a resource: `service.name` is `omniagent` unless `OTEL_SERVICE_NAME`
/// or `OTEL_RESOURCE_ATTRIBUTES` name it.
pub(super) fn resource() -> Resource {
    let named = std::env::var_os("OTEL_SERVICE_NAME").is_some()
        || std::env::var("OTEL_RESOURCE_ATTRIBUTES").is_ok_and(|attributes| attributes.contains("service.name"));
    let builder = Resource::builder().with_attribute(KeyValue::new("service.version", env!("CARGO_PKG_VERSION")));
    if named { builder.build() } else { builder.with_service_name("omniagent").build() }
}
