//! Access tokens verified lately, by SHA-256 digest: a client's next request with the
//! same token costs a digest and a lookup, not a signature check. An entry lasts until
//! the token's `exp` (with the leeway) or [`KEPT`], whichever comes first; a refusal is
//! never kept, nor is any token itself.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};

use super::Admitted;

/// The longest a verified token is taken without verifying it again.
pub(super) const KEPT: Duration = Duration::from_secs(60);

/// The most tokens kept; past that the expired ones go, then all.
const MAX_ENTRIES: usize = 4096;

/// A token's digest.
pub(super) type TokenDigest = [u8; 32];

/// The tokens verified lately: what each proves, and until when it is taken.
#[derive(Default)]
pub(super) struct Verified {
    entries: Mutex<HashMap<TokenDigest, (Admitted, Instant)>>,
}

impl Verified {
    pub(super) fn digest(token: &str) -> TokenDigest {
        Sha256::digest(token.as_bytes()).into()
    }

    /// What a token verified lately and still good proves.
    pub(super) fn client(&self, digest: &TokenDigest) -> Option<Admitted> {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.get(digest).filter(|(_, until)| *until > Instant::now()).map(|(admitted, _)| admitted.clone())
    }

    /// Keeps a token just verified, proving `admitted`, whose `exp` (Unix seconds) with
    /// `leeway` seconds bounds how long.
    pub(super) fn keep(&self, digest: TokenDigest, admitted: Admitted, exp: u64, leeway: u64) {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let left = Duration::from_secs(exp.saturating_add(leeway).saturating_sub(now)).min(KEPT);
        if left.is_zero() {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES {
            let now = Instant::now();
            entries.retain(|_, (_, until)| *until > now);
            if entries.len() >= MAX_ENTRIES {
                entries.clear();
            }
        }
        entries.insert(digest, (admitted, Instant::now() + left));
    }
}
