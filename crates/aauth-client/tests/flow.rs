//! The AAuth flows end to end against the harness's agent provider, person server and
//! resource (`aauth-harness`), which verify every signature they receive.

use std::path::Path;
use std::sync::{Arc, Mutex};

use aauth_client::{AAuthClient, AgentKey, Error, SignatureKey, Step, TokenKind, sign_request};
use aauth_harness::{Consent, Harness};
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
        .agent_token_cache_dir(dir.join("aauth/agent-tokens"))
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
    let client = client(&harness, dir.path());
    client.enroll().await.unwrap();
    let path = client.agent_token_cache_file().unwrap();
    assert_eq!(path.parent().unwrap(), dir.path().join("aauth/agent-tokens"));
    assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(cached["agent_token"], harness.issued_tokens()[0]);
}

/// Agents with other agent providers or other keys share one cache folder: each finds its
/// own token there, and none re-enrolls because another one enrolled.
#[tokio::test]
async fn agents_with_other_providers_or_keys_share_the_cache_folder() {
    let (first, second) = (Harness::start().await, Harness::start().await);
    let dir = tempfile::tempdir().unwrap();
    let (key, other_key) = (AgentKey::generate(), AgentKey::generate());
    let setups = [(&first, &key), (&second, &key), (&first, &other_key)];
    let mut identities = Vec::new();
    for (harness, key) in setups {
        identities.push(builder(harness, key.clone(), dir.path()).build().unwrap().enroll().await.unwrap());
    }
    // Each setup again, as a later process would: its own cached token, no enrollment.
    for ((harness, key), identity) in setups.into_iter().zip(&identities) {
        let again = builder(harness, key.clone(), dir.path()).build().unwrap();
        assert_eq!(&again.agent_identity().await.unwrap(), identity);
    }
    assert_eq!((first.count("ap.bootstrap"), second.count("ap.bootstrap")), (2, 1));
    // Three token files (beside `.created`, where signature times are claimed).
    let files = std::fs::read_dir(dir.path().join("aauth/agent-tokens")).unwrap();
    assert_eq!(files.filter(|entry| entry.as_ref().unwrap().path().is_file()).count(), 3);
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
    let now = aauth_harness::now();
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
    let request = signed(&harness, &key, post_data(&harness), aauth_harness::now());
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
    let mut request = signed(&harness, &key, post_data(&harness), aauth_harness::now());
    *request.body_mut() = Some(r#"{"n":2}"#.into());
    let response = reqwest::Client::new().execute(request).await.unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(harness.count("rejected:content-digest mismatch"), 1);
}

#[tokio::test]
async fn harness_rejects_a_request_changed_after_signing() {
    let harness = Harness::start().await;
    let key = AgentKey::generate();
    let mut request = signed(&harness, &key, post_data(&harness), aauth_harness::now());
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
    let ca = aauth_harness::ca_file();
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

/// Identical state-changing requests back to back all pass a verifier with a replay cache
/// keyed by (key, `created`, method, authority, path): the harness's. Signing is
/// deterministic and `created` has whole seconds, so each needs a second of its own. The
/// three retries of the first request's token dance are such requests too.
#[tokio::test]
async fn identical_posts_back_to_back_are_not_replays() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let http = client(&harness, dir.path()).http_client();
    for _ in 0..4 {
        let response = http
            .post(data_url(&harness))
            .header(CONTENT_TYPE, "application/json")
            .body(r#"{"n":1}"#)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{:?}", harness.counts());
    }
    assert_eq!(harness.count("rejected:replay"), 0);
    assert_eq!(harness.count("resource.auth_token"), 4);
    assert_eq!(harness.count("ps.auth_token"), 1);
}

/// The URL of the caller's request appears in errors without its user info, query and
/// fragment.
#[tokio::test]
async fn errors_show_the_request_url_without_credentials_or_query() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path()).max_requirement_rounds(1).build().unwrap();
    let mut url = data_url(&harness);
    url.set_username("alice").unwrap();
    url.set_password(Some("hunter2")).unwrap();
    url.set_query(Some("api_key=sesame"));
    url.set_fragment(Some("frag"));
    let request = reqwest::Request::new(reqwest::Method::GET, url);
    let error = client.http_client().execute(request).await.unwrap_err();
    let aauth = aauth_error(&error);
    assert!(matches!(aauth, Error::TooManyRounds { .. }), "{aauth:?}");
    let shown = format!("{error} {error:?} {aauth} {aauth:?}");
    assert!(shown.contains(&format!("{}: more than 1", data_url(&harness))), "{shown}");
    for secret in ["alice", "hunter2", "sesame", "frag"] {
        assert!(!shown.contains(secret), "{secret} in {shown}");
    }
}

/// How much each step's count grew from `before` to `after` (steps that did not grow are
/// left out).
fn growth(
    before: &std::collections::BTreeMap<String, usize>,
    after: &std::collections::BTreeMap<String, usize>,
) -> Vec<(String, usize)> {
    after
        .iter()
        .filter_map(|(step, count)| {
            let grown = count - before.get(step).copied().unwrap_or(0);
            (grown > 0).then(|| (step.clone(), grown))
        })
        .collect()
}

fn steps(list: &[(&str, usize)]) -> Vec<(String, usize)> {
    list.iter().map(|(step, count)| ((*step).to_owned(), *count)).collect()
}

/// One request through the whole dance; the answer's `sub`.
async fn dance(client: &AAuthClient, harness: &Harness) -> serde_json::Value {
    let response = client.http_client().get(data_url(harness)).send().await.unwrap();
    assert_eq!(response.status(), 200, "{:?}", harness.counts());
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["sub"].clone()
}

/// The person and auth tokens are shared with later processes: a second client with the
/// same key and cache folder (as the next `omniagent` command would be) presents the auth
/// token the first obtained, and its request goes straight through.
#[tokio::test]
async fn a_later_process_presents_the_cached_auth_token() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let first = builder(&harness, key.clone(), dir.path()).build().unwrap();
    let sub = dance(&first, &harness).await;
    assert_eq!((harness.count("ps.person_token"), harness.count("ps.auth_token")), (1, 1));

    let before = harness.counts();
    let second = builder(&harness, key, dir.path()).build().unwrap();
    assert_eq!(dance(&second, &harness).await, sub);
    // One signed request, presenting the auth token: no enrollment, no metadata, no token
    // request, no other attempt at the resource.
    assert_eq!(growth(&before, &harness.counts()), steps(&[("resource.auth_token", 1), ("verified", 1)]));
    assert_no_token(&harness, &format!("{second:?}"));
}

/// The token cache file of a resource is private, beside the agent token's, and says
/// whose tokens it holds.
#[cfg(unix)]
#[tokio::test]
async fn resource_token_cache_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let client = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&client, &harness).await;
    let path = client.resource_token_cache_file(&data_url(&harness)).unwrap();
    assert_eq!(path.parent(), client.agent_token_cache_file().unwrap().parent());
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(cached["agent_provider"].as_str(), Some(harness.ap.as_str().trim_end_matches('/')));
    assert_eq!(cached["thumbprint"].as_str(), Some(key.thumbprint().as_str()));
    assert_eq!(cached["resource"].as_str(), Some(harness.resource.as_str().trim_end_matches('/')));
    assert_eq!(cached["person_server"].as_str(), Some(harness.ps.as_str().trim_end_matches('/')));
    let issued = harness.issued_tokens();
    for member in ["person_token", "auth_token"] {
        let token = cached[member]["token"].as_str().unwrap();
        assert!(issued.iter().any(|issued| issued == token), "{member}");
        assert!(cached[member]["expires_at"].as_u64().unwrap() > aauth_harness::now() + 3000, "{member}");
    }
    // Every file in the folder is private, and none is left over from writing (beside the
    // files is `.created`, where signature times are claimed).
    for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_eq!(path.file_name().unwrap(), ".created");
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
            continue;
        }
        assert_eq!(path.extension().and_then(|extension| extension.to_str()), Some("json"), "{}", path.display());
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "{}", path.display());
    }
}

/// A person who approved once is not asked again by the next process while the auth
/// token lasts.
#[tokio::test]
async fn a_later_process_does_not_ask_the_person_again() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let (callback, mut interactions) = on_interaction_channel();
    let first = builder(&harness, key.clone(), dir.path()).on_interaction(callback).build().unwrap();
    let request = first.http_client().get(data_url(&harness)).send();
    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        harness.wait_for_ps_polls(1).await;
        person_decides(&url, &code, "approve").await;
    };
    let (response, ()) = tokio::join!(request, person);
    assert_eq!(response.unwrap().status(), 200);
    assert_eq!(harness.count("ps.interaction_decision"), 1);

    let (callback, mut interactions) = on_interaction_channel();
    let second = builder(&harness, key, dir.path()).on_interaction(callback).build().unwrap();
    let response = second.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(interactions.try_recv().is_err(), "the person was asked again");
    assert_eq!((harness.count("ps.auth_token"), harness.count("ps.interaction_decision")), (1, 1));
    assert_eq!(harness.count("resource.auth_token"), 2);
}

/// An auth token in the cache that is no longer fresh (within 60 s of its expiry) is not
/// presented: the later process presents the cached person token and exchanges a new
/// resource token. A short-lived auth token is not kept for later processes at all.
#[tokio::test]
async fn a_cached_auth_token_near_its_expiry_is_not_used() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let first = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&first, &harness).await;
    let path = first.resource_token_cache_file(&data_url(&harness)).unwrap();

    // The cached auth token said to be usable for 30 s more only (as an `expires_in` of 90
    // an hour ago would leave it): too close to its expiry to be presented.
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    cached["auth_token"]["expires_at"] = serde_json::json!(aauth_harness::now() + 30);
    std::fs::write(&path, cached.to_string()).unwrap();
    // The person server now issues auth tokens that are stale as soon as they arrive.
    harness.set(|scenario| scenario.auth_token_lifetime = 30);
    let before = harness.counts();
    let second = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&second, &harness).await;
    // A new process reads the person server's metadata once.
    let expected = [
        ("ps.auth_token", 1),
        ("ps.metadata", 1),
        ("resource.auth_token", 1),
        ("resource.person_token", 1),
        // The request with the person token, the auth token request, the retry.
        ("verified", 3),
    ];
    assert_eq!(growth(&before, &harness.counts()), steps(&expected));

    // The 30 s auth token was used once, and not kept: the next process starts from the
    // person token again.
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(cached.get("auth_token").is_none(), "{cached}");
    let before = harness.counts();
    let third = builder(&harness, key, dir.path()).build().unwrap();
    dance(&third, &harness).await;
    assert_eq!(growth(&before, &harness.counts()), steps(&expected));
    assert_eq!(harness.count("ps.person_token"), 1);
}

/// A cache file that is another agent's, or whose tokens are bound to another key, is
/// ignored: the client goes through the dance again (no token is presented that the
/// resource would refuse), and replaces the file with its own tokens.
#[tokio::test]
async fn foreign_or_tampered_cache_entries_are_ignored() {
    let harness = Harness::start().await;
    let (dir, other_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (key, other_key) = (AgentKey::generate(), AgentKey::generate());
    let ours = builder(&harness, key.clone(), dir.path()).build().unwrap();
    let theirs = builder(&harness, other_key, other_dir.path()).build().unwrap();
    dance(&ours, &harness).await;
    dance(&theirs, &harness).await;
    let path = ours.resource_token_cache_file(&data_url(&harness)).unwrap();
    let their_path = theirs.resource_token_cache_file(&data_url(&harness)).unwrap();
    let read = |path: &Path| serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap()).unwrap();
    let write = |path: &Path, value: &serde_json::Value| std::fs::write(path, value.to_string()).unwrap();

    // Their whole file in our file's place: another key's tokens, by its own account.
    // Their tokens under our name: bound to their key all the same.
    let mut tampered = read(&path);
    for member in ["person_token", "auth_token"] {
        tampered[member] = read(&their_path)[member].clone();
    }
    for planted in [read(&their_path), tampered] {
        write(&path, &planted);
        let before = harness.counts();
        let again = builder(&harness, key.clone(), dir.path()).build().unwrap();
        dance(&again, &harness).await;
        let grown = growth(&before, &harness.counts());
        let expected = [
            ("ps.auth_token", 1),
            ("ps.metadata", 1),
            ("ps.person_token", 1),
            ("resource.agent_token", 1),
            ("resource.auth_token", 1),
            ("resource.person_token", 1),
            ("verified", 5),
        ];
        assert_eq!(grown, steps(&expected));
        // Replaced by tokens bound to our key.
        let replaced = read(&path);
        assert_eq!(replaced["thumbprint"].as_str(), Some(key.thumbprint().as_str()));
        for member in ["person_token", "auth_token"] {
            let token = replaced[member]["token"].as_str().unwrap();
            let kind = if member == "auth_token" { TokenKind::Auth } else { TokenKind::Person };
            let jwt = aauth_client::Jwt::decode(token, kind).unwrap();
            jwt.check_bound_to(&key).unwrap();
        }
    }
}
