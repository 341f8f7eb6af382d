//! An AAuth world in one process: an agent provider, a person server and a resource, each
//! an axum server on its own `127.0.0.1:0` port (so each is its own origin and server
//! identifier), as the drafts describe them.
//!
//! Every signed request is verified before a handler sees it, independently of the
//! client's signing code: the signature base is rebuilt with `httpsig` from what arrived
//! (`Host` for `@authority`), the covered components must include the AAuth profile's,
//! `Content-Digest` must match the body, `created` must be within ±60 s, the key comes
//! from `Signature-Key` (the `hwk` parameters, or the `cnf.jwk` of a JWT whose signature
//! verifies with the harness issuer's key), and a state-changing request (not `GET` or
//! `HEAD`) whose signature was seen before is refused as a replay. Polls are exempt, as the
//! draft scopes replay caches to state-changing requests: with deterministic Ed25519 and a
//! `created` in whole seconds, two polls of the same URL in the same second are identical.
//! Failures answer `401` with `Signature-Error`.
//!
//! Each step is counted (`counts()`), so tests can say which requests the flow made.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use aauth_client::{AgentKey, Claims, Jwt, TokenKind};
use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use axum::routing::{any, get, post};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use httpsig::prelude::message_component::{HttpMessageComponent, HttpMessageComponentId};
use httpsig::prelude::{AlgorithmName, HttpSignatureBase, HttpSignatureHeaders, PublicKey, VerifyingKey as _};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use url::Url;

/// The signature validity window, the draft's default.
pub(crate) const WINDOW: u64 = 60;

/// How the person server answers an auth token request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Consent {
    /// `200` with the auth token.
    Immediate,
    /// `202 requirement=interaction`, then polling until the person decides at `/interact`.
    Interaction,
    /// `202 requirement=clarification`; the answer approves.
    Clarification,
}

/// What the servers do; tests change it between requests.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    /// Lifetime of the agent tokens the provider issues, in seconds.
    pub(crate) agent_token_lifetime: u64,
    /// The resource delivers `auth-token` as a deferred `202` and holds the call.
    pub(crate) deferred_auth: bool,
    /// The resource binds its resource tokens to another key's thumbprint.
    pub(crate) foreign_agent_jkt: bool,
    /// The resource asks for a new auth token even when it gets one (endless step-up).
    pub(crate) endless_step_up: bool,
    /// How the person server answers auth token requests.
    pub(crate) consent: Consent,
    /// How many of the next person server polls answer `429 slow_down`.
    pub(crate) slow_downs: usize,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            agent_token_lifetime: 3600,
            deferred_auth: false,
            foreign_agent_jkt: false,
            endless_step_up: false,
            consent: Consent::Immediate,
            slow_downs: 0,
        }
    }
}

/// A person's decision at the interaction page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Waiting,
    Approved,
    Denied,
    Expired,
}

/// A pending request at the person server: an auth token waiting for consent.
struct PsPending {
    /// The thumbprint of the agent that asked; only it may poll.
    owner_jkt: String,
    code: String,
    decision: Decision,
    clarification: bool,
    auth_token: String,
    done: bool,
}

/// A call the resource holds until it sees an auth token (deferred delivery).
struct HeldCall {
    owner_jkt: String,
    resource_token: String,
    method: String,
    body: String,
    result: Option<String>,
}

/// What the verifier learned from a request's signature.
#[derive(Clone)]
pub(crate) struct Verified {
    /// The RFC 7638 thumbprint of the signing key.
    pub(crate) jkt: String,
    /// The signing key as a public JWK, with `alg`.
    pub(crate) jwk: Value,
    /// The token in `Signature-Key` (`None` for `hwk`).
    pub(crate) token: Option<(TokenKind, Claims)>,
}

/// The servers' shared state.
pub(crate) struct HarnessState {
    pub(crate) ap_id: String,
    pub(crate) ps_id: String,
    pub(crate) resource_id: String,
    ap_key: AgentKey,
    ps_key: AgentKey,
    resource_key: AgentKey,
    pub(crate) scenario: Mutex<Scenario>,
    counts: Mutex<BTreeMap<String, usize>>,
    seen_signatures: Mutex<HashSet<String>>,
    agents: Mutex<HashMap<String, String>>,
    ps_pending: Mutex<HashMap<String, PsPending>>,
    held: Mutex<HashMap<String, HeldCall>>,
    issued: Mutex<Vec<String>>,
    clarification_answers: Mutex<Vec<String>>,
    next_id: AtomicUsize,
    /// The number of polls the person server has answered, for tests to wait on.
    pub(crate) ps_polls: tokio::sync::watch::Sender<usize>,
}

impl HarnessState {
    fn count(&self, step: &str) {
        *self.counts.lock().unwrap().entry(step.to_owned()).or_default() += 1;
    }

    fn next_id(&self) -> usize {
        self.next_id.fetch_add(1, Ordering::SeqCst) + 1
    }

    fn issue(&self, key: &AgentKey, kid: &str, kind: TokenKind, claims: Value) -> String {
        let token = Jwt::encode(key, kid, kind, &claims).unwrap();
        self.issued.lock().unwrap().push(token.clone());
        token
    }

    fn scenario(&self) -> Scenario {
        self.scenario.lock().unwrap().clone()
    }
}

/// The three servers, shut down on drop.
pub(crate) struct Harness {
    pub(crate) ap: Url,
    pub(crate) ps: Url,
    pub(crate) resource: Url,
    pub(crate) state: Arc<HarnessState>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
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
    pub(crate) async fn start() -> Harness {
        Harness::start_with(false).await
    }

    /// The three servers over https, with the certificate of `tests/fixtures/tls`
    /// (`server.pem`, for IP 127.0.0.1, issued by the test CA `ca.pem`).
    pub(crate) async fn start_tls() -> Harness {
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
            seen_signatures: Mutex::new(HashSet::new()),
            agents: Mutex::new(HashMap::new()),
            ps_pending: Mutex::new(HashMap::new()),
            held: Mutex::new(HashMap::new()),
            issued: Mutex::new(Vec::new()),
            clarification_answers: Mutex::new(Vec::new()),
            next_id: AtomicUsize::new(0),
            ps_polls: tokio::sync::watch::Sender::new(0),
        });
        let verify = axum::middleware::from_fn_with_state(state.clone(), verify_signature);
        let ap = Router::new()
            .route("/.well-known/aauth-agent.json", get(ap_metadata))
            .route("/bootstrap", post(ap_bootstrap))
            .route("/refresh", post(ap_refresh))
            .layer(verify.clone())
            .with_state(state.clone());
        let ps = Router::new()
            .route("/.well-known/aauth-person.json", get(ps_metadata))
            .route("/person", post(ps_person_token))
            .route("/token", post(ps_auth_token))
            .route("/pending/{id}", get(ps_poll).post(ps_clarification_response).delete(ps_withdraw))
            .route("/interact", get(ps_interaction_page).post(ps_interaction_decision))
            .layer(verify.clone())
            .with_state(state.clone());
        let resource = Router::new()
            .route("/data", any(resource_data))
            .route("/pending/{id}", get(resource_poll))
            .layer(verify)
            .with_state(state.clone());
        let tasks = if tls {
            let acceptor = tls_acceptor();
            let tls = |tcp| TlsListener { tcp, acceptor: acceptor.clone() };
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
    pub(crate) fn counts(&self) -> BTreeMap<String, usize> {
        self.state.counts.lock().unwrap().clone()
    }

    /// How often `step` happened.
    pub(crate) fn count(&self, step: &str) -> usize {
        self.counts().get(step).copied().unwrap_or(0)
    }

    /// Changes the scenario.
    pub(crate) fn set(&self, change: impl FnOnce(&mut Scenario)) {
        change(&mut self.state.scenario.lock().unwrap());
    }

    /// Every token the servers issued.
    pub(crate) fn issued_tokens(&self) -> Vec<String> {
        self.state.issued.lock().unwrap().clone()
    }

    /// The clarification answers the person server received.
    pub(crate) fn clarification_answers(&self) -> Vec<String> {
        self.state.clarification_answers.lock().unwrap().clone()
    }

    /// An agent token for `key`, as the agent provider would issue it.
    pub(crate) fn agent_token_for(&self, key: &AgentKey) -> String {
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
    pub(crate) async fn wait_for_ps_polls(&self, polls: usize) {
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

/// The directory of the test certificates.
pub(crate) fn tls_fixtures() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls")
}

fn tls_acceptor() -> tokio_rustls::TlsAcceptor {
    use rustls::pki_types::pem::PemObject as _;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certificates = vec![CertificateDer::from_pem_file(tls_fixtures().join("server.pem")).unwrap()];
    let key = PrivateKeyDer::from_pem_file(tls_fixtures().join("server.key")).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certificates, key)
        .unwrap();
    tokio_rustls::TlsAcceptor::from(Arc::new(config))
}

/// TCP plus a TLS handshake; connections whose handshake fails (a client that does not
/// trust the certificate) are dropped.
struct TlsListener {
    tcp: tokio::net::TcpListener,
    acceptor: tokio_rustls::TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = tokio_rustls::server::TlsStream<tokio::net::TcpStream>;
    type Addr = std::net::SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((stream, address)) = self.tcp.accept().await else { continue };
            if let Ok(stream) = self.acceptor.accept(stream).await {
                return (stream, address);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

pub(crate) fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// The RFC 7638 thumbprint of an Ed25519 public key `x`.
pub(crate) fn thumbprint(x: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(format!(r#"{{"crv":"Ed25519","kty":"OKP","x":"{x}"}}"#)))
}

// ---------------------------------------------------------------------------------------
// Signature verification

fn signature_error(state: &HarnessState, error: &str, reason: &str) -> Response {
    state.count(&format!("rejected:{reason}"));
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header("signature-error", format!("error={error}"))
        .header(header::CONTENT_TYPE, "application/problem+json")
        .body(Body::from(json!({"error": error, "detail": reason}).to_string()))
        .unwrap()
}

async fn verify_signature(State(state): State<Arc<HarnessState>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    // Metadata and the person's own browser are not agent requests.
    if path.starts_with("/.well-known/") || path == "/interact" {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    match verify(&state, &parts.method, &parts.headers, &path, &body) {
        Ok(verified) => {
            parts.extensions.insert(verified);
            next.run(Request::from_parts(parts, Body::from(body))).await
        }
        Err((error, reason)) => signature_error(&state, error, reason),
    }
}

fn verify(
    state: &HarnessState,
    method: &Method,
    headers: &HeaderMap,
    path: &str,
    body: &[u8],
) -> Result<Verified, (&'static str, &'static str)> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let (Some(signature), Some(input), Some(signature_key)) =
        (header("signature"), header("signature-input"), header("signature-key"))
    else {
        return Err(("invalid_request", "missing signature headers"));
    };
    let parsed = HttpSignatureHeaders::try_parse(signature, input).map_err(|_| ("invalid_request", "unparsable"))?;
    let signature_headers = parsed.get("sig").ok_or(("invalid_request", "no sig label"))?;
    let params = signature_headers.signature_params();

    // The AAuth profile's covered components.
    let covered: Vec<String> = params.covered_components.iter().map(ToString::to_string).collect();
    let mut required = vec!["\"@method\"", "\"@authority\"", "\"@path\"", "\"signature-key\""];
    if !body.is_empty() {
        required.extend(["\"content-type\"", "\"content-digest\""]);
    }
    if headers.contains_key(header::AUTHORIZATION) {
        required.push("\"authorization\"");
    }
    if !required.iter().all(|name| covered.iter().any(|covered| covered == name)) {
        return Err(("invalid_input", "required components not covered"));
    }
    if params.alg.is_some() || params.keyid.is_some() {
        return Err(("invalid_input", "alg or keyid present"));
    }

    // Freshness.
    let created = params.created.ok_or(("invalid_signature", "no created"))?;
    if created.abs_diff(now()) > WINDOW {
        return Err(("invalid_signature", "stale"));
    }

    // Content-Digest.
    if !body.is_empty() {
        let digest = header("content-digest").ok_or(("invalid_request", "no content-digest"))?;
        let digest: sfv::Dictionary =
            sfv::Parser::new(digest).parse().map_err(|_| ("invalid_request", "bad content-digest"))?;
        let Some(sfv::ListEntry::Item(item)) = digest.get("sha-256") else {
            return Err(("invalid_request", "no sha-256 digest"));
        };
        if item.bare_item.as_byte_sequence() != Some(Sha256::digest(body).as_slice()) {
            return Err(("invalid_request", "content-digest mismatch"));
        }
    }

    // The key, from Signature-Key.
    let dictionary: sfv::Dictionary =
        sfv::Parser::new(signature_key).parse().map_err(|_| ("invalid_key", "bad signature-key"))?;
    let Some(sfv::ListEntry::Item(item)) = dictionary.get("sig") else {
        return Err(("invalid_key", "no sig member in signature-key"));
    };
    let param = |name: &str| item.params.get(name).and_then(|value| value.as_string()).map(|value| value.as_str());
    let (x, token) = match item.bare_item.as_token().map(|token| token.as_str()) {
        Some("hwk") => {
            if param("kty") != Some("OKP") || param("crv") != Some("Ed25519") || param("alg") != Some("Ed25519") {
                return Err(("invalid_key", "hwk is not an Ed25519 key with alg"));
            }
            if item.params.contains_key("kid") {
                return Err(("invalid_key", "hwk with kid"));
            }
            (param("x").ok_or(("invalid_key", "hwk without x"))?.to_owned(), None)
        }
        Some("jwt") => {
            let jwt = param("jwt").ok_or(("invalid_key", "jwt scheme without jwt"))?;
            let (kind, claims) = verify_jwt(state, jwt)?;
            let x = claims.cnf.as_ref().and_then(|cnf| cnf.jwk["x"].as_str()).ok_or(("invalid_jwt", "no cnf.jwk"))?;
            (x.to_owned(), Some((kind, claims)))
        }
        _ => return Err(("unsupported_scheme", "unsupported scheme")),
    };
    let x_bytes = URL_SAFE_NO_PAD.decode(&x).map_err(|_| ("invalid_key", "x is not base64url"))?;
    let public_key =
        PublicKey::from_bytes(&AlgorithmName::Ed25519, &x_bytes).map_err(|_| ("invalid_key", "bad key"))?;

    // The signature base, rebuilt from what arrived.
    let mut lines = Vec::new();
    for id in &params.covered_components {
        let name = id.to_string();
        let value = match name.as_str() {
            "\"@method\"" => method.as_str().to_owned(),
            "\"@authority\"" => header("host").ok_or(("invalid_request", "no host"))?.to_owned(),
            "\"@path\"" => path.to_owned(),
            field if !field.starts_with("\"@") => {
                let field = field.trim_matches('"');
                let values: Vec<&str> = headers.get_all(field).iter().filter_map(|value| value.to_str().ok()).collect();
                if values.is_empty() {
                    return Err(("invalid_input", "covered header missing"));
                }
                values.join(", ")
            }
            _ => return Err(("invalid_input", "unsupported derived component")),
        };
        let id = HttpMessageComponentId::try_from(name.as_str()).unwrap();
        let line =
            HttpMessageComponent::try_from((&id, &[value][..])).map_err(|_| ("invalid_input", "bad component"))?;
        lines.push(line);
    }
    let base = HttpSignatureBase::try_new(&lines, params).map_err(|_| ("invalid_input", "bad base"))?;
    base.verify_signature_headers(&public_key, signature_headers)
        .map_err(|_| ("invalid_signature", "bad signature"))?;

    // Replay: a state-changing request with a signature seen before.
    if !matches!(*method, Method::GET | Method::HEAD)
        && !state.seen_signatures.lock().unwrap().insert(signature.to_owned())
    {
        return Err(("invalid_signature", "replay"));
    }
    state.count("verified");
    Ok(Verified { jkt: thumbprint(&x), jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": x, "alg": "Ed25519"}), token })
}

/// Verifies a JWT the harness issued: signature with the issuer's key, `typ`, expiry.
fn verify_jwt(state: &HarnessState, token: &str) -> Result<(TokenKind, Claims), (&'static str, &'static str)> {
    let (signing_input, signature) = token.rsplit_once('.').ok_or(("invalid_jwt", "not a JWT"))?;
    let header = signing_input.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).map_err(|_| ("invalid_jwt", "header"))?)
        .map_err(|_| ("invalid_jwt", "header"))?;
    let kind = header["typ"].as_str().and_then(TokenKind::from_typ).ok_or(("invalid_jwt", "unknown typ"))?;
    let issuer = match kind {
        TokenKind::Agent => &state.ap_key,
        TokenKind::Person | TokenKind::Auth => &state.ps_key,
        _ => return Err(("invalid_jwt", "a resource token cannot sign")),
    };
    let issuer_x = URL_SAFE_NO_PAD.decode(issuer.public_jwk()["x"].as_str().unwrap()).unwrap();
    let issuer_key = PublicKey::from_bytes(&AlgorithmName::Ed25519, &issuer_x).unwrap();
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| ("invalid_jwt", "signature"))?;
    issuer_key.verify(signing_input.as_bytes(), &signature).map_err(|_| ("invalid_jwt", "jwt signature"))?;
    let jwt = Jwt::decode(token, kind).map_err(|_| ("invalid_jwt", "claims"))?;
    if jwt.claims.exp.is_none_or(|exp| exp <= now()) {
        return Err(("expired_jwt", "expired jwt"));
    }
    Ok((kind, jwt.claims))
}

// ---------------------------------------------------------------------------------------
// Responses

fn json_response(status: StatusCode, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

fn problem(status: StatusCode, error: &str, detail: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/problem+json")
        .body(Body::from(json!({"error": error, "detail": detail}).to_string()))
        .unwrap()
}

fn requirement(status: StatusCode, value: String) -> Response {
    Response::builder().status(status).header("aauth-requirement", value).body(Body::empty()).unwrap()
}

fn pending(location: &str, requirement: Option<String>, body: Value) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::ACCEPTED)
        .header(header::LOCATION, location)
        .header(header::RETRY_AFTER, "0")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(requirement) = requirement {
        builder = builder.header("aauth-requirement", requirement);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

async fn body_json(request: Request) -> Option<Value> {
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX).await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn token_kind(verified: &Verified) -> Option<TokenKind> {
    verified.token.as_ref().map(|(kind, _)| *kind)
}

// ---------------------------------------------------------------------------------------
// Agent provider

async fn ap_metadata(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ap.metadata");
    let id = &state.ap_id;
    json_response(
        StatusCode::OK,
        json!({"issuer": id, "jwks_uri": format!("{id}/jwks.json"), "bootstrap_endpoint": format!("{id}/bootstrap"),
            "refresh_endpoint": format!("{id}/refresh")}),
    )
}

fn issue_agent_token(state: &HarnessState, verified: &Verified, agent_id: &str, ps: &str) -> Response {
    let now = now();
    let lifetime = state.scenario().agent_token_lifetime;
    let token = state.issue(
        &state.ap_key,
        "ap-1",
        TokenKind::Agent,
        json!({"iss": state.ap_id, "dwk": "aauth-agent.json", "sub": agent_id, "jti": format!("at-{}", state.next_id()),
            "iat": now, "exp": now + lifetime, "cnf": {"jwk": verified.jwk}, "ps": ps}),
    );
    json_response(StatusCode::OK, json!({"agent_token": token, "agent_id": agent_id, "expires_in": lifetime, "ps": ps}))
}

async fn ap_bootstrap(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if verified.token.is_some() {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "bootstrap is signed with hwk");
    }
    state.count("ap.bootstrap");
    let body = body_json(request).await.unwrap_or(json!({}));
    let ps = body["ps"].as_str().unwrap_or(&state.ps_id).to_owned();
    let agent_id = format!("aauth:agent{}@127.0.0.1", state.next_id());
    state.agents.lock().unwrap().insert(verified.jkt.clone(), agent_id.clone());
    issue_agent_token(&state, &verified, &agent_id, &ps)
}

async fn ap_refresh(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if verified.token.is_some() {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "refresh is signed with hwk");
    }
    let Some(agent_id) = state.agents.lock().unwrap().get(&verified.jkt).cloned() else {
        return problem(StatusCode::BAD_REQUEST, "unknown_agent", "this key is not enrolled");
    };
    state.count("ap.refresh");
    let body = body_json(request).await.unwrap_or(json!({}));
    let ps = body["ps"].as_str().unwrap_or(&state.ps_id).to_owned();
    issue_agent_token(&state, &verified, &agent_id, &ps)
}

// ---------------------------------------------------------------------------------------
// Person server

async fn ps_metadata(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ps.metadata");
    let id = &state.ps_id;
    json_response(
        StatusCode::OK,
        json!({"issuer": id, "jwks_uri": format!("{id}/jwks.json"), "person_token_endpoint": format!("{id}/person"),
            "auth_token_endpoint": format!("{id}/token"), "interaction_endpoint": format!("{id}/interaction")}),
    )
}

/// The directed person identifier this PS gives the person behind `agent_sub` at a resource.
fn directed_sub(agent_sub: &str, resource: &str) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(format!("{agent_sub} {resource}"))[..12])
}

async fn ps_person_token(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    let Some((TokenKind::Agent, agent)) = verified.token.clone() else {
        return problem(StatusCode::BAD_REQUEST, "invalid_agent_token", "an agent token is required");
    };
    let Some(resource) = body_json(request).await.and_then(|body| body["resource"].as_str().map(str::to_owned)) else {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "no resource");
    };
    state.count("ps.person_token");
    let now = now();
    let token = state.issue(
        &state.ps_key,
        "ps-1",
        TokenKind::Person,
        json!({"iss": state.ps_id, "dwk": "aauth-person.json", "aud": resource,
            "sub": directed_sub(agent.sub.as_deref().unwrap(), &resource), "cnf": {"jwk": verified.jwk},
            "jti": format!("pt-{}", state.next_id()), "iat": now, "exp": now + 3600}),
    );
    json_response(StatusCode::OK, json!({"person_token": token, "expires_in": 3600}))
}

async fn ps_auth_token(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if token_kind(&verified) != Some(TokenKind::Agent) {
        return problem(StatusCode::BAD_REQUEST, "invalid_agent_token", "an agent token is required");
    }
    let Some(resource_token) =
        body_json(request).await.and_then(|body| body["resource_token"].as_str().map(str::to_owned))
    else {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "no resource_token");
    };
    // The PS verifies the resource token: the resource's signature, audience and binding.
    let (signing_input, signature) = resource_token.rsplit_once('.').unwrap();
    let resource_x = URL_SAFE_NO_PAD.decode(state.resource_key.public_jwk()["x"].as_str().unwrap()).unwrap();
    let resource_key = PublicKey::from_bytes(&AlgorithmName::Ed25519, &resource_x).unwrap();
    if resource_key.verify(signing_input.as_bytes(), &URL_SAFE_NO_PAD.decode(signature).unwrap()).is_err() {
        return problem(StatusCode::BAD_REQUEST, "invalid_resource_token", "bad signature");
    }
    let claims = Jwt::decode(&resource_token, TokenKind::Resource).unwrap().claims;
    if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.ps_id)
        || claims.agent_jkt.as_deref() != Some(&verified.jkt)
    {
        return problem(StatusCode::BAD_REQUEST, "invalid_resource_token", "not for this PS or agent");
    }
    state.count("ps.auth_token");
    let now = now();
    let auth_token = state.issue(
        &state.ps_key,
        "ps-1",
        TokenKind::Auth,
        json!({"iss": state.ps_id, "dwk": "aauth-person.json", "aud": claims.iss, "jti": format!("au-{}", state.next_id()),
            "ps": state.ps_id, "sub": claims.sub, "cnf": {"jwk": verified.jwk}, "scope": claims.scope,
            "iat": now, "exp": now + 3600}),
    );
    let consent = state.scenario().consent;
    if consent == Consent::Immediate {
        return json_response(StatusCode::OK, json!({"auth_token": auth_token, "expires_in": 3600}));
    }
    let id = state.next_id();
    let code = format!("{:04X}-{:04X}", 0xA1B2 + id, 0xC3D4 + id);
    state.ps_pending.lock().unwrap().insert(
        id.to_string(),
        PsPending {
            owner_jkt: verified.jkt.clone(),
            code: code.clone(),
            decision: Decision::Waiting,
            clarification: consent == Consent::Clarification,
            auth_token,
            done: false,
        },
    );
    ps_pending_answer(&state, &id.to_string(), consent == Consent::Clarification, &code)
}

fn ps_pending_answer(state: &HarnessState, id: &str, clarification: bool, code: &str) -> Response {
    let location = format!("/pending/{id}");
    if clarification {
        pending(
            &location,
            Some("requirement=clarification".to_owned()),
            json!({"status": "pending", "clarification": "Why do you need to read my data?", "timeout": 120}),
        )
    } else {
        pending(
            &location,
            Some(format!(r#"requirement=interaction; url="{}/interact"; code="{code}""#, state.ps_id)),
            json!({"status": "pending"}),
        )
    }
}

async fn ps_poll(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    state.count("ps.poll");
    let answer = {
        let mut scenario = state.scenario.lock().unwrap();
        if scenario.slow_downs > 0 {
            scenario.slow_downs -= 1;
            drop(scenario);
            state.count("ps.slow_down");
            Some(problem(StatusCode::TOO_MANY_REQUESTS, "slow_down", "poll less often"))
        } else {
            None
        }
    };
    let response = answer.unwrap_or_else(|| {
        let mut pending = state.ps_pending.lock().unwrap();
        let Some(entry) = pending.get_mut(&id) else {
            return problem(StatusCode::GONE, "invalid_code", "no such pending request");
        };
        if entry.owner_jkt != verified.jkt || token_kind(&verified) != Some(TokenKind::Agent) {
            return problem(StatusCode::FORBIDDEN, "denied", "not the requesting agent");
        }
        if entry.done {
            return problem(StatusCode::GONE, "invalid_code", "already completed");
        }
        match entry.decision {
            Decision::Waiting => ps_pending_answer(&state, &id, entry.clarification, &entry.code),
            Decision::Approved => {
                entry.done = true;
                json_response(StatusCode::OK, json!({"auth_token": entry.auth_token, "expires_in": 3600}))
            }
            Decision::Denied => {
                entry.done = true;
                problem(StatusCode::FORBIDDEN, "denied", "The user declined the request.")
            }
            Decision::Expired => {
                entry.done = true;
                problem(StatusCode::REQUEST_TIMEOUT, "expired", "The request timed out.")
            }
        }
    });
    state.ps_polls.send_modify(|polls| *polls += 1);
    response
}

async fn ps_clarification_response(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let body = body_json(request).await.unwrap_or(Value::Null);
    if body["action"] != "clarification_response" {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "missing or unknown action");
    }
    let Some(answer) = body["clarification_response"].as_str() else {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "no clarification_response");
    };
    let mut pending = state.ps_pending.lock().unwrap();
    let Some(entry) = pending.get_mut(&id).filter(|entry| entry.owner_jkt == verified.jkt) else {
        return problem(StatusCode::GONE, "invalid_code", "no such pending request");
    };
    state.count("ps.clarification_response");
    state.clarification_answers.lock().unwrap().push(answer.to_owned());
    entry.decision = Decision::Approved;
    json_response(StatusCode::ACCEPTED, json!({"status": "pending"}))
}

async fn ps_withdraw(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    let mut pending = state.ps_pending.lock().unwrap();
    if pending.get(&id).is_some_and(|entry| entry.owner_jkt == verified.jkt) {
        pending.remove(&id);
        state.count("ps.withdrawn");
    }
    Response::builder().status(StatusCode::NO_CONTENT).body(Body::empty()).unwrap()
}

async fn ps_interaction_page(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ps.interaction_page");
    Response::builder().status(StatusCode::OK).body(Body::from("enter your code")).unwrap()
}

/// The person's decision, posted from their browser: `code=…&decision=approve|deny|expire`.
async fn ps_interaction_decision(State(state): State<Arc<HarnessState>>, request: Request) -> Response {
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let decision = match form.get("decision").map(String::as_str) {
        Some("approve") => Decision::Approved,
        Some("deny") => Decision::Denied,
        Some("expire") => Decision::Expired,
        _ => return problem(StatusCode::BAD_REQUEST, "invalid_request", "no decision"),
    };
    // Codes compare without hyphens and case-insensitively.
    let normalize = |code: &str| code.replace('-', "").to_ascii_uppercase();
    let code = normalize(form.get("code").map(String::as_str).unwrap_or_default());
    let mut pending = state.ps_pending.lock().unwrap();
    let Some(entry) = pending.values_mut().find(|entry| normalize(&entry.code) == code) else {
        return problem(StatusCode::GONE, "invalid_code", "unknown code");
    };
    state.count("ps.interaction_decision");
    entry.decision = decision;
    Response::builder().status(StatusCode::OK).body(Body::from("thank you")).unwrap()
}

// ---------------------------------------------------------------------------------------
// Resource

fn resource_token(state: &HarnessState, verified: &Verified, person: &Claims) -> String {
    let now = now();
    let agent_jkt =
        if state.scenario().foreign_agent_jkt { AgentKey::generate().thumbprint() } else { verified.jkt.clone() };
    state.issue(
        &state.resource_key,
        "resource-1",
        TokenKind::Resource,
        json!({"iss": state.resource_id, "dwk": "aauth-resource.json", "aud": state.ps_id,
            "jti": format!("rt-{}", state.next_id()), "ps": state.ps_id, "sub": person.sub,
            "presented_jti": person.jti, "agent_jkt": agent_jkt, "iat": now, "exp": now + 300, "scope": "data.read"}),
    )
}

async fn resource_data(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    let method = request.method().to_string();
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let body = String::from_utf8_lossy(&body).into_owned();
    let Some((kind, claims)) = verified.token.clone() else {
        return requirement(StatusCode::UNAUTHORIZED, "requirement=agent-token".to_owned());
    };
    let scenario = state.scenario();
    match kind {
        TokenKind::Agent => {
            state.count("resource.agent_token");
            requirement(StatusCode::UNAUTHORIZED, "requirement=person-token".to_owned())
        }
        TokenKind::Person => {
            if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.resource_id)
                || claims.iss.as_deref() != Some(&state.ps_id)
            {
                return problem(StatusCode::UNAUTHORIZED, "invalid_person_token", "wrong aud or iss");
            }
            state.count("resource.person_token");
            let token = resource_token(&state, &verified, &claims);
            let value = format!(r#"requirement=auth-token; resource-token="{token}""#);
            if scenario.deferred_auth {
                state.count("resource.deferred");
                let id = state.next_id().to_string();
                state.held.lock().unwrap().insert(
                    id.clone(),
                    HeldCall { owner_jkt: verified.jkt.clone(), resource_token: token, method, body, result: None },
                );
                return pending(&format!("/pending/{id}"), Some(value), json!({"status": "pending"}));
            }
            requirement(StatusCode::UNAUTHORIZED, value)
        }
        TokenKind::Auth => {
            if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.resource_id)
                || claims.iss.as_deref() != Some(&state.ps_id)
            {
                return problem(StatusCode::UNAUTHORIZED, "invalid_auth_token", "wrong aud or iss");
            }
            state.count("resource.auth_token");
            if scenario.endless_step_up {
                let token = resource_token(&state, &verified, &claims);
                return requirement(
                    StatusCode::UNAUTHORIZED,
                    format!(r#"requirement=auth-token; resource-token="{token}""#),
                );
            }
            json_response(
                StatusCode::OK,
                json!({"method": method, "body": body, "sub": claims.sub, "scope": claims.scope}),
            )
        }
        _ => problem(StatusCode::UNAUTHORIZED, "invalid_jwt", "unexpected token"),
    }
}

async fn resource_poll(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    state.count("resource.poll");
    let mut held = state.held.lock().unwrap();
    let Some(call) = held.get_mut(&id).filter(|call| call.owner_jkt == verified.jkt) else {
        return problem(StatusCode::GONE, "invalid_code", "no such pending call");
    };
    match verified.token {
        Some((TokenKind::Auth, claims))
            if claims.aud.as_ref().and_then(|aud| aud.single()) == Some(&state.resource_id) =>
        {
            // Executed once; a repeated presentation gets the same result.
            let result = call.result.get_or_insert_with(|| {
                state.count("resource.executed");
                json!({"method": call.method, "body": call.body, "sub": claims.sub, "held": true}).to_string()
            });
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(result.clone()))
                .unwrap()
        }
        _ => pending(
            &format!("/pending/{id}"),
            Some(format!(r#"requirement=auth-token; resource-token="{}""#, call.resource_token)),
            json!({"status": "pending"}),
        ),
    }
}
