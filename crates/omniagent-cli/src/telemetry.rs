//! Telemetry of every call (`observability:`): a span per tool call, prompt get and
//! resource read, exported over OTLP/HTTP; metrics (calls, errors, durations, refusals,
//! upstream starts), served as Prometheus text by the HTTP gateway and exported over OTLP.
//!
//! It is the outermost layer of the call path ([`layer`]), process-wide: [`install`]
//! sets it up once from the top level of the config, before any agent starts, and
//! [`shutdown`] sends what is left before the process ends. Export never blocks a call:
//! finished spans wait in a bounded queue (see [`export`]), and what does not fit is
//! dropped and counted.
//!
//! The layer also carries the trace context on: a call runs with its span (or, with no
//! OTLP export, the client's own `traceparent`) as [`skill_core::trace::current`], which
//! the upstream MCP servers get in `_meta.traceparent` and HTTP APIs as a `traceparent`
//! header.

use std::sync::{Arc, OnceLock};

use skill_core::CallLayer;

use crate::HostError;
use crate::config::Config;

mod export;
mod layer;
mod metrics;
mod spans;

use self::metrics::Metrics;
use self::spans::Spans;

/// The process's telemetry, once [`install`]ed.
static INSTALLED: OnceLock<Arc<Telemetry>> = OnceLock::new();

/// What the process records of its calls, and where it goes.
#[derive(Debug)]
struct Telemetry {
    /// Spans, when they are exported.
    spans: Option<Arc<Spans>>,
    /// Metrics, when they are served or exported.
    metrics: Option<Metrics>,
}

/// Sets up telemetry as the top level of `config` says (`observability.otlp`,
/// `observability.metrics`), for every agent started after it. It must run inside a
/// Tokio runtime (the exports are tasks of it). A second call changes nothing: the
/// process keeps what it started with.
pub fn install(config: &Config) -> Result<(), HostError> {
    let top = config.for_agent(None)?;
    let observability = &top.sections.observability;
    let otlp = observability.otlp.as_ref().filter(|_| !export::disabled_by_env());
    let spans = otlp.map(Spans::start).transpose()?.map(Arc::new);
    let metrics = (otlp.is_some() || observability.metrics)
        .then(|| Metrics::new(observability.metrics, otlp, spans.as_deref().map(Spans::dropped)))
        .transpose()?;
    let _ = INSTALLED.set(Arc::new(Telemetry { spans, metrics }));
    Ok(())
}

/// The telemetry layer of the call path, which every agent gets outermost. Without
/// telemetry installed, it only passes the client's `traceparent` on.
pub(crate) fn layer() -> Arc<dyn CallLayer> {
    Arc::new(layer::TelemetryLayer { telemetry: INSTALLED.get().cloned() })
}

/// What starts a span for every MCP request the gateway answers, when spans are
/// exported; the calls a request makes are its span's children.
#[cfg(feature = "mcp")]
pub fn request_spans() -> Option<Arc<dyn skill_mcp::server::RequestSpans>> {
    let spans = INSTALLED.get()?.spans.as_ref()?;
    Some(Arc::new(Requests(Arc::clone(spans))))
}

/// The process's spans, as the gateway starts them for its requests.
#[cfg(feature = "mcp")]
struct Requests(Arc<Spans>);

#[cfg(feature = "mcp")]
impl skill_mcp::server::RequestSpans for Requests {
    fn start(&self, request: &skill_mcp::server::McpRequest<'_>) -> Box<dyn skill_mcp::server::RequestSpan> {
        Box::new(self.0.start_request(request))
    }
}

/// The metrics as Prometheus text (OpenMetrics), when `observability.metrics` is on.
pub fn prometheus_text() -> Option<String> {
    INSTALLED.get()?.metrics.as_ref()?.prometheus_text()
}

/// Whether `observability.metrics` asks for [`prometheus_text`] to be served.
pub fn serves_metrics() -> bool {
    INSTALLED.get().and_then(|telemetry| telemetry.metrics.as_ref()).is_some_and(Metrics::is_served)
}

/// The content type of [`prometheus_text`].
pub const PROMETHEUS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Counts the starts and restarts of an upstream MCP server of the agent `agent`, by
/// its `health` handle.
#[cfg(feature = "mcp")]
pub(crate) fn watch_upstream(agent: &str, server: &str, health: skill_mcp::Health) {
    if let Some(metrics) = INSTALLED.get().and_then(|telemetry| telemetry.metrics.as_ref()) {
        metrics.watch_upstream(agent, server, health);
    }
}

/// Sends the spans and metrics not sent yet, waiting a few seconds at most: before the
/// process ends.
pub async fn shutdown() {
    let Some(telemetry) = INSTALLED.get() else { return };
    if let Some(spans) = &telemetry.spans {
        spans.shutdown().await;
    }
    if let Some(metrics) = &telemetry.metrics {
        metrics.shutdown().await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;
    use skill_core::trace::TraceParent;
    use skill_core::{Agent, CallContext, CallFuture, Caller, MemorySkill, Next};

    use super::*;

    /// A layer inside telemetry that keeps the trace context each call runs with.
    #[derive(Default)]
    struct Seen(Mutex<Vec<Option<TraceParent>>>);

    impl CallLayer for Seen {
        fn call<'a>(&'a self, _call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
            self.0.lock().unwrap().push(skill_core::trace::current());
            next.run()
        }
    }

    async fn agent(telemetry: Option<Arc<Telemetry>>, seen: &Arc<Seen>) -> Agent {
        let agent = Agent::builder()
            .name("a")
            .layer(Arc::new(layer::TelemetryLayer { telemetry }))
            .layer(Arc::clone(seen) as Arc<dyn CallLayer>)
            .with_compiled_skill(MemorySkill::new())
            .build();
        agent.init_compiled_skills().await;
        agent
    }

    #[tokio::test]
    async fn calls_are_counted_and_timed_by_item_source_and_client() {
        let metrics = Metrics::new(true, None, None).unwrap();
        let telemetry = Arc::new(Telemetry { spans: None, metrics: Some(metrics) });
        let seen = Arc::default();
        let agent = agent(Some(Arc::clone(&telemetry)), &seen).await;
        let alice = agent.acting_for(Caller::new("alice"));
        for value in ["Lyon", "Paris"] {
            alice.call_tool("memory__remember", json!({"key": "city", "value": value})).await.unwrap();
        }
        agent.call_tool("memory__recall", json!({"key": "city"})).await.unwrap();
        let text = telemetry.metrics.as_ref().unwrap().prometheus_text().unwrap();
        for line in [
            r#"omniagent_calls_total{item="memory__remember",kind="tool",source="skill",client="alice"} 2"#,
            r#"omniagent_calls_total{item="memory__recall",kind="tool",source="skill",client="cli"} 1"#,
            r#"omniagent_call_duration_seconds_count{item="memory__remember",kind="tool",source="skill",client="alice"} 2"#,
        ] {
            assert!(text.lines().any(|found| found == line), "{line} is not in:\n{text}");
        }
        assert!(!text.contains("omniagent_call_errors_total{"), "{text}");
    }

    #[tokio::test]
    async fn without_telemetry_the_clients_trace_context_goes_on_to_the_call() {
        let parent: TraceParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01".parse().unwrap();
        let seen = Arc::new(Seen::default());
        let agent = agent(None, &seen).await;
        agent
            .acting_for(Caller::new("bob").with_trace(Some(parent)))
            .call_tool("memory__list", json!({}))
            .await
            .unwrap();
        agent.call_tool("memory__list", json!({})).await.unwrap();
        assert_eq!(*seen.0.lock().unwrap(), [Some(parent), None]);
    }
}
