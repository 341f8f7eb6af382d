//! The metrics of calls: served as Prometheus text (the Prometheus project's
//! `prometheus-client`) and exported over OTLP (the OpenTelemetry SDK), each when asked.
//!
//! Labels: `item` (a tool's or prompt's agent-level name; a resource read's skill, since
//! resource URIs are unbounded; empty for a call of a name the agent has no item of),
//! `kind` (`tool`, `prompt`, `resource`), `source` (a tool's skill kind: `skill`, `mcp`,
//! `openapi`), `client`.

use std::collections::HashMap;
#[cfg(feature = "mcp")]
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter as OtelCounter, Histogram as OtelHistogram, Meter, MeterProvider as _};
use opentelemetry_otlp::{WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric as _};
use prometheus_client::metrics::counter::{ConstCounter, Counter};
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use skill_core::{CallContext, CallOutput, ItemKind, ToolError};

use super::export::{TokioHttp, otlp_error, signal_url};
use super::layer::error_kind;
use crate::HostError;
use crate::config::OtlpConfig;

/// The duration buckets, in seconds: those the MCP semantic conventions advise for
/// `mcp.server.operation.duration`, with finer ones below 10 ms for local tools.
const BUCKETS: [f64; 17] =
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0];

/// How many label sets' [`Series`] are kept before they start afresh (the metrics
/// themselves are kept: a series found again counts on where it was).
const MAX_SERIES: usize = 10_000;

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CallLabels {
    item: String,
    kind: &'static str,
    source: &'static str,
    client: String,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ErrorLabels {
    item: String,
    kind: &'static str,
    source: &'static str,
    client: String,
    error: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RefusalLabels {
    item: String,
    client: String,
    layer: &'static str,
}

#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct UpstreamLabels {
    agent: String,
    server: String,
}

/// What a call's labels (item, kind, source, client) resolve to, found once and kept, so
/// that a call counts without building its labels and finding their series twice.
#[derive(Debug)]
struct Series {
    /// The Prometheus calls counter and duration histogram of the labels.
    prometheus: Option<(Counter, Histogram)>,
    /// The labels as OpenTelemetry attributes (empty without an OTLP export).
    attributes: Vec<KeyValue>,
}

/// The kept [`Series`], by client, then item label, then kind and source.
type SeriesByClient = HashMap<String, HashMap<String, Vec<(&'static str, &'static str, Arc<Series>)>>>;

/// The metrics, and where they go.
#[derive(Debug)]
pub(super) struct Metrics {
    prometheus: Option<Prometheus>,
    otel: Option<Otel>,
    /// The series of the label sets calls had, and how many there are.
    series: RwLock<(SeriesByClient, usize)>,
    /// Read by the registry and the instruments; kept here to add upstreams to.
    #[cfg(feature = "mcp")]
    gauges: Arc<Observed>,
}

/// What is read when the metrics are: the upstream servers' starts, the spans dropped.
#[derive(Debug)]
struct Observed {
    /// Each upstream server's health handle, by agent and server; a server that several
    /// agents (or several starts of one) run counts the starts of all.
    #[cfg(feature = "mcp")]
    upstreams: Mutex<Vec<(UpstreamLabels, skill_mcp::Health)>>,
    dropped_spans: Option<Arc<AtomicU64>>,
}

impl Observed {
    /// Each upstream server's starts and restarts, summed by agent and server.
    fn upstreams(&self) -> Vec<(UpstreamLabels, u64, u64)> {
        #[cfg(feature = "mcp")]
        {
            let upstreams = self.upstreams.lock().unwrap_or_else(PoisonError::into_inner);
            let mut summed: Vec<(UpstreamLabels, u64, u64)> = Vec::new();
            for (labels, health) in upstreams.iter() {
                let now = health.now();
                let (starts, restarts) = (u64::from(now.starts), u64::from(now.restarts));
                match summed.iter_mut().find(|(known, _, _)| known == labels) {
                    Some((_, total_starts, total_restarts)) => {
                        *total_starts += starts;
                        *total_restarts += restarts;
                    }
                    None => summed.push((labels.clone(), starts, restarts)),
                }
            }
            summed
        }
        #[cfg(not(feature = "mcp"))]
        Vec::new()
    }

    fn dropped_spans(&self) -> u64 {
        self.dropped_spans.as_ref().map_or(0, |dropped| dropped.load(Ordering::Relaxed))
    }
}

impl Collector for Observed {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
        let upstreams = self.upstreams();
        for (name, help, pick) in [
            ("upstream_starts", "Starts of upstream MCP servers, restarts included.", 1),
            ("upstream_restarts", "Restarts of upstream MCP servers.", 2),
        ] {
            let counter = ConstCounter::new(0u64);
            let mut family = encoder.encode_descriptor(name, help, None, counter.metric_type())?;
            for (labels, starts, restarts) in &upstreams {
                let value = if pick == 1 { *starts } else { *restarts };
                ConstCounter::new(value).encode(family.encode_family(labels)?)?;
            }
        }
        if self.dropped_spans.is_some() {
            let counter = ConstCounter::new(self.dropped_spans());
            let help = "Spans dropped: the export queue was full, or their export failed.";
            counter.encode(encoder.encode_descriptor(
                "telemetry_dropped_spans",
                help,
                None,
                counter.metric_type(),
            )?)?;
        }
        Ok(())
    }
}

/// The Prometheus registry and its families.
#[derive(Debug)]
struct Prometheus {
    registry: Registry,
    calls: Family<CallLabels, Counter>,
    errors: Family<ErrorLabels, Counter>,
    duration: Family<CallLabels, Histogram, fn() -> Histogram>,
    denied: Family<RefusalLabels, Counter>,
    withheld: Family<RefusalLabels, Counter>,
}

impl Prometheus {
    fn new(observed: &Arc<Observed>) -> Self {
        let mut registry = Registry::with_prefix("omniagent");
        let calls = Family::default();
        let errors = Family::default();
        let duration = Family::new_with_constructor(duration_histogram as fn() -> Histogram);
        let denied = Family::default();
        let withheld = Family::default();
        registry.register("calls", "Calls of tools, prompts and resources.", calls.clone());
        registry.register(
            "call_errors",
            "Calls that ended in an error (tools' isError results included).",
            errors.clone(),
        );
        registry.register_with_unit(
            "call_duration",
            "How long calls took.",
            prometheus_client::registry::Unit::Seconds,
            duration.clone(),
        );
        registry.register("calls_denied", "Calls refused by a policy rule, a rate limit or the guard.", denied.clone());
        registry.register("calls_withheld", "Calls of items withheld by pinning.", withheld.clone());
        registry.register_collector(Box::new(Arc::clone(observed)));
        Self { registry, calls, errors, duration, denied, withheld }
    }
}

fn duration_histogram() -> Histogram {
    Histogram::new(BUCKETS)
}

/// The OpenTelemetry instruments, exported periodically over OTLP.
#[derive(Debug)]
struct Otel {
    provider: SdkMeterProvider,
    calls: OtelCounter<u64>,
    errors: OtelCounter<u64>,
    duration: OtelHistogram<f64>,
    denied: OtelCounter<u64>,
    withheld: OtelCounter<u64>,
}

impl Otel {
    fn start(otlp: &OtlpConfig, observed: &Arc<Observed>) -> Result<Self, HostError> {
        let mut exporter =
            opentelemetry_otlp::MetricExporter::builder().with_http().with_http_client(TokioHttp::new()?);
        if let Some(url) = signal_url(otlp.endpoint.as_deref(), "v1/metrics") {
            exporter = exporter.with_endpoint(url);
        }
        let exporter = exporter.build().map_err(otlp_error)?;
        // The reader honours `OTEL_METRIC_EXPORT_INTERVAL` (default 60 s).
        let reader = PeriodicReader::builder(exporter).build();
        let provider = SdkMeterProvider::builder().with_resource(super::spans::resource()).with_reader(reader).build();
        let meter = provider.meter("omniagent");
        observe(&meter, observed);
        Ok(Self {
            calls: meter
                .u64_counter("omniagent.calls")
                .with_description("Calls of tools, prompts and resources.")
                .build(),
            errors: meter
                .u64_counter("omniagent.call.errors")
                .with_description("Calls that ended in an error.")
                .build(),
            duration: meter
                .f64_histogram("omniagent.call.duration")
                .with_unit("s")
                .with_boundaries(BUCKETS.to_vec())
                .with_description("How long calls took.")
                .build(),
            denied: meter.u64_counter("omniagent.calls.denied").build(),
            withheld: meter.u64_counter("omniagent.calls.withheld").build(),
            provider,
        })
    }
}

/// Registers the observed counters (upstream starts, dropped spans) with `meter`.
fn observe(meter: &Meter, observed: &Arc<Observed>) {
    let upstreams = Arc::clone(observed);
    meter
        .u64_observable_counter("omniagent.upstream.starts")
        .with_callback(move |observer| {
            for (labels, starts, _) in upstreams.upstreams() {
                observer.observe(starts, &upstream_attributes(&labels));
            }
        })
        .build();
    let upstreams = Arc::clone(observed);
    meter
        .u64_observable_counter("omniagent.upstream.restarts")
        .with_callback(move |observer| {
            for (labels, _, restarts) in upstreams.upstreams() {
                observer.observe(restarts, &upstream_attributes(&labels));
            }
        })
        .build();
    let dropped = Arc::clone(observed);
    meter
        .u64_observable_counter("omniagent.telemetry.dropped_spans")
        .with_callback(move |observer| observer.observe(dropped.dropped_spans(), &[]))
        .build();
}

fn upstream_attributes(labels: &UpstreamLabels) -> [KeyValue; 2] {
    [KeyValue::new("agent", labels.agent.clone()), KeyValue::new("server", labels.server.clone())]
}

impl Metrics {
    /// The metrics: served as Prometheus text if `prometheus`, exported over `otlp` if
    /// given; `dropped_spans` is the span queue's drop counter.
    pub(super) fn new(
        prometheus: bool,
        otlp: Option<&OtlpConfig>,
        dropped_spans: Option<Arc<AtomicU64>>,
    ) -> Result<Self, HostError> {
        let gauges = Arc::new(Observed {
            #[cfg(feature = "mcp")]
            upstreams: Mutex::default(),
            dropped_spans,
        });
        let otel = otlp.map(|otlp| Otel::start(otlp, &gauges)).transpose()?;
        Ok(Self {
            prometheus: prometheus.then(|| Prometheus::new(&gauges)),
            otel,
            series: RwLock::default(),
            #[cfg(feature = "mcp")]
            gauges,
        })
    }

    /// Counts a call that ended with `outcome` after `elapsed`.
    pub(super) fn record(&self, call: &CallContext<'_>, outcome: &Result<CallOutput, ToolError>, elapsed: Duration) {
        let item = &call.item;
        let (kind, item_label) = match item.kind {
            ItemKind::Tool => ("tool", item.name),
            ItemKind::Prompt => ("prompt", item.name),
            _ => ("resource", item.skill),
        };
        // A name no item has is the caller's to choose: such calls are counted under no
        // name, so that made-up names add no series.
        let item_label = if item.skill.is_empty() { "" } else { item_label };
        let source = item.source.map_or("", |source| source.kind.as_str());
        let error = match outcome {
            Ok(CallOutput::Tool(output)) if output.is_error => Some("tool_error"),
            Ok(_) => None,
            Err(error) => Some(error_kind(error)),
        };
        let refusal = match outcome {
            Err(ToolError::Refused { layer, .. }) => Some((false, *layer)),
            Err(ToolError::Withheld { .. }) => Some((true, "pinning")),
            _ => None,
        };
        let seconds = elapsed.as_secs_f64();
        let client = call.caller.client.as_str();
        let series = self.series(item_label, kind, source, client);
        if let Some((calls, duration)) = &series.prometheus {
            calls.inc();
            duration.observe(seconds);
        }
        if let Some(prometheus) = &self.prometheus {
            let (item, client) = (item_label.to_owned(), client.to_owned());
            if let Some(error) = error {
                let labels = ErrorLabels { item: item.clone(), kind, source, client: client.clone(), error };
                prometheus.errors.get_or_create(&labels).inc();
            }
            if let Some((withheld, layer)) = refusal {
                let family = if withheld { &prometheus.withheld } else { &prometheus.denied };
                family.get_or_create(&RefusalLabels { item, client, layer }).inc();
            }
        }
        if let Some(otel) = &self.otel {
            otel.calls.add(1, &series.attributes);
            otel.duration.record(seconds, &series.attributes);
            if error.is_some() || refusal.is_some() {
                let mut attributes = series.attributes.clone();
                if let Some(error) = error {
                    attributes.push(KeyValue::new("error.type", error));
                    otel.errors.add(1, &attributes);
                    attributes.pop();
                }
                if let Some((withheld, layer)) = refusal {
                    attributes.push(KeyValue::new("layer", layer));
                    if withheld { &otel.withheld } else { &otel.denied }.add(1, &attributes);
                }
            }
        }
    }

    /// The series of the labels `item`, `kind`, `source` and `client`: as kept, else
    /// resolved now.
    fn series(&self, item: &str, kind: &'static str, source: &'static str, client: &str) -> Arc<Series> {
        let find = |kept: &SeriesByClient| {
            let of_item = kept.get(client)?.get(item)?;
            of_item
                .iter()
                .find(|(known_kind, known_source, _)| (*known_kind, *known_source) == (kind, source))
                .map(|(_, _, series)| Arc::clone(series))
        };
        if let Some(series) = find(&self.series.read().unwrap_or_else(PoisonError::into_inner).0) {
            return series;
        }
        let mut kept = self.series.write().unwrap_or_else(PoisonError::into_inner);
        if let Some(series) = find(&kept.0) {
            return series;
        }
        let prometheus = self.prometheus.as_ref().map(|prometheus| {
            let labels = CallLabels { item: item.to_owned(), kind, source, client: client.to_owned() };
            (prometheus.calls.get_or_create_owned(&labels), prometheus.duration.get_or_create_owned(&labels))
        });
        let attributes = match self.otel {
            Some(_) => vec![
                KeyValue::new("item", item.to_owned()),
                KeyValue::new("kind", kind),
                KeyValue::new("source", source),
                KeyValue::new("client", client.to_owned()),
            ],
            None => Vec::new(),
        };
        let series = Arc::new(Series { prometheus, attributes });
        let (by_client, count) = &mut *kept;
        if *count >= MAX_SERIES {
            by_client.clear();
            *count = 0;
        }
        let of_item = by_client.entry(client.to_owned()).or_default().entry(item.to_owned()).or_default();
        of_item.push((kind, source, Arc::clone(&series)));
        *count += 1;
        series
    }

    /// Counts the starts of the upstream server `server` of the agent `agent`.
    #[cfg(feature = "mcp")]
    pub(super) fn watch_upstream(&self, agent: &str, server: &str, health: skill_mcp::Health) {
        let labels = UpstreamLabels { agent: agent.to_owned(), server: server.to_owned() };
        self.gauges.upstreams.lock().unwrap_or_else(PoisonError::into_inner).push((labels, health));
    }

    /// Whether the metrics are served as Prometheus text.
    pub(super) fn is_served(&self) -> bool {
        self.prometheus.is_some()
    }

    /// The metrics as Prometheus text, when they are served.
    pub(super) fn prometheus_text(&self) -> Option<String> {
        let prometheus = self.prometheus.as_ref()?;
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &prometheus.registry).ok()?;
        Some(text)
    }

    /// Sends the metrics once more before the process ends (off the runtime's threads:
    /// the export runs on the runtime, which must keep running while this waits).
    pub(super) async fn shutdown(&self) {
        if let Some(otel) = &self.otel {
            let provider = otel.provider.clone();
            let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
        }
    }
}
