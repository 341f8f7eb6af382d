//! The telemetry layer: outermost in the call path, it times every call, traces it, and
//! counts how it ended.

use std::sync::Arc;
use std::time::Instant;

use skill_core::trace::{self, TraceParent};
use skill_core::{CallContext, CallFuture, CallLayer, Next, ToolError};

use super::Telemetry;

/// The layer; `telemetry` is `None` when the process has none installed, and the layer
/// then only passes the client's trace context on.
pub(crate) struct TelemetryLayer {
    pub(super) telemetry: Option<Arc<Telemetry>>,
}

impl CallLayer for TelemetryLayer {
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        let parent = call.caller.trace.or_else(trace::current);
        let Some(telemetry) = &self.telemetry else { return in_trace(parent, next) };
        Box::pin(async move {
            let started = Instant::now();
            let (span, current) = match &telemetry.spans {
                Some(spans) => {
                    let (span, current) = spans.start_call(call, parent);
                    (Some(span), Some(current))
                }
                None => (None, parent),
            };
            let outcome = in_trace(current, next).await;
            if let Some(metrics) = &telemetry.metrics {
                metrics.record(call, &outcome, started.elapsed());
            }
            if let Some(span) = span {
                span.end(&outcome);
            }
            outcome
        })
    }
}

/// The rest of the call, run with `parent` as the current trace context when there is one
/// (the inner layers are entered inside that scope too: what they do before their first
/// `await` sees it).
fn in_trace<'a>(parent: Option<TraceParent>, next: Next<'a>) -> CallFuture<'a> {
    match parent {
        Some(parent) => Box::pin(trace::scope(parent, async move { next.run().await })),
        None => next.run(),
    }
}

/// A call's error as one word: spans' `error.type` and the metrics' label.
pub(super) fn error_kind(error: &ToolError) -> &'static str {
    match error {
        ToolError::InvalidArguments { .. } => "invalid_arguments",
        ToolError::NotFound { .. } => "not_found",
        ToolError::Failed { .. } => "failed",
        ToolError::Timeout { .. } => "timeout",
        ToolError::Cancelled => "cancelled",
        ToolError::Withheld { .. } => "withheld",
        ToolError::Refused { .. } => "refused",
        _ => "other",
    }
}
