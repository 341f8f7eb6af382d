//! The gateway's 2025-11-25 sessions in Redis, so that any replica can serve any session.
//!
//! A legacy session begins with `initialize` on one replica; rmcp then [stores](SessionStore)
//! the client's `initialize` parameters here. A request of that session reaching a replica
//! that has never seen it makes rmcp [load](SessionStore::load) them and replay the
//! handshake there, so the request is answered as if it had come to the first replica: no
//! load balancer needs sticky sessions. 2026-07-28 requests carry no session and never
//! come here.
//!
//! Each entry (`omniagent:session:{id}`, the parameters as JSON) lives [`SESSION_TTL`]
//! after its last use: a restore refreshes it (`GETEX`), and so does every answered
//! request carrying the session's `Mcp-Session-Id` ([`refresh_sessions`], at most once
//! per [`REFRESH_EVERY`] and replica), so a session in use never expires and an abandoned
//! one leaves nothing behind. `DELETE /mcp` removes the entry at once.
//!
//! The server's URL may hold a password: errors, logs and `Debug` show it redacted.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};
use skill_core::{ExposeSecret as _, RedisConnection, SecretString};

/// What every session's key starts with.
const KEY_PREFIX: &str = "omniagent:session:";

/// How long a session's entry outlives its last use.
pub const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How often one replica refreshes the entry of a session it keeps serving.
pub const REFRESH_EVERY: Duration = Duration::from_secs(60 * 60);

/// The longest session id refreshed: rmcp's are UUIDs; a longer header is no session of
/// the gateway's and is not sent to Redis.
const MAX_SESSION_ID_LEN: usize = 128;

/// How long the server may take to answer one command.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// rmcp's [`SessionStore`] on a Redis server shared by the gateway's replicas: see the
/// module doc.
pub struct RedisSessionStore {
    server: RedisConnection,
    ttl: Duration,
    refresh_every: Duration,
    /// When this replica last refreshed each session's entry.
    refreshed: Mutex<Refreshed>,
}

#[derive(Default)]
struct Refreshed {
    at: HashMap<String, Instant>,
    /// The size at which entries older than the TTL are forgotten.
    prune_at: usize,
}

/// Why the session store failed, naming the server by its redacted URL.
#[derive(Debug, thiserror::Error)]
#[error("redis session store {url}: {reason}")]
pub struct RedisSessionStoreError {
    url: String,
    reason: String,
}

impl RedisSessionStore {
    /// A store on the server at `url` (`redis://[user:password@]host[:port][/db]`);
    /// nothing is connected until first use.
    pub fn new(url: &SecretString) -> Result<Self, RedisSessionStoreError> {
        let server = RedisConnection::new(url, RESPONSE_TIMEOUT).map_err(|failure| RedisSessionStoreError {
            url: skill_core::redact::url_text(url.expose_secret()),
            reason: failure.to_string(),
        })?;
        Ok(Self { server, ttl: SESSION_TTL, refresh_every: REFRESH_EVERY, refreshed: Mutex::default() })
    }

    /// The server's URL as it may be shown (no password, no query values).
    pub fn shown_url(&self) -> &str {
        self.server.shown_url()
    }

    /// Runs `command` on the server (see [`RedisConnection::run`]): every command here is
    /// safe to repeat.
    async fn run<T: redis::FromRedisValue>(&self, command: &redis::Cmd) -> Result<T, RedisSessionStoreError> {
        self.server
            .run(|mut connection| async move { command.query_async(&mut connection).await })
            .await
            .map_err(|failure| RedisSessionStoreError { url: self.shown_url().to_owned(), reason: failure.to_string() })
    }

    fn ttl_seconds(&self) -> u64 {
        self.ttl.as_secs().max(1)
    }

    /// Pushes the expiry of session `id`'s entry to [`SESSION_TTL`] from now, unless this
    /// replica did so less than [`REFRESH_EVERY`] ago; a session not in the store stays
    /// absent.
    async fn refresh(&self, id: &str) -> Result<(), RedisSessionStoreError> {
        let now = Instant::now();
        {
            let mut refreshed = self.refreshed.lock().unwrap_or_else(PoisonError::into_inner);
            if refreshed.at.get(id).is_some_and(|last| now.duration_since(*last) < self.refresh_every) {
                return Ok(());
            }
            if refreshed.at.len() >= refreshed.prune_at {
                let ttl = self.ttl;
                refreshed.at.retain(|_, last| now.duration_since(*last) < ttl);
                refreshed.prune_at = (refreshed.at.len() * 2).max(1024);
            }
            refreshed.at.insert(id.to_owned(), now);
        }
        let mut command = redis::cmd("EXPIRE");
        command.arg(key(id)).arg(self.ttl_seconds());
        let refreshed = self.run::<i64>(&command).await.map(drop);
        if refreshed.is_err() {
            // The next request tries again.
            self.refreshed.lock().unwrap_or_else(PoisonError::into_inner).at.remove(id);
        }
        refreshed
    }
}

fn key(id: &str) -> String {
    format!("{KEY_PREFIX}{id}")
}

#[async_trait::async_trait]
impl SessionStore for RedisSessionStore {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let mut command = redis::cmd("GETEX");
        command.arg(key(session_id)).arg("EX").arg(self.ttl_seconds());
        let Some(entry) = self.run::<Option<Vec<u8>>>(&command).await? else { return Ok(None) };
        match serde_json::from_slice(&entry) {
            Ok(state) => Ok(Some(state)),
            Err(error) => {
                // Written by another version: the client is told the session is gone
                // (404) and starts a new one, as the protocol says.
                tracing::warn!("{}: session entry not readable ({error}); treated as ended", self.shown_url());
                Ok(None)
            }
        }
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let entry = serde_json::to_vec(state)?;
        let mut command = redis::cmd("SET");
        command.arg(key(session_id)).arg(entry).arg("EX").arg(self.ttl_seconds());
        self.run::<()>(&command).await?;
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let mut command = redis::cmd("DEL");
        command.arg(key(session_id));
        self.run::<i64>(&command).await?;
        Ok(())
    }
}

impl fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisSessionStore").field("url", &self.shown_url()).finish_non_exhaustive()
    }
}

/// Makes the HTTP service keep its 2025-11-25 sessions in `store`.
///
/// A request's own event stream is then sent without event ids: a replica that restored
/// a session knows nothing of the streams of the replica that died, and the ids of its own
/// streams may be the same (each session numbers its requests from 0), so a client
/// resuming there would wait forever or get another request's events. A stream cut short
/// is an error the client sees at once instead.
pub(super) fn share(
    store: &Arc<RedisSessionStore>,
    config: &mut StreamableHttpServerConfig,
    sessions: &mut LocalSessionManager,
) {
    config.session_store = Some(Arc::clone(store) as _);
    sessions.session_config.sse_retry = None;
}

/// Refreshes the entry of the session an answered request carries (in a task of its own,
/// so the answer does not wait for Redis).
pub(super) async fn refresh_sessions(
    State(store): State<Arc<RedisSessionStore>>,
    request: Request,
    next: Next,
) -> Response {
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|value| value.to_str().ok())
        .filter(|id| !id.is_empty() && id.len() <= MAX_SESSION_ID_LEN)
        .map(str::to_owned);
    let response = next.run(request).await;
    if let Some(id) = session.filter(|_| response.status().is_success()) {
        tokio::spawn(async move {
            if let Err(error) = store.refresh(&id).await {
                tracing::warn!("cannot refresh a session's expiry: {error}");
            }
        });
    }
    response
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientCapabilities, Implementation, InitializeRequestParams, ProtocolVersion};

    use super::*;

    fn state(client: &str) -> SessionState {
        SessionState::new(
            InitializeRequestParams::new(ClientCapabilities::default(), Implementation::new(client, "1"))
                .with_protocol_version(ProtocolVersion::V_2025_11_25),
        )
    }

    async fn ttl_of(store: &RedisSessionStore, id: &str) -> i64 {
        let mut command = redis::cmd("TTL");
        command.arg(key(id));
        store.run(&command).await.unwrap()
    }

    #[tokio::test]
    async fn a_session_stored_by_one_replica_is_loaded_by_another_until_deleted() {
        let server = test_peers::RedisServer::start();
        let url = SecretString::from(server.url());
        let (first, second) = (RedisSessionStore::new(&url).unwrap(), RedisSessionStore::new(&url).unwrap());
        first.store("s-1", &state("host")).await.unwrap();
        let loaded = second.load("s-1").await.unwrap().expect("the session is in the store");
        assert_eq!(loaded.initialize_params.client_info.name, "host");
        assert_eq!(loaded.initialize_params.protocol_version, ProtocolVersion::V_2025_11_25);
        assert!(second.load("s-2").await.unwrap().is_none(), "an unknown session");
        second.delete("s-1").await.unwrap();
        assert!(first.load("s-1").await.unwrap().is_none(), "deleted for every replica");
    }

    #[tokio::test]
    async fn entries_expire_and_use_pushes_the_expiry_back() {
        let server = test_peers::RedisServer::start();
        let mut store = RedisSessionStore::new(&SecretString::from(server.url())).unwrap();
        store.ttl = Duration::from_secs(100);
        store.refresh_every = Duration::ZERO;
        store.store("s", &state("host")).await.unwrap();
        let ttl = ttl_of(&store, "s").await;
        assert!((1..=100).contains(&ttl), "a stored session expires: TTL {ttl}");

        store.ttl = Duration::from_secs(1000);
        store.refresh("s").await.unwrap();
        assert!(ttl_of(&store, "s").await > 100, "a request refreshes the expiry");
        store.ttl = Duration::from_secs(5000);
        store.load("s").await.unwrap().unwrap();
        assert!(ttl_of(&store, "s").await > 1000, "a restore refreshes the expiry");

        store.refresh("gone").await.unwrap();
        assert!(store.load("gone").await.unwrap().is_none(), "refreshing makes no session");

        store.ttl = Duration::from_secs(1);
        store.store("short", &state("host")).await.unwrap();
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert!(store.load("short").await.unwrap().is_none(), "an abandoned session leaves nothing");
    }

    #[tokio::test]
    async fn a_replica_refreshes_a_session_at_most_once_a_period() {
        let server = test_peers::RedisServer::start();
        let mut store = RedisSessionStore::new(&SecretString::from(server.url())).unwrap();
        store.store("s", &state("host")).await.unwrap();
        store.refresh("s").await.unwrap();
        store.ttl = Duration::from_secs(3 * 24 * 60 * 60);
        store.refresh("s").await.unwrap();
        let ttl = ttl_of(&store, "s").await;
        assert!(ttl <= SESSION_TTL.as_secs() as i64, "refreshed again within REFRESH_EVERY: TTL {ttl}");
    }

    #[tokio::test]
    async fn an_unreadable_entry_is_an_ended_session() {
        let server = test_peers::RedisServer::start();
        let store = RedisSessionStore::new(&SecretString::from(server.url())).unwrap();
        let mut command = redis::cmd("SET");
        command.arg(key("old")).arg("not json");
        store.run::<()>(&command).await.unwrap();
        assert!(store.load("old").await.unwrap().is_none());
    }

    #[tokio::test]
    async fn errors_and_debug_name_the_server_without_the_password() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let store = RedisSessionStore::new(&SecretString::from(format!("redis://:hunter2@127.0.0.1:{port}/"))).unwrap();
        let message = store.load("s").await.unwrap_err().to_string();
        assert!(message.starts_with(&format!("redis session store redis://127.0.0.1:{port}/: ")), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        assert!(!format!("{store:?}").contains("hunter2"));
        let message = RedisSessionStore::new(&SecretString::from("http://user:hunter2@host/")).unwrap_err().to_string();
        assert!(message.starts_with("redis session store http://host/: not a usable Redis URL"), "{message}");
    }
}
