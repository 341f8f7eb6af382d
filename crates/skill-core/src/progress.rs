//! Progress of a running tool call, for callers that show it (an MCP client's
//! `notifications/progress`): the caller runs the call [`with_progress`], and a tool (or
//! what it calls, such as an upstream MCP server) [`report`]s as it goes. Outside such a
//! call, reports go nowhere.
//!
//! ```
//! use std::sync::{Arc, Mutex};
//! use skill_core::progress::{self, Progress};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let seen = Arc::new(Mutex::new(Vec::new()));
//! let sink = Arc::clone(&seen);
//! progress::with_progress(Arc::new(move |update: Progress| sink.lock().unwrap().push(update.progress)), async {
//!     progress::report(Progress { progress: 1.0, total: Some(2.0), message: None });
//! })
//! .await;
//! assert_eq!(*seen.lock().unwrap(), [1.0]);
//! # }
//! ```

use std::future::Future;
use std::sync::Arc;

/// How far a call got.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// The progress so far; it only grows.
    pub progress: f64,
    /// The total, when known.
    pub total: Option<f64>,
    /// What is happening now.
    pub message: Option<String>,
}

/// Where the progress of the running call goes.
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

tokio::task_local! {
    static SINK: ProgressSink;
}

/// Runs `call` with its progress reports going to `sink`. (Not an `async fn`, which
/// would hold `call` twice: as its argument, and inside the scope it awaits.)
pub fn with_progress<F: Future>(sink: ProgressSink, call: F) -> impl Future<Output = F::Output> {
    SINK.scope(sink, call)
}

/// The sink of the call running in this task, to hand to another task that reports for
/// it; `None` when nobody listens.
pub fn current_sink() -> Option<ProgressSink> {
    SINK.try_with(Arc::clone).ok()
}

/// Reports `progress` of the call running in this task (nothing when nobody listens).
pub fn report(progress: Progress) {
    if let Some(sink) = current_sink() {
        sink(progress);
    }
}
