//! Who waits for each call in flight to an MCP server, by the progress token rmcp sends
//! it with: the server's progress for that call reaches that caller, and (with the
//! `server` feature) so do the server's own requests and log messages during it.
//!
//! Progress names its call's token. Nothing on the wire ties a server's request or log
//! message to the call it serves (SEP-2260 leaves that to stream separation, which stdio
//! lacks), so those reach the caller only while exactly one call with a caller is in
//! flight on the connection; otherwise a request is refused and a message dropped.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ProgressToken;
use skill_core::progress::ProgressSink;

/// Who waits for one call.
#[derive(Clone, Default)]
pub(crate) struct CallRoute {
    /// Where the call's progress goes.
    pub(crate) progress: Option<ProgressSink>,
    /// The gateway client whose call it is.
    #[cfg(feature = "server")]
    pub(crate) caller: Option<crate::server::Caller>,
    /// Whether progress for the call has been heard: a server that reports progress
    /// usually sends its last report just before the answer.
    heard: Arc<AtomicBool>,
}

impl CallRoute {
    /// The route of the call about to start in this task: the progress sink and gateway
    /// caller it runs under, if any.
    pub(crate) fn current() -> Self {
        Self {
            progress: skill_core::progress::current_sink(),
            #[cfg(feature = "server")]
            caller: crate::server::Caller::current(),
            heard: Arc::default(),
        }
    }

    /// Passes on the call's progress, if its caller follows it.
    pub(crate) fn report(&self, progress: skill_core::progress::Progress) {
        self.heard.store(true, Ordering::Relaxed);
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }

    fn is_empty(&self) -> bool {
        #[cfg(feature = "server")]
        if self.caller.is_some() {
            return false;
        }
        self.progress.is_none()
    }
}

/// The routes of the calls in flight on one connection, by progress token.
#[derive(Clone, Default)]
pub(crate) struct CallRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, CallRoute>>>,
}

impl CallRoutes {
    /// Routes what concerns the call sent with `token` to `route` until the guard drops.
    pub(crate) fn enter(&self, token: ProgressToken, route: CallRoute) -> Option<RouteGuard> {
        if route.is_empty() {
            return None;
        }
        self.lock().insert(token.clone(), route);
        Some(RouteGuard { routes: self.clone(), token })
    }

    /// The route of the call sent with `token`.
    pub(crate) fn get(&self, token: &ProgressToken) -> Option<CallRoute> {
        self.lock().get(token).cloned()
    }

    /// The caller of the one call with a caller in flight; `None` for none or several.
    #[cfg(feature = "server")]
    pub(crate) fn only_caller(&self) -> Option<crate::server::Caller> {
        let routes = self.lock();
        let mut callers = routes.values().filter_map(|route| route.caller.clone());
        match (callers.next(), callers.next()) {
            (Some(caller), None) => Some(caller),
            _ => None,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, CallRoute>> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for CallRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRoutes").field("n_calls", &self.lock().len()).finish()
    }
}

/// Removes a call's route when the call ends.
pub(crate) struct RouteGuard {
    routes: CallRoutes,
    token: ProgressToken,
}

impl RouteGuard {
    /// Whether the call's server has reported progress on it.
    pub(crate) fn heard_progress(&self) -> bool {
        self.routes.get(&self.token).is_some_and(|route| route.heard.load(Ordering::Relaxed))
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}
