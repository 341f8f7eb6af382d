//! Enrollment at the agent provider, and the agent token cache other processes share.
//!
//! The drafts leave enrollment to the agent provider: bootstrap -02 names no endpoints,
//! each provider defines its own. The issuance and refresh URLs are configured
//! (`enroll_url`, `refresh_url`); a provider that still lists the first revision's
//! `bootstrap_endpoint` and `refresh_endpoint` in `/.well-known/aauth-agent.json` is read
//! for what is not configured. Both take a `POST` with the optional body `{"ps": URL}`,
//! and answer `{"agent_token", "expires_in"}`, perhaps with `agent_id` and `ps` (which
//! must then agree with the token). Issuance is signed under the `hwk` scheme (the bare
//! public key, with the body covered); refresh under `jkt-jwt`, as bootstrap -02's
//! two-key refresh is: a naming JWT signed by the enrolled key, whose thumbprint the
//! provider looks the enrollment up by, delegating to the key that signs the request.
//! The agent keeps one key, so the naming JWT delegates to that same key and the new
//! agent token stays bound to it (rotating to a fresh key at each refresh would void
//! every person and auth token held, and every process sharing the token folder would
//! need the new private key). Without a refresh URL the agent enrolls again at the
//! issuance URL, under `hwk`.
//!
//! The cache is a folder with one file per agent provider and key,
//! `agent-token-<16 hex digits>.json` (the start of the SHA-256 of the provider's
//! identifier and the key's thumbprint), so that agents with other providers or keys
//! sharing the folder neither use nor overwrite each other's tokens. A file holds the
//! token, its expiry, and the provider and thumbprint it belongs to; it is a private file
//! (0600 in a 0700 folder, written in full and renamed into place: see `private_file`),
//! so concurrent processes read a whole token or none. A file that cannot be used (not
//! JSON, another provider's or key's token, readable by others, unreadable) counts as no
//! token: the next enrollment replaces it. The same folder holds the person and auth
//! tokens of each resource (`shared_tokens`). A Redis server holds the same text under
//! `omniagent:aauth:agent-token-<16 hex digits>` instead (`redis_state`), read back with
//! the same checks ([`from_cache_text`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use skill_core::{ExposeSecret, SecretString};
use url::Url;
use zeroize::Zeroizing;

use crate::error::{Step, url_for_errors};
use crate::jwt::{Jwt, TokenKind};
use crate::metadata::{AgentProviderMetadata, Role, ServerId};

/// The endpoints of `configured`, completed from the provider's `metadata` when given.
pub(crate) fn endpoints(configured: &Endpoints, metadata: Option<&AgentProviderMetadata>) -> Endpoints {
    Endpoints {
        enroll: configured.enroll.clone().or_else(|| metadata.and_then(|m| m.bootstrap_endpoint.clone())),
        refresh: configured.refresh.clone().or_else(|| metadata.and_then(|m| m.refresh_endpoint.clone())),
    }
}
use crate::private_file::{self, Contents, Placement, Purpose};
use crate::shared_state::SharedState;
use crate::signing::{SignatureKey, sign_request};
use crate::{AgentKey, Error, created, exchange};

/// An agent token with what the client needs to know about it.
#[derive(Clone)]
pub(crate) struct AgentToken {
    /// The token itself.
    pub(crate) token: SecretString,
    /// The agent identifier (`aauth:local@domain`), the token's `sub`.
    pub(crate) agent_id: String,
    /// When the token stops being usable (Unix seconds): its `exp`, or sooner when the
    /// provider's `expires_in` says so.
    pub(crate) expires_at: u64,
    /// The agent's person server, from the token's `ps` claim.
    pub(crate) person_server: Option<String>,
}

impl std::fmt::Debug for AgentToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentToken")
            .field("agent_id", &self.agent_id)
            .field("expires_at", &self.expires_at)
            .field("person_server", &self.person_server)
            .finish_non_exhaustive()
    }
}

/// Which enrollment endpoint to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Enrollment {
    /// The issuance URL: a first agent token for this key.
    Bootstrap,
    /// The refresh URL: a new agent token before the current one expires.
    Refresh,
}

/// The agent provider's issuance and refresh URLs: configured, else listed in its
/// metadata.
#[derive(Debug, Clone, Default)]
pub(crate) struct Endpoints {
    pub(crate) enroll: Option<Url>,
    pub(crate) refresh: Option<Url>,
}

#[derive(Deserialize)]
struct EnrollmentResponse {
    agent_token: String,
    agent_id: Option<String>,
    expires_in: Option<u64>,
    ps: Option<String>,
}

/// Asks the agent provider for an agent token, within `timeout`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn request_agent_token(
    http: &reqwest::Client,
    timeout: Duration,
    key: &AgentKey,
    provider: &ServerId,
    endpoints: &Endpoints,
    person_server: Option<&ServerId>,
    enrollment: Enrollment,
    now: u64,
    shared: Option<&dyn SharedState>,
) -> Result<AgentToken, Error> {
    let (step, endpoint) = match (enrollment, &endpoints.refresh, &endpoints.enroll) {
        (Enrollment::Refresh, Some(refresh), _) => (Step::Refresh, refresh),
        (_, _, Some(enroll)) => (Step::Bootstrap, enroll),
        (_, _, None) => {
            return Err(Error::InvalidResponse {
                step: Step::AgentMetadata,
                url: url_for_errors(&provider.well_known(crate::metadata::AGENT_METADATA)),
                reason: "no `bootstrap_endpoint` (bootstrap -01 removed it; each agent provider defines its own): \
                         configure the provider's issuance URL (enroll_url)"
                    .to_owned(),
            });
        }
    };
    let body = match person_server {
        Some(ps) => serde_json::json!({"ps": ps.as_str()}),
        None => serde_json::json!({}),
    };
    let mut request = http
        .post(endpoint.clone())
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .header(reqwest::header::ACCEPT, "application/json")
        .body(body.to_string())
        .timeout(timeout)
        .build()
        .map_err(|source| Error::http(step, endpoint, source))?;
    let created = created::created_for(key, &request, shared).await?;
    let signature_key = match step {
        Step::Refresh => SignatureKey::JktJwt(naming_jwt(key, now)),
        _ => SignatureKey::Hwk,
    };
    sign_request(key, &mut request, &signature_key, created)?;
    let response = http.execute(request).await.map_err(|source| Error::http(step, endpoint, source))?;
    let status = response.status();
    if status != reqwest::StatusCode::OK {
        return Err(Error::status(step, endpoint, status.as_u16(), &exchange::read_error_body(response).await));
    }
    let body = exchange::read_body(step, endpoint, response).await?;
    let invalid = |reason: String| Error::InvalidResponse { step, url: url_for_errors(endpoint), reason };
    let answer: EnrollmentResponse = serde_json::from_slice(&body)
        .map_err(|_| invalid("not a JSON object with a string `agent_token`".to_owned()))?;
    let token = SecretString::from(answer.agent_token);
    let jwt = Jwt::decode(token.expose_secret(), TokenKind::Agent)?;
    jwt.check_bound_to(key)?;
    jwt.check_claim("iss", jwt.claims.iss.as_deref(), provider.as_str())?;
    jwt.check_has_iat()?;
    let exp = jwt.check_not_expired(now)?;
    let agent_id = jwt.claims.sub.clone().ok_or_else(|| Error::TokenClaim {
        token: TokenKind::Agent,
        claim: "sub",
        reason: "missing".to_owned(),
    })?;
    if let Some(answered) = &answer.agent_id
        && *answered != agent_id
    {
        return Err(invalid(format!("`agent_id` `{answered}` is not the agent token's `sub` `{agent_id}`")));
    }
    // The token's claim is what resources see; the answer's `ps` must not contradict it.
    let person_server = match (&jwt.claims.ps, answer.ps) {
        (Some(claim), Some(answered)) if *claim != answered => {
            return Err(invalid(format!("`ps` `{answered}` is not the agent token's `ps` claim `{claim}`")));
        }
        (Some(claim), _) => Some(claim.clone()),
        (None, _) => None,
    };
    let expires_at = answer.expires_in.map_or(exp, |seconds| exp.min(now.saturating_add(seconds)));
    Ok(AgentToken { token, agent_id, expires_at, person_server })
}

/// How long a naming JWT is valid: long enough for the one refresh request it signs.
const NAMING_JWT_LIFETIME: u64 = 300;

/// The `jkt-jwt` naming JWT of a refresh (Signature-Key -09, "JWK Thumbprint JWT"):
/// header `{"typ":"jkt-s256+jwt","alg":…,"jwk":<the key>}`, claims `iss`
/// (`urn:jkt:sha-256:<thumbprint>`), `iat`, `exp`, a random `jti`, and `cnf.jwk`, the key
/// delegated to sign the request: the same key.
pub(crate) fn naming_jwt(key: &AgentKey, now: u64) -> SecretString {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let mut jti = [0u8; 16];
    getrandom::fill(&mut jti).expect("the operating system's random number generator failed");
    let header = serde_json::json!({"typ": "jkt-s256+jwt", "alg": key.alg(), "jwk": key.public_jwk()});
    let claims = serde_json::json!({"iss": format!("urn:jkt:sha-256:{}", key.thumbprint()), "iat": now,
        "exp": now + NAMING_JWT_LIFETIME, "jti": URL_SAFE_NO_PAD.encode(jti), "cnf": {"jwk": key.public_jwk()}});
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = URL_SAFE_NO_PAD.encode(key.sign(signing_input.as_bytes()));
    SecretString::from(format!("{signing_input}.{signature}"))
}

/// The cache file, read: which provider and key the token belongs to, so that a file left
/// by another configuration is not used.
#[derive(Deserialize)]
struct CacheFile {
    agent_provider: String,
    thumbprint: String,
    agent_id: String,
    expires_at: u64,
    #[serde(default)]
    person_server: Option<String>,
    agent_token: String,
}

/// The cache file, written: the token borrowed, so that no copy of it is left behind.
#[derive(Serialize)]
struct CacheFileRef<'a> {
    agent_provider: &'a str,
    thumbprint: &'a str,
    agent_id: &'a str,
    expires_at: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    person_server: Option<&'a str>,
    agent_token: &'a str,
}

/// The name of the cache entry of `provider` and `key`: `agent-token-<16 hex digits>`, the
/// file's name without `.json` in a cache folder, or the Redis key's end.
pub(crate) fn cache_name(provider: &ServerId, key: &AgentKey) -> String {
    let digest = Sha256::digest(format!("{}\n{}", provider.as_str(), key.thumbprint()));
    let short: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
    format!("agent-token-{short}")
}

/// The cache file of `provider` and `key` in the cache folder `dir`.
pub(crate) fn cache_file(dir: &Path, provider: &ServerId, key: &AgentKey) -> PathBuf {
    dir.join(format!("{}.json", cache_name(provider, key)))
}

/// The agent token cached at `path` for this provider and key, if there is one.
///
/// Only a folder others can write is an error ([`Error::FolderPermissions`]); a file that
/// cannot be used counts as no token (with a warning unless it is simply missing), and
/// the next enrollment replaces it.
pub(crate) fn load_cached(path: &Path, provider: &ServerId, key: &AgentKey) -> Result<Option<AgentToken>, Error> {
    let unusable = |why: &str| {
        tracing::warn!(path = %path.display(), "agent token cache {why}; it will be replaced");
        Ok(None)
    };
    let text = match private_file::read(Purpose::TokenCache, path) {
        Ok(Contents::Private(text)) => text,
        Ok(Contents::Missing) => return Ok(None),
        Ok(Contents::Exposed(mode)) => return unusable(&format!("is readable by group or others (mode {mode:o})")),
        Err(Error::TokenCacheIo { error, .. }) => return unusable(&format!("cannot be read ({error})")),
        Err(error) => return Err(error),
    };
    Ok(from_cache_text(&text, provider, key, &path.display()))
}

/// The agent token of a cache entry's `text` (a file's, or a Redis value's), if it is this
/// provider's and key's; none, with a warning naming `place`, when it cannot be used.
pub(crate) fn from_cache_text(
    text: &str,
    provider: &ServerId,
    key: &AgentKey,
    place: &dyn std::fmt::Display,
) -> Option<AgentToken> {
    let unusable = |why: &str| {
        tracing::warn!(%place, "agent token cache {why}; it will be replaced");
        None
    };
    let Ok(cached) = serde_json::from_str::<CacheFile>(text) else {
        return unusable("is not a JSON agent token cache");
    };
    if cached.agent_provider != provider.as_str() || cached.thumbprint != key.thumbprint() {
        return unusable("holds another agent provider's or key's token");
    }
    let token = SecretString::from(cached.agent_token);
    // A token that no longer decodes as ours is as good as none.
    let bound =
        Jwt::decode(token.expose_secret(), TokenKind::Agent).and_then(|jwt| jwt.check_bound_to(key).map(|()| jwt));
    if bound.is_err() {
        return unusable("holds a token that is not bound to this key");
    }
    Some(AgentToken {
        token,
        agent_id: cached.agent_id,
        expires_at: cached.expires_at,
        person_server: cached.person_server,
    })
}

/// Writes the agent token to `path` (0600, folders 0700), replacing what was there.
pub(crate) fn store_cached(path: &Path, provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Result<(), Error> {
    let text = cache_text(provider, key, token);
    private_file::write(Purpose::TokenCache, path, &text, Placement::Replace).map(|_| ())
}

/// The text of the cache entry of `token`: what a file or a Redis value holds.
pub(crate) fn cache_text(provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Zeroizing<Vec<u8>> {
    let thumbprint = key.thumbprint();
    let file = CacheFileRef {
        agent_provider: provider.as_str(),
        thumbprint: &thumbprint,
        agent_id: &token.agent_id,
        expires_at: token.expires_at,
        person_server: token.person_server.as_deref(),
        agent_token: token.token.expose_secret(),
    };
    Zeroizing::new(serde_json::to_vec_pretty(&file).expect("the cache file serializes"))
}

/// The agent's person server as a URL, for [`AgentIdentity`](crate::AgentIdentity).
pub(crate) fn person_server_url(token: &AgentToken) -> Option<Url> {
    token.person_server.as_deref().and_then(|ps| Url::parse(ps).ok())
}

/// The person server named by the agent token's `ps` claim, checked as a server
/// identifier.
pub(crate) fn person_server_id(token: &AgentToken, allow_http_loopback: bool) -> Result<Option<ServerId>, Error> {
    let Some(ps) = &token.person_server else { return Ok(None) };
    let url = Url::parse(ps).map_err(|_| Error::TokenClaim {
        token: TokenKind::Agent,
        claim: "ps",
        reason: format!("`{ps}` is not a URL"),
    })?;
    ServerId::parse(Role::PersonServer, &url, allow_http_loopback).map(Some)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn provider() -> ServerId {
        ServerId::parse(Role::AgentProvider, &Url::parse("https://ap.example").unwrap(), false).unwrap()
    }

    fn agent_token(key: &AgentKey) -> AgentToken {
        let claims = json!({"iss": "https://ap.example", "sub": "aauth:a@ap.example", "exp": 4_000_000_000u64,
            "cnf": {"jwk": key.public_jwk()}, "ps": "https://ps.example"});
        AgentToken {
            token: SecretString::from(crate::jwt::test_token(TokenKind::Agent, &claims)),
            agent_id: "aauth:a@ap.example".into(),
            expires_at: 4_000_000_000,
            person_server: Some("https://ps.example".into()),
        }
    }

    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(folder).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    #[test]
    fn cache_round_trips_for_the_same_provider_and_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("home/aauth/agent-tokens");
        let key = AgentKey::generate();
        let path = cache_file(&folder, &provider(), &key);
        let token = agent_token(&key);
        assert!(load_cached(&path, &provider(), &key).unwrap().is_none());
        store_cached(&path, &provider(), &key, &token).unwrap();
        let loaded = load_cached(&path, &provider(), &key).unwrap().unwrap();
        assert_eq!(loaded.token.expose_secret(), token.token.expose_secret());
        assert_eq!(loaded.agent_id, "aauth:a@ap.example");
        assert_eq!(loaded.expires_at, 4_000_000_000);
        assert_eq!(person_server_url(&loaded).unwrap().as_str(), "https://ps.example/");

        // The same file, read for another key or provider, holds no token for them.
        assert!(load_cached(&path, &provider(), &AgentKey::generate()).unwrap().is_none());
        let other = ServerId::parse(Role::AgentProvider, &Url::parse("https://other.example").unwrap(), false).unwrap();
        assert!(load_cached(&path, &other, &key).unwrap().is_none());
        // Only the cache file is left.
        assert_eq!(names(&folder), [path.file_name().unwrap().to_string_lossy()]);
    }

    #[test]
    fn each_provider_and_key_has_its_own_file() {
        let folder = Path::new("/cache");
        let other = ServerId::parse(Role::AgentProvider, &Url::parse("https://other.example").unwrap(), false).unwrap();
        let (key, other_key) = (AgentKey::generate(), AgentKey::generate());
        let file = cache_file(folder, &provider(), &key);
        assert_eq!(file, cache_file(folder, &provider(), &key.clone()));
        assert_ne!(file, cache_file(folder, &other, &key));
        assert_ne!(file, cache_file(folder, &provider(), &other_key));
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("agent-token-") && name.ends_with(".json") && name.len() == 33, "{name}");
        assert_eq!(file.parent(), Some(folder));
    }

    /// A cache file others can read is not used (the token may have leaked) and does not
    /// fail the run: the next enrollment replaces it with a private file.
    #[cfg(unix)]
    #[test]
    fn a_readable_cache_counts_as_none_and_is_replaced() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let key = AgentKey::generate();
        let path = cache_file(&dir.path().join("aauth"), &provider(), &key);
        store_cached(&path, &provider(), &key, &agent_token(&key)).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(load_cached(&path, &provider(), &key).unwrap().is_none());
        store_cached(&path, &provider(), &key, &agent_token(&key)).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert!(load_cached(&path, &provider(), &key).unwrap().is_some());
    }

    #[test]
    fn corrupt_or_unreadable_caches_count_as_none_and_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let key = AgentKey::generate();
        let path = cache_file(dir.path(), &provider(), &key);
        for contents in ["{not json", r#"{"agent_token": 1}"#] {
            private_file::write(Purpose::TokenCache, &path, contents.as_bytes(), Placement::Replace).unwrap();
            assert!(load_cached(&path, &provider(), &key).unwrap().is_none(), "{contents}");
        }
        // A token that is not bound to this key.
        let mut foreign = agent_token(&AgentKey::generate());
        foreign.agent_id = "aauth:other@ap.example".into();
        store_cached(&path, &provider(), &key, &foreign).unwrap();
        assert!(load_cached(&path, &provider(), &key).unwrap().is_none());
        // A folder where the file should be cannot be read.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(load_cached(&path, &provider(), &key).unwrap().is_none());
        std::fs::remove_dir(&path).unwrap();
        store_cached(&path, &provider(), &key, &agent_token(&key)).unwrap();
        assert!(load_cached(&path, &provider(), &key).unwrap().is_some());
    }

    #[cfg(unix)]
    #[test]
    fn a_cache_folder_others_can_write_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("tokens");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o775)).unwrap();
        let key = AgentKey::generate();
        let path = cache_file(&folder, &provider(), &key);
        let error = store_cached(&path, &provider(), &key, &agent_token(&key)).unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "token cache folder {}: writable by group or others (mode 775); run `chmod go-w {}`",
                folder.display(),
                folder.display()
            )
        );
        let error = load_cached(&path, &provider(), &key).unwrap_err();
        assert!(matches!(error, Error::FolderPermissions { purpose: "token cache", .. }), "{error:?}");
    }

    /// The naming JWT verifies with the key in its header, names that key's thumbprint
    /// as `iss` and delegates to it in `cnf.jwk`, for both kinds of key.
    #[test]
    fn naming_jwt_is_self_issued_by_the_agent_key() {
        use base64::Engine as _;
        use base64::engine::general_purpose::URL_SAFE_NO_PAD;
        for key in [AgentKey::generate(), AgentKey::generate_of(crate::KeyType::Es256)] {
            let token = naming_jwt(&key, 1_000);
            let parts: Vec<&str> = token.expose_secret().split('.').collect();
            let decode = |part: &str| -> serde_json::Value {
                serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).unwrap()).unwrap()
            };
            let (header, claims) = (decode(parts[0]), decode(parts[1]));
            assert_eq!(header["typ"], "jkt-s256+jwt");
            assert_eq!(header["alg"], key.alg());
            assert_eq!(header["jwk"], key.public_jwk());
            assert_eq!(claims["iss"], format!("urn:jkt:sha-256:{}", key.thumbprint()));
            assert_eq!((claims["iat"].as_u64(), claims["exp"].as_u64()), (Some(1_000), Some(1_300)));
            assert_eq!(claims["cnf"]["jwk"], key.public_jwk());
            assert_eq!(claims["jti"].as_str().unwrap().len(), 22);
            let signing_input = format!("{}.{}", parts[0], parts[1]);
            assert_eq!(URL_SAFE_NO_PAD.decode(parts[2]).unwrap(), key.sign(signing_input.as_bytes()));
        }
    }

    #[test]
    fn debug_shows_no_token() {
        let key = AgentKey::generate();
        let token = agent_token(&key);
        let debug = format!("{token:?}");
        assert!(!debug.contains(token.token.expose_secret()), "{debug}");
        assert!(debug.contains("aauth:a@ap.example"));
    }
}
