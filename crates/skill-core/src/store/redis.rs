use std::fmt;
use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use redis::AsyncCommands as _;
use redis::aio::ConnectionManager;
use secrecy::{ExposeSecret as _, SecretString};

use super::KvStore;
use super::redis_connection::RedisConnection;
use crate::Error;

/// What every namespace's hash key starts with: `omniagent:store:{namespace}`.
const KEY_PREFIX: &str = "omniagent:store:";

/// How long the server may take to answer one command.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(30);

/// A store in a Redis server, shared by every host that names the same server: one hash
/// per namespace (`omniagent:store:{namespace}`, its fields the keys).
///
/// The connection is made on first use and shared by every task (a [`RedisConnection`]).
/// Its URL may hold a password: messages and `Debug` show it as
/// [`crate::redact::url_text`] does.
pub struct RedisStore {
    server: RedisConnection,
}

/// Why the Redis store failed, naming the server by its redacted URL.
#[derive(Debug, thiserror::Error)]
#[error("redis store {url}: {reason}")]
pub struct RedisStoreError {
    /// The server's URL, redacted.
    url: String,
    /// What went wrong.
    reason: String,
}

impl RedisStore {
    /// A store on the server at `url` (`redis://[user:password@]host[:port][/db]`,
    /// `rediss://` needs TLS, which this build lacks); nothing is connected until first use.
    pub fn new(url: &SecretString) -> Result<Self, Error> {
        match RedisConnection::new(url, RESPONSE_TIMEOUT) {
            Ok(server) => Ok(Self { server }),
            Err(failure) => {
                let url = crate::redact::url_text(url.expose_secret());
                Err(Error::Storage(RedisStoreError { url, reason: failure.to_string() }.into()))
            }
        }
    }

    /// The server's URL as it may be shown (no password, no query values).
    pub fn shown_url(&self) -> &str {
        self.server.shown_url()
    }

    /// Runs `operation` on the server (see [`RedisConnection::run`]): every operation of
    /// the store is safe to repeat.
    async fn run<T, F, Fut>(&self, operation: F) -> Result<T, Error>
    where
        F: Fn(ConnectionManager) -> Fut + Send,
        Fut: Future<Output = redis::RedisResult<T>> + Send,
    {
        self.server.run(operation).await.map_err(|failure| {
            Error::Storage(RedisStoreError { url: self.shown_url().to_owned(), reason: failure.to_string() }.into())
        })
    }
}

fn hash_key(namespace: &str) -> String {
    format!("{KEY_PREFIX}{namespace}")
}

#[async_trait]
impl KvStore for RedisStore {
    async fn get(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let hash = hash_key(namespace);
        self.run(|mut connection| {
            let hash = hash.clone();
            async move { connection.hget(hash, key).await }
        })
        .await
    }

    async fn put(&self, namespace: &str, key: &str, value: Vec<u8>) -> Result<(), Error> {
        let hash = hash_key(namespace);
        self.run(|mut connection| {
            let (hash, value) = (hash.clone(), value.clone());
            async move { connection.hset::<_, _, _, ()>(hash, key, value).await }
        })
        .await
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool, Error> {
        let hash = hash_key(namespace);
        let n_deleted: u64 = self
            .run(|mut connection| {
                let hash = hash.clone();
                async move { connection.hdel(hash, key).await }
            })
            .await?;
        Ok(n_deleted > 0)
    }

    async fn keys(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, Error> {
        let hash = hash_key(namespace);
        let mut keys: Vec<String> = self
            .run(|mut connection| {
                let hash = hash.clone();
                async move { connection.hkeys(hash).await }
            })
            .await?;
        keys.retain(|key| key.starts_with(prefix));
        // `str`'s order is its UTF-8 bytes' order.
        keys.sort_unstable();
        Ok(keys)
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore").field("url", &self.shown_url()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_store_contract() {
        let server = test_peers::RedisServer::start();
        super::super::check_store_contract(&RedisStore::new(&SecretString::from(server.url())).unwrap()).await;
    }

    #[tokio::test]
    async fn two_stores_on_one_server_share_state() {
        let server = test_peers::RedisServer::start();
        RedisStore::new(&SecretString::from(server.url())).unwrap().put("ns", "key", b"value".to_vec()).await.unwrap();
        let other = RedisStore::new(&SecretString::from(server.url())).unwrap();
        assert_eq!(other.get("ns", "key").await.unwrap().as_deref(), Some(&b"value"[..]));
    }

    /// The shared connection comes back by itself after the server restarts.
    #[tokio::test]
    async fn reconnects_after_the_server_restarts() {
        let server = test_peers::RedisServer::start();
        let (port, url) = (server.port(), SecretString::from(server.url()));
        let store = RedisStore::new(&url).unwrap();
        store.put("ns", "before", vec![1]).await.unwrap();
        drop(server);
        let _server = test_peers::RedisServer::start_on(port);
        store.put("ns", "after", vec![2]).await.unwrap();
        assert_eq!(store.keys("ns", "").await.unwrap(), ["after"], "the new server kept nothing");
    }

    #[tokio::test]
    async fn a_server_that_is_down_is_an_error_naming_the_store_without_the_password() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = SecretString::from(format!("redis://:hunter2@127.0.0.1:{port}/"));
        let store = RedisStore::new(&url).unwrap();
        let message = store.get("ns", "k").await.unwrap_err().to_string();
        assert!(message.starts_with(&format!("storage error: redis store redis://127.0.0.1:{port}/: ")), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        assert!(!format!("{store:?}").contains("hunter2"));
    }

    #[test]
    fn a_bad_url_is_refused_without_showing_it() {
        let message = RedisStore::new(&SecretString::from("http://user:hunter2@host/")).unwrap_err().to_string();
        assert!(message.starts_with("storage error: redis store http://host/: not a usable Redis URL"), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
        let message = RedisStore::new(&SecretString::from("rediss://:hunter2@host/")).unwrap_err().to_string();
        assert!(message.starts_with("storage error: redis store rediss://host/: not a usable Redis URL"), "{message}");
    }
}
