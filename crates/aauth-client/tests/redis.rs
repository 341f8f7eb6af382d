//! Replicas sharing their AAuth state in a real `redis-server`: two clients with the same
//! key and agent provider, in the same Redis and no token folder, against the harness
//! (which verifies every signature and keeps a replay cache).

use std::sync::{Arc, Mutex};

use aauth_client::{AAuthClient, AgentKey, Error};
use aauth_harness::{Consent, Harness};
use reqwest::header::CONTENT_TYPE;
use reqwest_middleware::{ClientBuilder, ClientWithMiddleware, Middleware, Next};
use skill_core::SecretString;
use url::Url;

/// Records the `created` of every signed `POST`, after the AAuth middleware signed it.
#[derive(Clone, Default)]
struct CreatedLog(Arc<Mutex<Vec<u64>>>);

#[async_trait::async_trait]
impl Middleware for CreatedLog {
    async fn handle(
        &self,
        request: reqwest::Request,
        extensions: &mut http::Extensions,
        next: Next<'_>,
    ) -> reqwest_middleware::Result<reqwest::Response> {
        if request.method() == reqwest::Method::POST {
            let input = request.headers()["signature-input"].to_str().unwrap();
            let created = input.rsplit_once(";created=").unwrap().1.parse().unwrap();
            self.0.lock().unwrap().push(created);
        }
        next.run(request, extensions).await
    }
}

/// A replica: the shared key, its state in `redis`, the person's interactions sent to
/// `interactions`, its signed POSTs' `created` to `log`.
fn replica(
    harness: &Harness,
    key: &AgentKey,
    redis: &test_peers::RedisServer,
    interactions: tokio::sync::mpsc::UnboundedSender<(Url, String)>,
    log: &CreatedLog,
) -> (AAuthClient, ClientWithMiddleware) {
    let client = AAuthClient::builder(key.clone(), harness.ap.clone())
        .allow_http_loopback(true)
        .state_in_redis(SecretString::from(redis.url()))
        .on_interaction(move |url, code| interactions.send((url.clone(), code.to_owned())).unwrap())
        .build()
        .unwrap();
    assert!(client.agent_token_cache_file().is_none(), "no token folder");
    let reqwest = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let http = ClientBuilder::new(reqwest).with(client.middleware()).with(log.clone()).build();
    (client, http)
}

async fn post(http: &ClientWithMiddleware, harness: &Harness) -> reqwest::Response {
    let url = harness.resource.join("/data").unwrap();
    http.post(url).header(CONTENT_TYPE, "application/json").body(r#"{"query":"all"}"#).send().await.unwrap()
}

/// The person, in their browser, approves.
async fn approve(url: &Url, code: &str) {
    let response = reqwest::Client::new()
        .post(url.clone())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(format!("code={code}&decision=approve"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}

/// The first replica enrolls and gets the person's approval; the second presents the auth
/// token the first kept, and calls alternating between them, back to back to one path,
/// are each signed in a second of their own: the harness refuses none as a replay.
#[tokio::test]
async fn replicas_share_one_enrollment_one_approval_and_never_sign_a_replay() {
    let redis = test_peers::RedisServer::start();
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let key = AgentKey::generate();
    let (sender, mut interactions) = tokio::sync::mpsc::unbounded_channel();
    let log = CreatedLog::default();
    let (_first, first) = replica(&harness, &key, &redis, sender.clone(), &log);
    let (_second, second) = replica(&harness, &key, &redis, sender, &log);

    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        harness.wait_for_ps_polls(1).await;
        approve(&url, &code).await;
    };
    let (response, ()) = tokio::join!(post(&first, &harness), person);
    assert_eq!(response.status(), 200, "{:?}", harness.counts());
    for round in 0..6 {
        let replica = if round % 2 == 0 { &second } else { &first };
        assert_eq!(post(replica, &harness).await.status(), 200, "{:?}", harness.counts());
    }
    assert!(interactions.try_recv().is_err(), "the person was asked again");
    for (step, count) in [
        ("ap.bootstrap", 1),
        ("ps.person_token", 1),
        ("ps.auth_token", 1),
        ("ps.interaction_decision", 1),
        ("resource.auth_token", 7),
        ("rejected:replay", 0),
    ] {
        assert_eq!(harness.count(step), count, "{step}: {:?}", harness.counts());
    }
    // Every signed POST to the resource (the first call's three attempts, then one a
    // call), in the order signed: strictly increasing across the replicas.
    let created = log.0.lock().unwrap().clone();
    assert_eq!(created.len(), 9, "{created:?}");
    assert!(created.windows(2).all(|pair| pair[0] < pair[1]), "{created:?}");
}

/// With Redis down, a call fails saying so, and nothing is signed.
#[tokio::test]
async fn with_redis_down_a_call_fails_and_signs_nothing() {
    let harness = Harness::start().await;
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let client = AAuthClient::builder(AgentKey::generate(), harness.ap.clone())
        .allow_http_loopback(true)
        .state_in_redis(SecretString::from(format!("redis://:hunter2@127.0.0.1:{port}/")))
        .build()
        .unwrap();
    let url = harness.resource.join("/data").unwrap();
    let error = client.http_client().post(url).body("{}").header(CONTENT_TYPE, "application/json").send().await;
    let error = error.unwrap_err();
    let error = Error::from_middleware(&error).unwrap();
    assert!(matches!(error, Error::RedisState { .. }), "{error:?}");
    assert!(error.to_string().starts_with("AAuth state in Redis: cannot read the agent token"), "{error}");
    assert!(!format!("{error} {error:?} {client:?}").contains("hunter2"));
    assert_eq!(harness.count("verified"), 0);
}
