//! Requests that end in a typed error: a resource token bound to another key, endless
//! requirement rounds, a stream body, a failing person server; what the errors show.

use super::*;

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
