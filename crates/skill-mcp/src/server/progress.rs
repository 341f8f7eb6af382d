//! Progress reports of a call, passed on to the client that asked for them.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;

/// How long the result of a call waits for its progress notifications to go out.
pub(super) const PROGRESS_FLUSH_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// When the client asked for progress (a `progressToken` in `_meta`), the sink a call
/// reports to and the task that sends each report to the client, in order; the task ends
/// once the call's last sink is dropped.
pub(super) fn progress_to(
    context: &RequestContext<RoleServer>,
) -> (Option<skill_core::progress::ProgressSink>, Option<tokio::task::JoinHandle<()>>) {
    let Some(token) = context.meta.get_progress_token() else { return (None, None) };
    let (sender, mut reports) = tokio::sync::mpsc::unbounded_channel::<skill_core::progress::Progress>();
    let peer = context.peer.clone();
    let forwarder = tokio::spawn(async move {
        while let Some(report) = reports.recv().await {
            let mut notification = ProgressNotificationParam::new(token.clone(), report.progress);
            notification.total = report.total;
            notification.message = report.message;
            // A client that went away misses the rest.
            if peer.notify_progress(notification).await.is_err() {
                return;
            }
        }
    });
    let sink: skill_core::progress::ProgressSink = Arc::new(move |report| {
        let _ = sender.send(report);
    });
    (Some(sink), Some(forwarder))
}
