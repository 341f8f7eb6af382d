//! [`RedisConnection`]: one Redis server, as every part of an agent that keeps state
//! there uses it (the store, the gateway's sessions, the AAuth state).

use std::future::Future;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use secrecy::{ExposeSecret as _, SecretString};
use tokio::sync::OnceCell;

/// How long connecting to the server may take before a command fails.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(5);

/// A Redis server, connected on first use: one multiplexed [`ConnectionManager`] shared
/// by every task, which reconnects after the server goes away, and a command whose
/// connection dropped is sent once more. Its URL may hold a password: it is kept only
/// in the client, and shown as [`crate::redact::url_text`] does.
pub struct RedisConnection {
    client: redis::Client,
    shown_url: String,
    response_timeout: Duration,
    connection: OnceCell<ConnectionManager>,
}

/// Why a Redis command failed, in words that show no URL's password or query values.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RedisFailure(String);

impl RedisFailure {
    fn new(reason: impl std::fmt::Display) -> Self {
        RedisFailure(crate::redact::url_text(&reason.to_string()))
    }
}

impl RedisConnection {
    /// The server at `url` (`redis://[user:password@]host[:port][/db]`; `rediss://` needs
    /// TLS, which this build lacks), whose answers may take `response_timeout`; nothing is
    /// connected yet.
    pub fn new(url: &SecretString, response_timeout: Duration) -> Result<Self, RedisFailure> {
        // The parser's messages may quote the URL, so only its kind is kept.
        let client = redis::Client::open(url.expose_secret())
            .map_err(|error| RedisFailure(format!("not a usable Redis URL ({:?})", error.kind())))?;
        let shown_url = crate::redact::url_text(url.expose_secret());
        Ok(Self { client, shown_url, response_timeout, connection: OnceCell::new() })
    }

    /// The server's URL as it may be shown (no password, no query values).
    pub fn shown_url(&self) -> &str {
        &self.shown_url
    }

    /// Runs `operation` on the shared connection; once more if the connection was lost
    /// (the manager makes it anew), so each operation must be safe to repeat.
    pub async fn run<T, F, Fut>(&self, operation: F) -> Result<T, RedisFailure>
    where
        F: Fn(ConnectionManager) -> Fut + Send,
        Fut: Future<Output = redis::RedisResult<T>> + Send,
    {
        let connection = self.connection().await?;
        match operation(connection.clone()).await {
            Err(error) if error.is_connection_dropped() || error.is_io_error() => {
                tracing::debug!("{}: connection lost ({}), retrying once", self.shown_url, RedisFailure::new(&error));
                operation(connection).await.map_err(RedisFailure::new)
            }
            outcome => outcome.map_err(RedisFailure::new),
        }
    }

    async fn connection(&self) -> Result<ConnectionManager, RedisFailure> {
        self.connection
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(CONNECTION_TIMEOUT))
                    .set_response_timeout(Some(self.response_timeout))
                    .set_number_of_retries(2);
                ConnectionManager::new_with_config(self.client.clone(), config)
                    .await
                    .map_err(|error| RedisFailure::new(format_args!("cannot connect: {error}")))
            })
            .await
            .cloned()
    }
}

impl std::fmt::Debug for RedisConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisConnection").field("url", &self.shown_url).finish_non_exhaustive()
    }
}
