use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use rusqlite::{Connection, ErrorCode, OptionalExtension, TransactionBehavior, params};

use super::KvStore;
use crate::Error;

/// How long an operation waits for another process's write lock before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// The embedded persistent store: one SQLite file (bundled SQLite, WAL journal).
///
/// Several processes may use the same file at once (a long-running gateway and one-off
/// CLI calls): WAL lets readers run beside a writer, every write takes the write lock
/// up front (`BEGIN IMMEDIATE`) and waits up to 30 s for it, so concurrent writers queue
/// rather than fail or lose a write. The file is opened on first use, so an agent that
/// never touches storage never creates it.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    connection: Mutex<Option<Connection>>,
}

impl SqliteStore {
    /// A store in the file at `path`, created (with its folder) on first use.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { inner: Arc::new(Inner { path: path.into(), connection: Mutex::new(None) }) }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    async fn run<T, F>(&self, operation: F) -> Result<T, Error>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> rusqlite::Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || inner.run(operation))
            .await
            .map_err(|join_error| Error::Storage(join_error.into()))?
    }
}

impl Inner {
    fn run<T>(&self, operation: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T, Error> {
        let mut slot = self.connection.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if slot.is_none() {
            *slot = Some(self.open()?);
        }
        let connection = slot.as_mut().expect("the connection was opened above");
        operation(connection).map_err(|error| self.error(error))
    }

    fn open(&self) -> Result<Connection, Error> {
        if let Some(folder) = self.path.parent().filter(|folder| !folder.as_os_str().is_empty()) {
            create_private_dir(folder).map_err(|error| self.error(error))?;
        }
        let mut connection = Connection::open(&self.path).map_err(|error| self.error(error))?;
        connection.busy_timeout(BUSY_TIMEOUT).map_err(|error| self.error(error))?;
        // Two processes opening a new file at once can make SQLite refuse the journal
        // switch or the schema's lock upgrade at once (to avoid a deadlock) instead of
        // calling the busy handler; both steps are safe to repeat, so they are retried.
        let mode: String = retry_while_busy(|| connection.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0)))
            .map_err(|error| self.error(error))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(self.error(format!("journal mode is {mode}, not WAL")));
        }
        connection.pragma_update(None, "synchronous", "NORMAL").map_err(|error| self.error(error))?;
        retry_while_busy(|| {
            write(&mut connection, |transaction| {
                transaction.execute_batch(
                    "CREATE TABLE IF NOT EXISTS kv (
                         namespace TEXT NOT NULL,
                         key TEXT NOT NULL,
                         value BLOB NOT NULL,
                         PRIMARY KEY (namespace, key)
                     ) WITHOUT ROWID;",
                )
            })
        })
        .map_err(|error| self.error(error))?;
        Ok(connection)
    }

    fn error(&self, error: impl fmt::Display) -> Error {
        Error::Storage(format!("{}: {error}", self.path.display()).into())
    }
}

#[cfg(unix)]
fn create_private_dir(folder: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder)
}

#[cfg(not(unix))]
fn create_private_dir(folder: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)
}

/// Runs `operation` again while SQLite reports the database busy or locked, for at most
/// the busy timeout.
fn retry_while_busy<T>(mut operation: impl FnMut() -> rusqlite::Result<T>) -> rusqlite::Result<T> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        match operation() {
            Err(rusqlite::Error::SqliteFailure(failure, _))
                if matches!(failure.code, ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(Duration::from_millis(5));
            }
            outcome => return outcome,
        }
    }
}

/// Runs `write` in a transaction that holds the write lock from its start, so that the
/// busy timeout applies (a deferred transaction that upgrades may fail at once instead).
fn write<T>(
    connection: &mut Connection,
    write: impl FnOnce(&Connection) -> rusqlite::Result<T>,
) -> rusqlite::Result<T> {
    let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let result = write(&transaction)?;
    transaction.commit()?;
    Ok(result)
}

#[async_trait]
impl KvStore for SqliteStore {
    async fn get(&self, namespace: &str, key: &str) -> Result<Option<Vec<u8>>, Error> {
        let (namespace, key) = (namespace.to_owned(), key.to_owned());
        self.run(move |connection| {
            connection
                .prepare_cached("SELECT value FROM kv WHERE namespace = ?1 AND key = ?2")?
                .query_row(params![namespace, key], |row| row.get(0))
                .optional()
        })
        .await
    }

    async fn put(&self, namespace: &str, key: &str, value: Vec<u8>) -> Result<(), Error> {
        let (namespace, key) = (namespace.to_owned(), key.to_owned());
        self.run(move |connection| {
            write(connection, |transaction| {
                transaction
                    .prepare_cached("INSERT OR REPLACE INTO kv (namespace, key, value) VALUES (?1, ?2, ?3)")?
                    .execute(params![namespace, key, value])
                    .map(drop)
            })
        })
        .await
    }

    async fn delete(&self, namespace: &str, key: &str) -> Result<bool, Error> {
        let (namespace, key) = (namespace.to_owned(), key.to_owned());
        self.run(move |connection| {
            write(connection, |transaction| {
                transaction
                    .prepare_cached("DELETE FROM kv WHERE namespace = ?1 AND key = ?2")?
                    .execute(params![namespace, key])
                    .map(|n_deleted| n_deleted > 0)
            })
        })
        .await
    }

    async fn keys(&self, namespace: &str, prefix: &str) -> Result<Vec<String>, Error> {
        let (namespace, prefix) = (namespace.to_owned(), prefix.to_owned());
        self.run(move |connection| {
            // The range start uses the primary key; `substr` keeps only true prefixes
            // (LIKE and GLOB would treat `%`, `_`, `*` in the prefix as wildcards).
            connection
                .prepare_cached(
                    "SELECT key FROM kv WHERE namespace = ?1 AND key >= ?2 \
                     AND substr(key, 1, length(?2)) = ?2 ORDER BY key",
                )?
                .query_map(params![namespace, prefix], |row| row.get(0))?
                .collect()
        })
        .await
    }
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore").field("path", &self.inner.path).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn keeps_the_store_contract() {
        let dir = tempfile::tempdir().unwrap();
        super::super::check_store_contract(&SqliteStore::new(dir.path().join("state/kv.db"))).await;
    }

    #[tokio::test]
    async fn survives_reopening_and_opens_lazily() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/kv.db");
        let store = SqliteStore::new(&path);
        assert!(!path.exists(), "the file is created on first use only");
        store.put("ns", "key", b"value".to_vec()).await.unwrap();
        drop(store);
        let reopened = SqliteStore::new(&path);
        assert_eq!(reopened.get("ns", "key").await.unwrap().as_deref(), Some(&b"value"[..]));
    }

    /// Two connections writing at once, as two processes would: every write lands.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("kv.db");
        let writers: Vec<_> = ["left", "right"]
            .into_iter()
            .map(|side| {
                let store = SqliteStore::new(&path);
                tokio::spawn(async move {
                    for key_idx in 0..300 {
                        store.put("ns", &format!("{side}-{key_idx}"), vec![1]).await.unwrap();
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.await.unwrap();
        }
        assert_eq!(SqliteStore::new(&path).keys("ns", "").await.unwrap().len(), 600);
    }

    /// Two connections creating the same new file at the same moment, many times over:
    /// neither may fail with "database is locked".
    #[test]
    fn racing_first_opens_both_succeed() {
        let dir = tempfile::tempdir().unwrap();
        for round in 0..40 {
            let path = dir.path().join(format!("race-{round}.db"));
            let barrier = std::sync::Barrier::new(2);
            std::thread::scope(|scope| {
                for side in ["left", "right"] {
                    let (path, barrier) = (&path, &barrier);
                    scope.spawn(move || {
                        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
                        let store = SqliteStore::new(path);
                        barrier.wait();
                        runtime.block_on(store.put("ns", side, vec![1])).unwrap();
                    });
                }
            });
            let n_rows = SqliteStore::new(&path)
                .inner
                .run(|connection| connection.query_row("SELECT count(*) FROM kv", [], |row| row.get::<_, i64>(0)))
                .unwrap();
            assert_eq!(n_rows, 2);
        }
    }

    #[tokio::test]
    async fn an_unusable_path_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let store = SqliteStore::new(blocker.join("kv.db"));
        let message = store.get("ns", "k").await.unwrap_err().to_string();
        assert!(message.starts_with(&format!("storage error: {}", blocker.join("kv.db").display())), "{message}");
    }
}
