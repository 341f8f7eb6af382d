//! How telemetry leaves the process: OTLP/HTTP (protobuf) through the workspace's
//! reqwest, on the process's Tokio runtime; finished spans wait in a bounded queue that
//! a task of the runtime empties, so that a call never waits for a collector.
//!
//! The task sends a span at most [`DELAY_DEFAULT`] after it ended, with those that ended
//! meanwhile, or as soon as a batch's worth wait: a busy gateway sends its spans in a few
//! large requests, and a call seldom has to wake the task (a wake is a thread's unpark,
//! which costs a call more than its span).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::Bytes;
use opentelemetry::Context;
use opentelemetry_http::{HttpClient, HttpError, Request, Response};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{Span, SpanData, SpanExporter as _, SpanProcessor};
use tokio::sync::{Notify, mpsc, oneshot};

use crate::HostError;

/// How many finished spans may wait for export (`OTEL_BSP_MAX_QUEUE_SIZE`, default 2048,
/// as the OpenTelemetry specification's batch processor).
const QUEUE_DEFAULT: usize = 2048;
/// How many spans one export sends at most (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`, default 512).
const BATCH_DEFAULT: usize = 512;
/// How long a span waits for others to join its export (`OTEL_BSP_SCHEDULE_DELAY`,
/// milliseconds; the specification's default is 5 s, shortened so that a trace shows up
/// while its request is fresh).
const DELAY_DEFAULT: Duration = Duration::from_millis(200);
/// How long one export may take (`OTEL_EXPORTER_OTLP_TIMEOUT`, milliseconds; default 10 s).
const TIMEOUT_DEFAULT: Duration = Duration::from_secs(10);
/// How long [`SpanQueue::shutdown`] waits for the last export.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(5);

/// Whether `OTEL_SDK_DISABLED=true` turns every export off.
pub(super) fn disabled_by_env() -> bool {
    std::env::var("OTEL_SDK_DISABLED").is_ok_and(|value| value.trim().eq_ignore_ascii_case("true"))
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The URL of one signal's OTLP endpoint: `endpoint` (the config's base URL) with the
/// signal's path (`v1/traces`) added; without it, `None`, and the exporter reads the
/// `OTEL_EXPORTER_OTLP_*` variables itself.
pub(super) fn signal_url(endpoint: Option<&str>, path: &str) -> Option<String> {
    endpoint.map(|base| format!("{}/{path}", base.trim_end_matches('/')))
}

/// An invalid `observability.otlp` as a config error.
pub(super) fn otlp_error(error: impl std::fmt::Display) -> HostError {
    HostError::InvalidConfig { file: None, at: None, message: format!("observability.otlp: {error}") }
}

/// The OTLP HTTP client: reqwest's requests run as tasks of the runtime that installed
/// telemetry, so that an exporter may wait for one from any thread (the metrics
/// reader's own thread), with no second runtime or blocking client.
#[derive(Debug)]
pub(super) struct TokioHttp {
    client: reqwest::Client,
    runtime: tokio::runtime::Handle,
}

impl TokioHttp {
    /// A client on the current runtime; it must be called inside one.
    pub(super) fn new() -> Result<Self, HostError> {
        let timeout = env_number("OTEL_EXPORTER_OTLP_TIMEOUT").map_or(TIMEOUT_DEFAULT, Duration::from_millis);
        // reqwest is built without a crypto provider of its own (for `https://` collectors):
        // the process's, ring, as the other clients install it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().timeout(timeout).build().map_err(otlp_error)?;
        let runtime = tokio::runtime::Handle::try_current().map_err(otlp_error)?;
        Ok(Self { client, runtime })
    }
}

#[async_trait::async_trait]
impl HttpClient for TokioHttp {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let request = reqwest::Request::try_from(request.map(reqwest::Body::from))?;
        let client = self.client.clone();
        let task = self.runtime.spawn(async move {
            let response = client.execute(request).await?;
            let mut answer = Response::builder().status(response.status());
            if let Some(headers) = answer.headers_mut() {
                headers.extend(response.headers().iter().map(|(name, value)| (name.clone(), value.clone())));
            }
            let body = response.bytes().await?;
            Ok::<_, HttpError>(answer.body(body)?)
        });
        task.await?
    }
}

/// What the export task is asked besides spans: to send what waits and stop.
type Finish = oneshot::Sender<()>;

/// The span processor: a finished, sampled span goes into the bounded queue, or is
/// dropped and counted when the queue is full.
#[derive(Debug, Clone)]
pub(super) struct SpanQueue {
    spans: mpsc::Sender<SpanData>,
    finish: mpsc::Sender<Finish>,
    dropped: Arc<AtomicU64>,
    /// How many spans one export sends at most.
    batch: usize,
    /// Told when a batch's worth of spans waits, so that they go without the delay.
    full: Arc<Notify>,
}

impl SpanQueue {
    /// The queue, and the task that sends its spans through `exporter` (on the current
    /// runtime).
    pub(super) fn start(mut exporter: opentelemetry_otlp::SpanExporter, resource: &Resource) -> Self {
        exporter.set_resource(resource);
        let capacity = env_number("OTEL_BSP_MAX_QUEUE_SIZE").map_or(QUEUE_DEFAULT, |size| size.max(1) as usize);
        let batch = env_number("OTEL_BSP_MAX_EXPORT_BATCH_SIZE").map_or(BATCH_DEFAULT, |size| size.max(1) as usize);
        let delay = env_number("OTEL_BSP_SCHEDULE_DELAY").map_or(DELAY_DEFAULT, Duration::from_millis);
        let (spans, receiver) = mpsc::channel(capacity);
        let (finish, finishes) = mpsc::channel(1);
        let dropped = Arc::new(AtomicU64::new(0));
        let (batch, full) = (batch.min(capacity), Arc::new(Notify::new()));
        let queue = Queue { spans: receiver, finishes, full: Arc::clone(&full), batch, delay };
        tokio::spawn(send(exporter, queue, Arc::clone(&dropped)));
        Self { spans, finish, dropped, batch, full }
    }

    /// The counter of spans dropped: the queue was full, or their export failed.
    pub(super) fn dropped(&self) -> Arc<AtomicU64> {
        Arc::clone(&self.dropped)
    }

    /// Sends what waits and stops the task, waiting [`SHUTDOWN_WAIT`] at most.
    pub(super) async fn shutdown(&self) {
        let (done, finished) = oneshot::channel();
        if self.finish.send(done).await.is_ok() {
            let _ = tokio::time::timeout(SHUTDOWN_WAIT, finished).await;
        }
    }
}

impl SpanProcessor for SpanQueue {
    fn on_start(&self, _span: &mut Span, _cx: &Context) {}

    fn on_end(&self, span: SpanData) {
        if !span.span_context.is_sampled() {
            return;
        }
        match self.spans.try_send(span) {
            Ok(()) if self.spans.max_capacity() - self.spans.capacity() >= self.batch => self.full.notify_one(),
            Ok(()) => {}
            Err(_) => {
                self.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    fn force_flush(&self) -> OTelSdkResult {
        Ok(())
    }

    fn shutdown_with_timeout(&self, _timeout: Duration) -> OTelSdkResult {
        Ok(())
    }
}

/// The export task's end of the queue.
struct Queue {
    spans: mpsc::Receiver<SpanData>,
    finishes: mpsc::Receiver<Finish>,
    /// Told when a batch's worth of spans waits.
    full: Arc<Notify>,
    batch: usize,
    /// How long the first span of an export waits for others.
    delay: Duration,
}

/// The export task: once a span comes, waits for others (`delay`, or until a batch's
/// worth wait), and sends as many as wait (up to `batch`) in one request, one request at
/// a time; a failed export's spans count as dropped.
async fn send(exporter: opentelemetry_otlp::SpanExporter, queue: Queue, dropped: Arc<AtomicU64>) {
    let Queue { mut spans, mut finishes, full, batch, delay } = queue;
    let mut waiting = Vec::with_capacity(batch);
    let export = async |waiting: &mut Vec<SpanData>| {
        let count = waiting.len() as u64;
        if let Err(error) = exporter.export(std::mem::take(waiting)).await {
            dropped.fetch_add(count, Ordering::Relaxed);
            tracing::debug!("OTLP span export failed: {error}");
        }
    };
    loop {
        let mut finishing = None;
        tokio::select! {
            received = spans.recv_many(&mut waiting, batch) => {
                if received == 0 {
                    return;
                }
            }
            Some(done) = finishes.recv() => finishing = Some(done),
        }
        if finishing.is_none() && waiting.len() < batch && !delay.is_zero() {
            tokio::select! {
                () = tokio::time::sleep(delay) => {}
                () = full.notified() => {}
                Some(done) = finishes.recv() => finishing = Some(done),
            }
        }
        match finishing {
            None => {
                while waiting.len() < batch
                    && let Ok(span) = spans.try_recv()
                {
                    waiting.push(span);
                }
                export(&mut waiting).await;
            }
            Some(done) => {
                while let Ok(span) = spans.try_recv() {
                    waiting.push(span);
                    if waiting.len() == batch {
                        export(&mut waiting).await;
                    }
                }
                if !waiting.is_empty() {
                    export(&mut waiting).await;
                }
                let _ = done.send(());
                return;
            }
        }
    }
}
