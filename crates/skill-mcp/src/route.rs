//! Who waits for each call in flight to an MCP server, by the progress token rmcp sends
//! it with: the server's progress for that call reaches that caller, and (with the
//! `server` feature) so do the server's own requests and log messages during it.
//!
//! Progress names its call's token. Nothing on the wire ties a server's request or log
//! message to the call it serves (SEP-2260 leaves that to stream separation, which stdio
//! lacks), so those reach the caller only while exactly one call with a caller is in
//! flight on the connection; otherwise a request is refused and a message dropped.
//!
//! A call's route is entered before its request is sent, and bound to the token rmcp
//! chose once the send returns: a fast server may answer with requests or progress in
//! between. Progress heard for a token no bound call has is kept while a call is being
//! sent, and handed on when that call binds its token.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ProgressToken;
use skill_core::progress::{Progress, ProgressSink};

/// At most this much progress is kept for calls still being sent; more is dropped.
const EARLY_PROGRESS: usize = 64;

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
    /// caller it runs under; `None` when it has neither, as nobody follows the call.
    pub(crate) fn current() -> Option<Self> {
        let progress = skill_core::progress::current_sink();
        #[cfg(feature = "server")]
        let caller = crate::server::Caller::current();
        #[cfg(feature = "server")]
        let followed = progress.is_some() || caller.is_some();
        #[cfg(not(feature = "server"))]
        let followed = progress.is_some();
        followed.then(|| Self {
            progress,
            #[cfg(feature = "server")]
            caller,
            heard: Arc::default(),
        })
    }

    /// Passes on the call's progress, if its caller follows it. Sinks only queue it.
    fn report(&self, progress: Progress) {
        self.heard.store(true, Ordering::Relaxed);
        if let Some(sink) = &self.progress {
            sink(progress);
        }
    }
}

/// Where a call's route is kept.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Key {
    /// The request is being sent: rmcp has not said its token yet.
    Sending(u64),
    /// The request went out with this token.
    Sent(ProgressToken),
}

#[derive(Default)]
struct Routes {
    routes: HashMap<Key, CallRoute>,
    /// How many calls are being sent.
    sending: usize,
    next: u64,
    /// Progress for tokens no sent call has, heard while calls were being sent.
    early: Vec<(ProgressToken, Progress)>,
}

/// The routes of the calls in flight on one connection.
#[derive(Clone, Default)]
pub(crate) struct CallRoutes {
    routes: Arc<Mutex<Routes>>,
}

impl CallRoutes {
    /// Routes what concerns the call about to be sent to `route` until the guard drops;
    /// [`RouteGuard::sent`] names its token once rmcp has chosen it.
    pub(crate) fn enter(&self, route: CallRoute) -> RouteGuard {
        let mut routes = self.lock();
        let key = Key::Sending(routes.next);
        routes.next += 1;
        routes.sending += 1;
        routes.routes.insert(key.clone(), route);
        RouteGuard { routes: self.clone(), key }
    }

    /// Passes on progress to the call sent with its token; kept for a moment when no
    /// call has that token but one is being sent.
    pub(crate) fn report(&self, token: ProgressToken, progress: Progress) {
        let mut routes = self.lock();
        if let Some(route) = routes.routes.get(&Key::Sent(token.clone())) {
            route.report(progress);
        } else if routes.sending > 0 && routes.early.len() < EARLY_PROGRESS {
            routes.early.push((token, progress));
        }
    }

    /// The callers of the calls with a caller in flight, up to two (enough to tell one
    /// from several).
    #[cfg(feature = "server")]
    pub(crate) fn callers(&self) -> Vec<crate::server::Caller> {
        self.lock().routes.values().filter_map(|route| route.caller.clone()).take(2).collect()
    }

    /// The caller of the one call with a caller in flight; `None` for none or several.
    #[cfg(feature = "server")]
    pub(crate) fn only_caller(&self) -> Option<crate::server::Caller> {
        let mut callers = self.callers();
        if callers.len() == 1 { callers.pop() } else { None }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Routes> {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl std::fmt::Debug for CallRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallRoutes").field("n_calls", &self.lock().routes.len()).finish()
    }
}

/// Removes a call's route when the call ends.
pub(crate) struct RouteGuard {
    routes: CallRoutes,
    key: Key,
}

impl RouteGuard {
    /// The call went out with `token`: its progress, including any heard meanwhile, goes
    /// to its route from now on.
    pub(crate) fn sent(&mut self, token: ProgressToken) {
        let mut routes = self.routes.lock();
        let Some(route) = routes.routes.remove(&self.key) else { return };
        routes.sending -= 1;
        let (early, others): (Vec<_>, Vec<_>) =
            std::mem::take(&mut routes.early).into_iter().partition(|(heard, _)| *heard == token);
        if routes.sending > 0 {
            routes.early = others;
        }
        // Under the lock, so that later progress cannot overtake it.
        for (_, progress) in early {
            route.report(progress);
        }
        self.key = Key::Sent(token);
        routes.routes.insert(self.key.clone(), route);
    }

    /// Whether the call's server has reported progress on it.
    pub(crate) fn heard_progress(&self) -> bool {
        self.routes.lock().routes.get(&self.key).is_some_and(|route| route.heard.load(Ordering::Relaxed))
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut routes = self.routes.lock();
        routes.routes.remove(&self.key);
        if matches!(self.key, Key::Sending(_)) {
            routes.sending -= 1;
            if routes.sending == 0 {
                routes.early.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> (CallRoute, Arc<Mutex<Vec<f64>>>) {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = heard.clone();
        let sink: ProgressSink = Arc::new(move |progress: Progress| sink.lock().unwrap().push(progress.progress));
        (CallRoute { progress: Some(sink), ..CallRoute::default() }, heard)
    }

    fn progress(progress: f64) -> Progress {
        Progress { progress, total: None, message: None }
    }

    fn token(n: i64) -> ProgressToken {
        ProgressToken(rmcp::model::NumberOrString::Number(n))
    }

    #[test]
    fn progress_heard_while_the_call_is_being_sent_reaches_it_in_order() {
        let calls = CallRoutes::default();
        let (route, heard) = recording();
        let mut guard = calls.enter(route);
        calls.report(token(7), progress(1.0));
        calls.report(token(8), progress(5.0));
        guard.sent(token(7));
        calls.report(token(7), progress(2.0));
        assert_eq!(*heard.lock().unwrap(), [1.0, 2.0]);
        assert!(guard.heard_progress());
        assert!(calls.lock().early.is_empty(), "nothing is kept once no call is being sent");
    }

    #[test]
    fn progress_for_no_call_is_dropped_and_a_route_ends_with_its_guard() {
        let calls = CallRoutes::default();
        calls.report(token(1), progress(1.0));
        assert!(calls.lock().early.is_empty());
        let (route, heard) = recording();
        let mut guard = calls.enter(route);
        guard.sent(token(1));
        drop(guard);
        calls.report(token(1), progress(3.0));
        assert!(heard.lock().unwrap().is_empty());
        assert!(calls.lock().routes.is_empty());
        assert!(CallRoute::current().is_none(), "a call nobody follows needs no route");
    }
}
