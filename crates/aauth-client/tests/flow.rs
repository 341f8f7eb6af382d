//! The AAuth flows end to end against the harness's agent provider, person server and
//! resource, which verify every signature they receive.

mod harness;

use std::path::Path;
use std::sync::{Arc, Mutex};

use aauth_client::{AAuthClient, AgentKey, Error, SignatureKey, Step, TokenKind, sign_request};
use harness::{Consent, Harness};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use skill_core::SecretString;
use url::Url;

/// A client for `harness` with a fresh key, its agent token cached under `dir`.
fn client(harness: &Harness, dir: &Path) -> AAuthClient {
    builder(harness, AgentKey::generate(), dir).build().unwrap()
}

fn builder(harness: &Harness, key: AgentKey, dir: &Path) -> aauth_client::AAuthClientBuilder {
    AAuthClient::builder(key, harness.ap.clone())
        .allow_http_loopback(true)
        .agent_token_cache(dir.join("aauth/agent-token.json"))
}

fn data_url(harness: &Harness) -> Url {
    harness.resource.join("/data").unwrap()
}

fn aauth_error(error: &reqwest_middleware::Error) -> &Error {
    Error::from_middleware(error).unwrap_or_else(|| panic!("not an AAuth error: {error:?}"))
}

/// Nothing the servers issued appears in `text`.
fn assert_no_token(harness: &Harness, text: &str) {
    let issued = harness.issued_tokens();
    assert!(!issued.is_empty());
    for token in issued {
        assert!(!text.contains(&token), "a token leaked into: {text}");
        let signature = token.rsplit('.').next().unwrap();
        assert!(!text.contains(signature), "a token signature leaked into: {text}");
    }
}

/// Enrollment, then one request through the whole three-party dance: 401 person-token,
/// person token, retry, 401 auth-token with a resource token, auth token, retry, 200.
#[tokio::test]
async fn enroll_then_person_token_then_auth_token_then_200() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let client = builder(&harness, key.clone(), dir.path()).build().unwrap();

    let identity = client.enroll().await.unwrap();
    assert!(identity.agent_id.starts_with("aauth:agent"), "{identity:?}");
    assert_eq!(identity.thumbprint, key.thumbprint());
    assert_eq!(identity.person_server, Some(harness.ps.clone()));
    assert_eq!(harness.count("ap.bootstrap"), 1);

    let response = client
        .http_client()
        .post(data_url(&harness))
        .header(CONTENT_TYPE, "application/json")
        .body(r#"{"query":"all"}"#)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    // The original body arrived intact on the final retry.
    assert_eq!(body["method"], "POST");
    assert_eq!(body["body"], r#"{"query":"all"}"#);
    assert_eq!(body["scope"], "data.read");

    let expected = [
        ("ap.bootstrap", 1),
        ("ap.metadata", 1),
        ("ps.auth_token", 1),
        ("ps.metadata", 1),
        ("ps.person_token", 1),
        ("resource.agent_token", 1),
        ("resource.auth_token", 1),
        ("resource.person_token", 1),
        // Bootstrap, 3 resource attempts, person token, auth token.
        ("verified", 6),
    ];
    let counts = harness.counts();
    assert_eq!(counts, expected.iter().map(|(step, n)| (step.to_string(), *n)).collect(), "{counts:#?}");

    // The next request goes straight through with the cached auth token.
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("resource.auth_token"), 2);
    assert_eq!(harness.count("ps.auth_token"), 1);
    assert_eq!(harness.count("resource.agent_token"), 1);

    // Another process with the same key reuses the cached agent token.
    let again = builder(&harness, key, dir.path()).build().unwrap();
    assert_eq!(again.agent_identity().await.unwrap(), identity);
    assert_eq!(harness.count("ap.bootstrap"), 1);

    let debug = format!("{client:?} {client:#?} {identity:?}");
    assert!(debug.contains(&identity.thumbprint), "{debug}");
    assert_no_token(&harness, &debug);
}

#[cfg(unix)]
#[tokio::test]
async fn agent_token_cache_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    client(&harness, dir.path()).enroll().await.unwrap();
    let path = dir.path().join("aauth/agent-token.json");
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(cached["agent_token"], harness.issued_tokens()[0]);
}

/// An agent token within a minute of its expiry is renewed at `refresh_endpoint`.
#[tokio::test]
async fn agent_token_is_refreshed_before_it_expires() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    harness.set(|scenario| scenario.agent_token_lifetime = 30);
    let first = client.enroll().await.unwrap();
    harness.set(|scenario| scenario.agent_token_lifetime = 3600);

    let renewed = client.agent_identity().await.unwrap();
    assert_eq!(harness.count("ap.refresh"), 1);
    assert_eq!(harness.count("ap.bootstrap"), 1);
    assert_eq!(renewed.agent_id, first.agent_id);
    assert!(renewed.expires_at > first.expires_at);
    // Now fresh: no further renewal.
    client.agent_identity().await.unwrap();
    assert_eq!(harness.count("ap.refresh"), 1);
}

/// Without an agent token yet, the first request enrolls on its own.
#[tokio::test]
async fn first_request_enrolls() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let response = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("ap.bootstrap"), 1);
}

/// The resource holds the call (202 + Location + auth-token): the client gets the auth
/// token and completes at the pending URL, where the held call runs once.
#[tokio::test]
async fn deferred_auth_token_completes_at_the_pending_url() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.deferred_auth = true);
    let dir = tempfile::tempdir().unwrap();
    let response = client(&harness, dir.path())
        .http_client()
        .put(data_url(&harness))
        .header(CONTENT_TYPE, "text/plain")
        .body("held body")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(
        (body["held"].as_bool(), body["method"].as_str(), body["body"].as_str()),
        (Some(true), Some("PUT"), Some("held body"))
    );
    assert_eq!(harness.count("resource.deferred"), 1);
    assert_eq!(harness.count("ps.auth_token"), 1);
    assert_eq!(harness.count("resource.executed"), 1);
    // The call was not sent again: the auth token was presented at the pending URL only.
    assert_eq!(harness.count("resource.auth_token"), 0);
    assert_eq!(harness.count("resource.poll"), 1);
}

/// Records interactions and plays the person: approves, denies or lets it expire.
fn on_interaction_channel()
-> (impl Fn(&Url, &str) + Send + Sync + 'static, tokio::sync::mpsc::UnboundedReceiver<(Url, String)>) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    (move |url: &Url, code: &str| sender.send((url.clone(), code.to_owned())).unwrap(), receiver)
}

/// The person, in their browser: opens `{url}?code={code}` and decides.
async fn person_decides(url: &Url, code: &str, decision: &str) {
    let browser = reqwest::Client::new();
    let mut page = url.clone();
    page.query_pairs_mut().append_pair("code", code);
    assert_eq!(browser.get(page).send().await.unwrap().status(), 200);
    let form = format!("code={code}&decision={decision}");
    let response = browser
        .post(url.clone())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// Runs a request that needs consent at the person server; the person decides after the
/// client has polled at least once.
async fn with_consent(
    decision: &str,
) -> (Harness, Result<reqwest::Response, reqwest_middleware::Error>, Vec<(Url, String)>) {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let (callback, mut interactions) = on_interaction_channel();
    let client = builder(&harness, AgentKey::generate(), dir.path()).on_interaction(callback).build().unwrap();
    let request = client.http_client().get(data_url(&harness)).send();
    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        harness.wait_for_ps_polls(1).await;
        person_decides(&url, &code, decision).await;
        (url, code)
    };
    let (result, seen) = tokio::join!(request, person);
    let mut announced = vec![seen];
    while let Ok(more) = interactions.try_recv() {
        announced.push(more);
    }
    (harness, result, announced)
}

#[tokio::test]
async fn interaction_code_reaches_the_callback_and_polling_runs_until_approved() {
    let (harness, result, announced) = with_consent("approve").await;
    let response = result.unwrap();
    assert_eq!(response.status(), 200);
    // One announcement, although every pending answer repeats the requirement.
    assert_eq!(announced.len(), 1, "{announced:?}");
    let (url, code) = &announced[0];
    assert_eq!(url.as_str(), format!("{}interact", harness.ps));
    assert_eq!(code.len(), 9);
    assert_eq!(harness.count("ps.interaction_decision"), 1);
    assert!(harness.count("ps.poll") >= 2, "{:?}", harness.counts());
    assert_eq!(harness.count("resource.auth_token"), 1);
}

#[tokio::test]
async fn denial_is_a_typed_error() {
    let (harness, result, _) = with_consent("deny").await;
    let error = result.unwrap_err();
    let Error::Denied { url, error: code, detail } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(code, "denied");
    assert_eq!(detail.as_deref(), Some("The user declined the request."));
    assert!(url.as_str().starts_with(&format!("{}pending/", harness.ps)), "{url}");
    assert_eq!(harness.count("resource.auth_token"), 0);
    assert_no_token(&harness, &format!("{error} {error:?}"));
}

#[tokio::test]
async fn expiry_is_a_typed_error() {
    let (harness, result, _) = with_consent("expire").await;
    let error = result.unwrap_err();
    assert!(matches!(aauth_error(&error), Error::Expired { .. }), "{error:?}");
    assert!(aauth_error(&error).to_string().contains("the pending request expired: The request timed out."));
    assert_eq!(harness.count("resource.auth_token"), 0);
}

/// A person server asking to slow down gets polls 5 s further apart, and the flow goes on.
#[tokio::test]
async fn slow_down_is_honoured() {
    let harness = Harness::start().await;
    harness.set(|scenario| {
        scenario.consent = Consent::Clarification;
        scenario.slow_downs = 1;
    });
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification(|_| Some("To summarize it.".to_owned()))
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("ps.slow_down"), 1);
    assert_eq!(harness.count("ps.poll"), 2);
}

#[tokio::test]
async fn clarification_is_answered_through_the_callback() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let questions = Arc::new(Mutex::new(Vec::new()));
    let asked = questions.clone();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification(move |question| {
            asked.lock().unwrap().push(question.to_owned());
            Some("I need it to prepare your report.".to_owned())
        })
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(*questions.lock().unwrap(), ["Why do you need to read my data?"]);
    assert_eq!(harness.clarification_answers(), ["I need it to prepare your report."]);
    assert_eq!(harness.count("ps.clarification_response"), 1);
}

#[tokio::test]
async fn clarification_without_a_callback_is_a_typed_error_and_withdraws() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let error = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::ClarificationUnhandled { question, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(question, "Why do you need to read my data?");
    assert_eq!(harness.count("ps.withdrawn"), 1);
}

#[tokio::test]
async fn interaction_without_a_callback_is_a_typed_error() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let error = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::InteractionUnhandled { code, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(code.len(), 9);
    assert_eq!(harness.count("ps.withdrawn"), 1);
}

/// A resource token bound to another key is refused before it reaches the person server.
#[tokio::test]
async fn resource_token_bound_to_another_key_is_refused() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.foreign_agent_jkt = true);
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    let error = client.http_client().get(data_url(&harness)).send().await.unwrap_err();
    let aauth = aauth_error(&error);
    assert!(matches!(aauth, Error::TokenClaim { token: TokenKind::Resource, claim: "agent_jkt", .. }), "{aauth:?}");
    assert_eq!(harness.count("resource.person_token"), 1);
    assert_eq!(harness.count("ps.auth_token"), 0);
    assert_no_token(&harness, &format!("{error} {error:?} {aauth} {aauth:?} {client:?}"));
}

/// A resource that asks for a new auth token every time ends in a typed error after the
/// configured number of rounds, not in a loop.
#[tokio::test]
async fn requirement_rounds_are_bounded() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.endless_step_up = true);
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path()).max_requirement_rounds(3).build().unwrap();
    let error = client.http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::TooManyRounds { rounds, last, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!((*rounds, *last), (3, "auth-token"));
    // Person token, then two auth tokens; the third auth-token requirement is one too many.
    assert_eq!(harness.count("ps.person_token"), 1);
    assert_eq!(harness.count("ps.auth_token"), 2);
}

/// Signs `request` as the client would, with an agent token for `key`, at `created`.
fn signed(harness: &Harness, key: &AgentKey, mut request: reqwest::Request, created: u64) -> reqwest::Request {
    let token = SecretString::from(harness.agent_token_for(key));
    sign_request(key, &mut request, &SignatureKey::Jwt(token), created).unwrap();
    request
}

fn post_data(harness: &Harness) -> reqwest::Request {
    let mut request = reqwest::Request::new(reqwest::Method::POST, data_url(harness));
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    *request.body_mut() = Some(r#"{"n":1}"#.into());
    request
}

#[tokio::test]
async fn harness_rejects_created_outside_sixty_seconds() {
    let harness = Harness::start().await;
    let key = AgentKey::generate();
    let http = reqwest::Client::new();
    let now = harness::now();
    for created in [now - 120, now + 120] {
        let response = http.execute(signed(&harness, &key, post_data(&harness), created)).await.unwrap();
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()["signature-error"], "error=invalid_signature");
    }
    assert_eq!(harness.count("rejected:stale"), 2);
    // The same request signed now is accepted (and the resource asks for a person token).
    let response = http.execute(signed(&harness, &key, post_data(&harness), now)).await.unwrap();
    assert_eq!(
        (response.status().as_u16(), response.headers()["aauth-requirement"].to_str().unwrap()),
        (401, "requirement=person-token")
    );
}

#[tokio::test]
async fn harness_rejects_a_replayed_request() {
    let harness = Harness::start().await;
    let key = AgentKey::generate();
    let http = reqwest::Client::new();
    let request = signed(&harness, &key, post_data(&harness), harness::now());
    let replay = request.try_clone().unwrap();
    let first = http.execute(request).await.unwrap();
    assert_eq!(first.headers()["aauth-requirement"], "requirement=person-token");
    let second = http.execute(replay).await.unwrap();
    assert_eq!(second.status(), 401);
    assert_eq!(second.headers()["signature-error"], "error=invalid_signature");
    assert_eq!(harness.count("rejected:replay"), 1);
    assert_eq!(harness.count("resource.agent_token"), 1);
}

#[tokio::test]
async fn harness_rejects_a_tampered_body() {
    let harness = Harness::start().await;
    let key = AgentKey::generate();
    let mut request = signed(&harness, &key, post_data(&harness), harness::now());
    *request.body_mut() = Some(r#"{"n":2}"#.into());
    let response = reqwest::Client::new().execute(request).await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(harness.count("rejected:content-digest mismatch"), 1);
}

#[tokio::test]
async fn harness_rejects_a_request_changed_after_signing() {
    let harness = Harness::start().await;
    let key = AgentKey::generate();
    let mut request = signed(&harness, &key, post_data(&harness), harness::now());
    // `content-type` is covered; the body (and so `Content-Digest`) is unchanged.
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json; charset=utf-8"));
    let response = reqwest::Client::new().execute(request).await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(response.headers()["signature-error"], "error=invalid_signature");
    assert_eq!(harness.count("rejected:bad signature"), 1);
}

/// Server identifiers are https unless `allow_http_loopback`, which admits loopback only.
#[tokio::test]
async fn http_servers_need_allow_http_loopback() {
    let harness = Harness::start().await;
    let error = AAuthClient::builder(AgentKey::generate(), harness.ap.clone()).build().unwrap_err();
    assert!(matches!(error, Error::InvalidServerIdentifier { .. }), "{error:?}");
    let error = AAuthClient::builder(AgentKey::generate(), Url::parse("http://agents.example").unwrap())
        .allow_http_loopback(true)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent provider `http://agents.example` is not a valid server identifier: it is http: only 127.0.0.1 and [::1] may use http (allow_http_loopback)"
    );
}

/// `ca_file` adds a trust root: an https agent provider with a certificate from a private
/// CA is reached with it, and refused without it.
#[tokio::test]
async fn ca_file_adds_a_trust_root() {
    let harness = Harness::start_tls().await;
    assert_eq!(harness.ap.scheme(), "https");
    let dir = tempfile::tempdir().unwrap();
    let ca = harness::tls_fixtures().join("ca.pem");
    let trusting = builder(&harness, AgentKey::generate(), dir.path()).ca_file(&ca).build().unwrap();
    let response = trusting.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("resource.auth_token"), 1);

    let untrusting =
        AAuthClient::builder(AgentKey::generate(), harness.ap.clone()).allow_http_loopback(true).build().unwrap();
    let error = untrusting.enroll().await.unwrap_err();
    assert!(matches!(error, Error::Http { step: Step::AgentMetadata, .. }), "{error:?}");
    assert_eq!(harness.count("ap.bootstrap"), 1);

    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    for path in [not_pem, dir.path().join("missing.pem")] {
        let error = builder(&harness, AgentKey::generate(), dir.path()).ca_file(&path).build().unwrap_err();
        assert!(matches!(&error, Error::CaFile { path: p, .. } if *p == path), "{error:?}");
    }
}

/// A stream body cannot be replayed after a token round, and is refused up front.
#[tokio::test]
async fn stream_bodies_are_a_typed_error() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let stream = futures_util::stream::iter([Ok::<_, std::io::Error>(b"chunk".to_vec())]);
    let error = client(&harness, dir.path())
        .http_client()
        .post(data_url(&harness))
        .header(CONTENT_TYPE, "text/plain")
        .body(reqwest::Body::wrap_stream(stream))
        .send()
        .await
        .unwrap_err();
    assert!(matches!(aauth_error(&error), Error::StreamingBody { .. }), "{error:?}");
    assert_eq!(harness.count("verified"), 0);
}

/// A person server that fails names the step in the error.
#[tokio::test]
async fn errors_name_the_step() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .person_server(Url::parse("http://127.0.0.1:1").unwrap())
        .build()
        .unwrap();
    let error = client.http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::Http { step, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(*step, Step::PersonMetadata);
}
