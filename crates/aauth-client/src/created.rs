//! The `created` of each signature.
//!
//! Signing is deterministic and `created` counts whole seconds, so two identical requests
//! signed in the same second are byte for byte the same, and a verifier keeping the replay
//! cache the protocol draft allows (keyed by key thumbprint, `created`, `@method`,
//! `@authority` and `@path`; "Freshness and Replay") refuses the second even when the
//! bodies differ. So, for state-changing requests (every method but `GET`, `HEAD`,
//! `OPTIONS` and `TRACE`), `created` is kept strictly increasing per key, method,
//! authority and path: a request whose tuple was already used in the current second waits
//! for the next one.
//!
//! With a token cache folder, processes sharing it (one `omniagent` command after another)
//! keep the rule between them too: a second is claimed for a tuple by creating an empty
//! marker file named for the tuple and the second (in the folder's `.created`), which only
//! one process can create. A marker is needed only while a process could still claim its
//! second: the process that claims a second removes the markers more than `CLOCK_STEP`
//! seconds older (once a second per folder), so the folder holds the markers of the last
//! few seconds only, however many tuples were used before. Without the folder, or when it
//! cannot be written, the rule holds within the process only. The folder's file work runs
//! on tokio's blocking threads, never on the async runtime's.
//!
//! With Redis instead (`redis_state`), processes on different machines keep the rule
//! between them: a second is claimed with `SET omniagent:aauth:created-<tuple>-<second> ""
//! NX EX 120`, which only one of them can do and which removes itself; 120 s covers two
//! clocks that are each within a verifier's ±60 s window. A Redis that cannot be reached
//! is an error, never a fall back to this process's own rule: another replica may take the
//! same second meanwhile, and that would be a replay.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::{Method, Request};

use sha2::{Digest as _, Sha256};

use crate::shared_state::SharedState;
use crate::{AgentKey, Error};

/// How far back the wall clock may step before the tuples seen are forgotten rather than
/// waited out (seconds). A marker of a second this far back from the current one is still
/// kept; one further back is removed.
const CLOCK_STEP: u64 = 2;

/// The last `created` of each tuple used in this process.
static LAST: LazyLock<Mutex<HashMap<Tuple, u64>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// The second each marker folder was last swept by this process.
static SWEPT: LazyLock<Mutex<HashMap<PathBuf, u64>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// What a verifier's replay cache keys a state-changing request by, but `created`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Tuple {
    thumbprint: String,
    method: String,
    authority: String,
    path: String,
}

impl Tuple {
    /// The tuple's name in shared state: 16 hex digits of its SHA-256.
    pub(crate) fn name(&self) -> String {
        let digest = Sha256::digest(format!("{}\n{}\n{}\n{}", self.thumbprint, self.method, self.authority, self.path));
        digest[..8].iter().map(|byte| format!("{byte:02x}")).collect()
    }
}

/// The `created` to sign `request` with as `key`: now, or for a state-changing request
/// whose tuple was used this second (by this process, or by another one sharing `shared`,
/// the token cache folder or Redis), the next second once it has come. An error only when
/// `shared` cannot say whether the second is free (Redis is down): signing then would risk
/// a replay.
pub(crate) async fn created_for(
    key: &AgentKey,
    request: &Request,
    shared: Option<&dyn SharedState>,
) -> Result<u64, Error> {
    created_at(key, request, shared, now).await
}

/// [`created_for`] with the wall clock read from `clock`.
async fn created_at(
    key: &AgentKey,
    request: &Request,
    shared: Option<&dyn SharedState>,
    clock: impl Fn() -> Duration,
) -> Result<u64, Error> {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE) {
        return Ok(clock().as_secs());
    }
    let tuple = tuple_of(key, request);
    loop {
        let now = clock();
        let claimed = claim(&mut LAST.lock().unwrap_or_else(PoisonError::into_inner), &tuple, now);
        let wait = match claimed {
            Ok(created) => {
                let free = match shared {
                    Some(shared) => shared.claim(&tuple, created).await?,
                    None => true,
                };
                if free {
                    return Ok(created);
                }
                // Another process has this second: the next one, once it has come.
                Duration::from_secs(created + 1).saturating_sub(now)
            }
            Err(wait) => wait,
        };
        tokio::time::sleep(wait).await;
    }
}

/// The tuple of `request` signed by `key`.
pub(crate) fn tuple_of(key: &AgentKey, request: &Request) -> Tuple {
    let url = request.url();
    Tuple {
        thumbprint: key.thumbprint(),
        method: request.method().as_str().to_owned(),
        authority: match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (host, None) => host.unwrap_or_default().to_owned(),
            (None, Some(port)) => format!(":{port}"),
        },
        path: url.path().to_owned(),
    }
}

/// [`claim_shared`] on tokio's blocking threads.
pub(crate) async fn claim_shared_off_runtime(dir: &Path, tuple: &Tuple, second: u64) -> bool {
    let (dir, tuple) = (dir.to_owned(), tuple.clone());
    match skill_core::off_runtime(move || claim_shared(&dir, &tuple, second)).await {
        Ok(claimed) => claimed,
        Err(error) => {
            // Only a runtime shutting down cancels it: this process's rule still holds.
            tracing::warn!("cannot share signature times: {error}");
            true
        }
    }
}

/// Claims `second` for `tuple` among the processes sharing `dir`: true unless another one
/// has. A folder that cannot be written falls back to this process's own rule.
fn claim_shared(dir: &Path, tuple: &Tuple, second: u64) -> bool {
    let name = tuple.name();
    let markers = dir.join(".created");
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    let created = folder.create(&markers).and_then(|()| {
        std::fs::OpenOptions::new().write(true).create_new(true).open(markers.join(format!("{name}-{second}")))
    });
    match created {
        Ok(_) => {
            sweep(&markers, second);
            true
        }
        Err(error) if error.kind() == ErrorKind::AlreadyExists => false,
        Err(error) => {
            tracing::warn!("cannot share signature times in {}: {error}", dir.display());
            true
        }
    }
}

/// Removes from `markers` the markers of every tuple whose second is more than
/// [`CLOCK_STEP`] before `second`: no process claims those seconds any more (a clock that
/// stepped back further starts afresh, see [`claim`]). Once a second per folder: the
/// markers claimed meanwhile are all of this second or the last ones. Other files are
/// left alone; a marker that cannot be removed is tried again at the next sweep.
fn sweep(markers: &Path, second: u64) {
    {
        let mut swept = SWEPT.lock().unwrap_or_else(PoisonError::into_inner);
        if swept.get(markers) == Some(&second) {
            return;
        }
        swept.insert(markers.to_owned(), second);
    }
    let Ok(entries) = std::fs::read_dir(markers) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().and_then(marker_second).is_some_and(|marked| marked.saturating_add(CLOCK_STEP) < second) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The second of a marker's name, `<16 hex digits>-<second>`; none for another name.
fn marker_second(name: &str) -> Option<u64> {
    let (tuple, second) = name.split_once('-')?;
    let is_tuple = tuple.len() == 16 && tuple.bytes().all(|byte| byte.is_ascii_hexdigit());
    let is_second = !second.is_empty() && second.bytes().all(|byte| byte.is_ascii_digit());
    if is_tuple && is_second { second.parse().ok() } else { None }
}

/// Takes the second of `now` for `tuple` in `last`, or says how long to wait for the next
/// one.
fn claim(last: &mut HashMap<Tuple, u64>, tuple: &Tuple, now: Duration) -> Result<u64, Duration> {
    let seconds = now.as_secs();
    match last.get(tuple) {
        Some(&used) if used >= seconds && used - seconds < CLOCK_STEP => {
            Err(Duration::from_secs(used - seconds + 1) - Duration::from_nanos(now.subsec_nanos().into()))
        }
        _ => {
            // Tuples of earlier seconds can no longer collide: keep the map small.
            last.retain(|_, used| *used >= seconds);
            last.insert(tuple.clone(), seconds);
            Ok(seconds)
        }
    }
}

fn now() -> Duration {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shared_state::Files;

    fn tuple(path: &str) -> Tuple {
        Tuple {
            thumbprint: "test".to_owned(),
            method: "POST".to_owned(),
            authority: "r.example".to_owned(),
            path: path.to_owned(),
        }
    }

    #[test]
    fn a_tuple_gets_each_second_once() {
        let at = |seconds: u64, millis: u64| Duration::from_secs(seconds) + Duration::from_millis(millis);
        let mut last = HashMap::new();
        let mut claim = |tuple: &Tuple, now| claim(&mut last, tuple, now);
        let first = tuple("/claim-once");
        assert_eq!(claim(&first, at(1_000, 100)), Ok(1_000));
        // Same second: wait for the next one, then it is free.
        assert_eq!(claim(&first, at(1_000, 900)), Err(Duration::from_millis(100)));
        assert_eq!(claim(&first, at(1_001, 0)), Ok(1_001));
        // Another path is another tuple.
        assert_eq!(claim(&tuple("/claim-other"), at(1_001, 10)), Ok(1_001));
        // A clock that stepped back a second waits it out; one that stepped back further
        // starts afresh.
        assert_eq!(claim(&first, at(1_000, 500)), Err(Duration::from_millis(1_500)));
        assert_eq!(claim(&first, at(990, 0)), Ok(990));
    }

    #[tokio::test]
    async fn state_changing_requests_get_increasing_created() {
        let key = AgentKey::generate();
        let post = Request::new(Method::POST, "https://r.example/items".parse().unwrap());
        let get = Request::new(Method::GET, "https://r.example/items".parse().unwrap());
        let first = created_for(&key, &post, None).await.unwrap();
        let second = created_for(&key, &post, None).await.unwrap();
        assert!(second > first, "{first} {second}");
        // GETs are not state-changing: no waiting.
        let get_first = created_for(&key, &get, None).await.unwrap();
        assert!(created_for(&key, &get, None).await.unwrap() >= get_first);
        // Another key is another tuple.
        assert!(created_for(&AgentKey::generate(), &post, None).await.unwrap() >= first);
    }

    #[tokio::test]
    async fn processes_sharing_a_folder_never_take_the_same_second() {
        let dir = tempfile::tempdir().unwrap();
        let key = AgentKey::generate();
        let post = Request::new(Method::POST, "https://r.example/shared".parse().unwrap());
        let tuple = Tuple {
            thumbprint: key.thumbprint(),
            method: "POST".to_owned(),
            authority: "r.example".to_owned(),
            path: "/shared".to_owned(),
        };
        // Another process has claimed this second and the next.
        let taken = now().as_secs();
        assert!(claim_shared(dir.path(), &tuple, taken) && claim_shared(dir.path(), &tuple, taken + 1));
        let files = Files::new(dir.path().to_owned());
        let created = created_for(&key, &post, Some(&files)).await.unwrap();
        assert!(created >= taken + 2, "{created} {taken}");
        assert!(!claim_shared(dir.path(), &tuple, created), "the second it took is taken");
        // An unusable folder does not stop signing.
        assert!(claim_shared(&dir.path().join("missing"), &tuple, created));
    }

    fn marker_count(dir: &Path) -> usize {
        std::fs::read_dir(dir.join(".created")).unwrap().count()
    }

    /// Regression (hardening issue, unbounded `.created`): 200 POSTs to as many paths, a
    /// second apart, each the only one of its tuple. Every marker but those of the last
    /// seconds is removed, where before each request left its own for ever.
    #[tokio::test]
    async fn isolated_posts_leave_only_the_markers_of_the_last_seconds() {
        let dir = tempfile::tempdir().unwrap();
        let key = AgentKey::generate();
        // A clock that moves on a second each time it is read.
        let start = 1_000_000_000;
        let clock = std::sync::atomic::AtomicU64::new(start);
        let tick = || Duration::from_secs(clock.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let files = Files::new(dir.path().to_owned());
        for index in 0..200 {
            let url = format!("https://r.example/items/{index}").parse().unwrap();
            let post = Request::new(Method::POST, url);
            assert_eq!(created_at(&key, &post, Some(&files), tick).await.unwrap(), start + index);
        }
        let left = marker_count(dir.path());
        assert!(left <= CLOCK_STEP as usize + 1, "{left} markers left");
    }

    /// A sweep removes exactly the markers no process can collide with: those of seconds
    /// more than `CLOCK_STEP` back. The others still refuse their second to everyone.
    #[test]
    fn markers_within_the_clock_step_stay_and_older_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (tuple("/sweep-first"), tuple("/sweep-second"));
        let at = 1_000_000_000;
        assert!(claim_shared(dir.path(), &first, at));
        std::fs::write(dir.path().join(".created/notes.txt"), "not a marker").unwrap();
        std::fs::write(dir.path().join(".created/0123456789abcdef-old"), "not a marker").unwrap();
        // `CLOCK_STEP` seconds on, the first marker is still needed.
        assert!(claim_shared(dir.path(), &second, at + CLOCK_STEP));
        assert!(!claim_shared(dir.path(), &first, at), "the first marker is kept");
        assert_eq!(marker_count(dir.path()), 4);
        // A second more, and it is gone (a clock stepped back that far starts afresh).
        assert!(claim_shared(dir.path(), &second, at + CLOCK_STEP + 1));
        assert_eq!(marker_count(dir.path()), 4, "one marker removed, one added");
        assert!(!claim_shared(dir.path(), &second, at + CLOCK_STEP), "a kept marker");
        assert!(claim_shared(dir.path(), &first, at), "the removed marker");
        // Files that are not markers are left alone.
        assert!(dir.path().join(".created/notes.txt").exists());
        assert!(dir.path().join(".created/0123456789abcdef-old").exists());
    }

    #[test]
    fn marker_names_are_a_tuple_and_a_second() {
        assert_eq!(marker_second("0123456789abcdef-1700000000"), Some(1_700_000_000));
        for other in ["0123456789abcdef-", "0123456789abcdef-+1", "0123456789abcde-1", "notes.txt", "x-1", ".tmp-1"] {
            assert_eq!(marker_second(other), None, "{other}");
        }
    }
}
