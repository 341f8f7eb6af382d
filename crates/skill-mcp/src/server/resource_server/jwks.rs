//! The issuer's signing keys: found through its metadata (RFC 8414, else OpenID
//! discovery) unless a `jwks_uri` is given, fetched with bounds (time, size, no
//! redirects), cached, and fetched again when a token names a key the cache lacks or the
//! cache is old, but never more often than [`MIN_REFETCH`].

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use tokio::sync::Mutex;
use url::Url;

/// A token naming a key the cache lacks starts a fetch at most this often, so bad tokens
/// cannot make the gateway hammer the issuer.
pub(super) const MIN_REFETCH: Duration = Duration::from_secs(10);

/// Keys older than this are fetched again at the next token (so a key the issuer
/// withdrew stops being accepted); the old ones stay in use if that fetch fails.
const MAX_AGE: Duration = Duration::from_secs(3600);

/// How long a metadata or JWKS request may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The largest metadata document or JWKS read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

/// Why no key could verify a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum KeyError {
    /// The issuer's keys (as last fetched) have none for this token.
    Unknown,
    /// The keys could not be fetched; the reason is for the log, not the caller.
    Unreachable(String),
}

/// A verification key, with the algorithm it is for when the JWKS names one.
#[derive(Clone)]
struct Key {
    decoding: DecodingKey,
    jwk: Jwk,
}

/// The keys as last fetched, by `kid`.
#[derive(Default)]
struct KeySet {
    keys: HashMap<Option<String>, Vec<Key>>,
    fetched: Option<Instant>,
}

/// What the fetches know: held only by the request that fetches (or may).
#[derive(Default)]
struct Fetches {
    jwks_uri: Option<Url>,
    tried: Option<Instant>,
    /// Why the last fetch failed, when it did.
    failure: Option<String>,
}

/// The key set of one issuer.
pub(super) struct Keys {
    issuer: String,
    /// [`MIN_REFETCH`], but for tests.
    min_refetch: Duration,
    jwks_uri: Option<Url>,
    http: reqwest::Client,
    /// Read by every request; a token whose key is here never waits for a fetch.
    cached: RwLock<KeySet>,
    fetches: Mutex<Fetches>,
}

impl Keys {
    pub(super) fn new(issuer: String, jwks_uri: Option<Url>) -> Self {
        crate::connection::install_crypto_provider();
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        Self { issuer, min_refetch: MIN_REFETCH, jwks_uri, http, cached: RwLock::default(), fetches: Mutex::default() }
    }

    /// These keys, fetched again at most every `interval` instead of [`MIN_REFETCH`].
    #[cfg(test)]
    pub(super) fn refetching_every(mut self, interval: Duration) -> Self {
        self.min_refetch = interval;
        self
    }

    /// The cached key for `kid` and `alg`, and whether the cache is old.
    fn cached(&self, kid: Option<&str>, alg: Algorithm) -> (Option<DecodingKey>, bool) {
        let cached = self.cached.read().unwrap_or_else(PoisonError::into_inner);
        let stale = cached.fetched.is_none_or(|fetched| fetched.elapsed() > MAX_AGE);
        (pick(&cached.keys, kid, alg), stale)
    }

    /// The key that verifies a token signed with `alg` under `kid`: from the cache, else
    /// after fetching the keys again (see [`MIN_REFETCH`]).
    pub(super) async fn key(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, KeyError> {
        let (found, stale) = self.cached(kid, alg);
        if let Some(key) = found.as_ref().filter(|_| !stale) {
            return Ok(key.clone());
        }
        let mut fetches = match (&found, self.fetches.try_lock()) {
            (_, Ok(fetches)) => fetches,
            // An old key still serves while another request fetches.
            (Some(key), Err(_)) => return Ok(key.clone()),
            (None, Err(_)) => self.fetches.lock().await,
        };
        // Another request may have fetched while this one waited.
        let (found, stale) = self.cached(kid, alg);
        if let Some(key) = found.as_ref().filter(|_| !stale) {
            return Ok(key.clone());
        }
        if fetches.tried.is_some_and(|tried| tried.elapsed() < self.min_refetch) {
            let failure = fetches.failure.clone();
            return found.ok_or_else(|| failure.map_or(KeyError::Unknown, KeyError::Unreachable));
        }
        fetches.tried = Some(Instant::now());
        match self.fetch(&mut fetches).await {
            Ok(keys) => {
                *self.cached.write().unwrap_or_else(PoisonError::into_inner) =
                    KeySet { keys, fetched: Some(Instant::now()) };
                fetches.failure = None;
                self.cached(kid, alg).0.ok_or(KeyError::Unknown)
            }
            Err(reason) => {
                tracing::warn!("the OAuth issuer's keys could not be fetched: {reason}");
                fetches.failure = Some(reason.clone());
                found.ok_or(KeyError::Unreachable(reason))
            }
        }
    }

    async fn fetch(&self, fetches: &mut Fetches) -> Result<HashMap<Option<String>, Vec<Key>>, String> {
        let jwks_uri = match (&self.jwks_uri, &fetches.jwks_uri) {
            (Some(configured), _) => configured.clone(),
            (None, Some(discovered)) => discovered.clone(),
            (None, None) => {
                let discovered = self.discover().await?;
                fetches.jwks_uri = Some(discovered.clone());
                discovered
            }
        };
        let jwks = get_json(&self.http, &jwks_uri).await?;
        let keys = jwks.get("keys").and_then(Value::as_array).ok_or_else(|| format!("{jwks_uri}: no `keys` array"))?;
        let mut found: HashMap<Option<String>, Vec<Key>> = HashMap::new();
        for key in keys {
            // A key of a type or algorithm this verifier does not know is skipped.
            let Ok(jwk) = serde_json::from_value::<Jwk>(key.clone()) else { continue };
            if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))) {
                continue;
            }
            if matches!(jwk.algorithm, AlgorithmParameters::OctetKey(_) | AlgorithmParameters::Other(_)) {
                continue;
            }
            let Ok(decoding) = DecodingKey::from_jwk(&jwk) else { continue };
            found.entry(jwk.common.key_id.clone()).or_default().push(Key { decoding, jwk });
        }
        Ok(found)
    }

    /// The issuer's `jwks_uri`, from its authorization-server metadata (RFC 8414), else
    /// its OpenID discovery document; either must name this very issuer.
    async fn discover(&self) -> Result<Url, String> {
        let issuer = Url::parse(&self.issuer).map_err(|error| format!("the issuer `{}`: {error}", self.issuer))?;
        let path = issuer.path().trim_end_matches('/');
        let mut rfc8414 = issuer.clone();
        rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
        let mut openid = issuer.clone();
        openid.set_path(&format!("{path}/.well-known/openid-configuration"));
        let mut failures = Vec::new();
        for url in [rfc8414, openid] {
            match get_json(&self.http, &url).await {
                Ok(metadata) => {
                    if metadata.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
                        return Err(format!("{url} names another issuer than `{}`", self.issuer));
                    }
                    let jwks_uri = metadata.get("jwks_uri").and_then(Value::as_str);
                    let jwks_uri = jwks_uri.ok_or_else(|| format!("{url} names no `jwks_uri`"))?;
                    return Url::parse(jwks_uri).map_err(|error| format!("{url}: jwks_uri: {error}"));
                }
                Err(error) => failures.push(error),
            }
        }
        Err(failures.join("; "))
    }
}

/// The cached key for `kid` (or, for a token naming none, the only key) fit for `alg`.
fn pick(keys: &HashMap<Option<String>, Vec<Key>>, kid: Option<&str>, alg: Algorithm) -> Option<DecodingKey> {
    let candidates: Vec<&Key> = match kid {
        Some(kid) => keys.get(&Some(kid.to_owned())).into_iter().flatten().collect(),
        None => keys.values().flatten().collect(),
    };
    let mut fit = candidates.into_iter().filter(|key| fits(&key.jwk, alg));
    let first = fit.next()?;
    // Without a `kid` the token must leave no doubt about its key.
    if kid.is_none() && fit.next().is_some() {
        return None;
    }
    Some(first.decoding.clone())
}

/// Whether `jwk` is a key for `alg`: its type and curve, and its own `alg` if it names one.
pub(super) fn fits(jwk: &Jwk, alg: Algorithm) -> bool {
    if let Some(own) = jwk.common.key_algorithm
        && serde_json::to_value(own).ok() != serde_json::to_value(alg).ok()
    {
        return false;
    }
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => matches!(
            alg,
            Algorithm::RS256
                | Algorithm::RS384
                | Algorithm::RS512
                | Algorithm::PS256
                | Algorithm::PS384
                | Algorithm::PS512
        ),
        AlgorithmParameters::EllipticCurve(params) => matches!(
            (&params.curve, alg),
            (EllipticCurve::P256, Algorithm::ES256) | (EllipticCurve::P384, Algorithm::ES384)
        ),
        AlgorithmParameters::OctetKeyPair(params) => params.curve == EllipticCurve::Ed25519 && alg == Algorithm::EdDSA,
        _ => false,
    }
}

/// GETs `url` as JSON: 200 only (no redirect is followed), at most
/// [`MAX_DOCUMENT_BYTES`].
async fn get_json(http: &reqwest::Client, url: &Url) -> Result<Value, String> {
    let mut response = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .send()
        .await
        .map_err(|error| format!("{url}: {error}"))?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|error| format!("{url}: {error}"))? {
        if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("{url}: larger than {MAX_DOCUMENT_BYTES} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|error| format!("{url}: not JSON: {error}"))
}
