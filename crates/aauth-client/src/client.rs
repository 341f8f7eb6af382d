//! [`AAuthClient`]: the agent's tokens, and the middleware that signs every request and
//! satisfies what resources ask for.
//!
//! A request goes out signed with the best token the client holds for its resource: the
//! auth token, else the person token, else the agent token. When the resource answers
//! with an `AAuth-Requirement`, the middleware gets what it asks for and sends the
//! request again (its body is kept in memory for that), at most
//! [`max_requirement_rounds`](AAuthClientBuilder::max_requirement_rounds) times:
//!
//! - `401 agent-token`: present the agent token;
//! - `401 person-token`: get a person token from the person server (the agent token's
//!   `ps`, or the configured one) at its `person_token_endpoint`;
//! - `401`/`402 auth-token`: check the resource token, exchange it at the person server's
//!   `auth_token_endpoint`, present the auth token;
//! - `202 auth-token` (deferred): the same exchange, then poll `Location` with the auth
//!   token: the resource answers there with the result of the call it held;
//! - `202 interaction`, `approval`, `clarification`: tell the person through
//!   `on_interaction`, answer through `on_clarification`, and poll `Location` until a
//!   final answer.
//!
//! Polling honours `Retry-After` (5 s without it, an hour at most) and slows down by 5 s
//! on each `429`. Polling and the caller's requests have no timeout of the client's: the
//! caller bounds the request, and dropping its future stops the polling. The client's own
//! exchanges (metadata, enrollment, token requests) are bounded: see
//! [`exchange_timeout`](AAuthClientBuilder::exchange_timeout).
//!
//! Tokens are cached per resource until 60 s before they expire. With a token cache folder
//! ([`agent_token_cache_dir`](AAuthClientBuilder::agent_token_cache_dir)) the person and
//! auth tokens are shared with other processes as the agent token is: a request first
//! takes what another process left for its resource (checked as a new token is), and
//! every token obtained is written back. One `omniagent` command after another then
//! presents the auth token the first obtained, and a person who approved once is not
//! asked again while it lasts. With Redis instead
//! (`state_in_redis`, feature `redis`) the same holds across
//! machines: replicas with the same key share one enrollment and one approval.
//!
//! The `created` of a state-changing request is kept strictly increasing per method,
//! authority and path within the process, and among the processes sharing the folder or
//! the Redis server, so that a verifier's replay cache never sees the same tuple twice; a
//! request that would reuse one waits for the next second.
//!
//! The shared state (files, or Redis) is read and written never while one of the
//! client's locks is held, the files on tokio's blocking threads: a slow disk or server
//! delays the request that waits for it, not the runtime, nor the requests that wait for
//! a lock.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Method, Request, Response, StatusCode};
use reqwest_middleware::{ClientWithMiddleware, Middleware, Next};
use skill_core::{ExposeSecret as _, SecretString};
use url::Url;

use crate::enroll::{self, AgentToken, Enrollment};
use crate::error::{Step, url_for_errors};
use crate::interaction::{self, ClarificationBody, PollSchedule, Problem};
use crate::jwt::TokenKind;
use crate::metadata::{self, PersonServerMetadata, Role, ServerId};
use crate::requirement::{AAUTH_REQUIREMENT, Requirement, RequirementError};
use crate::shared_state::{Files, SharedState};
use crate::shared_tokens::{self, Owner, ResourceTokens};
use crate::signing::{SignatureKey, sign_request};
use crate::tokens::{self, CachedToken, TokenCache};
use crate::{AgentKey, Error, created, exchange};

/// The request header an agent declares what it can handle in (protocol draft,
/// "AAuth-Capabilities Request Header").
const AAUTH_CAPABILITIES: HeaderName = HeaderName::from_static("aauth-capabilities");
/// The response header naming a signature failure (Signature-Key draft).
const SIGNATURE_ERROR: &str = "signature-error";
/// How many requirement rounds one request may take by default: the whole three-party
/// dance needs two (person token, auth token), a step-up a third.
const DEFAULT_MAX_ROUNDS: usize = 5;
/// How long the agent lets the person server wait before deferring an auth token request
/// (`Prefer: wait=45`, as in the draft's token request).
const PREFER_WAIT: Duration = Duration::from_secs(45);

type InteractionCallback = Arc<dyn Fn(&Url, &str) + Send + Sync>;
type ClarificationCallback = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Where a client shares its tokens and `created` with other processes.
enum StateChoice {
    /// A token cache folder.
    Files(PathBuf),
    /// A Redis server, at this URL.
    #[cfg(feature = "redis")]
    Redis(SecretString),
}

impl fmt::Debug for StateChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StateChoice::Files(dir) => f.debug_tuple("Files").field(dir).finish(),
            // The URL may hold a password.
            #[cfg(feature = "redis")]
            StateChoice::Redis(_) => f.write_str("Redis"),
        }
    }
}

/// Who the agent is, as its agent token says; no token inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentIdentity {
    /// The agent identifier, `aauth:local@domain`.
    pub agent_id: String,
    /// The RFC 7638 thumbprint of the agent key.
    pub thumbprint: String,
    /// When the agent token expires.
    pub expires_at: SystemTime,
    /// The person server the agent uses: the configured one, else the agent token's `ps`.
    pub person_server: Option<Url>,
}

/// An AAuth agent: its key, its agent provider, the tokens it holds, and an HTTP client
/// that signs every request with them.
///
/// Cloning is cheap and shares the tokens. `Debug` shows the configuration and the key's
/// thumbprint, never a key or a token.
#[derive(Clone)]
pub struct AAuthClient {
    inner: Arc<Inner>,
}

/// Configures an [`AAuthClient`]; from [`AAuthClient::builder`].
pub struct AAuthClientBuilder {
    key: AgentKey,
    agent_provider: Url,
    person_server: Option<Url>,
    ca_file: Option<PathBuf>,
    allow_http_loopback: bool,
    state: Option<StateChoice>,
    exchange_timeout: Duration,
    on_interaction: Option<InteractionCallback>,
    on_clarification: Option<ClarificationCallback>,
    max_requirement_rounds: usize,
}

impl AAuthClient {
    /// A builder for an agent with `key`, enrolled at `agent_provider` (a server
    /// identifier, `https://host`).
    pub fn builder(key: AgentKey, agent_provider: Url) -> AAuthClientBuilder {
        AAuthClientBuilder {
            key,
            agent_provider,
            person_server: None,
            ca_file: None,
            allow_http_loopback: false,
            state: None,
            exchange_timeout: exchange::DEFAULT_EXCHANGE_TIMEOUT,
            on_interaction: None,
            on_clarification: None,
            max_requirement_rounds: DEFAULT_MAX_ROUNDS,
        }
    }

    /// Enrolls now: a new agent token from the agent provider's `bootstrap_endpoint`, in a
    /// request signed with the bare key (`hwk`); the token is cached.
    pub async fn enroll(&self) -> Result<AgentIdentity, Error> {
        let current = self.inner.agent.lock().await;
        let token = self.inner.obtain_agent_token(Enrollment::Bootstrap, now()).await?;
        let token = self.inner.keep_agent_token(current, token).await?;
        Ok(self.inner.identity(&token))
    }

    /// The agent's identity: the cached agent token (in memory, else in the cache file),
    /// renewed at `refresh_endpoint` when it is about to expire, or a new enrollment when
    /// there is none or it has expired.
    pub async fn agent_identity(&self) -> Result<AgentIdentity, Error> {
        let token = self.inner.agent_token().await?;
        Ok(self.inner.identity(&token))
    }

    /// An HTTP client whose every request is signed and whose AAuth requirements are
    /// handled by this client: [`middleware`](Self::middleware) on a reqwest client with
    /// this client's trust roots. Redirects are not followed (a redirect would carry a
    /// signature made for another URL).
    pub fn http_client(&self) -> ClientWithMiddleware {
        reqwest_middleware::ClientBuilder::new(self.inner.http.clone()).with(self.middleware()).build()
    }

    /// The signing middleware alone, for a [`reqwest_middleware::ClientBuilder`] of your
    /// own (put it last, so that a retry middleware before it gets every retry signed).
    /// The reqwest client under it must not follow redirects.
    pub fn middleware(&self) -> AAuthMiddleware {
        AAuthMiddleware { client: self.clone() }
    }

    /// The file in the [`agent_token_cache_dir`](AAuthClientBuilder::agent_token_cache_dir)
    /// that holds this agent provider's and key's token, when there is a cache folder.
    pub fn agent_token_cache_file(&self) -> Option<&Path> {
        self.inner.agent_token_cache.as_deref()
    }

    /// The file in the [`agent_token_cache_dir`](AAuthClientBuilder::agent_token_cache_dir)
    /// that holds this agent provider's and key's person and auth tokens for the resource
    /// serving `url`, when there is a cache folder and `url`'s origin is a server identifier
    /// the client accepts.
    pub fn resource_token_cache_file(&self, url: &Url) -> Option<PathBuf> {
        let inner = &self.inner;
        let dir = inner.shared.as_deref()?.folder()?;
        let resource = ServerId::of(Role::Resource, url, inner.allow_http_loopback).ok()?;
        Some(shared_tokens::cache_file(dir, &inner.agent_provider, &inner.key, &resource))
    }
}

impl fmt::Debug for AAuthClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &self.inner;
        f.debug_struct("AAuthClient")
            .field("key", &inner.key)
            .field("agent_provider", &inner.agent_provider.as_str())
            .field("person_server", &inner.person_server.as_ref().map(ServerId::as_str))
            .field("allow_http_loopback", &inner.allow_http_loopback)
            .field("agent_token_cache", &inner.agent_token_cache)
            .field("shared_state", &inner.shared.as_ref().map(|shared| shared.describe()))
            .field("exchange_timeout", &inner.exchange_timeout)
            .field("on_interaction", &inner.on_interaction.is_some())
            .field("on_clarification", &inner.on_clarification.is_some())
            .field("max_requirement_rounds", &inner.max_rounds)
            .field("cached_tokens", &inner.tokens.len())
            .finish()
    }
}

impl AAuthClientBuilder {
    /// The person server to use instead of the agent token's `ps` claim; also sent to the
    /// agent provider at enrollment (`{"ps": URL}`).
    pub fn person_server(mut self, person_server: Url) -> Self {
        self.person_server = Some(person_server);
        self
    }

    /// A PEM file of extra trust roots (a private PKI, a test CA), added to the system's.
    pub fn ca_file(mut self, ca_file: &Path) -> Self {
        self.ca_file = Some(ca_file.to_owned());
        self
    }

    /// Allows `http://` servers, with a port, on `127.0.0.1` and `[::1]` only (local testing).
    pub fn allow_http_loopback(mut self, allow: bool) -> Self {
        self.allow_http_loopback = allow;
        self
    }

    /// The folder where tokens are kept, so that other processes with the same key and
    /// agent provider reuse them: the agent token, and the person and auth tokens of each
    /// resource. Without it the tokens live in memory only.
    ///
    /// Each agent provider and key has its own agent token file in the folder,
    /// `agent-token-<16 hex digits>.json` ([`AAuthClient::agent_token_cache_file`]), and
    /// one file per resource for its person and auth tokens,
    /// `resource-tokens-<16 hex digits>.json`
    /// ([`AAuthClient::resource_token_cache_file`]), so agents configured with other
    /// providers or keys can share the folder. A token is read back only while it is
    /// fresh (until 60 s before it expires) and after the checks a new token passes
    /// (`typ`, bound to this key, the resource as `aud`, the person server as the person
    /// token's `iss`). The folder is created 0700 and refused when its group or others can
    /// write it ([`Error::FolderPermissions`]); files are 0600, written whole and renamed
    /// into place (with concurrent writers, the last one wins), and a file that cannot be
    /// used (corrupt, readable by others, another agent's, expired) counts as none and is
    /// replaced by the next token obtained. A person or auth token that cannot be written
    /// is still used by this client (with a warning).
    ///
    /// Replaces `state_in_redis` (feature `redis`), if it was called.
    pub fn agent_token_cache_dir(mut self, dir: PathBuf) -> Self {
        self.state = Some(StateChoice::Files(dir));
        self
    }

    /// Keeps the tokens and the `created` of signatures in the Redis server at `url`
    /// (`redis://[user:password@]host[:port][/db]`) instead of a token cache folder, so that
    /// replicas on several machines with the same key and agent provider share them: one
    /// enrollment, one person approval, and strictly increasing `created` across them (no
    /// replay). The keys are `omniagent:aauth:agent-token-<16 hex digits>`,
    /// `omniagent:aauth:resource-tokens-<16 hex digits>` (the names of the folder's files,
    /// holding the same text, read back with the same checks, and expiring with their
    /// last token) and `omniagent:aauth:created-<16 hex digits>-<second>` (each claimed
    /// atomically with `SET NX EX 120`).
    ///
    /// The server is reached on first use. While it cannot be reached, requests fail with
    /// [`Error::RedisState`]: they are not signed on this process's clock alone, which
    /// another replica might share. The URL appears in no error, log or `Debug` output.
    /// Replaces [`agent_token_cache_dir`](Self::agent_token_cache_dir), if it was called.
    #[cfg(feature = "redis")]
    pub fn state_in_redis(mut self, url: SecretString) -> Self {
        self.state = Some(StateChoice::Redis(url));
        self
    }

    /// How long each of the client's own exchanges may take, from connecting until the
    /// whole answer is read: fetching metadata, enrolling or refreshing, asking for a
    /// person or auth token (the auth token request gets 45 s more, since it lets the
    /// person server wait that long before deferring: `Prefer: wait=45`). 30 s by default.
    ///
    /// The caller's own requests and the polling of pending requests are not bounded by
    /// the client (the caller bounds them); every connection has a 10 s connect timeout.
    pub fn exchange_timeout(mut self, timeout: Duration) -> Self {
        self.exchange_timeout = timeout;
        self
    }

    /// Called with the interaction URL and code when a person must act; the request waits
    /// and polls meanwhile. The person goes to `{url}?code={code}`. It must not block.
    pub fn on_interaction(mut self, callback: impl Fn(&Url, &str) + Send + Sync + 'static) -> Self {
        self.on_interaction = Some(Arc::new(callback));
        self
    }

    /// Called with a clarification question (Markdown from the server: untrusted); its
    /// answer is sent back, and `None` withdraws the request. Without this callback a
    /// clarification is an error ([`Error::ClarificationUnhandled`]).
    pub fn on_clarification(mut self, callback: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.on_clarification = Some(Arc::new(callback));
        self
    }

    /// How many requirement rounds (tokens obtained, clarifications answered) one request
    /// may take before it fails with [`Error::TooManyRounds`]; 5 by default, at least 1.
    pub fn max_requirement_rounds(mut self, rounds: usize) -> Self {
        self.max_requirement_rounds = rounds.max(1);
        self
    }

    /// Checks the configuration and builds the client; nothing is fetched yet.
    pub fn build(self) -> Result<AAuthClient, Error> {
        let agent_provider = ServerId::parse(Role::AgentProvider, &self.agent_provider, self.allow_http_loopback)?;
        let person_server = self
            .person_server
            .as_ref()
            .map(|url| ServerId::parse(Role::PersonServer, url, self.allow_http_loopback))
            .transpose()?;
        // rustls needs one crypto provider per process; `ring` is the one this workspace
        // builds with. A provider installed earlier (by the host) is kept.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(exchange::CONNECT_TIMEOUT);
        if let Some(path) = &self.ca_file {
            let pem = std::fs::read(path)
                .map_err(|error| Error::CaFile { path: path.clone(), reason: format!("cannot read it: {error}") })?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|error| Error::CaFile {
                path: path.clone(),
                reason: format!("not PEM certificates: {error}"),
            })?;
            if certificates.is_empty() {
                return Err(Error::CaFile { path: path.clone(), reason: "it holds no certificate".to_owned() });
            }
            http = http.tls_certs_merge(certificates);
        }
        let http = http.build().map_err(|source| Error::HttpClient { source })?;
        let agent_token_cache = match &self.state {
            Some(StateChoice::Files(dir)) => Some(enroll::cache_file(dir, &agent_provider, &self.key)),
            _ => None,
        };
        let shared: Option<Box<dyn SharedState>> = match self.state {
            Some(StateChoice::Files(dir)) => Some(Box::new(Files::new(dir))),
            #[cfg(feature = "redis")]
            Some(StateChoice::Redis(url)) => Some(Box::new(crate::redis_state::RedisState::new(&url)?)),
            None => None,
        };
        Ok(AAuthClient {
            inner: Arc::new(Inner {
                key: self.key,
                agent_provider,
                person_server,
                allow_http_loopback: self.allow_http_loopback,
                http,
                exchange_timeout: self.exchange_timeout,
                agent_token_cache,
                shared,
                on_interaction: self.on_interaction,
                on_clarification: self.on_clarification,
                max_rounds: self.max_requirement_rounds,
                agent: tokio::sync::Mutex::new(None),
                tokens: TokenCache::default(),
                person_metadata: tokio::sync::Mutex::new(HashMap::new()),
                person_token_locks: std::sync::Mutex::new(HashMap::new()),
            }),
        })
    }
}

impl fmt::Debug for AAuthClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AAuthClientBuilder")
            .field("key", &self.key)
            .field("agent_provider", &self.agent_provider.as_str())
            .field("person_server", &self.person_server.as_ref().map(Url::as_str))
            .field("ca_file", &self.ca_file)
            .field("allow_http_loopback", &self.allow_http_loopback)
            .field("state", &self.state)
            .field("exchange_timeout", &self.exchange_timeout)
            .field("on_interaction", &self.on_interaction.is_some())
            .field("on_clarification", &self.on_clarification.is_some())
            .field("max_requirement_rounds", &self.max_requirement_rounds)
            .finish()
    }
}

/// The `reqwest_middleware` layer of an [`AAuthClient`]: signs every request and drives
/// the requirements its resource answers with. Its errors are
/// `reqwest_middleware::Error::Middleware` around an [`Error`]
/// ([`Error::from_middleware`] gets it back).
#[derive(Clone, Debug)]
pub struct AAuthMiddleware {
    client: AAuthClient,
}

#[async_trait::async_trait]
impl Middleware for AAuthMiddleware {
    async fn handle(
        &self,
        request: Request,
        extensions: &mut http::Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<Response> {
        let mut channel = Channel::Next { next, extensions };
        self.client.inner.execute(request, &mut channel).await.map_err(reqwest_middleware::Error::middleware)
    }
}

struct Inner {
    key: AgentKey,
    agent_provider: ServerId,
    person_server: Option<ServerId>,
    allow_http_loopback: bool,
    /// The client for the agent provider and person server, and under the middleware.
    http: reqwest::Client,
    /// The bound on each of the client's own exchanges.
    exchange_timeout: Duration,
    /// The agent token cache file of this provider and key, with a token cache folder.
    agent_token_cache: Option<PathBuf>,
    /// Where the tokens and `created` are shared with other processes: the token cache
    /// folder, or Redis.
    shared: Option<Box<dyn SharedState>>,
    on_interaction: Option<InteractionCallback>,
    on_clarification: Option<ClarificationCallback>,
    max_rounds: usize,
    /// The agent token; the lock also makes concurrent requests share one enrollment.
    agent: tokio::sync::Mutex<Option<AgentToken>>,
    tokens: TokenCache,
    person_metadata: tokio::sync::Mutex<HashMap<ServerId, PersonServerMetadata>>,
    /// One lock per resource, so that concurrent requests share one person token request.
    person_token_locks: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

/// Where requests go: through the rest of the middleware stack (the caller's request and
/// its polls), or straight to the client (agent provider and person server).
enum Channel<'a> {
    Direct(&'a reqwest::Client),
    Next { next: Next<'a>, extensions: &'a mut http::Extensions },
}

impl Channel<'_> {
    async fn send(&mut self, request: Request, step: Step) -> Result<Response, Error> {
        let url = request.url().clone();
        match self {
            Channel::Direct(client) => client.execute(request).await.map_err(|source| Error::http(step, &url, source)),
            Channel::Next { next, extensions } => {
                next.clone().run(request, extensions).await.map_err(|source| Error::http(step, &url, source))
            }
        }
    }
}

/// The token a request presents, and whether it was obtained for this very request.
struct Presented {
    kind: TokenKind,
    token: SecretString,
    sub: Option<String>,
    obtained_now: bool,
}

/// The requirement rounds one request has used.
struct Rounds {
    used: usize,
    max: usize,
    url: String,
}

impl Rounds {
    fn take(&mut self, requirement: &'static str) -> Result<(), Error> {
        self.used += 1;
        if self.used > self.max {
            return Err(Error::TooManyRounds { url: self.url.clone(), rounds: self.max, last: requirement });
        }
        Ok(())
    }
}

impl Inner {
    /// Sends the caller's request, satisfying the requirements its resource answers with.
    async fn execute(&self, request: Request, channel: &mut Channel<'_>) -> Result<Response, Error> {
        let url = request.url().clone();
        let shown_url = url_for_errors(&url);
        if request.try_clone().is_none() {
            return Err(Error::StreamingBody { method: request.method().to_string(), url: shown_url });
        }
        let mut rounds = Rounds { used: 0, max: self.max_rounds, url: shown_url.clone() };
        let mut presented = self.best_token(&url).await?;
        loop {
            let mut attempt = request.try_clone().expect("the body was checked to be in memory");
            if let Some(capabilities) = self.capabilities_header() {
                attempt.headers_mut().insert(AAUTH_CAPABILITIES, capabilities);
            }
            let created = created::created_for(&self.key, &attempt, self.shared.as_deref()).await?;
            sign_request(&self.key, &mut attempt, &SignatureKey::Jwt(presented.token.clone()), created)?;
            let response = channel.send(attempt, Step::Request).await?;
            let status = response.status().as_u16();
            if !matches!(status, 401 | 402 | 202) {
                return Ok(response);
            }
            let Some(requirement) = requirement_of(&url, &response)? else {
                return Ok(response);
            };
            if !requirement.allowed_with(status) {
                return Err(Error::RequirementStatus { url: shown_url, requirement: requirement.name(), status });
            }
            tracing::debug!(url = %shown_url, status, requirement = requirement.name(), "AAuth requirement");
            if status == 202 {
                // A pending answer: the resource holds the call, and its result comes at
                // `Location`; the requirement is handled (and counted) there.
                return self
                    .follow_pending(channel, &url, response, presented.token, Some(&url), presented.sub, &mut rounds)
                    .await;
            }
            rounds.take(requirement.name())?;
            presented = match requirement {
                Requirement::AgentToken => {
                    if presented.kind == TokenKind::Agent {
                        return Err(Error::RequirementNotMet { url: shown_url, requirement: "agent-token" });
                    }
                    let agent = self.agent_token().await?;
                    Presented { kind: TokenKind::Agent, token: agent.token, sub: None, obtained_now: false }
                }
                Requirement::PersonToken => {
                    if presented.kind == TokenKind::Person && presented.obtained_now {
                        return Err(Error::RequirementNotMet { url: shown_url, requirement: "person-token" });
                    }
                    let refused = (presented.kind == TokenKind::Person).then_some(&presented.token);
                    let person = self.person_token(&url, refused).await?;
                    Presented { kind: TokenKind::Person, token: person.token, sub: person.sub, obtained_now: true }
                }
                Requirement::AuthToken { resource_token } => {
                    let auth = self.auth_token(&url, &resource_token, presented.sub.as_deref()).await?;
                    Presented { kind: TokenKind::Auth, token: auth.token, sub: auth.sub, obtained_now: true }
                }
                other => {
                    return Err(Error::RequirementStatus { url: shown_url, requirement: other.name(), status });
                }
            };
        }
    }

    /// The token to present first to the resource of `url`: auth, else person, else
    /// agent; in memory, else left in the token cache by another process.
    async fn best_token(&self, url: &Url) -> Result<Presented, Error> {
        let now = now();
        let resource = url.origin().ascii_serialization();
        if self.shared.is_some()
            && self.tokens.get(&resource, TokenKind::Auth, now).is_none()
            && let Ok(resource_id) = ServerId::of(Role::Resource, url, self.allow_http_loopback)
            && let Some(person_server) = self.known_person_server().await?
        {
            let shared = self.shared_tokens(&resource_id, &person_server, now).await?;
            for (kind, token) in [(TokenKind::Auth, shared.auth), (TokenKind::Person, shared.person)] {
                if let Some(token) = token
                    && self.tokens.get(&resource, kind, now).is_none()
                {
                    self.tokens.insert(&resource, kind, token);
                }
            }
        }
        for kind in [TokenKind::Auth, TokenKind::Person] {
            if let Some(cached) = self.tokens.get(&resource, kind, now) {
                return Ok(Presented { kind, token: cached.token, sub: cached.sub, obtained_now: false });
            }
        }
        let agent = self.agent_token().await?;
        Ok(Presented { kind: TokenKind::Agent, token: agent.token, sub: None, obtained_now: false })
    }

    /// `AAuth-Capabilities` for the callbacks that are set.
    fn capabilities_header(&self) -> Option<HeaderValue> {
        let capabilities = self.capabilities();
        (!capabilities.is_empty()).then(|| HeaderValue::from_str(&capabilities.join(", ")).expect("tokens are ASCII"))
    }

    fn capabilities(&self) -> Vec<&'static str> {
        let mut capabilities = Vec::new();
        if self.on_interaction.is_some() {
            capabilities.push("interaction");
        }
        if self.on_clarification.is_some() {
            capabilities.push("clarification");
        }
        capabilities
    }

    /// Follows a `202`: handles its requirement, then polls `Location` with signed GETs
    /// until a final answer. `resource_url` is set for the caller's own requests, where a
    /// deferred `auth-token` requirement may arrive; `token` is what the polls present.
    #[allow(clippy::too_many_arguments)]
    async fn follow_pending(
        &self,
        channel: &mut Channel<'_>,
        request_url: &Url,
        first: Response,
        mut token: SecretString,
        resource_url: Option<&Url>,
        person_sub: Option<String>,
        rounds: &mut Rounds,
    ) -> Result<Response, Error> {
        let location = interaction::pending_location(request_url, first.headers())?;
        let mut schedule = PollSchedule::new(interaction::retry_after(first.headers()));
        let mut announced: Option<(Url, String)> = None;
        let mut exchanged: Option<SecretString> = None;
        let mut pending = Some(first);
        loop {
            if let Some(response) = pending.take() {
                match (requirement_of(&location, &response)?, resource_url) {
                    (None | Some(Requirement::Approval), _) => {}
                    (Some(Requirement::Interaction { url, code }), _) => {
                        interaction::check_interaction_url(&location, &url, self.allow_http_loopback)?;
                        // Every pending answer may repeat the requirement: tell the person once.
                        if announced.as_ref() != Some(&(url.clone(), code.clone())) {
                            let Some(callback) = &self.on_interaction else {
                                self.withdraw(channel, &location, &token).await;
                                return Err(Error::InteractionUnhandled {
                                    url: url_for_errors(&location),
                                    interaction_url: url_for_errors(&url),
                                    code,
                                });
                            };
                            tracing::info!(
                                pending = %url_for_errors(&location),
                                interaction = %url_for_errors(&url),
                                "a person must act"
                            );
                            callback(&url, &code);
                            announced = Some((url, code));
                        }
                    }
                    (Some(Requirement::Clarification), _) => {
                        rounds.take("clarification")?;
                        self.clarify(channel, &location, response, &token).await?;
                    }
                    (Some(Requirement::AuthToken { resource_token }), Some(resource_url)) => {
                        // Deferred delivery: exchange the resource token once, then present
                        // the auth token at the pending URL. A fresh resource token (the
                        // first expired) is exchanged again.
                        let already = exchanged
                            .as_ref()
                            .is_some_and(|done| done.expose_secret() == resource_token.expose_secret());
                        if !already {
                            rounds.take("auth-token")?;
                            token = self.auth_token(resource_url, &resource_token, person_sub.as_deref()).await?.token;
                            exchanged = Some(resource_token);
                        }
                    }
                    (Some(other), _) => {
                        return Err(Error::RequirementStatus {
                            url: url_for_errors(&location),
                            requirement: other.name(),
                            status: 202,
                        });
                    }
                }
            }
            tokio::time::sleep(schedule.delay()).await;
            let mut poll = Request::new(Method::GET, location.clone());
            let created = created::created_for(&self.key, &poll, self.shared.as_deref()).await?;
            sign_request(&self.key, &mut poll, &SignatureKey::Jwt(token.clone()), created)?;
            let response = channel.send(poll, Step::Poll).await?;
            match response.status().as_u16() {
                202 => {
                    schedule.pending(interaction::retry_after(response.headers()));
                    pending = Some(response);
                }
                429 => schedule.slow_down(interaction::retry_after(response.headers())),
                503 => schedule.pending(interaction::retry_after(response.headers())),
                403 | 408 | 410 | 500 => return Err(terminal_error(&location, response).await),
                _ => return Ok(response),
            }
        }
    }

    /// Answers a `202 requirement=clarification` through the callback (or withdraws the
    /// request), as `{"action":"clarification_response","clarification_response":…}`.
    async fn clarify(
        &self,
        channel: &mut Channel<'_>,
        location: &Url,
        response: Response,
        token: &SecretString,
    ) -> Result<(), Error> {
        let body = exchange::read_body(Step::Poll, location, response).await?;
        let question: ClarificationBody = serde_json::from_slice(&body).map_err(|_| Error::InvalidResponse {
            step: Step::Poll,
            url: url_for_errors(location),
            reason: "a clarification without a string `clarification` in its body".to_owned(),
        })?;
        let question = interaction::printable(&question.clarification, 2000);
        let Some(callback) = &self.on_clarification else {
            self.withdraw(channel, location, token).await;
            return Err(Error::ClarificationUnhandled { url: url_for_errors(location), question });
        };
        let Some(answer) = callback(&question) else {
            self.withdraw(channel, location, token).await;
            return Err(Error::ClarificationDeclined { url: url_for_errors(location) });
        };
        let body = serde_json::json!({"action": "clarification_response", "clarification_response": answer});
        let mut request = Request::new(Method::POST, location.clone());
        request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        *request.body_mut() = Some(body.to_string().into());
        let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
        sign_request(&self.key, &mut request, &SignatureKey::Jwt(token.clone()), created)?;
        let response = channel.send(request, Step::Clarification).await?;
        if !response.status().is_success() {
            return Err(error_from_response(Step::Clarification, location, response).await);
        }
        Ok(())
    }

    /// Withdraws a pending request (a signed `DELETE` of its URL), as far as the server
    /// lets it: the error the caller gets is the reason for withdrawing, not this.
    async fn withdraw(&self, channel: &mut Channel<'_>, location: &Url, token: &SecretString) {
        let mut request = Request::new(Method::DELETE, location.clone());
        let created = match created::created_for(&self.key, &request, self.shared.as_deref()).await {
            Ok(created) => created,
            Err(error) => {
                tracing::debug!(pending = %url_for_errors(location), %error, "the pending request cannot be withdrawn");
                return;
            }
        };
        if sign_request(&self.key, &mut request, &SignatureKey::Jwt(token.clone()), created).is_ok()
            && let Err(error) = channel.send(request, Step::Poll).await
        {
            tracing::debug!(pending = %url_for_errors(location), %error, "withdrawing the pending request failed");
        }
    }

    /// The agent token: the cached one while fresh; else renewed (refresh before it
    /// expires, a new enrollment after).
    async fn agent_token(&self) -> Result<AgentToken, Error> {
        if let Some(token) = self.agent.lock().await.as_ref()
            && tokens::fresh(token.expires_at, now())
        {
            return Ok(token.clone());
        }
        // Another process may have enrolled or refreshed meanwhile. The file is read before
        // the lock is taken again, so that no request waits for another's file work.
        let cached = match &self.shared {
            Some(shared) => shared.agent_token(&self.agent_provider, &self.key).await?,
            None => None,
        };
        let mut current = self.agent.lock().await;
        let now = now();
        if let Some(token) = current.as_ref()
            && tokens::fresh(token.expires_at, now)
        {
            // Renewed by another request while this one read the file.
            return Ok(token.clone());
        }
        if let Some(cached) = cached {
            if tokens::fresh(cached.expires_at, now) {
                *current = Some(cached.clone());
                return Ok(cached);
            }
            if current.as_ref().is_none_or(|token| cached.expires_at > token.expires_at) {
                *current = Some(cached);
            }
        }
        let enrollment = match current.as_ref() {
            Some(token) if now < token.expires_at => Enrollment::Refresh,
            _ => Enrollment::Bootstrap,
        };
        let token = self.obtain_agent_token(enrollment, now).await?;
        self.keep_agent_token(current, token).await
    }

    /// A new agent token from the agent provider.
    async fn obtain_agent_token(&self, enrollment: Enrollment, now: u64) -> Result<AgentToken, Error> {
        let metadata =
            metadata::agent_provider(&self.http, self.exchange_timeout, &self.agent_provider, self.allow_http_loopback)
                .await?;
        let token = enroll::request_agent_token(
            &self.http,
            self.exchange_timeout,
            &self.key,
            &self.agent_provider,
            &metadata,
            self.person_server.as_ref(),
            enrollment,
            now,
            self.shared.as_deref(),
        )
        .await?;
        tracing::debug!(agent_id = %token.agent_id, ?enrollment, "agent token obtained");
        Ok(token)
    }

    /// Puts the agent token just obtained in `current` (the locked agent token), releases
    /// the lock, and writes the token to the cache file: the requests that waited use it
    /// meanwhile. A token that cannot be written is not kept, as if it had not been
    /// obtained: the next request tries again, and reports why it cannot.
    async fn keep_agent_token(
        &self,
        mut current: tokio::sync::MutexGuard<'_, Option<AgentToken>>,
        token: AgentToken,
    ) -> Result<AgentToken, Error> {
        let previous = current.replace(token.clone());
        drop(current);
        let Some(shared) = &self.shared else { return Ok(token) };
        if let Err(error) = shared.keep_agent_token(&self.agent_provider, &self.key, &token).await {
            let mut current = self.agent.lock().await;
            if current.as_ref().is_some_and(|held| held.token.expose_secret() == token.token.expose_secret()) {
                *current = previous;
            }
            return Err(error);
        }
        Ok(token)
    }

    fn identity(&self, token: &AgentToken) -> AgentIdentity {
        AgentIdentity {
            agent_id: token.agent_id.clone(),
            thumbprint: self.key.thumbprint(),
            expires_at: UNIX_EPOCH + Duration::from_secs(token.expires_at),
            person_server: match &self.person_server {
                Some(configured) => Some(configured.url()),
                None => enroll::person_server_url(token),
            },
        }
    }

    /// The person server for a requirement from `url`: the configured one, else the agent
    /// token's `ps`.
    fn person_server_for(&self, agent: &AgentToken, url: &Url, requirement: &'static str) -> Result<ServerId, Error> {
        if let Some(configured) = &self.person_server {
            return Ok(configured.clone());
        }
        enroll::person_server_id(agent, self.allow_http_loopback)?
            .ok_or_else(|| Error::NoPersonServer { url: url_for_errors(url), requirement })
    }

    async fn person_server_metadata(&self, person_server: &ServerId) -> Result<PersonServerMetadata, Error> {
        let mut known = self.person_metadata.lock().await;
        if let Some(metadata) = known.get(person_server) {
            return Ok(metadata.clone());
        }
        let metadata =
            metadata::person_server(&self.http, self.exchange_timeout, person_server, self.allow_http_loopback).await?;
        known.insert(person_server.clone(), metadata.clone());
        Ok(metadata)
    }

    /// A person token for the resource of `url`: a cached one unless it is `refused`,
    /// else a new one from the person server.
    async fn person_token(&self, url: &Url, refused: Option<&SecretString>) -> Result<CachedToken, Error> {
        let resource = ServerId::of(Role::Resource, url, self.allow_http_loopback)?;
        let agent = self.agent_token().await?;
        let person_server = self.person_server_for(&agent, url, "person-token")?;
        // Another process may have left one since the request began (read before the lock,
        // so that no request waits for another's file work). After a refusal the person
        // server is asked: a token from elsewhere may be refused just the same.
        let shared = match refused {
            None => self.shared_tokens(&resource, &person_server, now()).await?.person,
            Some(_) => None,
        };
        let lock = {
            let mut locks = self.person_token_locks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            locks.entry(resource.as_str().to_owned()).or_default().clone()
        };
        let serialized = lock.lock().await;
        if let Some(cached) = self.tokens.get(resource.as_str(), TokenKind::Person, now())
            && refused.is_none_or(|refused| refused.expose_secret() != cached.token.expose_secret())
        {
            // Another request got one while this one waited.
            return Ok(cached);
        }
        if let Some(refused) = refused {
            self.tokens.forget(resource.as_str(), TokenKind::Person, refused);
        }
        if let Some(shared) = shared {
            self.tokens.insert(resource.as_str(), TokenKind::Person, shared.clone());
            return Ok(shared);
        }
        let metadata = self.person_server_metadata(&person_server).await?;
        let endpoint = &metadata.person_token_endpoint;
        let body = tokens::person_token_request_body(&resource);
        let answer = self.call_person_server(Step::PersonToken, endpoint, body, &agent, false).await?;
        let (token, expires_in) = tokens::token_from_response(Step::PersonToken, endpoint, &answer, "person_token")?;
        let person = tokens::check_person_token(token, expires_in, &resource, &person_server, &self.key, now())?;
        self.tokens.insert(resource.as_str(), TokenKind::Person, person.clone());
        // The requests that waited take it from memory; the file is written after.
        drop(serialized);
        self.share_tokens(&resource, &person_server).await;
        Ok(person)
    }

    /// An auth token for the resource of `url`, in exchange for its `resource_token`
    /// after checking it.
    async fn auth_token(
        &self,
        url: &Url,
        resource_token: &SecretString,
        person_sub: Option<&str>,
    ) -> Result<CachedToken, Error> {
        let resource = ServerId::of(Role::Resource, url, self.allow_http_loopback)?;
        let agent = self.agent_token().await?;
        let person_server = self.person_server_for(&agent, url, "auth-token")?;
        let checked =
            tokens::check_resource_token(resource_token, &resource, &person_server, person_sub, &self.key, now())?;
        let metadata = self.person_server_metadata(&person_server).await?;
        let endpoint = &metadata.auth_token_endpoint;
        let body = tokens::auth_token_request_body(resource_token, &self.capabilities());
        let answer = self.call_person_server(Step::AuthToken, endpoint, body, &agent, true).await?;
        let (token, expires_in) = tokens::token_from_response(Step::AuthToken, endpoint, &answer, "auth_token")?;
        let auth = tokens::check_auth_token(token, expires_in, &resource, &checked, &self.key, now())?;
        self.tokens.insert(resource.as_str(), TokenKind::Auth, auth.clone());
        self.share_tokens(&resource, &person_server).await;
        Ok(auth)
    }

    /// The person server known without any exchange: the configured one, else the `ps` of
    /// the agent token in memory or in its cache file (taken into memory).
    async fn known_person_server(&self) -> Result<Option<ServerId>, Error> {
        if let Some(configured) = &self.person_server {
            return Ok(Some(configured.clone()));
        }
        let person_server =
            |agent: &AgentToken| enroll::person_server_id(agent, self.allow_http_loopback).ok().flatten();
        if let Some(agent) = self.agent.lock().await.as_ref() {
            return Ok(person_server(agent));
        }
        let Some(shared) = &self.shared else { return Ok(None) };
        let cached = shared.agent_token(&self.agent_provider, &self.key).await?;
        let mut current = self.agent.lock().await;
        if current.is_none() {
            *current = cached;
        }
        Ok(current.as_ref().and_then(person_server))
    }

    /// The owner of the tokens of `resource` from `person_server`: this agent.
    fn owner<'a>(&'a self, resource: &'a ServerId, person_server: &'a ServerId) -> Owner<'a> {
        Owner { provider: &self.agent_provider, key: &self.key, resource, person_server }
    }

    /// The fresh, checked person and auth tokens the shared state holds for `resource`
    /// from `person_server`; none without shared state.
    async fn shared_tokens(
        &self,
        resource: &ServerId,
        person_server: &ServerId,
        now: u64,
    ) -> Result<ResourceTokens, Error> {
        let Some(shared) = &self.shared else { return Ok(ResourceTokens::default()) };
        shared.resource_tokens(self.owner(resource, person_server), now).await
    }

    /// Writes the tokens this client holds for `resource` to the shared state, keeping a
    /// token of the other kind that another process left there when this client holds
    /// none. A failure is logged: the token obtained is still used.
    async fn share_tokens(&self, resource: &ServerId, person_server: &ServerId) {
        let Some(shared) = &self.shared else { return };
        let now = now();
        let held = ResourceTokens {
            person: self.tokens.get(resource.as_str(), TokenKind::Person, now),
            auth: self.tokens.get(resource.as_str(), TokenKind::Auth, now),
        };
        if let Err(error) = shared.keep_resource_tokens(self.owner(resource, person_server), held, now).await {
            tracing::warn!(%error, "the person and auth tokens were not written to the token cache");
        }
    }

    /// POSTs `body` to a person server endpoint, signed with the agent token, follows a
    /// pending answer to its end, and returns the final `200` body.
    ///
    /// The future is boxed: a pending answer may, through an auth token exchange, lead
    /// here again, and a boxed `Send` future ends that cycle of types.
    fn call_person_server<'a>(
        &'a self,
        step: Step,
        endpoint: &'a Url,
        body: String,
        agent: &'a AgentToken,
        prefer_wait: bool,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>> + Send + 'a>> {
        Box::pin(async move {
            let mut request = Request::new(Method::POST, endpoint.clone());
            let headers = request.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
            let mut timeout = self.exchange_timeout;
            if prefer_wait {
                // As in the draft's token request: the agent is willing to wait 45 s for a
                // direct answer before the server defers.
                headers.insert(HeaderName::from_static("prefer"), HeaderValue::from_static("wait=45"));
                timeout = timeout.saturating_add(PREFER_WAIT);
            }
            *request.body_mut() = Some(body.into());
            // The exchange is bounded; the polling of a deferred answer is not.
            *request.timeout_mut() = Some(timeout);
            let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
            sign_request(&self.key, &mut request, &SignatureKey::Jwt(agent.token.clone()), created)?;
            let mut channel = Channel::Direct(&self.http);
            let mut response = channel.send(request, step).await?;
            if response.status() == StatusCode::ACCEPTED {
                let mut rounds = Rounds { used: 0, max: self.max_rounds, url: url_for_errors(endpoint) };
                response = self
                    .follow_pending(&mut channel, endpoint, response, agent.token.clone(), None, None, &mut rounds)
                    .await?;
            }
            if response.status() != StatusCode::OK {
                return Err(error_from_response(step, endpoint, response).await);
            }
            exchange::read_body(step, endpoint, response).await
        })
    }
}

/// The requirement a response carries, if any.
fn requirement_of(url: &Url, response: &Response) -> Result<Option<Requirement>, Error> {
    let Some(value) = response.headers().get(AAUTH_REQUIREMENT) else { return Ok(None) };
    let value = value.to_str().map_err(|_| Error::Requirement {
        url: url_for_errors(url),
        problem: RequirementError::Malformed("not visible ASCII".to_owned()),
    })?;
    Requirement::parse(value).map(Some).map_err(|problem| Error::Requirement { url: url_for_errors(url), problem })
}

/// The error for a terminal poll answer: `403` denied or abandoned, `408` expired, `410`
/// gone, anything else as its status.
async fn terminal_error(location: &Url, response: Response) -> Error {
    let status = response.status().as_u16();
    let problem = Problem::from_body(&exchange::read_error_body(response).await);
    let url = url_for_errors(location);
    match status {
        403 => {
            Error::Denied { url, error: problem.error.unwrap_or_else(|| "denied".to_owned()), detail: problem.detail }
        }
        408 => Error::Expired { url, detail: problem.detail },
        410 => Error::Gone { url, detail: problem.detail },
        _ => Error::HttpStatus { step: Step::Poll, url, status, error: problem.error, detail: problem.detail },
    }
}

/// The error for an unexpected answer: its status, the problem details of its body, or
/// its `Signature-Error` when the body has none.
async fn error_from_response(step: Step, url: &Url, response: Response) -> Error {
    let status = response.status().as_u16();
    let signature_error = response
        .headers()
        .get(SIGNATURE_ERROR)
        .and_then(|value| value.to_str().ok())
        .map(|value| interaction::printable(value, 100));
    let body = exchange::read_error_body(response).await;
    match Error::status(step, url, status, &body) {
        Error::HttpStatus { step, url, status, error: None, detail } => {
            Error::HttpStatus { step, url, status, error: signature_error, detail }
        }
        other => other,
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        let mut builder = http::Response::builder().status(status);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        Response::from(builder.body(body.to_owned()).unwrap())
    }

    #[tokio::test]
    async fn terminal_poll_answers_become_typed_errors() {
        let location = Url::parse("https://ps.example/pending/1").unwrap();
        let problem = |error: &str| format!(r#"{{"error":"{error}","detail":"why"}}"#);
        let denied = terminal_error(&location, response(403, &[], &problem("abandoned"))).await;
        assert!(
            matches!(&denied, Error::Denied { error, detail: Some(detail), .. } if error == "abandoned" && detail == "why"),
            "{denied:?}"
        );
        assert_eq!(denied.to_string(), "https://ps.example/pending/1: the request was refused (abandoned): why");
        let denied = terminal_error(&location, response(403, &[], "")).await;
        assert!(matches!(&denied, Error::Denied { error, detail: None, .. } if error == "denied"), "{denied:?}");
        let expired = terminal_error(&location, response(408, &[], &problem("expired"))).await;
        assert!(matches!(expired, Error::Expired { .. }), "{expired:?}");
        let gone = terminal_error(&location, response(410, &[], &problem("invalid_code"))).await;
        assert_eq!(gone.to_string(), "https://ps.example/pending/1: the pending request is gone: why");
        let failed = terminal_error(&location, response(500, &[], &problem("server_error"))).await;
        assert!(
            matches!(&failed, Error::HttpStatus { step: Step::Poll, status: 500, error: Some(error), .. } if error == "server_error"),
            "{failed:?}"
        );
    }

    #[tokio::test]
    async fn unexpected_answers_carry_their_problem_or_signature_error() {
        let url = Url::parse("https://ps.example/token").unwrap();
        let error = error_from_response(
            Step::AuthToken,
            &url,
            response(401, &[("signature-error", "error=invalid_signature")], "not json"),
        )
        .await;
        assert_eq!(
            error.to_string(),
            "requesting an auth token: https://ps.example/token answered 401 (error=invalid_signature)"
        );
        let error = error_from_response(
            Step::PersonToken,
            &url,
            response(400, &[], r#"{"error":"invalid_request","detail":"no resource"}"#),
        )
        .await;
        assert_eq!(
            error.to_string(),
            "requesting a person token: https://ps.example/token answered 400 (invalid_request): no resource"
        );
    }

    #[tokio::test]
    async fn transport_errors_keep_the_query_out() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = Url::parse("http://user:pw@127.0.0.1:1/items?api_key=secret").unwrap();
        let refused = reqwest::Client::new().get(url.clone()).send().await.unwrap_err();
        assert!(format!("{refused:?}").contains("secret"), "reqwest itself keeps the URL: {refused:?}");
        let error = Error::http(Step::Request, &url, refused);
        let shown = format!("{error} {error:?} {:?}", std::error::Error::source(&error));
        assert!(!shown.contains("secret") && !shown.contains("pw@"), "{shown}");
        assert!(shown.contains("sending the request: request to http://127.0.0.1:1/items failed"), "{shown}");
    }

    #[test]
    fn rounds_are_bounded() {
        let mut rounds = Rounds { used: 0, max: 2, url: "https://r.example/x".to_owned() };
        rounds.take("person-token").unwrap();
        rounds.take("auth-token").unwrap();
        let error = rounds.take("auth-token").unwrap_err();
        assert_eq!(
            error.to_string(),
            "https://r.example/x: more than 2 AAuth requirement rounds for one request (the last asked for `auth-token`)"
        );
    }
}
