//! Signature checks: the harness's verifier rejects stale, replayed, tampered and changed
//! requests, and identical requests of the client back to back are not replays.

use super::*;

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
