//! Enrollment at the agent provider, and the agent token cache other processes share.
//!
//! The drafts leave enrollment to the agent provider; DESIGN.md fixes the names of the
//! bootstrap note's first revision: `/.well-known/aauth-agent.json` lists
//! `bootstrap_endpoint` and `refresh_endpoint`, both taking a `POST` signed under the
//! `hwk` scheme (the bare public key: the provider looks the agent up by its key), with
//! the optional body `{"ps": URL}`, and answering
//! `{"agent_token", "agent_id", "expires_in", "ps"}`.
//!
//! The agent token and its expiry are kept in a JSON file, mode 0600 in a 0700 folder,
//! written under a temporary name and renamed into place, so that concurrent processes
//! with the same key read a whole token or none.

use std::io::{ErrorKind, Read as _, Write as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use skill_core::{ExposeSecret, SecretString};
use url::Url;

use crate::error::Step;
use crate::jwt::{Jwt, TokenKind};
use crate::metadata::{AgentProviderMetadata, Role, ServerId};
use crate::signing::{SignatureKey, sign_request};
use crate::{AgentKey, Error};

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
    /// `bootstrap_endpoint`: a first agent token for this key.
    Bootstrap,
    /// `refresh_endpoint`: a new agent token before the current one expires.
    Refresh,
}

#[derive(Deserialize)]
struct EnrollmentResponse {
    agent_token: String,
    agent_id: Option<String>,
    expires_in: Option<u64>,
    ps: Option<String>,
}

/// Asks the agent provider for an agent token.
pub(crate) async fn request_agent_token(
    http: &reqwest::Client,
    key: &AgentKey,
    provider: &ServerId,
    metadata: &AgentProviderMetadata,
    person_server: Option<&ServerId>,
    enrollment: Enrollment,
    now: u64,
) -> Result<AgentToken, Error> {
    let (step, endpoint) = match (enrollment, &metadata.refresh_endpoint) {
        (Enrollment::Refresh, Some(refresh)) => (Step::Refresh, refresh),
        _ => (Step::Bootstrap, &metadata.bootstrap_endpoint),
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
        .build()
        .map_err(|source| Error::http(step, endpoint, source))?;
    sign_request(key, &mut request, &SignatureKey::Hwk, now)?;
    let response = http.execute(request).await.map_err(|source| Error::http(step, endpoint, source))?;
    let status = response.status();
    let body = response.bytes().await.map_err(|source| Error::http(step, endpoint, source))?;
    if status != reqwest::StatusCode::OK {
        return Err(Error::status(step, endpoint, status.as_u16(), &body));
    }
    let invalid = |reason: String| Error::InvalidResponse { step, url: endpoint.to_string(), reason };
    let answer: EnrollmentResponse = serde_json::from_slice(&body)
        .map_err(|_| invalid("not a JSON object with a string `agent_token`".to_owned()))?;
    let token = SecretString::from(answer.agent_token);
    let jwt = Jwt::decode(token.expose_secret(), TokenKind::Agent)?;
    jwt.check_bound_to(key)?;
    jwt.check_claim("iss", jwt.claims.iss.as_deref(), provider.as_str())?;
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

/// The agent token file: which provider and key the token belongs to, so that a file left
/// by another configuration is not used.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    agent_provider: String,
    thumbprint: String,
    agent_id: String,
    expires_at: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    person_server: Option<String>,
    agent_token: String,
}

/// The agent token cached at `path` for this provider and key, if there is one.
///
/// A file its group or others can read is refused: the token may have leaked. A file
/// that does not parse, or that holds another provider's or key's token, counts as no
/// token (the next enrollment replaces it).
pub(crate) fn load_cached(path: &Path, provider: &ServerId, key: &AgentKey) -> Result<Option<AgentToken>, Error> {
    let io_error = |source| Error::TokenCacheIo { path: path.to_owned(), action: "read", source };
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io_error(source)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = file.metadata().map_err(io_error)?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(Error::TokenCachePermissions { path: path.to_owned(), mode });
        }
    }
    let mut text = zeroize::Zeroizing::new(String::new());
    file.read_to_string(&mut text).map_err(io_error)?;
    let Ok(cached) = serde_json::from_str::<CacheFile>(&text) else {
        tracing::warn!(path = %path.display(), "agent token cache is not valid JSON; it will be replaced");
        return Ok(None);
    };
    if cached.agent_provider != provider.as_str() || cached.thumbprint != key.thumbprint() {
        return Ok(None);
    }
    let token = SecretString::from(cached.agent_token);
    // A token that no longer decodes as ours is as good as none.
    let Ok(jwt) = Jwt::decode(token.expose_secret(), TokenKind::Agent) else { return Ok(None) };
    if jwt.check_bound_to(key).is_err() {
        return Ok(None);
    }
    Ok(Some(AgentToken {
        token,
        agent_id: cached.agent_id,
        expires_at: cached.expires_at,
        person_server: cached.person_server,
    }))
}

/// Writes the agent token to `path` (0600, folders 0700), replacing what was there.
pub(crate) fn store_cached(path: &Path, provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Result<(), Error> {
    let io_error = |action, path: &Path| {
        let path = path.to_owned();
        move |source| Error::TokenCacheIo { path, action, source }
    };
    if let Some(parent) = path.parent().filter(|parent| !parent.as_os_str().is_empty()) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(parent).map_err(io_error("create the folder", parent))?;
    }
    let file = CacheFile {
        agent_provider: provider.as_str().to_owned(),
        thumbprint: key.thumbprint(),
        agent_id: token.agent_id.clone(),
        expires_at: token.expires_at,
        person_server: token.person_server.clone(),
        agent_token: token.token.expose_secret().to_owned(),
    };
    let text = zeroize::Zeroizing::new(serde_json::to_string_pretty(&file).expect("the cache file serializes"));
    drop(zeroize::Zeroizing::new(file.agent_token));
    let staging = staging_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let written = options.open(&staging).and_then(|mut handle| {
        handle.write_all(text.as_bytes())?;
        handle.write_all(b"\n")?;
        handle.sync_all()
    });
    let renamed = written.and_then(|()| std::fs::rename(&staging, path));
    if let Err(source) = renamed {
        // Best effort: the temporary file is 0600 and the error that matters is returned.
        let _ = std::fs::remove_file(&staging);
        return Err(io_error("write", path)(source));
    }
    Ok(())
}

/// A temporary name next to `path`, unique to this process.
fn staging_path(path: &Path) -> PathBuf {
    let name = path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
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
        let issuer = AgentKey::generate();
        let claims = json!({"iss": "https://ap.example", "sub": "aauth:a@ap.example", "exp": 4_000_000_000u64,
            "cnf": {"jwk": key.public_jwk()}, "ps": "https://ps.example"});
        AgentToken {
            token: SecretString::from(Jwt::encode(&issuer, "k", TokenKind::Agent, &claims).unwrap()),
            agent_id: "aauth:a@ap.example".into(),
            expires_at: 4_000_000_000,
            person_server: Some("https://ps.example".into()),
        }
    }

    #[test]
    fn cache_round_trips_for_the_same_provider_and_key_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/aauth/agent-token.json");
        let key = AgentKey::generate();
        let token = agent_token(&key);
        assert!(load_cached(&path, &provider(), &key).unwrap().is_none());
        store_cached(&path, &provider(), &key, &token).unwrap();
        let loaded = load_cached(&path, &provider(), &key).unwrap().unwrap();
        assert_eq!(loaded.token.expose_secret(), token.token.expose_secret());
        assert_eq!(loaded.agent_id, "aauth:a@ap.example");
        assert_eq!(loaded.expires_at, 4_000_000_000);
        assert_eq!(person_server_url(&loaded).unwrap().as_str(), "https://ps.example/");

        assert!(load_cached(&path, &provider(), &AgentKey::generate()).unwrap().is_none());
        let other = ServerId::parse(Role::AgentProvider, &Url::parse("https://other.example").unwrap(), false).unwrap();
        assert!(load_cached(&path, &other, &key).unwrap().is_none());
        // Only the cache file is left.
        let names: Vec<_> =
            std::fs::read_dir(path.parent().unwrap()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, ["agent-token.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn cache_is_private_and_a_readable_one_is_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("aauth/agent-token.json");
        let key = AgentKey::generate();
        store_cached(&path, &provider(), &key, &agent_token(&key)).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = load_cached(&path, &provider(), &key).unwrap_err();
        assert!(matches!(error, Error::TokenCachePermissions { mode: 0o644, .. }), "{error:?}");
        assert!(error.to_string().contains(&path.display().to_string()));
    }

    #[test]
    fn a_corrupt_cache_counts_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent-token.json");
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&path).unwrap().write_all(b"{not json").unwrap();
        assert!(load_cached(&path, &provider(), &AgentKey::generate()).unwrap().is_none());
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
