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
//! - `202 interaction`, `approval`, `clarification`: tell the person (an interaction a
//!   resource asks for through the person server's `interaction_endpoint` first, else
//!   through `on_interaction`), answer through `on_clarification` (or
//!   `on_clarification_answer`, which may send an updated request), and poll `Location`
//!   until a final answer.
//!
//! Polling honours `Retry-After` (5 s without it, an hour at most) and slows down by 5 s
//! on each `429`. Polling and the caller's requests have no timeout of the client's: the
//! caller bounds the request, and dropping its future stops the polling. The client's own
//! exchanges (metadata, enrollment, token requests) are bounded: see
//! [`exchange_timeout`](AAuthClientBuilder::exchange_timeout).
//!
//! Tokens are cached per resource until 5 minutes before they expire (protocol -11). With a token cache folder
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
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use reqwest::{Request, Response};
use reqwest_middleware::{ClientWithMiddleware, Middleware, Next};
#[cfg(feature = "redis")]
use skill_core::SecretString;
use url::Url;

use crate::enroll::{self, AgentToken, Endpoints, Enrollment};
use crate::metadata::{self, PersonServerMetadata, Role, ServerId};
use crate::shared_state::{Files, SharedState};
use crate::shared_tokens;
use crate::tokens::{RequestHints, TokenCache};
use crate::{AgentKey, Error, exchange};

mod clarification;
mod missions;
mod relay;
mod requirements;
mod token_requests;

pub use self::clarification::{Clarification, ClarificationAnswer};
pub use self::missions::Mission;

use self::requirements::Channel;

/// How many requirement rounds one request may take by default: the whole three-party
/// dance needs two (person token, auth token), a step-up a third.
const DEFAULT_MAX_ROUNDS: usize = 5;

type InteractionCallback = Arc<dyn Fn(&Url, &str) + Send + Sync>;
type ClarificationCallback = Arc<dyn Fn(&Clarification<'_>) -> ClarificationAnswer + Send + Sync>;

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
    hints: RequestHints,
    enrollment: Endpoints,
    self_hosted: Option<String>,
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
            hints: RequestHints::default(),
            enrollment: Endpoints::default(),
            self_hosted: None,
        }
    }

    /// Enrolls now: a new agent token from the agent provider's issuance URL, in a request
    /// signed with the bare key (`hwk`), or self-issued by a
    /// [`self_hosted`](AAuthClientBuilder::self_hosted) agent; the token is cached.
    pub async fn enroll(&self) -> Result<AgentIdentity, Error> {
        let current = self.inner.agent.lock().await;
        let token = self.inner.obtain_agent_token(Enrollment::Bootstrap, now()).await?;
        let token = self.inner.keep_agent_token(current, token).await?;
        Ok(self.inner.identity(&token))
    }

    /// The agent's identity: the cached agent token (in memory, else in the cache file),
    /// renewed at the refresh URL (under `jkt-jwt`) when it is about to expire, or a new
    /// enrollment when there is none or it has expired.
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

    /// What a [`self_hosted`](AAuthClientBuilder::self_hosted) agent publishes on its own
    /// domain (its agent provider metadata and JWKS), for the parties that verify its
    /// agent tokens; `None` for an agent with an agent provider.
    pub fn self_hosted_documents(&self) -> Option<crate::SelfHostedDocuments> {
        let inner = &self.inner;
        inner.self_hosted.as_ref().map(|_| crate::self_hosted::documents(&inner.agent_provider, &inner.key))
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
    /// fresh (until 5 minutes before it expires) and after the checks a new token passes
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
    pub fn on_clarification(self, callback: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.on_clarification_answer(move |asked| match callback(asked.question) {
            Some(answer) => ClarificationAnswer::Respond(answer),
            None => ClarificationAnswer::Withdraw,
        })
    }

    /// Called with a clarification question, as [`on_clarification`](Self::on_clarification)
    /// is, and answers it with a [`ClarificationAnswer`]: a text, an updated request (a
    /// new request to the resource, whose resource token replaces the pending one at the
    /// person server, with the `presented_token` it was issued against: protocol -11,
    /// "Updated Request"), or withdrawal. Replaces `on_clarification`, if it was called.
    pub fn on_clarification_answer(
        mut self,
        callback: impl Fn(&Clarification<'_>) -> ClarificationAnswer + Send + Sync + 'static,
    ) -> Self {
        self.on_clarification = Some(Arc::new(callback));
        self
    }

    /// How many requirement rounds (tokens obtained, clarifications answered) one request
    /// may take before it fails with [`Error::TooManyRounds`]; 5 by default, at least 1.
    pub fn max_requirement_rounds(mut self, rounds: usize) -> Self {
        self.max_requirement_rounds = rounds.max(1);
        self
    }

    /// The agent provider's issuance URL, where an agent gets its first agent token
    /// (bootstrap -02: each provider defines its own). Without it the provider's metadata
    /// must list `bootstrap_endpoint`, as the note's first revision did.
    pub fn enroll_url(mut self, url: Url) -> Self {
        self.enrollment.enroll = Some(url);
        self
    }

    /// The agent provider's refresh URL, where an enrolled agent renews its agent token.
    /// Without it (and without a `refresh_endpoint` in the provider's metadata) the agent
    /// enrolls again at the issuance URL.
    pub fn refresh_url(mut self, url: Url) -> Self {
        self.enrollment.refresh = Some(url);
        self
    }

    /// Makes the agent its own agent provider (bootstrap -02, "Self-Hosted Agents"): the
    /// agent provider given to [`AAuthClient::builder`] is the agent's own server
    /// identifier, a domain its person controls, where the person publishes
    /// [`AAuthClient::self_hosted_documents`] (the metadata at
    /// `/.well-known/aauth-agent.json`, the JWKS at `/jwks.json`). The agent then issues
    /// its own agent tokens, `aauth:{local}@{host}`, signed with its key, an hour long,
    /// with the [`person_server`](Self::person_server) as `ps`; nothing is enrolled or
    /// refreshed. `local` is 1 to 255 of `A-Z`, `a-z`, `0-9`, `-`, `_` and `.`.
    pub fn self_hosted(mut self, local: String) -> Self {
        self.self_hosted = Some(local);
        self
    }

    /// `login_hint` in the person and auth token requests (and mission proposals): who the
    /// person is, as the person server knows them. A resource token's own `login_hint`
    /// goes to the person server instead, unchanged.
    pub fn login_hint(mut self, login_hint: String) -> Self {
        self.hints.login_hint = Some(login_hint);
        self
    }

    /// `tenant` in the person and auth token requests (and mission proposals): the
    /// person server's tenant of the person.
    pub fn tenant(mut self, tenant: String) -> Self {
        self.hints.tenant = Some(tenant);
        self
    }

    /// `domain_hint` in the person and auth token requests: the domain of the person's
    /// organization.
    pub fn domain_hint(mut self, domain_hint: String) -> Self {
        self.hints.domain_hint = Some(domain_hint);
        self
    }

    /// `justification` in the person and auth token requests: why the agent asks, shown
    /// to the person.
    pub fn justification(mut self, justification: String) -> Self {
        self.hints.justification = Some(justification);
        self
    }

    /// The mission the agent works under: its `mission_s256` goes in every person token
    /// request, and person tokens are cached per mission.
    pub fn mission(mut self, mission_s256: String) -> Self {
        self.hints.mission_s256 = Some(mission_s256);
        self
    }

    /// Checks the configuration and builds the client; nothing is fetched yet.
    pub fn build(self) -> Result<AAuthClient, Error> {
        let agent_provider = ServerId::parse(Role::AgentProvider, &self.agent_provider, self.allow_http_loopback)?;
        if let Some(local) = &self.self_hosted {
            crate::self_hosted::check_local(local)?;
        }
        let check = |field: &'static str, url: &Option<Url>| {
            url.as_ref()
                .map(|url| metadata::endpoint(Role::AgentProvider, field, url.as_str(), self.allow_http_loopback))
                .transpose()
        };
        let enrollment = Endpoints {
            enroll: check("enroll_url", &self.enrollment.enroll)?,
            refresh: check("refresh_url", &self.enrollment.refresh)?,
        };
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
                hints: self.hints,
                enrollment,
                self_hosted: self.self_hosted,
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
            .field("hints", &self.hints)
            .field("enrollment", &self.enrollment)
            .field("self_hosted", &self.self_hosted)
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
    /// The hints and mission of the person and auth token requests.
    hints: RequestHints,
    /// The configured issuance and refresh URLs.
    enrollment: Endpoints,
    /// The local part of a self-hosted agent's identifier: it issues its own agent tokens.
    self_hosted: Option<String>,
    /// The agent token; the lock also makes concurrent requests share one enrollment.
    agent: tokio::sync::Mutex<Option<AgentToken>>,
    tokens: TokenCache,
    person_metadata: tokio::sync::Mutex<HashMap<ServerId, PersonServerMetadata>>,
    /// One lock per resource, so that concurrent requests share one person token request.
    person_token_locks: std::sync::Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}
