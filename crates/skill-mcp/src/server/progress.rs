//! Progress reports of a call, passed on to the client that asked for them.

use std::sync::{Arc, Mutex, OnceLock};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use skill_core::progress::{Progress, ProgressSink};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::task::JoinHandle;

use super::lock;

/// How long the result of a call waits for its progress notifications to go out.
const PROGRESS_FLUSH_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// The progress of a call whose client asked for it (a `progressToken` in `_meta`).
pub(super) struct Forwarding {
    sink: ProgressSink,
    /// The task that sends the reports to the client, in order, started by the first
    /// report: most calls report none, and then cost no task, channel or timer.
    forwarder: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl Forwarding {
    /// What the call reports to.
    pub(super) fn sink(&self) -> ProgressSink {
        Arc::clone(&self.sink)
    }

    /// Once the call has ended (and dropped its sinks), waits for its reports to go out,
    /// within [`PROGRESS_FLUSH_BOUND`], so that they reach the client before its result.
    pub(super) async fn flush(self) {
        drop(self.sink);
        let forwarder = lock(&self.forwarder).take();
        if let Some(forwarder) = forwarder {
            let _ = tokio::time::timeout(PROGRESS_FLUSH_BOUND, forwarder).await;
        }
    }
}

/// The call's progress forwarding, when the client asked for progress.
pub(super) fn progress_to(context: &RequestContext<RoleServer>) -> Option<Forwarding> {
    let token = context.meta.get_progress_token()?;
    let peer = context.peer.clone();
    // A report may come from any thread of the runtime, or from a blocking one.
    let runtime = tokio::runtime::Handle::current();
    let forwarder = Arc::new(Mutex::new(None));
    let started = Arc::clone(&forwarder);
    let sender = OnceLock::new();
    let sink: ProgressSink = Arc::new(move |report| {
        let sender = sender.get_or_init(|| {
            let (sender, reports) = tokio::sync::mpsc::unbounded_channel();
            *lock(&started) = Some(runtime.spawn(forward(reports, token.clone(), peer.clone())));
            sender
        });
        let _ = sender.send(report);
    });
    Some(Forwarding { sink, forwarder })
}

/// Sends each report to the client, in order, until the call's last sink is dropped.
async fn forward(mut reports: UnboundedReceiver<Progress>, token: ProgressToken, peer: Peer<RoleServer>) {
    while let Some(report) = reports.recv().await {
        let mut notification = ProgressNotificationParam::new(token.clone(), report.progress);
        notification.total = report.total;
        notification.message = report.message;
        // A client that went away misses the rest.
        if peer.notify_progress(notification).await.is_err() {
            return;
        }
    }
}
