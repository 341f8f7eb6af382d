//! What admitting an OAuth access token costs a gateway call, against a static token.
//!
//! - `gateway_http_auth`: one `memory__list` call after another through `serve_http`
//!   (stateless 2026-07-28 era, rmcp's streamable-HTTP client, its response cache off),
//!   whose agent has the memory skill. `static_token` sends a `serve.clients` token
//!   (a SHA-256 digest compared in constant time); `oauth_jwt_eddsa` and `oauth_jwt_es256`
//!   send a JWT access token (Ed25519, P-256) of an in-process issuer, the same one on
//!   every call as MCP clients do: verified at its first call (signature with the JWKS
//!   key, `iss`, `aud`, `exp`, scopes), then admitted by its digest for up to a minute.
//!   Target: the JWT adds at most 50 µs a call.
//!
//! Client and server share one tokio runtime with 2 workers.

use std::collections::BTreeSet;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use criterion::{Criterion, criterion_group, criterion_main};
use ed25519_dalek::Signer as _;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt as _, RoleClient};
use serde_json::json;
use skill_core::{Agent, MemorySkill, SecretString};
use skill_mcp::server::{AgentFactory, AgentFor, Gateway, HttpClient, HttpOptions, OAuthOptions, serve_http};
use tokio::runtime::Runtime;
use tokio_util::sync::CancellationToken;

const STATIC_TOKEN: &str = "a-static-token-of-the-bench";

/// An issuer that serves its metadata, one Ed25519 key (`k1`) and one P-256 key (`ec1`);
/// returns its URL.
async fn issuer(key: &ed25519_dalek::SigningKey, ec: &p256::ecdsa::SigningKey) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://127.0.0.1:{}", listener.local_addr().expect("an address").port());
    let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
    let point = ec.verifying_key().to_sec1_point(false);
    let (x, y) = point.as_bytes()[1..].split_at(32);
    let jwks = json!({"keys": [
        {"kty": "OKP", "crv": "Ed25519", "kid": "k1", "alg": "EdDSA", "use": "sig",
         "x": URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes())},
        {"kty": "EC", "crv": "P-256", "kid": "ec1", "alg": "ES256", "use": "sig",
         "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)},
    ]})
    .to_string();
    let app = axum::Router::new()
        .route("/.well-known/oauth-authorization-server", axum::routing::get(move || async move { metadata }))
        .route("/jwks", axum::routing::get(move || async move { jwks }));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// A token's signed part: header (`alg`, `kid`) and claims.
fn signed_part(alg: &str, kid: &str, issuer: &str, audience: &str) -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("a clock").as_secs();
    let header = json!({"alg": alg, "typ": "at+jwt", "kid": kid});
    let claims = json!({"iss": issuer, "aud": audience, "sub": "bench", "exp": now + 3600, "scope": "mcp:tools"});
    format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()))
}

fn eddsa_token(key: &ed25519_dalek::SigningKey, issuer: &str, audience: &str) -> String {
    let signed = signed_part("EdDSA", "k1", issuer, audience);
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(key.sign(signed.as_bytes()).to_bytes()))
}

fn es256_token(key: &p256::ecdsa::SigningKey, issuer: &str, audience: &str) -> String {
    let signed = signed_part("ES256", "ec1", issuer, audience);
    let signature: p256::ecdsa::Signature = p256::ecdsa::signature::Signer::sign(key, signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

/// The gateway on a loopback port, with a static client and OAuth; returns its `/mcp` URL.
async fn gateway(issuer: String) -> String {
    let factory: AgentFactory = Arc::new(|wanted: AgentFor| {
        Box::pin(async move {
            let agent = Agent::builder().name(wanted.client).with_compiled_skill(MemorySkill::new()).build();
            agent.init_compiled_skills().await;
            Ok(agent)
        })
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let url = format!("http://127.0.0.1:{}/mcp", listener.local_addr().expect("an address").port());
    let options = HttpOptions {
        clients: vec![HttpClient { name: "ci".to_owned(), token: SecretString::from(STATIC_TOKEN.to_owned()) }],
        oauth: Some(OAuthOptions {
            issuer,
            resource: url::Url::parse(&url).expect("a URL"),
            audience: url.clone(),
            scopes: vec!["mcp:tools".to_owned()],
            jwks_uri: None,
            claim: "sub".to_owned(),
            identities: BTreeSet::from(["bench".to_owned()]),
            admit_others: false,
        }),
        ..HttpOptions::default()
    };
    tokio::spawn(serve_http(Gateway::new(factory, None), listener, options, CancellationToken::new()));
    url
}

async fn client(url: &str, token: &str) -> RunningService<RoleClient, ()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().expect("a reqwest client");
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token.to_owned());
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let lifecycle = ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] };
    let client = ().serve_with_lifecycle(transport, lifecycle).await.expect("the gateway answers");
    client.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
    client
}

fn calls(runtime: &Runtime, peer: &Peer<RoleClient>, iters: u64) -> Duration {
    let params = CallToolRequestParams::new("memory__list").with_arguments(serde_json::Map::new());
    runtime.block_on(async {
        let started = Instant::now();
        for _ in 0..iters {
            black_box(peer.call_tool(params.clone()).await.expect("the tool answers"));
        }
        started.elapsed()
    })
}

fn auth(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
    let ec = p256::ecdsa::SigningKey::from_slice(&[9; 32]).expect("a P-256 key");
    let clients = runtime.block_on(async {
        let issuer = issuer(&key, &ec).await;
        let url = gateway(issuer.clone()).await;
        let (eddsa, es256) = (eddsa_token(&key, &issuer, &url), es256_token(&ec, &issuer, &url));
        [client(&url, STATIC_TOKEN).await, client(&url, &eddsa).await, client(&url, &es256).await]
    });
    let [static_peer, eddsa_peer, es256_peer] = clients.each_ref().map(|client| client.peer().clone());
    // The first calls make each identity's agent (and fetch the issuer's keys).
    for peer in [&static_peer, &eddsa_peer, &es256_peer] {
        calls(&runtime, peer, 1);
    }

    let mut group = c.benchmark_group("gateway_http_auth");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    group.bench_function("static_token", |b| b.iter_custom(|iters| calls(&runtime, &static_peer, iters)));
    group.bench_function("oauth_jwt_eddsa", |b| b.iter_custom(|iters| calls(&runtime, &eddsa_peer, iters)));
    group.bench_function("oauth_jwt_es256", |b| b.iter_custom(|iters| calls(&runtime, &es256_peer, iters)));
    group.finish();
}

criterion_group!(benches, auth);
criterion_main!(benches);
