//! [`Health`]: what a gateway's console shows of an upstream server (whether it runs, how
//! often it started, its last error), kept by the skill as it starts and loses its
//! server, and read from any thread.

use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::SystemTime;

use serde::Serialize;

use super::Shared;

/// Where an upstream server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UpstreamState {
    /// Not started: its items come from the trust lock, or its skill has not started
    /// yet; the first call starts it.
    Idle,
    /// Starting for the first time.
    Starting,
    /// Running.
    Running,
    /// Starting again after it ran.
    Restarting,
    /// It ran and is gone (it exited, or its skill closed); the next call starts it again.
    Exited,
    /// Its last start failed (see [`UpstreamHealth::last_error`]); the next call tries again.
    Failed,
}

impl UpstreamState {
    /// The state as one word, for people.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Idle => "idle",
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Restarting => "restarting",
            Self::Exited => "exited",
            Self::Failed => "failed",
        }
    }
}

/// An upstream server's health at one moment.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UpstreamHealth {
    /// Where it is in its life.
    pub state: UpstreamState,
    /// How many times it started (the first start included).
    pub starts: u32,
    /// How many of those starts were restarts.
    pub restarts: u32,
    /// Why its last start failed, or how it was last lost, and when.
    pub last_error: Option<(SystemTime, String)>,
    /// How many times its lists were read again once it ran and handed to the agent: at
    /// its first start when they had been offered from the trust lock, and after each
    /// of its `list_changed`.
    pub relistings: u32,
}

/// What the skill records as its server starts and is lost.
#[derive(Debug, Default)]
struct Record {
    starting: bool,
    starts: u32,
    last_start_failed: bool,
    last_error: Option<(SystemTime, String)>,
    relistings: u32,
}

/// A handle on an upstream server's health ([`crate::McpSkill::health`]): cloned freely,
/// it stays valid after the skill moved into its agent, and reads
/// [`UpstreamState::Exited`] once the skill is gone.
#[derive(Debug, Clone, Default)]
pub struct Health {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    record: Mutex<Record>,
    /// The skill's shared part once it started, through which the connection's life is
    /// seen (a server that exited is only noticed by the next call otherwise).
    shared: Mutex<Weak<Shared>>,
}

impl Health {
    /// The health now.
    pub fn now(&self) -> UpstreamHealth {
        let live = self.shared().and_then(|shared| shared.live()).is_some();
        let record = self.record();
        let state = match (record.starting, live) {
            (true, _) if record.starts == 0 => UpstreamState::Starting,
            (true, _) => UpstreamState::Restarting,
            (false, true) => UpstreamState::Running,
            (false, false) if record.last_start_failed => UpstreamState::Failed,
            (false, false) if record.starts == 0 => UpstreamState::Idle,
            (false, false) => UpstreamState::Exited,
        };
        UpstreamHealth {
            state,
            starts: record.starts,
            restarts: record.starts.saturating_sub(1),
            last_error: record.last_error.clone(),
            relistings: record.relistings,
        }
    }

    pub(super) fn attach(&self, shared: &Arc<Shared>) {
        *self.inner.shared.lock().unwrap_or_else(PoisonError::into_inner) = Arc::downgrade(shared);
    }

    pub(super) fn starting(&self) {
        self.record().starting = true;
    }

    /// The start that [`Self::starting`] announced ended: with a connection, or with
    /// `error`.
    pub(super) fn started(&self, error: Option<String>) {
        let mut record = self.record();
        record.starting = false;
        record.last_start_failed = error.is_some();
        match error {
            Some(error) => record.last_error = Some((SystemTime::now(), error)),
            None => record.starts = record.starts.saturating_add(1),
        }
    }

    /// The server's lists were read again and handed to the agent.
    pub(super) fn relisted(&self) {
        let mut record = self.record();
        record.relistings = record.relistings.saturating_add(1);
    }

    /// The connection was found dead by a request, for `reason`.
    pub(super) fn lost(&self, reason: String) {
        self.record().last_error = Some((SystemTime::now(), reason));
    }

    fn record(&self) -> std::sync::MutexGuard<'_, Record> {
        self.inner.record.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn shared(&self) -> Option<Arc<Shared>> {
        self.inner.shared.lock().unwrap_or_else(PoisonError::into_inner).upgrade()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_follow_the_starts() {
        let health = Health::default();
        assert_eq!(health.now().state, UpstreamState::Idle);
        health.starting();
        assert_eq!(health.now().state, UpstreamState::Starting);
        health.started(None);
        // No connection is attached: the server is gone.
        assert_eq!((health.now().state, health.now().restarts), (UpstreamState::Exited, 0));
        health.starting();
        assert_eq!(health.now().state, UpstreamState::Restarting);
        health.started(Some("exited with status 1".to_owned()));
        let now = health.now();
        assert_eq!((now.state, now.starts, now.restarts), (UpstreamState::Failed, 1, 0));
        assert_eq!(now.last_error.map(|(_, error)| error).as_deref(), Some("exited with status 1"));
        health.starting();
        health.started(None);
        assert_eq!((health.now().state, health.now().restarts), (UpstreamState::Exited, 1));
    }
}
