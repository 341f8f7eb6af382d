//! One request through the three-party token dance: enrolling on the way when needed, and
//! completing a call the resource held at its pending URL.

use super::*;

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
