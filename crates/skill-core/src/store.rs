//! Key-value storage for skills: the [`KvStore`] trait, the per-skill [`SkillStore`]
//! handle, and three stores: [`MemoryStore`], (feature `sqlite`) [`SqliteStore`] and
//! (feature `redis`) [`RedisStore`].

mod memory;
#[cfg(feature = "redis")]
mod redis;
#[cfg(feature = "redis")]
mod redis_connection;
#[cfg(feature = "sqlite")]
mod sqlite;

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;

pub use self::memory::MemoryStore;
#[cfg(feature = "redis")]
pub use self::redis::{RedisStore, RedisStoreError};
#[cfg(feature = "redis")]
pub use self::redis_connection::{RedisConnection, RedisFailure};
#[cfg(feature = "sqlite")]
pub use self::sqlite::SqliteStore;
use crate::Error;

/// A key-value store shared by the skills of an agent, each in its own namespace.
///
/// Keys and namespaces are UTF-8 text; values are bytes. Implementations must be safe to
/// use from several tasks at once; a persistent one should also be safe across processes.
#[async_trait]
pub trait KvStore: Send + Sync + fmt::Debug {
    /// The value under `key`, if any.
    async fn get(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, Error>;
    /// Stores `value` under `key`, replacing any earlier value.
    async fn put(&self, namespace: &str, key: &str, value: Vec<u8>) -> Result<(), Error>;
    /// Removes `key`; returns whether it was there.
    async fn delete(&self, namespace: &str, key: &str) -> Result<bool, Error>;
    /// The keys that start with `prefix`, in byte order.
    async fn keys(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, Error>;
}

/// One skill's view of its agent's store: every operation stays inside the namespace
/// the agent gave it (`{agent}/{skill}`), so skills cannot see each other's keys.
#[derive(Clone)]
pub struct SkillStore {
    store: Arc<dyn KvStore>,
    namespace: String,
}

impl SkillStore {
    /// A view of `store` limited to `namespace`.
    pub fn new(store: Arc<dyn KvStore>, namespace: impl Into<String>) -> Self {
        Self { store, namespace: namespace.into() }
    }

    /// The namespace this view is limited to.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// The value under `key`, if any.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>, Error> {
        self.store.get(&self.namespace, key).await
    }

    /// Stores `value` under `key`, replacing any earlier value.
    pub async fn put(&self, key: &str, value: impl Into<Vec<u8>>) -> Result<(), Error> {
        self.store.put(&self.namespace, key, value.into()).await
    }

    /// Removes `key`; returns whether it was there.
    pub async fn delete(&self, key: &str) -> Result<bool, Error> {
        self.store.delete(&self.namespace, key).await
    }

    /// The keys that start with `prefix`, in byte order.
    pub async fn keys(&self, prefix: &str) -> Result<Vec<String>, Error> {
        self.store.keys(&self.namespace, prefix).await
    }
}

impl fmt::Debug for SkillStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillStore").field("namespace", &self.namespace).field("store", &self.store).finish()
    }
}

/// Behaviour every [`KvStore`] must show, run against each implementation.
#[cfg(test)]
async fn check_store_contract(store: &dyn KvStore) {
    assert_eq!(store.get("a", "k").await.unwrap(), None);
    store.put("a", "k", b"1".to_vec()).await.unwrap();
    store.put("a", "k", b"2".to_vec()).await.unwrap();
    store.put("a", "k2", b"3".to_vec()).await.unwrap();
    store.put("a", "other", b"4".to_vec()).await.unwrap();
    store.put("b", "k", b"5".to_vec()).await.unwrap();
    assert_eq!(store.get("a", "k").await.unwrap().as_deref(), Some(&b"2"[..]));
    assert_eq!(store.get("b", "k").await.unwrap().as_deref(), Some(&b"5"[..]));
    assert_eq!(store.keys("a", "k").await.unwrap(), ["k", "k2"]);
    assert_eq!(store.keys("a", "").await.unwrap(), ["k", "k2", "other"]);
    assert_eq!(store.keys("a", "%").await.unwrap(), Vec::<String>::new());
    assert!(store.delete("a", "k").await.unwrap());
    assert!(!store.delete("a", "k").await.unwrap());
    assert_eq!(store.get("a", "k").await.unwrap(), None);
    assert_eq!(store.get("b", "k").await.unwrap().as_deref(), Some(&b"5"[..]));
    // Byte order, pattern characters taken literally, namespaces that prefix each other.
    for key in ["b", "a*", "Z", "é", "a", "a?"] {
        store.put("c", key, key.as_bytes().to_vec()).await.unwrap();
    }
    store.put("c/d", "a", b"other".to_vec()).await.unwrap();
    assert_eq!(store.keys("c", "").await.unwrap(), ["Z", "a", "a*", "a?", "b", "é"]);
    assert_eq!(store.keys("c", "a*").await.unwrap(), ["a*"]);
    assert_eq!(store.keys("c/d", "").await.unwrap(), ["a"]);
    // Values are bytes: empty, and not UTF-8.
    store.put("c", "empty", Vec::new()).await.unwrap();
    store.put("c", "binary", vec![0, 0xff, 0xfe]).await.unwrap();
    assert_eq!(store.get("c", "empty").await.unwrap().as_deref(), Some(&b""[..]));
    assert_eq!(store.get("c", "binary").await.unwrap().as_deref(), Some(&[0, 0xff, 0xfe][..]));
}
