//! The MCP client whose call is running: a person it must reach while the call waits
//! (an AAuth approval) is told through that client, not through the gateway's own
//! terminal, which its user may never see.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

/// How long a client may take to answer a URL elicitation (it only acknowledges: the
/// call itself waits for the person, within its own bound).
const ELICITATION_BOUND: Duration = Duration::from_secs(60);

tokio::task_local! {
    static CALLER: Caller;
}

/// The client of one `tools/call`, and how it can be reached.
#[derive(Clone)]
pub(super) struct Caller {
    peer: Peer<RoleServer>,
    /// The client declared URL-mode elicitation, on a session that may send it requests.
    url_elicitation: bool,
}

impl Caller {
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
        let sessions = context.protocol_version().is_some_and(|version| version < ProtocolVersion::V_2026_07_28);
        let declared = context
            .client_capabilities()
            .and_then(|capabilities| capabilities.elicitation)
            .is_some_and(|elicitation| elicitation.url.is_some());
        Self { peer: context.peer.clone(), url_elicitation: sessions && declared }
    }

    /// Runs `call` with this caller as the one [`tell_caller`] reaches.
    pub(super) async fn serving<F: Future>(self, call: F) -> F::Output {
        CALLER.scope(self, call).await
    }
}

/// Tells the MCP client whose call runs in this task that a person must open `url`
/// (`message` says why): a URL-mode elicitation where the client declared it, else a log
/// notification (`notifications/message`, level warning) carrying the message and the
/// URL. `false` outside a gateway call: then the caller must tell the person itself.
pub fn tell_caller(message: &str, url: &str) -> bool {
    let Ok(caller) = CALLER.try_with(Caller::clone) else { return false };
    let (message, url) = (message.to_owned(), url.to_owned());
    tokio::spawn(async move {
        if caller.url_elicitation
            && let Ok(parsed) = url::Url::parse(&url)
        {
            static ELICITATIONS: AtomicU64 = AtomicU64::new(0);
            let id = format!("omniagent-{}", ELICITATIONS.fetch_add(1, Ordering::Relaxed));
            match caller.peer.elicit_url_with_timeout(message.clone(), parsed, id, Some(ELICITATION_BOUND)).await {
                Ok(_) => return,
                Err(error) => tracing::debug!("URL elicitation failed, sending a log message instead: {error}"),
            }
        }
        if let Err(error) = log_warning(&caller.peer, serde_json::json!({"message": message, "url": url})).await {
            tracing::warn!("cannot tell the client that a person must act: {error}");
        }
    });
    true
}

/// Sends `data` as a warning log message. Logging is deprecated by 2026-07-28
/// (SEP-2577), but it is what every client shows today.
#[allow(deprecated)]
async fn log_warning(peer: &Peer<RoleServer>, data: serde_json::Value) -> Result<(), rmcp::ServiceError> {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    peer.notify_logging_message(
        LoggingMessageNotificationParam::new(LoggingLevel::Warning, data).with_logger("omniagent"),
    )
    .await
}
