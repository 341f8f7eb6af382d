//! Progress reports of a call, passed on to the client that asked for them.

use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use skill_core::progress::{Progress, ProgressSink};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender};
use tokio::task::JoinHandle;

use super::lock;

/// How long the result of a call waits for its progress notifications to go out.
const PROGRESS_FLUSH_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// The progress of a call whose client asked for it (a `progressToken` in `_meta`).
pub(super) struct Forwarding {
    sink: ProgressSink,
    state: Arc<Mutex<State>>,
}

/// The task that sends a call's reports to its client, in order. The first report starts
/// it: most calls report none, and then cost no task, channel or timer.
#[derive(Default)]
struct State {
    reports: Option<UnboundedSender<Progress>>,
    forwarder: Option<JoinHandle<()>>,
    /// The call has ended: what it reports now has no request to belong to.
    ended: bool,
}

impl Forwarding {
    /// What the call reports to.
    pub(super) fn sink(&self) -> ProgressSink {
        Arc::clone(&self.sink)
    }

    /// Once the call has ended, waits for what it reported to go out, within
    /// [`PROGRESS_FLUSH_BOUND`], so that it reaches the client before the result; later
    /// reports are dropped.
    pub(super) async fn flush(self) {
        let forwarder = {
            let mut state = lock(&self.state);
            state.ended = true;
            // The forwarder ends once it has sent what is queued.
            state.reports = None;
            state.forwarder.take()
        };
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
    let state = Arc::new(Mutex::new(State::default()));
    let shared = Arc::clone(&state);
    let sink: ProgressSink = Arc::new(move |report| {
        let mut guard = lock(&shared);
        let state = &mut *guard;
        if state.ended {
            return;
        }
        let reports = state.reports.get_or_insert_with(|| {
            let (sender, reports) = tokio::sync::mpsc::unbounded_channel();
            state.forwarder = Some(runtime.spawn(forward(reports, token.clone(), peer.clone())));
            sender
        });
        let _ = reports.send(report);
    });
    Some(Forwarding { sink, state })
}

/// Sends each report to the client, in order, until the call has ended and every report
/// is sent.
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
