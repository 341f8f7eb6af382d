//! The MCP client whose call is running: a person it must reach while the call waits
//! (an AAuth approval) is told through that client, not through the gateway's own
//! terminal, which its user may never see; and an upstream server's requests and log
//! messages during the call go to it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::ProtocolVersion;
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};

/// How long a client may take to answer a URL elicitation (it only acknowledges: the
/// call itself waits for the person, within its own bound).
const ELICITATION_BOUND: Duration = Duration::from_secs(60);

tokio::task_local! {
    static CALLER: Caller;
}

/// How many calls this gateway has served: the next call's number.
static CALLS: AtomicU64 = AtomicU64::new(1);

/// The client of one `tools/call`, and how it can be reached.
#[derive(Clone)]
pub(crate) struct Caller {
    peer: Peer<RoleServer>,
    /// On a 2025-11-25 (or older) session, which may be sent requests; 2026-07-28 forbids
    /// server-to-client requests.
    takes_requests: bool,
    /// The client declared URL-mode elicitation.
    url_elicitation: bool,
    /// What the client declared it can do, which a 2026-07-28 upstream is told in its
    /// stead (shared: a caller is cloned along its call's path).
    capabilities: Option<Arc<rmcp::model::ClientCapabilities>>,
    /// The least severe log message it takes: every one on a session, on 2026-07-28
    /// only those at or above the `logLevel` its request names, and none when it names
    /// none.
    #[allow(deprecated)]
    log_level: Option<rmcp::model::LoggingLevel>,
    /// What a 2026-07-28 client answered an earlier `input_required` of this call with
    /// (`inputResponses`, `requestState`), for the upstream that asked.
    answers: Option<(Option<rmcp::model::InputResponses>, Option<String>)>,
    /// What an upstream answered the call with that goes to the client as it is.
    passed_up: Arc<Mutex<Option<PassedUp>>>,
    /// The call's number in this gateway, which its log lines carry (`call=N`) and a
    /// client is told when the log says more than its result does.
    id: u64,
}

/// An upstream's answer to a gateway client's call that goes to the client unchanged, in
/// place of the agent's result.
pub(crate) enum PassedUp {
    /// The upstream asks the (2026-07-28) client for input.
    InputRequired(rmcp::model::InputRequiredResult),
    /// The upstream refused the call with this JSON-RPC error.
    Error(ErrorData),
}

impl Caller {
    pub(super) fn of(context: &RequestContext<RoleServer>) -> Self {
        let takes_requests = context.protocol_version().is_some_and(|version| version < ProtocolVersion::V_2026_07_28);
        let capabilities = context.client_capabilities();
        let url_elicitation = capabilities
            .as_ref()
            .and_then(|capabilities| capabilities.elicitation.as_ref())
            .is_some_and(|elicitation| elicitation.url.is_some());
        #[allow(deprecated)]
        let log_level = if takes_requests { Some(rmcp::model::LoggingLevel::Debug) } else { context.meta.log_level() };
        Self {
            peer: context.peer.clone(),
            takes_requests,
            url_elicitation,
            capabilities: capabilities.map(Arc::new),
            log_level,
            answers: None,
            passed_up: Arc::default(),
            id: CALLS.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The call's number in this gateway's log.
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// This caller, retrying a call with the answers to its `input_required`.
    pub(super) fn answering(mut self, responses: Option<rmcp::model::InputResponses>, state: Option<String>) -> Self {
        if responses.is_some() || state.is_some() {
            self.answers = Some((responses, state));
        }
        self
    }

    /// The client's answers to an upstream's `input_required`, if this call carries them.
    pub(crate) fn answers(&self) -> Option<(Option<rmcp::model::InputResponses>, Option<String>)> {
        self.answers.clone()
    }

    /// Whether an upstream's `input_required` goes to this client as it is: a 2026-07-28
    /// client answers it itself and calls again, and cannot be sent requests.
    pub(crate) fn takes_input_required(&self) -> bool {
        !self.takes_requests
    }

    /// Passes `answer` up to the client in place of the call's result.
    pub(crate) fn pass_up(&self, answer: PassedUp) {
        *self.passed_up.lock().unwrap_or_else(PoisonError::into_inner) = Some(answer);
    }

    /// What an upstream answered the call with for the client, if anything.
    pub(super) fn passed_up(&self) -> Option<PassedUp> {
        self.passed_up.lock().unwrap_or_else(PoisonError::into_inner).take()
    }

    /// Runs `call` with this caller as the one [`tell_caller`] reaches. (Not an `async
    /// fn`, which would hold `call` twice.)
    pub(super) fn serving<F: Future>(self, call: F) -> impl Future<Output = F::Output> {
        CALLER.scope(self, call)
    }

    /// The caller of the gateway call running in this task, if any.
    pub(crate) fn current() -> Option<Self> {
        CALLER.try_with(Caller::clone).ok()
    }

    fn requests_allowed(&self) -> Result<(), ErrorData> {
        if self.takes_requests {
            Ok(())
        } else {
            Err(ErrorData::invalid_request("the calling client is on 2026-07-28, which takes no server requests", None))
        }
    }

    /// Asks the caller for a sampling, on behalf of an upstream server.
    #[allow(deprecated)]
    pub(crate) async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
    ) -> Result<rmcp::model::CreateMessageResult, ErrorData> {
        self.requests_allowed()?;
        self.peer.create_message(request).await.map_err(forwarding_error)
    }

    /// Asks the caller for an elicitation, on behalf of an upstream server.
    pub(crate) async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
    ) -> Result<rmcp::model::ElicitResult, ErrorData> {
        self.requests_allowed()?;
        self.peer.create_elicitation(request).await.map_err(forwarding_error)
    }

    /// Asks the caller for its roots, on behalf of an upstream server. Roots are
    /// deprecated by 2026-07-28 (SEP-2577), but a 2026-07-28 server may still ask.
    #[allow(deprecated)]
    pub(crate) async fn list_roots(&self) -> Result<rmcp::model::ListRootsResult, ErrorData> {
        self.requests_allowed()?;
        self.peer.list_roots().await.map_err(forwarding_error)
    }

    /// The `_meta` a 2026-07-28 upstream gets with this caller's call: the caller's
    /// capabilities (what it may be asked for) and the least severe log message it
    /// takes (`logLevel`; the upstream sends none unasked).
    pub(crate) fn upstream_meta(&self) -> rmcp::model::RequestMetaObject {
        let mut meta = rmcp::model::RequestMetaObject::default();
        if let Some(capabilities) = &self.capabilities {
            meta.set_client_capabilities(rmcp::model::ClientCapabilities::clone(capabilities));
        }
        #[allow(deprecated)]
        if let Some(level) = self.log_level {
            meta.set_log_level(level);
        }
        meta
    }

    /// Passes an upstream server's log message on to the caller, if it takes it.
    #[allow(deprecated)]
    pub(crate) async fn log(&self, message: rmcp::model::LoggingMessageNotificationParam) {
        if self.log_level.is_some_and(|level| severity(message.level) >= severity(level)) {
            // A caller that went away misses it.
            let _ = self.peer.notify_logging_message(message).await;
        }
    }
}

/// How severe a log level is, from `debug` (0) to `emergency` (7), as RFC 5424 orders them.
#[allow(deprecated)]
fn severity(level: rmcp::model::LoggingLevel) -> u8 {
    use rmcp::model::LoggingLevel;
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The client's own error as it answered, else why the request did not reach it.
fn forwarding_error(error: rmcp::ServiceError) -> ErrorData {
    match error {
        rmcp::ServiceError::McpError(error) => error,
        other => ErrorData::internal_error(format!("the calling client did not answer: {other}"), None),
    }
}

/// Tells the MCP client whose call runs in this task that a person must open `url`
/// (`message` says why): a URL-mode elicitation where the client declared it on a
/// session, else a log notification (`notifications/message`, level warning) carrying
/// the message and the URL. `false` when neither can reach it (outside a gateway call,
/// or a 2026-07-28 client that asked for no log messages): then the caller must tell the
/// person itself.
pub fn tell_caller(message: &str, url: &str) -> bool {
    let Some(caller) = Caller::current() else { return false };
    let elicit = caller.url_elicitation && caller.takes_requests;
    if !elicit && caller.log_level.is_none_or(|level| severity(level) > WARNING) {
        return false;
    }
    let (message, url) = (message.to_owned(), url.to_owned());
    tokio::spawn(async move {
        if elicit && let Ok(parsed) = url::Url::parse(&url) {
            static ELICITATIONS: AtomicU64 = AtomicU64::new(0);
            let id = format!("omniagent-{}", ELICITATIONS.fetch_add(1, Ordering::Relaxed));
            match caller.peer.elicit_url_with_timeout(message.clone(), parsed, id, Some(ELICITATION_BOUND)).await {
                Ok(_) => return,
                Err(error) => tracing::debug!("URL elicitation failed, sending a log message instead: {error}"),
            }
        }
        caller.log(warning(serde_json::json!({"message": message, "url": url}))).await;
    });
    true
}

/// The severity of `warning`.
const WARNING: u8 = 3;

/// `data` as a warning log message of the gateway's. Logging is deprecated by 2026-07-28
/// (SEP-2577), but it is what every client shows today.
#[allow(deprecated)]
fn warning(data: serde_json::Value) -> rmcp::model::LoggingMessageNotificationParam {
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
    LoggingMessageNotificationParam::new(LoggingLevel::Warning, data).with_logger("omniagent")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(deprecated)]
    fn severities_follow_rfc_5424() {
        use rmcp::model::LoggingLevel;
        assert_eq!(severity(warning(serde_json::Value::Null).level), WARNING);
        assert!(severity(LoggingLevel::Debug) < severity(LoggingLevel::Info));
        assert!(severity(LoggingLevel::Error) < severity(LoggingLevel::Emergency));
    }
}
