//! An AAuth world in one process for tests: an agent provider, a person server and a
//! resource, each an axum server on its own `127.0.0.1:0` port (so each is its own origin
//! and server identifier), as the drafts describe them. Test support, not shipped:
//! `aauth-client`'s tests and the `omniagent` CLI's tests run their flows against it.
//!
//! Every signed request is verified before a handler sees it, independently of the
//! client's signing code (`verify`): the signature base is rebuilt with `httpsig` from
//! what arrived (`Host` for `@authority`), the covered components must include the AAuth
//! profile's, `Content-Digest` must match the body, `created` must be within ±60 s, the
//! key comes from `Signature-Key` (the `hwk` parameters, or the `cnf.jwk` of a JWT whose
//! signature verifies with the harness issuer's key), and a state-changing request (not
//! `GET` or `HEAD`) is refused as a replay when its tuple (key thumbprint, `created`,
//! method, authority, path) was seen before: the replay cache the protocol draft allows
//! ("Freshness and Replay"). Failures answer `401` with `Signature-Error`.
//!
//! The servers issue their tokens themselves ([`issue_jwt`]), signed with keys of their
//! own. Each step is counted ([`Harness::counts`]), so tests can say which requests the
//! flow made; [`Scenario`] changes what the servers do.
//!
//! ```no_run
//! # async fn run() {
//! let harness = aauth_harness::Harness::start().await;
//! harness.set(|scenario| scenario.consent = aauth_harness::Consent::Interaction);
//! // … point an `aauth_client::AAuthClient` at `harness.ap` (with `allow_http_loopback`)
//! // and call `harness.resource.join("/data")`.
//! assert_eq!(harness.count("ap.bootstrap"), 0);
//! # }
//! ```

#![deny(missing_docs)]

mod agent_provider;
mod peers;
mod person_server;
mod resource;
mod responses;
mod tls;
mod verify;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aauth_client::{AgentKey, TokenKind};
use axum::Router;
use axum::routing::{any, get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use url::Url;

pub use crate::peers::PeerWorld;
pub use crate::tls::ca_file;
use crate::verify::ReplayTuple;

/// The signature validity window, the draft's default (seconds).
pub const WINDOW: u64 = 60;

/// How the person server answers an auth token request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Consent {
    /// `200` with the auth token.
    Immediate,
    /// `202 requirement=interaction`, then polling until the person decides at `/interact`.
    Interaction,
    /// `202 requirement=clarification`; the answer approves.
    Clarification,
}

/// What the servers do; tests change it between requests.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// Lifetime of the agent tokens the provider issues, in seconds.
    pub agent_token_lifetime: u64,
    /// Lifetime of the auth tokens the person server issues (`exp` and `expires_in`), in
    /// seconds.
    pub auth_token_lifetime: u64,
    /// The resource delivers `auth-token` as a deferred `202` and holds the call.
    pub deferred_auth: bool,
    /// The resource binds its resource tokens to another key's thumbprint.
    pub foreign_agent_jkt: bool,
    /// The resource asks for a new auth token even when it gets one (endless step-up).
    pub endless_step_up: bool,
    /// How the person server answers auth token requests.
    pub consent: Consent,
    /// How many of the next person server polls answer `429 slow_down`.
    pub slow_downs: usize,
    /// The next requests to `/data` are answered `401` with `Signature-Error:
    /// error=<code>`, one per entry, in order (`revoked_jwt`, `clock_skew`, …). With
    /// `clock_skew` the answer's `Date` is 30 s behind the harness's clock.
    pub resource_signature_errors: VecDeque<&'static str>,
    /// The next auth token requests are refused with these problem details, one per
    /// entry, in order: `expired_presented_token` and the others as `400`,
    /// `as_unreachable` as `502` with `Retry-After: 0`.
    pub auth_token_errors: VecDeque<&'static str>,
    /// Polls of pending auth token requests answer `403 revoked`.
    pub poll_revoked: bool,
    /// The `login_hint` the resource puts in its resource tokens.
    pub resource_login_hint: Option<String>,
    /// A call with an agent token makes the resource ask the person to act at its own
    /// `/interact` (`202 requirement=interaction`); its pending URL answers `200` once the
    /// person approved there, or [`Harness::complete_resource_interactions`] completed it
    /// out of band.
    pub resource_interaction: bool,
    /// The person server's `interaction_endpoint` answers `424 interaction_unavailable`
    /// rather than relaying.
    pub interaction_unavailable: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            agent_token_lifetime: 3600,
            auth_token_lifetime: 3600,
            deferred_auth: false,
            foreign_agent_jkt: false,
            endless_step_up: false,
            consent: Consent::Immediate,
            slow_downs: 0,
            resource_signature_errors: VecDeque::new(),
            auth_token_errors: VecDeque::new(),
            poll_revoked: false,
            resource_login_hint: None,
            resource_interaction: false,
            interaction_unavailable: false,
        }
    }
}

/// A person's decision at the interaction page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    Waiting,
    Approved,
    Denied,
    Expired,
}

/// A pending request at the person server: an auth token waiting for consent.
pub(crate) struct PsPending {
    /// The thumbprint of the agent that asked; only it may poll.
    pub(crate) owner_jkt: String,
    pub(crate) code: String,
    pub(crate) decision: Decision,
    pub(crate) clarification: bool,
    pub(crate) auth_token: String,
    /// The auth token's lifetime, its `expires_in`.
    pub(crate) expires_in: u64,
    pub(crate) done: bool,
}

/// A call the resource holds until it sees an auth token (deferred delivery).
pub(crate) struct HeldCall {
    pub(crate) owner_jkt: String,
    pub(crate) resource_token: String,
    pub(crate) method: String,
    pub(crate) body: String,
    pub(crate) result: Option<String>,
}

/// A call the resource holds until the person acts at its `/interact`.
pub(crate) struct ResourceInteraction {
    pub(crate) owner_jkt: String,
    pub(crate) code: String,
    pub(crate) method: String,
    pub(crate) done: bool,
}

/// The servers' shared state.
pub(crate) struct HarnessState {
    pub(crate) ap_id: String,
    pub(crate) ps_id: String,
    pub(crate) resource_id: String,
    pub(crate) ap_key: AgentKey,
    pub(crate) ps_key: AgentKey,
    pub(crate) resource_key: AgentKey,
    pub(crate) scenario: Mutex<Scenario>,
    counts: Mutex<BTreeMap<String, usize>>,
    /// The replay cache: the tuples of the state-changing requests verified so far.
    pub(crate) seen: Mutex<HashSet<ReplayTuple>>,
    /// Enrolled agents: key thumbprint to agent identifier.
    pub(crate) agents: Mutex<HashMap<String, String>>,
    pub(crate) ps_pending: Mutex<HashMap<String, PsPending>>,
    pub(crate) held: Mutex<HashMap<String, HeldCall>>,
    pub(crate) interactions: Mutex<HashMap<String, ResourceInteraction>>,
    /// The bodies of the interactions relayed to the person server, in order.
    pub(crate) relayed: Mutex<Vec<Value>>,
    issued: Mutex<Vec<String>>,
    pub(crate) clarification_answers: Mutex<Vec<String>>,
    /// The bodies of the person and auth token requests and updated requests, in order
    /// (`person`, `auth`, `updated`).
    pub(crate) ps_requests: Mutex<Vec<(&'static str, Value)>>,
    next_id: AtomicUsize,
    /// The number of polls the person server has answered, for tests to wait on.
    pub(crate) ps_polls: tokio::sync::watch::Sender<usize>,
}

impl HarnessState {
    pub(crate) fn count(&self, step: &str) {
        *self.counts.lock().unwrap().entry(step.to_owned()).or_default() += 1;
    }

    pub(crate) fn next_id(&self) -> usize {
        self.next_id.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Issues a token with `key` and remembers it (tests check that none leaks).
    pub(crate) fn issue(&self, key: &AgentKey, kid: &str, kind: TokenKind, claims: Value) -> String {
        let token = issue_jwt(key, kid, kind, &claims);
        self.issued.lock().unwrap().push(token.clone());
        token
    }

    pub(crate) fn scenario(&self) -> Scenario {
        self.scenario.lock().unwrap().clone()
    }
}

/// A compact JWT of `kind` carrying `claims`, signed by `key` as an AAuth server signs
/// its tokens: header `{"alg":"Ed25519","typ":…,"kid":…}`, Ed25519 over
/// `base64url(header).base64url(claims)`.
pub fn issue_jwt(key: &AgentKey, kid: &str, kind: TokenKind, claims: &Value) -> String {
    let header = json!({"alg": "Ed25519", "typ": kind.typ(), "kid": kid});
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = key.sign(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

/// The three servers, shut down on drop.
pub struct Harness {
    /// The agent provider's server identifier (`http://127.0.0.1:port/`).
    pub ap: Url,
    /// The person server's server identifier.
    pub ps: Url,
    /// The resource's server identifier; its API is `/data` (any method).
    pub resource: Url,
    state: Arc<HarnessState>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("ap", &self.ap.as_str())
            .field("ps", &self.ps.as_str())
            .field("resource", &self.resource.as_str())
            .finish_non_exhaustive()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl Harness {
    /// The three servers over plain http.
    pub async fn start() -> Harness {
        Harness::start_with(false).await
    }

    /// The three servers over https, with the certificate of `fixtures/tls/server.pem`
    /// (for IP 127.0.0.1, issued by the test CA of [`ca_file`]).
    pub async fn start_tls() -> Harness {
        Harness::start_with(true).await
    }

    async fn start_with(tls: bool) -> Harness {
        // The plain reqwest clients of the tests need the process's crypto provider, which
        // `AAuthClient` would otherwise install.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let ap_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let ps_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let resource_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let scheme = if tls { "https" } else { "http" };
        let origin = |listener: &tokio::net::TcpListener| format!("{scheme}://{}", listener.local_addr().unwrap());
        let state = Arc::new(HarnessState {
            ap_id: origin(&ap_listener),
            ps_id: origin(&ps_listener),
            resource_id: origin(&resource_listener),
            ap_key: AgentKey::generate(),
            ps_key: AgentKey::generate(),
            resource_key: AgentKey::generate(),
            scenario: Mutex::new(Scenario::default()),
            counts: Mutex::new(BTreeMap::new()),
            seen: Mutex::new(HashSet::new()),
            agents: Mutex::new(HashMap::new()),
            ps_pending: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
            interactions: Mutex::new(HashMap::new()),
            relayed: Mutex::new(Vec::new()),
            issued: Mutex::new(Vec::new()),
            clarification_answers: Mutex::new(Vec::new()),
            ps_requests: Mutex::new(Vec::new()),
            next_id: AtomicUsize::new(0),
            ps_polls: tokio::sync::watch::Sender::new(0),
        });
        let verify = axum::middleware::from_fn_with_state(state.clone(), verify::verify_signature);
        let ap = Router::new()
            .route("/.well-known/aauth-agent.json", get(agent_provider::metadata))
            .route("/bootstrap", post(agent_provider::bootstrap))
            .route("/refresh", post(agent_provider::refresh))
            .layer(verify.clone())
            .with_state(state.clone());
        let ps = Router::new()
            .route("/.well-known/aauth-person.json", get(person_server::metadata))
            .route("/person", post(person_server::person_token))
            .route("/token", post(person_server::auth_token))
            .route(
                "/pending/{id}",
                get(person_server::poll).post(person_server::clarification_response).delete(person_server::withdraw),
            )
            .route("/interact", get(person_server::interaction_page).post(person_server::interaction_decision))
            .route("/interaction", post(person_server::relay))
            .layer(verify.clone())
            .with_state(state.clone());
        let resource = Router::new()
            .route("/data", any(resource::data))
            .route("/pending/{id}", get(resource::poll))
            .route("/interact", get(resource::interaction_page).post(resource::interaction_decision))
            .layer(verify)
            .with_state(state.clone());
        let tasks = if tls {
            let acceptor = tls::acceptor();
            let tls = |tcp| tls::TlsListener { tcp, acceptor: acceptor.clone() };
            vec![serve(tls(ap_listener), ap), serve(tls(ps_listener), ps), serve(tls(resource_listener), resource)]
        } else {
            vec![serve(ap_listener, ap), serve(ps_listener, ps), serve(resource_listener, resource)]
        };
        Harness {
            ap: Url::parse(&state.ap_id).unwrap(),
            ps: Url::parse(&state.ps_id).unwrap(),
            resource: Url::parse(&state.resource_id).unwrap(),
            state,
            tasks,
        }
    }

    /// How often each step happened.
    pub fn counts(&self) -> BTreeMap<String, usize> {
        self.state.counts.lock().unwrap().clone()
    }

    /// How often `step` happened.
    pub fn count(&self, step: &str) -> usize {
        self.counts().get(step).copied().unwrap_or(0)
    }

    /// Changes the scenario.
    pub fn set(&self, change: impl FnOnce(&mut Scenario)) {
        change(&mut self.state.scenario.lock().unwrap());
    }

    /// Every token the servers issued.
    pub fn issued_tokens(&self) -> Vec<String> {
        self.state.issued.lock().unwrap().clone()
    }

    /// The clarification answers the person server received.
    pub fn clarification_answers(&self) -> Vec<String> {
        self.state.clarification_answers.lock().unwrap().clone()
    }

    /// The bodies of the person token (`person`) and auth token (`auth`) requests, and of
    /// the updated requests (`updated`), the person server received, in order; the tokens
    /// in them are the issued ones.
    pub fn ps_requests(&self) -> Vec<(&'static str, Value)> {
        self.state.ps_requests.lock().unwrap().clone()
    }

    /// The bodies of the interactions relayed to the person server's
    /// `interaction_endpoint`, in order.
    pub fn relayed_interactions(&self) -> Vec<Value> {
        self.state.relayed.lock().unwrap().clone()
    }

    /// Completes every interaction the resource waits for, without the person visiting
    /// its page (completion out of band, as a person server with its own channel may do).
    pub fn complete_resource_interactions(&self) {
        for interaction in self.state.interactions.lock().unwrap().values_mut() {
            interaction.done = true;
        }
    }

    /// An agent token for `key`, as the agent provider would issue it.
    pub fn agent_token_for(&self, key: &AgentKey) -> String {
        let now = now();
        self.state.issue(
            &self.state.ap_key,
            "ap-1",
            TokenKind::Agent,
            json!({"iss": self.state.ap_id, "dwk": "aauth-agent.json", "sub": "aauth:crafted@127.0.0.1",
                "jti": "crafted", "iat": now, "exp": now + 3600, "cnf": {"jwk": key.public_jwk()},
                "ps": self.state.ps_id}),
        )
    }

    /// Waits until the person server has answered at least `polls` polls.
    pub async fn wait_for_ps_polls(&self, polls: usize) {
        let mut receiver = self.state.ps_polls.subscribe();
        receiver.wait_for(|answered| *answered >= polls).await.unwrap();
    }
}

fn serve<L: axum::serve::Listener>(listener: L, router: Router) -> tokio::task::JoinHandle<()>
where
    L::Addr: std::fmt::Debug,
{
    tokio::spawn(async move {
        axum::serve(listener, router).await.unwrap();
    })
}

/// The current time, Unix seconds.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// The RFC 7638 thumbprint of an Ed25519 public key `x`.
pub fn thumbprint(x: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#)))
}
