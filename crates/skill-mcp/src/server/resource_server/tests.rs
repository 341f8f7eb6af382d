use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::Signer as _;

use super::*;

const AUDIENCE: &str = "https://gateway.example/mcp";

/// An issuer on a loopback port: its metadata and its JWKS, which a test may change,
/// with a count of JWKS fetches.
struct Issuer {
    url: String,
    jwks: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
    /// How long the JWKS takes to answer, in milliseconds.
    delay: Arc<AtomicU64>,
}

impl Issuer {
    async fn start(keys: &[(&str, &ed25519_dalek::SigningKey)]) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let jwks = Arc::new(Mutex::new(jwks(keys)));
        let fetches = Arc::new(AtomicUsize::new(0));
        let delay = Arc::new(AtomicU64::new(0));
        let metadata = json!({"issuer": url, "jwks_uri": format!("{url}/jwks")}).to_string();
        let (served, counted, slow) = (Arc::clone(&jwks), Arc::clone(&fetches), Arc::clone(&delay));
        let app = axum::Router::new()
            .route("/.well-known/oauth-authorization-server", axum::routing::get(move || async move { metadata }))
            .route(
                "/jwks",
                axum::routing::get(move || async move {
                    counted.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(slow.load(Ordering::SeqCst))).await;
                    served.lock().unwrap().to_string()
                }),
            );
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { url, jwks, fetches, delay }
    }

    fn fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }
}

fn jwks(keys: &[(&str, &ed25519_dalek::SigningKey)]) -> Value {
    let keys: Vec<Value> = keys
        .iter()
        .map(|(kid, key)| {
            json!({"kty": "OKP", "crv": "Ed25519", "kid": kid, "alg": "EdDSA", "use": "sig",
                   "x": URL_SAFE_NO_PAD.encode(key.verifying_key().as_bytes())})
        })
        .collect();
    json!({ "keys": keys })
}

fn key(seed: u8) -> ed25519_dalek::SigningKey {
    ed25519_dalek::SigningKey::from_bytes(&[seed; 32])
}

fn now() -> i64 {
    i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()).unwrap()
}

/// A compact JWS of `claims` with `header`, signed by `key`.
fn token(key: &ed25519_dalek::SigningKey, header: &Value, claims: &Value) -> String {
    let signed =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = key.sign(signed.as_bytes());
    format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()))
}

fn claims(issuer: &Issuer) -> Value {
    json!({"iss": issuer.url, "aud": AUDIENCE, "sub": "alice", "exp": now() + 300, "scope": "mcp:tools other"})
}

fn signed(key: &ed25519_dalek::SigningKey, kid: &str, claims: &Value) -> String {
    token(key, &json!({"alg": "EdDSA", "typ": "at+jwt", "kid": kid}), claims)
}

fn options(issuer: &Issuer) -> OAuthOptions {
    OAuthOptions {
        issuer: issuer.url.clone(),
        resource: Url::parse(AUDIENCE).unwrap(),
        audience: AUDIENCE.to_owned(),
        scopes: vec!["mcp:tools".to_owned()],
        jwks_uri: None,
        claim: "sub".to_owned(),
        identities: ["alice".to_owned(), "bob".to_owned()].into(),
        admit_others: false,
    }
}

fn refetching_at_once(server: &mut ResourceServer) {
    server.keys = Keys::new(server.options.issuer.clone(), server.options.jwks_uri.clone())
        .refetching_every(Duration::from_millis(0));
}

#[tokio::test]
async fn a_valid_token_names_its_identity_and_each_claim_is_checked() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let server = ResourceServer::new(options(&issuer));
    let base = claims(&issuer);
    assert_eq!(
        server.admit(&signed(&signing, "k1", &base)).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned())
    );
    let with = |key: &str, value: Value| {
        let mut changed = base.clone();
        changed[key] = value;
        signed(&signing, "k1", &changed)
    };
    let invalid = |why| Err(Refusal::Invalid(why));
    assert_eq!(
        server.admit(&with("exp", json!(now() - 60))).await.map(|admitted| admitted.client),
        invalid("the token has expired")
    );
    assert_eq!(
        server.admit(&with("exp", json!(now() - 3))).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned()),
        "within the leeway"
    );
    assert_eq!(
        server.admit(&with("nbf", json!(now() + 60))).await.map(|admitted| admitted.client),
        invalid("the token is not valid yet")
    );
    assert_eq!(
        server.admit(&with("iss", json!("https://other.example"))).await.map(|admitted| admitted.client),
        invalid("the token is from another issuer")
    );
    assert_eq!(
        server.admit(&with("aud", json!("https://other.example/mcp"))).await.map(|admitted| admitted.client),
        invalid("the token is for another audience")
    );
    assert_eq!(
        server.admit(&with("aud", json!(["x", AUDIENCE]))).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned())
    );
    let mut no_exp = base.clone();
    no_exp.as_object_mut().unwrap().remove("exp");
    assert_eq!(
        server.admit(&signed(&signing, "k1", &no_exp)).await.map(|admitted| admitted.client),
        invalid("the token lacks `exp`, `iss` or `aud`")
    );
    assert_eq!(server.admit(&with("scope", json!("other"))).await.map(|admitted| admitted.client), Err(Refusal::Scope));
    let mut scp = base.clone();
    scp.as_object_mut().unwrap().remove("scope");
    scp["scp"] = json!(["mcp:tools"]);
    assert_eq!(
        server.admit(&signed(&signing, "k1", &scp)).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned())
    );
    assert_eq!(
        server.admit(&with("sub", json!("mallory"))).await.map(|admitted| admitted.client),
        Err(Refusal::Unmapped)
    );
    // Signed by a key the issuer does not have, under its key's `kid`.
    assert_eq!(
        server.admit(&signed(&key(2), "k1", &base)).await.map(|admitted| admitted.client),
        invalid("the token's signature does not verify")
    );
    assert_eq!(server.admit("not-a-jwt").await.map(|admitted| admitted.client), invalid("the token is not a JWT"));
}

#[tokio::test]
async fn only_asymmetric_algorithms_are_accepted() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let server = ResourceServer::new(options(&issuer));
    let body = URL_SAFE_NO_PAD.encode(claims(&issuer).to_string());
    let none = format!("{}.{body}.", URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#));
    let refused = server.admit(&none).await.map(|admitted| admitted.client);
    assert!(matches!(refused, Err(Refusal::Invalid(_))), "{refused:?}");
    // An HMAC over the public key's bytes: what a confused verifier would accept.
    let hs = format!("{}.{body}.c2ln", URL_SAFE_NO_PAD.encode(r#"{"alg":"HS256","kid":"k1"}"#));
    assert_eq!(
        server.admit(&hs).await.map(|admitted| admitted.client),
        Err(Refusal::Invalid("the token's signature algorithm is not accepted here"))
    );
    // A token whose header says ES256 is not checked with the Ed25519 key of its `kid`.
    let es = token(&signing, &json!({"alg": "ES256", "kid": "k1"}), &claims(&issuer));
    assert_eq!(
        server.admit(&es).await.map(|admitted| admitted.client),
        Err(Refusal::Invalid("the token is not signed by a key of the issuer"))
    );
}

#[tokio::test]
async fn an_es256_token_verifies_with_its_p256_key_only() {
    use p256::ecdsa::signature::Signer as _;
    let issuer = Issuer::start(&[]).await;
    let signing = p256::ecdsa::SigningKey::from_slice(&[9; 32]).unwrap();
    let point = signing.verifying_key().to_sec1_point(false);
    let (x, y) = point.as_bytes()[1..].split_at(32);
    let ec = |crv: &str| json!({"kty": "EC", "crv": crv, "kid": "ec1", "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)});
    *issuer.jwks.lock().unwrap() = json!({"keys": [ec("P-256")]});
    let mut server = ResourceServer::new(options(&issuer));
    refetching_at_once(&mut server);
    let signed = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(json!({"alg": "ES256", "kid": "ec1"}).to_string()),
        URL_SAFE_NO_PAD.encode(claims(&issuer).to_string())
    );
    let signature: p256::ecdsa::Signature = signing.sign(signed.as_bytes());
    let token = format!("{signed}.{}", URL_SAFE_NO_PAD.encode(signature.to_bytes()));
    assert_eq!(server.admit(&token).await.map(|admitted| admitted.client), Ok("oauth:alice".to_owned()));
    // The same point said to be on P-384 is no key for ES256.
    *issuer.jwks.lock().unwrap() = json!({"keys": [ec("P-384")]});
    let mut server = ResourceServer::new(options(&issuer));
    refetching_at_once(&mut server);
    assert_eq!(
        server.admit(&token).await.map(|admitted| admitted.client),
        Err(Refusal::Invalid("the token is not signed by a key of the issuer"))
    );
}

#[tokio::test]
async fn a_new_kid_is_fetched_but_unknown_kids_cannot_make_the_gateway_hammer_the_issuer() {
    let (old, new) = (key(1), key(2));
    let issuer = Issuer::start(&[("k1", &old)]).await;
    let server = ResourceServer::new(options(&issuer));
    let base = claims(&issuer);
    assert!(server.admit(&signed(&old, "k1", &base)).await.map(|admitted| admitted.client).is_ok());
    assert!(server.admit(&signed(&old, "k1", &base)).await.map(|admitted| admitted.client).is_ok());
    assert_eq!(issuer.fetches(), 1, "cached");
    for attempt in 0..20 {
        let refused =
            server.admit(&signed(&new, &format!("bogus-{attempt}"), &base)).await.map(|admitted| admitted.client);
        assert!(refused.is_err());
    }
    assert_eq!(issuer.fetches(), 1, "an unknown kid right after a fetch does not fetch again");

    let mut server = server;
    refetching_at_once(&mut server);
    *issuer.jwks.lock().unwrap() = jwks(&[("k1", &old), ("k2", &new)]);
    assert_eq!(
        server.admit(&signed(&new, "k2", &base)).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned()),
        "the rotated key"
    );
    assert_eq!(
        server.admit(&signed(&old, "k1", &base)).await.map(|admitted| admitted.client),
        Ok("oauth:alice".to_owned()),
        "the old one still"
    );
    assert_eq!(issuer.fetches(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_whose_key_is_cached_never_waits_for_a_fetch() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let mut server = ResourceServer::new(options(&issuer));
    refetching_at_once(&mut server);
    let server = Arc::new(server);
    let known = signed(&signing, "k1", &claims(&issuer));
    assert!(server.admit(&known).await.map(|admitted| admitted.client).is_ok());
    issuer.delay.store(3000, Ordering::SeqCst);
    let unknown = signed(&key(2), "k9", &claims(&issuer));
    let fetching = tokio::spawn({
        let server = Arc::clone(&server);
        async move { server.admit(&unknown).await.map(|admitted| admitted.client) }
    });
    while issuer.fetches() < 2 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another token of the same key (not one verified before, which would not even look).
    let mut other = claims(&issuer);
    other["jti"] = json!("second");
    let known = signed(&signing, "k1", &other);
    let started = std::time::Instant::now();
    assert_eq!(server.admit(&known).await.map(|admitted| admitted.client), Ok("oauth:alice".to_owned()));
    assert!(started.elapsed() < Duration::from_secs(1), "waited {:?} for the fetch", started.elapsed());
    assert!(fetching.await.unwrap().is_err());
}

#[tokio::test]
async fn a_verified_token_is_taken_again_without_its_key_but_never_past_its_expiry() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let mut server = ResourceServer::new(options(&issuer));
    refetching_at_once(&mut server);
    let mut base = claims(&issuer);
    let kept = signed(&signing, "k1", &base);
    base["exp"] = json!(now() - i64::try_from(LEEWAY_SECONDS).unwrap() + 1);
    let ending = signed(&signing, "k1", &base);
    assert_eq!(server.admit(&kept).await.map(|admitted| admitted.client), Ok("oauth:alice".to_owned()));
    assert_eq!(server.admit(&ending).await.map(|admitted| admitted.client), Ok("oauth:alice".to_owned()));
    // The issuer withdraws its key (seen at the next fetch, which a token naming an
    // unknown key starts): a token verified lately is still taken, a new one not.
    *issuer.jwks.lock().unwrap() = jwks(&[]);
    assert!(server.admit(&signed(&key(2), "k2", &base)).await.map(|admitted| admitted.client).is_err());
    base["jti"] = json!("new");
    base["exp"] = json!(now() + 300);
    let new = signed(&signing, "k1", &base);
    assert_eq!(
        server.admit(&new).await.map(|admitted| admitted.client),
        Err(Refusal::Invalid("the token is not signed by a key of the issuer"))
    );
    assert_eq!(server.admit(&kept).await.map(|admitted| admitted.client), Ok("oauth:alice".to_owned()));
    assert_eq!(issuer.fetches(), 3, "the kept token was not checked again");
    // Kept no longer than its `exp` and the leeway allow.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(server.admit(&ending).await.map(|admitted| admitted.client).is_err());
}

#[tokio::test]
async fn keys_come_only_from_the_issuer_its_metadata_names() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let mut options = options(&issuer);
    // The metadata names `http://127.0.0.1:PORT`; the config says otherwise.
    options.issuer = format!("{}/", issuer.url);
    let server = ResourceServer::new(options);
    let mut claims = claims(&issuer);
    claims["iss"] = json!(format!("{}/", issuer.url));
    let token = signed(&signing, "k1", &claims);
    assert_eq!(server.admit(&token).await.map(|admitted| admitted.client), Err(Refusal::Unreachable));
    assert_eq!(
        server.admit(&token).await.map(|admitted| admitted.client),
        Err(Refusal::Unreachable),
        "still, without asking again"
    );
    assert_eq!(issuer.fetches(), 0);
}

#[tokio::test]
async fn an_issuer_that_cannot_be_reached_is_told_apart_from_a_bad_token() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    drop(listener);
    let issuer = Issuer { url: closed, jwks: Arc::default(), fetches: Arc::default(), delay: Arc::default() };
    let server = ResourceServer::new(options(&issuer));
    let token = signed(&key(1), "k1", &claims(&issuer));
    assert_eq!(server.admit(&token).await.map(|admitted| admitted.client), Err(Refusal::Unreachable));
    let response = server.refuse(&Refusal::Unreachable);
    assert_eq!(response.headers().get(header::RETRY_AFTER).unwrap(), "10");
}

#[tokio::test]
async fn a_group_claim_picks_the_first_mapped_value() {
    let signing = key(1);
    let issuer = Issuer::start(&[("k1", &signing)]).await;
    let mut options = options(&issuer);
    options.claim = "groups".to_owned();
    options.identities = ["ops".to_owned()].into();
    let mut server = ResourceServer::new(options);
    let mut claims = claims(&issuer);
    claims["groups"] = json!(["staff", "ops"]);
    let token = signed(&signing, "k1", &claims);
    assert_eq!(server.admit(&token).await.map(|admitted| admitted.client), Ok("oauth:ops".to_owned()));
    claims["groups"] = json!(["staff"]);
    let other = signed(&signing, "k1", &claims);
    assert_eq!(server.admit(&other).await.map(|admitted| admitted.client), Err(Refusal::Unmapped));
    server.options.admit_others = true;
    assert_eq!(server.admit(&other).await.map(|admitted| admitted.client), Ok("oauth:staff".to_owned()));
}

#[test]
fn identities_cannot_pass_for_static_clients_or_paths() {
    assert_eq!(client_name("alice@example.com"), "oauth:alice@example.com");
    assert_eq!(client_name("../a/b"), "oauth:..%2Fa%2Fb");
    assert_eq!(client_name("a:b c"), "oauth:a%3Ab%20c");
    assert_ne!(client_name("a%2Fb"), client_name("a/b"));
}

#[tokio::test]
async fn refusals_name_the_metadata_and_never_the_token() {
    let issuer = Issuer::start(&[]).await;
    let server = ResourceServer::new(options(&issuer));
    let challenge = |refusal: &Refusal| {
        let response = server.refuse(refusal);
        let header = response.headers().get(header::WWW_AUTHENTICATE).map(|value| value.to_str().unwrap().to_owned());
        (response.status().as_u16(), header)
    };
    let metadata = r#"Bearer resource_metadata="https://gateway.example/.well-known/oauth-protected-resource/mcp""#;
    assert_eq!(challenge(&Refusal::NoToken), (401, Some(format!(r#"{metadata}, scope="mcp:tools""#))));
    assert_eq!(
        challenge(&Refusal::Invalid("the token has expired")),
        (401, Some(format!(r#"{metadata}, error="invalid_token", error_description="the token has expired""#)))
    );
    assert_eq!(
        challenge(&Refusal::Scope),
        (
            403,
            Some(format!(
                r#"{metadata}, error="insufficient_scope", scope="mcp:tools", error_description="the token lacks a required scope""#
            ))
        )
    );
    assert_eq!(challenge(&Refusal::Unmapped), (403, None));
    assert_eq!(challenge(&Refusal::Unreachable), (503, None));
    assert_eq!(
        metadata_url(&Url::parse("https://gw.example/").unwrap()),
        "https://gw.example/.well-known/oauth-protected-resource"
    );
}
