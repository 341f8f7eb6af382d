//! The console's sessions: kept in this process, each named by a random id that only its
//! browser's cookie holds, with its own CSRF token and an expiry.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use subtle::ConstantTimeEq;

/// The session cookie's name.
pub(super) const SESSION_COOKIE: &str = "omniagent_console";
/// The cookie holding the sign-in form's CSRF token, before there is a session.
pub(super) const SIGN_IN_COOKIE: &str = "omniagent_console_signin";
/// How long a session lasts after its sign-in.
pub(super) const SESSION_TTL: Duration = Duration::from_secs(8 * 60 * 60);
/// How long a sign-in form may wait to be posted.
pub(super) const SIGN_IN_TTL: Duration = Duration::from_secs(30 * 60);

/// The most sessions kept; past that the expired ones go, then the oldest.
const MAX_SESSIONS: usize = 1024;

/// Who a session is, as [`Sessions::get`] gives it.
pub(super) struct Signed {
    pub(super) client: String,
    /// Whether the OAuth token it signed in with held the admin scope.
    pub(super) admin_scope: bool,
    pub(super) csrf: String,
}

struct Session {
    client: String,
    admin_scope: bool,
    csrf: String,
    until: Instant,
}

#[derive(Default)]
pub(super) struct Sessions {
    open: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    /// Opens a session for `client`; its id, for the cookie.
    pub(super) fn open(&self, client: String, admin_scope: bool) -> String {
        let (id, now) = (random_token(), Instant::now());
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if open.len() >= MAX_SESSIONS {
            open.retain(|_, session| session.until > now);
            if open.len() >= MAX_SESSIONS
                && let Some(oldest) = open.iter().min_by_key(|(_, session)| session.until).map(|(id, _)| id.clone())
            {
                open.remove(&oldest);
            }
        }
        let session = Session { client, admin_scope, csrf: random_token(), until: now + SESSION_TTL };
        open.insert(id.clone(), session);
        id
    }

    /// The session `id`, unless it expired (then it is gone) or never was.
    pub(super) fn get(&self, id: &str) -> Option<Signed> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let session = open.get(id)?;
        if session.until <= Instant::now() {
            open.remove(id);
            return None;
        }
        Some(Signed { client: session.client.clone(), admin_scope: session.admin_scope, csrf: session.csrf.clone() })
    }

    pub(super) fn close(&self, id: &str) {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).remove(id);
    }
}

/// 32 random bytes as hex: a session id or a CSRF token.
pub(super) fn random_token() -> String {
    let mut bytes = [0_u8; 32];
    // Without the system's random numbers no session can be safe; there is no going on.
    getrandom::fill(&mut bytes).expect("the system gives random bytes");
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Whether two tokens are the same, in a time that does not tell how much of them is.
pub(super) fn same(expected: &str, given: &str) -> bool {
    expected.len() == given.len() && bool::from(expected.as_bytes().ct_eq(given.as_bytes()))
}

/// The value of the cookie `name` that `headers` carry.
pub(super) fn cookie(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, value)| *key == name && !value.is_empty())
        .map(|(_, value)| value.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_is_found_by_its_id_until_closed() {
        let sessions = Sessions::default();
        let id = sessions.open("alice".to_owned(), false);
        let signed = sessions.get(&id).unwrap();
        assert_eq!((signed.client.as_str(), signed.csrf.len()), ("alice", 64));
        assert!(sessions.get("not-an-id").is_none());
        sessions.close(&id);
        assert!(sessions.get(&id).is_none());
    }

    #[test]
    fn cookies_are_read_by_name() {
        let mut headers = HeaderMap::new();
        headers.insert(header::COOKIE, "a=1; omniagent_console=abc; b=".parse().unwrap());
        assert_eq!(cookie(&headers, SESSION_COOKIE).as_deref(), Some("abc"));
        assert_eq!(cookie(&headers, "b"), None);
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }
}
