//! The client's own exchanges are bounded: a server that never answers fails them after
//! the exchange timeout, and an answer larger than 1 MiB is not read. The caller's own
//! requests are not bounded by the client.

use std::time::Duration;

use aauth_client::{AAuthClient, AgentKey, Error, Step};
use aauth_harness::Harness;
use axum::Router;
use axum::body::Body;
use axum::routing::{get, post};
use url::Url;

/// The bound the tests configure: short, so that a test that waits for it ends soon.
const SHORT: Duration = Duration::from_millis(300);

/// Serves `router` on a loopback port; its base URL.
async fn serve(router: Router) -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    url
}

/// A server that accepts connections and never answers on them.
async fn silent_server() -> Url {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = Url::parse(&format!("http://{}", listener.local_addr().unwrap())).unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((stream, _)) = listener.accept().await {
            held.push(stream);
        }
    });
    url
}

fn client(agent_provider: &Url) -> AAuthClient {
    AAuthClient::builder(AgentKey::generate(), agent_provider.clone())
        .allow_http_loopback(true)
        .exchange_timeout(SHORT)
        .build()
        .unwrap()
}

fn assert_timed_out(error: &Error, expected: Step) {
    let Error::Http { step, source, .. } = error else { panic!("not a transport error: {error:?}") };
    assert_eq!(*step, expected, "{error:?}");
    assert!(matches!(source, reqwest_middleware::Error::Reqwest(source) if source.is_timeout()), "{error:?}");
}

#[tokio::test]
async fn an_agent_provider_that_never_answers_times_out() {
    let error = client(&silent_server().await).enroll().await.unwrap_err();
    assert_timed_out(&error, Step::AgentMetadata);
}

/// Metadata comes at once; the bootstrap request then hangs, headers sent but no body.
#[tokio::test]
async fn a_bootstrap_that_never_finishes_times_out() {
    let router = Router::new();
    let base = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let metadata_base = base.clone();
    let router = router
        .route(
            "/.well-known/aauth-agent.json",
            get(move || async move {
                let id = metadata_base.get().unwrap().clone();
                format!(r#"{{"issuer": "{id}", "bootstrap_endpoint": "{id}/bootstrap"}}"#)
            }),
        )
        .route(
            "/bootstrap",
            post(|| async {
                let endless = futures_util::stream::pending::<Result<Vec<u8>, std::io::Error>>();
                Body::from_stream(endless)
            }),
        );
    let url = serve(router).await;
    base.set(url.as_str().trim_end_matches('/').to_owned()).unwrap();
    let error = client(&url).enroll().await.unwrap_err();
    assert_timed_out(&error, Step::Bootstrap);
}

/// The person server named in the configuration never answers: the request that needs a
/// person token fails at its metadata, after the exchange timeout.
#[tokio::test]
async fn a_person_server_that_never_answers_times_out() {
    let harness = Harness::start().await;
    let client = AAuthClient::builder(AgentKey::generate(), harness.ap.clone())
        .allow_http_loopback(true)
        .exchange_timeout(SHORT)
        .person_server(silent_server().await)
        .build()
        .unwrap();
    let error = client.http_client().get(harness.resource.join("/data").unwrap()).send().await.unwrap_err();
    let aauth = Error::from_middleware(&error).unwrap_or_else(|| panic!("{error:?}"));
    assert_timed_out(aauth, Step::PersonMetadata);
    assert_eq!(harness.count("resource.agent_token"), 1);
}

/// The caller's request may take longer than the exchange timeout: the caller bounds it.
#[tokio::test]
async fn the_callers_requests_are_not_bounded_by_the_client() {
    let harness = Harness::start().await;
    let slow = serve(Router::new().route(
        "/slow",
        get(|| async {
            tokio::time::sleep(SHORT * 3).await;
            "done"
        }),
    ))
    .await;
    let response = client(&harness.ap).http_client().get(slow.join("/slow").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.text().await.unwrap(), "done");
}

/// Metadata of more than 1 MiB is refused, whether its length is announced or not.
#[tokio::test]
async fn oversized_metadata_is_not_read() {
    let huge = || format!(r#"{{"issuer": "{}"}}"#, " ".repeat(1024 * 1024));
    for announced in [true, false] {
        let router = Router::new().route(
            "/.well-known/aauth-agent.json",
            get(move || async move {
                if announced {
                    Body::from(huge())
                } else {
                    let chunks = huge().into_bytes().chunks(64 * 1024).map(<[u8]>::to_vec).collect::<Vec<_>>();
                    Body::from_stream(futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>)))
                }
            }),
        );
        let url = serve(router).await;
        let error = client(&url).enroll().await.unwrap_err();
        assert!(
            matches!(error, Error::ResponseTooLarge { step: Step::AgentMetadata, limit: 1_048_576, .. }),
            "announced {announced}: {error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "fetching the agent provider metadata: {url}.well-known/aauth-agent.json answered with more than 1048576 bytes"
            )
        );
    }
}
