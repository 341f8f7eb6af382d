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
//! one process can create. Without
//! the folder, or when it cannot be written, the rule holds within the process only.

use std::collections::HashMap;
use std::io::ErrorKind;
use std::path::Path;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::{Method, Request};

use sha2::{Digest as _, Sha256};

use crate::AgentKey;

/// How far back the wall clock may step before the tuples seen are forgotten rather than
/// waited out (seconds).
const CLOCK_STEP: u64 = 2;

/// The last `created` of each tuple used in this process.
static LAST: LazyLock<Mutex<HashMap<Tuple, u64>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Tuple {
    thumbprint: String,
    method: String,
    authority: String,
    path: String,
}

/// The `created` to sign `request` with as `key`: now, or for a state-changing request
/// whose tuple was used this second (by this process, or by another one sharing `shared`,
/// the token cache folder), the next second once it has come.
pub(crate) async fn created_for(key: &AgentKey, request: &Request, shared: Option<&Path>) -> u64 {
    if matches!(*request.method(), Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE) {
        return now().as_secs();
    }
    let url = request.url();
    let tuple = Tuple {
        thumbprint: key.thumbprint(),
        method: request.method().as_str().to_owned(),
        authority: match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (host, None) => host.unwrap_or_default().to_owned(),
            (None, Some(port)) => format!(":{port}"),
        },
        path: url.path().to_owned(),
    };
    loop {
        let now = now();
        let claimed = claim(&mut LAST.lock().unwrap_or_else(PoisonError::into_inner), &tuple, now);
        let wait = match claimed {
            Ok(created) => {
                if shared.is_none_or(|dir| claim_shared(dir, &tuple, created)) {
                    return created;
                }
                // Another process has this second: the next one, once it has come.
                Duration::from_secs(created + 1).saturating_sub(now)
            }
            Err(wait) => wait,
        };
        tokio::time::sleep(wait).await;
    }
}

/// Claims `second` for `tuple` among the processes sharing `dir`: true unless another one
/// has. A folder that cannot be written falls back to this process's own rule.
fn claim_shared(dir: &Path, tuple: &Tuple, second: u64) -> bool {
    let digest = Sha256::digest(format!("{}\n{}\n{}\n{}", tuple.thumbprint, tuple.method, tuple.authority, tuple.path));
    let name: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
    let markers = dir.join(".created");
    let marker = |second: u64| markers.join(format!("{name}-{second}"));
    let mut folder = std::fs::DirBuilder::new();
    folder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut folder, 0o700);
    let created = folder
        .create(&markers)
        .and_then(|()| std::fs::OpenOptions::new().write(true).create_new(true).open(marker(second)));
    match created {
        Ok(_) => {
            // Markers of earlier seconds can no longer collide.
            for earlier in second.saturating_sub(CLOCK_STEP + 3)..second.saturating_sub(CLOCK_STEP) {
                let _ = std::fs::remove_file(marker(earlier));
            }
            true
        }
        Err(error) if error.kind() == ErrorKind::AlreadyExists => false,
        Err(error) => {
            tracing::warn!("cannot share signature times in {}: {error}", dir.display());
            true
        }
    }
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
        let first = created_for(&key, &post, None).await;
        let second = created_for(&key, &post, None).await;
        assert!(second > first, "{first} {second}");
        // GETs are not state-changing: no waiting.
        let get_first = created_for(&key, &get, None).await;
        assert!(created_for(&key, &get, None).await >= get_first);
        // Another key is another tuple.
        assert!(created_for(&AgentKey::generate(), &post, None).await >= first);
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
        let created = created_for(&key, &post, Some(dir.path())).await;
        assert!(created >= taken + 2, "{created} {taken}");
        assert!(!claim_shared(dir.path(), &tuple, created), "the second it took is taken");
        // An unusable folder does not stop signing.
        assert!(claim_shared(&dir.path().join("missing"), &tuple, created));
    }
}
