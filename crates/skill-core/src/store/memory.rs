use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use super::KvStore;
use crate::Error;

/// A store in memory: fast, private to one process, gone when dropped.
///
/// It is the default store of an agent built without one, so that two agents never
/// share state unless their owner gives them the same store.
#[derive(Debug, Default)]
pub struct MemoryStore {
    entries: Mutex<BTreeMap<(String, String), Vec<u8>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Vec<u8>>> {
        // A panic while the lock was held cannot leave the map half-written (every
        // operation is a single map call), so a poisoned lock is safe to keep using.
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl KvStore for MemoryStore {
    async fn get(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.entries().get(&(namespace.to_owned(), key.to_owned())).cloned())
    }

    async fn put(&self, namespace: &str, key: &str, value: Vec<u8>) -> Result<(), Error> {
        self.entries().insert((namespace.to_owned(), key.to_owned()), value);
        Ok(())
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool, Error> {
        Ok(self.entries().remove(&(namespace.to_owned(), key.to_owned())).is_some())
    }

    async fn keys(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, Error> {
        let start = (namespace.to_owned(), prefix.to_owned());
        Ok(self
            .entries()
            .range(start..)
            .take_while(|((ns, key), _)| ns == namespace && key.starts_with(prefix))
            .map(|((_, key), _)| key.clone())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_store_contract() {
        super::super::check_store_contract(&MemoryStore::new()).await;
    }
}
