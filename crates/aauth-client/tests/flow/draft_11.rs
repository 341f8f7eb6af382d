//! What protocol -11 and Signature-Key -09 changed for an agent, against a harness that
//! sends each new error: `presented_token` and the hints in the token requests, a
//! resource token's `login_hint` passed on, `revoked_jwt` and `clock_skew` signature
//! errors, the auth token endpoint's `expired_presented_token`,
//! `revoked_presented_token`, `revoked_resource_token` and `as_unreachable`, and
//! polling's `revoked`.

use std::collections::VecDeque;

use super::*;

/// The request through the whole dance, with `change` applied to the scenario first.
async fn dance(
    change: impl FnOnce(&mut aauth_harness::Scenario),
) -> (Harness, Result<reqwest::Response, reqwest_middleware::Error>) {
    let harness = Harness::start().await;
    harness.set(change);
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    let result = client.http_client().get(data_url(&harness)).send().await;
    (harness, result)
}

fn claims_of(token: &str) -> serde_json::Value {
    use base64::Engine as _;
    let claims = token.split('.').nth(1).unwrap();
    serde_json::from_slice(&base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(claims).unwrap()).unwrap()
}

/// The person token request carries the capabilities and the configured hints; the auth
/// token request the token presented to the resource (whose `jti` the resource token
/// names) and the resource token's `login_hint`, unchanged.
#[tokio::test]
async fn token_requests_carry_presented_token_capabilities_and_hints() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.resource_login_hint = Some("Dana@Example.COM".into()));
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_interaction(|_, _| {})
        .login_hint("dana".into())
        .tenant("Acme".into())
        .justification("to read the data".into())
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let requests = harness.ps_requests();
    let [("person", person), ("auth", auth)] = requests.as_slice() else { panic!("{requests:?}") };
    assert_eq!(person["capabilities"], serde_json::json!(["interaction"]));
    assert_eq!((&person["login_hint"], &person["tenant"]), (&"dana".into(), &"Acme".into()));
    assert_eq!(person["justification"], "to read the data");
    assert_eq!(auth["login_hint"], "Dana@Example.COM");
    assert_eq!(auth["tenant"], "Acme");
    let presented = claims_of(auth["presented_token"].as_str().unwrap());
    let resource_token = claims_of(auth["resource_token"].as_str().unwrap());
    assert_eq!(presented["jti"], resource_token["presented_jti"]);
    assert!(presented["jti"].as_str().unwrap().starts_with("pt-"), "the person token: {presented}");
}

/// `revoked_jwt` on the agent token: a fresh one from the agent provider, then on.
#[tokio::test]
async fn revoked_agent_token_is_replaced() {
    let (harness, result) =
        dance(|scenario| scenario.resource_signature_errors = VecDeque::from(["revoked_jwt"])).await;
    assert_eq!(result.unwrap().status(), 200);
    assert_eq!(harness.count("resource.revoked_jwt"), 1);
    assert_eq!((harness.count("ap.bootstrap"), harness.count("ap.refresh")), (1, 1));
    assert_eq!(harness.count("ps.person_token"), 1);
}

/// `revoked_jwt` on an auth token: a fresh person token, then a fresh resource token and
/// auth token.
#[tokio::test]
async fn revoked_auth_token_brings_a_fresh_person_token() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    assert_eq!(client.http_client().get(data_url(&harness)).send().await.unwrap().status(), 200);
    harness.set(|scenario| scenario.resource_signature_errors = VecDeque::from(["revoked_jwt"]));
    assert_eq!(client.http_client().get(data_url(&harness)).send().await.unwrap().status(), 200);
    assert_eq!(harness.count("resource.revoked_jwt"), 1);
    assert_eq!(harness.count("ps.person_token"), 2);
    assert_eq!(harness.count("ps.auth_token"), 2);
    assert_eq!(harness.count("ap.refresh"), 0);
}

/// `clock_skew`: no token is fetched again; the request is signed once more with the
/// server's time from its `Date`, and a second `clock_skew` is a clear error.
#[tokio::test]
async fn clock_skew_retries_once_with_the_servers_time() {
    let (harness, result) = dance(|scenario| scenario.resource_signature_errors = VecDeque::from(["clock_skew"])).await;
    assert_eq!(result.unwrap().status(), 200);
    assert_eq!(harness.count("resource.clock_skew"), 1);
    assert_eq!((harness.count("ap.bootstrap"), harness.count("ap.refresh")), (1, 0));

    let (harness, result) =
        dance(|scenario| scenario.resource_signature_errors = VecDeque::from(["clock_skew", "clock_skew"])).await;
    let error = result.unwrap_err();
    let Error::ClockSkew { skew, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert!(skew.is_some_and(|skew| (29..=31).contains(&skew)), "{skew:?}");
    assert!(error.to_string().contains("clock_skew") || aauth_error(&error).to_string().contains("clock_skew"));
    assert_eq!(harness.count("resource.clock_skew"), 2);
}

/// `expired_presented_token` and `revoked_presented_token`: a fresh person token, then a
/// fresh resource token for it.
#[tokio::test]
async fn refused_presented_token_brings_a_fresh_person_token() {
    for code in ["expired_presented_token", "revoked_presented_token"] {
        let (harness, result) = dance(|scenario| scenario.auth_token_errors = VecDeque::from([code])).await;
        assert_eq!(result.unwrap().status(), 200, "{code}");
        assert_eq!(harness.count(&format!("ps.{code}")), 1);
        assert_eq!(harness.count("ps.person_token"), 2, "{code}");
        assert_eq!(harness.count("resource.person_token"), 2, "{code}");
        // The second exchange presented the new person token.
        let requests = harness.ps_requests();
        let auths: Vec<_> = requests.iter().filter(|(kind, _)| *kind == "auth").collect();
        assert_ne!(auths[0].1["presented_token"], auths[1].1["presented_token"]);
    }
}

/// `revoked_resource_token`: never resubmitted; the resource is called again and issues
/// another.
#[tokio::test]
async fn revoked_resource_token_is_not_resubmitted() {
    let (harness, result) =
        dance(|scenario| scenario.auth_token_errors = VecDeque::from(["revoked_resource_token"])).await;
    assert_eq!(result.unwrap().status(), 200);
    assert_eq!(harness.count("ps.person_token"), 1);
    assert_eq!(harness.count("resource.person_token"), 2);
    let requests = harness.ps_requests();
    let auths: Vec<_> = requests.iter().filter(|(kind, _)| *kind == "auth").collect();
    assert_ne!(auths[0].1["resource_token"], auths[1].1["resource_token"]);
}

/// `as_unreachable`: the resource is called again after the `Retry-After`, once; a second
/// one is the request's error.
#[tokio::test]
async fn access_server_unreachable_is_retried_once() {
    let (harness, result) = dance(|scenario| scenario.auth_token_errors = VecDeque::from(["as_unreachable"])).await;
    assert_eq!(result.unwrap().status(), 200);
    assert_eq!(harness.count("resource.person_token"), 2);

    let (_, result) =
        dance(|scenario| scenario.auth_token_errors = VecDeque::from(["as_unreachable", "as_unreachable"])).await;
    let error = result.unwrap_err();
    let aauth = aauth_error(&error);
    assert!(matches!(aauth, Error::AccessServerUnreachable { .. }), "{aauth:?}");
    assert!(aauth.to_string().contains("could not reach the resource's access server (as_unreachable)"), "{aauth}");
}

/// Polling's `403 revoked` is its own error, naming what was revoked.
#[tokio::test]
async fn polling_revoked_is_a_typed_error() {
    let harness = Harness::start().await;
    harness.set(|scenario| {
        scenario.consent = Consent::Interaction;
        scenario.poll_revoked = true;
    });
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path()).on_interaction(|_, _| {}).build().unwrap();
    let error = client.http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::Revoked { detail, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(detail.as_deref(), Some("the person token was revoked"));
}

/// Person tokens are kept per mission: a process under a mission does not present the
/// person token another process got under none, and asks for one naming its mission.
#[tokio::test]
async fn person_tokens_are_kept_per_mission() {
    let harness = Harness::start().await;
    // Auth tokens inside the refresh margin are never kept: each request starts from the
    // person token.
    harness.set(|scenario| scenario.auth_token_lifetime = 200);
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let plain = builder(&harness, key.clone(), dir.path()).build().unwrap();
    assert_eq!(plain.http_client().get(data_url(&harness)).send().await.unwrap().status(), 200);
    let again = builder(&harness, key.clone(), dir.path()).build().unwrap();
    assert_eq!(again.http_client().get(data_url(&harness)).send().await.unwrap().status(), 200);
    assert_eq!(harness.count("ps.person_token"), 1, "the shared person token is reused");
    let under_mission = builder(&harness, key, dir.path()).mission("m-1".into()).build().unwrap();
    assert_eq!(under_mission.http_client().get(data_url(&harness)).send().await.unwrap().status(), 200);
    let requests = harness.ps_requests();
    let people: Vec<_> = requests.iter().filter(|(kind, _)| *kind == "person").map(|(_, body)| body).collect();
    assert_eq!(people.len(), 2, "{requests:?}");
    assert_eq!(people[1]["mission_s256"], "m-1");
}
