//! What the HTTP gateway answers without a token: `GET /healthz` (the process serves),
//! `GET /readyz` (its config is loaded and its store answers) and, with
//! `observability.metrics`, `GET /metrics` (Prometheus text).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use skill_core::KvStore;

/// How long `/readyz` waits for the store: a probe must answer in its own timeout
/// (a kubelet's default is 1 s), and a store that slow is not ready.
const STORE_WAIT: Duration = Duration::from_millis(800);

/// The probes' routes; `store` is the top level's store, which `/readyz` reads.
pub(super) fn routes(store: Arc<dyn KvStore>) -> axum::Router {
    let router =
        axum::Router::new().route("/healthz", get(|| async { "ok\n" })).route("/readyz", get(ready).with_state(store));
    #[cfg(feature = "telemetry")]
    if omniagent_host::telemetry::serves_metrics() {
        return router.route("/metrics", get(metrics));
    }
    router
}

/// Ready when the store answers a read (the config was loaded before the gateway
/// listened).
async fn ready(State(store): State<Arc<dyn KvStore>>) -> Response {
    match tokio::time::timeout(STORE_WAIT, store.get("omniagent", "readyz")).await {
        Ok(Ok(_)) => (StatusCode::OK, "ready\n").into_response(),
        Ok(Err(error)) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("the store cannot be read: {error}\n")).into_response()
        }
        Err(_) => {
            (StatusCode::SERVICE_UNAVAILABLE, format!("the store did not answer in {STORE_WAIT:?}\n")).into_response()
        }
    }
}

#[cfg(feature = "telemetry")]
async fn metrics() -> Response {
    match omniagent_host::telemetry::prometheus_text() {
        Some(text) => ([(axum::http::header::CONTENT_TYPE, omniagent_host::telemetry::PROMETHEUS_CONTENT_TYPE)], text)
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
