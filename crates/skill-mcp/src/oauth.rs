//! OAuth 2.1 for streamable-HTTP servers, as the MCP authorization specification
//! describes it, on rmcp's `auth` (the `oauth2` crate): [`Login`] runs the authorization
//! code flow with PKCE (discovery through protected-resource and authorization-server
//! metadata, then a pre-registered client, a client ID metadata document or dynamic
//! registration) and keeps the tokens in a [`TokenFile`]; a connection whose token file
//! holds tokens sends them, refreshed before they expire.
//!
//! A token file is private (0600, in a 0700 folder) and its tokens are never shown:
//! `Debug` prints the path only.
//!
//! Step-up: a call refused with 403 `insufficient_scope` leaves the scope the server
//! named in the token file ([`TokenFile::step_up`]); the next [`Login`] asks for the
//! union of the scopes configured, granted before and named so, and the file forgets a
//! named scope once a grant holds it.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use rmcp::transport::auth::{AuthError, AuthorizationRequest, CredentialStore, OAuthState, StoredCredentials};

use crate::Error;
use crate::config::OAuthClient;

/// Where one server's OAuth client and tokens are kept, for one agent.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// The token file at `path` (created by the first login).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether a login has left tokens in it.
    pub fn has_tokens(&self) -> bool {
        self.read().is_ok_and(|kept| kept.is_some_and(|kept| kept.credentials.token_response.is_some()))
    }

    /// Removes the tokens: `Ok(false)` when there were none.
    pub fn remove(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// Notes that the server refused a call for want of `scope` (space-separated, as its
    /// challenge named it), for the next login to ask for; `false` when no login left
    /// tokens here (the refused token came from elsewhere).
    pub(crate) fn step_up(&self, scope: &str) -> Result<bool, String> {
        let Some(mut kept) = self.read()?.filter(|kept| kept.credentials.token_response.is_some()) else {
            return Ok(false);
        };
        for scope in scope.split_whitespace() {
            if !kept.step_up.iter().any(|known| known == scope) {
                kept.step_up.push(scope.to_owned());
            }
        }
        self.write(&kept).map(|()| true)
    }

    /// The scopes a new login asks for beyond the configured ones: those granted before
    /// and those a refusal named since.
    fn held_and_named_scopes(&self) -> Vec<String> {
        let Ok(Some(kept)) = self.read() else { return Vec::new() };
        kept.credentials.granted_scopes.into_iter().chain(kept.step_up).collect()
    }

    fn read(&self) -> Result<Option<Kept>, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(format!("cannot read {}: {error}", self.path.display())),
        };
        // The error names the file, never its text.
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|error| format!("{} is not a token file (line {})", self.path.display(), error.line()))
    }

    fn write(&self, stored: &Kept) -> Result<(), String> {
        use std::io::Write as _;
        use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
        let failed = |error: std::io::Error| format!("cannot write {}: {error}", self.path.display());
        if let Some(folder) = self.path.parent() {
            std::fs::DirBuilder::new().recursive(true).mode(0o700).create(folder).map_err(failed)?;
        }
        let text = serde_json::to_string(stored).map_err(|error| format!("cannot encode the tokens: {error}"))?;
        // A fresh file each time, renamed over the old one: a reader never sees half.
        let fresh = self.path.with_extension("tmp");
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&fresh)
            .map_err(failed)?;
        file.write_all(text.as_bytes()).and_then(|()| file.sync_all()).map_err(failed)?;
        std::fs::rename(&fresh, &self.path).map_err(failed)
    }
}

/// What a token file holds: rmcp's credentials, and the scopes refusals named that no
/// grant holds yet.
#[derive(serde::Serialize, serde::Deserialize)]
struct Kept {
    #[serde(flatten)]
    credentials: StoredCredentials,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    step_up: Vec<String>,
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenFile").field("path", &self.path).finish()
    }
}

#[async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let file = self.clone();
        off_runtime(move || file.read().map(|kept| kept.map(|kept| kept.credentials))).await
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let file = self.clone();
        off_runtime(move || {
            // A named scope is kept until a grant holds it.
            let mut step_up = file.read().ok().flatten().map(|kept| kept.step_up).unwrap_or_default();
            step_up.retain(|scope| !credentials.granted_scopes.contains(scope));
            file.write(&Kept { credentials, step_up })
        })
        .await
    }

    async fn clear(&self) -> Result<(), AuthError> {
        let file = self.clone();
        off_runtime(move || file.remove().map(drop).map_err(|error| error.to_string())).await
    }
}

/// Runs the file `work` off the runtime, its failure a credential store's.
async fn off_runtime<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, String> + Send + 'static,
) -> Result<T, AuthError> {
    match skill_core::off_runtime(work).await {
        Ok(outcome) => outcome.map_err(AuthError::CredentialStoreError),
        Err(error) => Err(AuthError::CredentialStoreError(error.to_string())),
    }
}

/// A login in progress: the person opens [`Login::authorization_url`], and the
/// redirect it ends with goes to [`Login::finish`].
pub struct Login {
    state: OAuthState,
    url: String,
}

impl Login {
    /// Starts the login to the server at `server_url` as the client `client` (with
    /// `client_secret`, its secret resolved), whose redirect comes back to
    /// `redirect_uri` (a loopback listener of the caller's); the tokens go to `tokens`.
    pub async fn start(
        server_url: &str,
        client: &OAuthClient,
        client_secret: Option<&str>,
        redirect_uri: &str,
        tokens: TokenFile,
    ) -> Result<Self, Error> {
        let failed = |error: AuthError| Error::Login(error.to_string());
        let http = crate::connection::http_client(&reqwest::header::HeaderMap::new())?;
        let challenge = challenge(&http, server_url).await;
        let mut state = OAuthState::new(server_url, Some(http)).await.map_err(failed)?;
        let mut scopes = client.scopes.clone();
        for scope in tokens.held_and_named_scopes() {
            if !scopes.contains(&scope) {
                scopes.push(scope);
            }
        }
        if let OAuthState::Unauthorized(manager) = &mut state {
            manager.set_credential_store(tokens);
        }
        let mut request = AuthorizationRequest::new(redirect_uri).with_client_name("omniagent");
        request = if scopes.is_empty() { request.with_initial_scope_selection() } else { request.with_scopes(scopes) };
        if let Some(client_id) = &client.client_id {
            request = request.with_preregistered_client(client_id);
            if let Some(secret) = client_secret {
                request = request.with_client_secret(secret);
            }
        }
        if let Some(metadata_url) = &client.client_metadata_url {
            request = request.with_client_metadata_url(metadata_url);
        }
        if let Some(challenge) = challenge {
            request = request.with_challenge(challenge);
        }
        state.start_authorization(request).await.map_err(failed)?;
        let url = state.get_authorization_url().await.map_err(failed)?;
        Ok(Self { state, url })
    }

    /// Where the person logs in.
    pub fn authorization_url(&self) -> &str {
        &self.url
    }

    /// Completes the login with the URL the authorization server redirected to; the
    /// tokens are then in the token file.
    pub async fn finish(mut self, redirected_to: &str) -> Result<(), Error> {
        let failed = |error: AuthError| Error::Login(error.to_string());
        self.state.handle_callback_url(redirected_to).await.map_err(failed)?;
        Ok(())
    }
}

/// The server's `WWW-Authenticate` challenge to a request without a token, which names
/// its protected-resource metadata and the scopes it wants; `None` when it sends none.
async fn challenge(http: &reqwest::Client, server_url: &str) -> Option<String> {
    let ping = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "ping"});
    let answer = http
        .post(server_url)
        .header(reqwest::header::ACCEPT, "application/json, text/event-stream")
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(ping.to_string())
        .send()
        .await
        .ok()?;
    let challenge = answer.headers().get(reqwest::header::WWW_AUTHENTICATE)?;
    challenge.to_str().ok().map(str::to_owned)
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    #[tokio::test]
    async fn a_token_file_is_private_and_never_shown() {
        let folder = tempfile::tempdir().unwrap();
        let file = TokenFile::new(folder.path().join("oauth/default/notes.json"));
        assert!(!file.has_tokens());
        let token: rmcp::transport::auth::OAuthTokenResponse = serde_json::from_value(serde_json::json!({
            "access_token": "canary-access-5e1f", "token_type": "Bearer", "expires_in": 3600
        }))
        .unwrap();
        let stored = StoredCredentials::new("client-1".to_owned(), Some(token), vec![], None);
        file.save(stored).await.unwrap();
        assert!(file.has_tokens());
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(file.path()), 0o600);
        assert_eq!(mode(file.path().parent().unwrap()), 0o700);
        let loaded = file.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "client-1");
        assert!(!format!("{file:?} {loaded:?}").contains("canary"));
        assert!(file.remove().unwrap());
        assert!(!file.remove().unwrap(), "a second logout finds nothing");
    }

    #[tokio::test]
    async fn a_named_scope_is_kept_for_the_next_login_until_a_grant_holds_it() {
        let folder = tempfile::tempdir().unwrap();
        let file = TokenFile::new(folder.path().join("server.json"));
        assert_eq!(file.step_up("mcp:admin"), Ok(false), "no login, nothing to note");
        let token = |scope: &str| -> rmcp::transport::auth::OAuthTokenResponse {
            serde_json::from_value(serde_json::json!({
                "access_token": "a", "token_type": "Bearer", "scope": scope
            }))
            .unwrap()
        };
        let granted = |scopes: &[&str]| scopes.iter().map(|scope| (*scope).to_owned()).collect::<Vec<_>>();
        let stored = StoredCredentials::new("c".to_owned(), Some(token("mcp:tools")), granted(&["mcp:tools"]), None);
        file.save(stored).await.unwrap();
        assert_eq!(file.step_up("mcp:tools mcp:admin"), Ok(true));
        assert_eq!(file.held_and_named_scopes(), ["mcp:tools", "mcp:tools", "mcp:admin"]);
        // A refresh that grants the same scopes keeps the note; the step-up's grant ends it.
        let refreshed = StoredCredentials::new("c".to_owned(), Some(token("mcp:tools")), granted(&["mcp:tools"]), None);
        file.save(refreshed).await.unwrap();
        assert_eq!(file.held_and_named_scopes(), ["mcp:tools", "mcp:admin"]);
        let both = granted(&["mcp:tools", "mcp:admin"]);
        file.save(StoredCredentials::new("c".to_owned(), Some(token("mcp:tools mcp:admin")), both, None))
            .await
            .unwrap();
        assert_eq!(file.held_and_named_scopes(), ["mcp:tools", "mcp:admin"]);
        assert!(!std::fs::read_to_string(file.path()).unwrap().contains("step_up"));
        assert!(file.load().await.unwrap().is_some(), "rmcp reads the file as its own credentials");
    }
}
