//! Interop with independent AAuth -11 implementations, unmodified, from PyPI
//! ([`aauth_harness::PeerWorld`]): the person server and access server of
//! `introspection-aauth`, and an agent provider and a resource built on `aauth` 0.5.0's
//! building blocks, on port 443 of loopback addresses under a `trustme` test CA. The
//! full flow: enrollment at the provider's own issuance URL (`hwk`, `{agent_token,
//! expires_in}`), a mission proposed and approved by the person through the person
//! server's own API, a person token under the mission, an auth token from the access
//! server through the person server, the resource's `200`; a second client with the
//! same key and token folder reuses the tokens; the mission is completed, after which a
//! person token under it is refused with a clear error.

use std::sync::Arc;

use aauth_client::{AAuthClient, AgentKey, Error};
use aauth_harness::PeerWorld;
use serde_json::Value;

fn client(world: &PeerWorld, key: AgentKey, dir: &std::path::Path, mission: Option<&str>) -> AAuthClient {
    let mut builder = AAuthClient::builder(key, world.url("ap"))
        .ca_file(&world.ca_file())
        .enroll_url(world.enroll_url())
        .agent_token_cache_dir(dir.to_owned())
        .login_hint("dana".into())
        .tenant("acme".into())
        .on_interaction(|_, _| {});
    if let Some(mission) = mission {
        builder = builder.mission(mission.to_owned());
    }
    builder.build().unwrap()
}

/// The person approves the first approval of `kind`, from a blocking thread.
async fn approve(world: &Arc<PeerWorld>, kind: &'static str) {
    let world = world.clone();
    tokio::task::spawn_blocking(move || world.approve(kind)).await.unwrap();
}

/// An ES256 agent key goes through the same flow: enrollment (`hwk` with `y`), a mission,
/// the resource's `200`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn es256_agent_keys_work_with_the_pypi_peers() {
    let world = Arc::new(PeerWorld::start(10));
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate_of(aauth_client::KeyType::Es256);
    let resource = world.url("resource");
    let first = client(&world, key.clone(), dir.path(), None);
    let resources = [resource.clone()];
    let (mission, ()) = tokio::join!(first.propose_mission("read the data", &resources), approve(&world, "mission"));
    let mission = mission.unwrap();
    let working = client(&world, key, dir.path(), Some(&mission.s256));
    let response = working.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);
}

/// An agent token about to expire is refreshed at the provider's refresh URL under
/// `jkt-jwt` (bootstrap -02), which `aauth-signing`'s verifier checks (the naming JWT's
/// key, `iss` and signature, and the request with the key it delegates to), for an
/// Ed25519 and an ES256 key; the refreshed token is then fresh and used.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_tokens_are_refreshed_under_jkt_jwt_at_the_pypi_provider() {
    let world = Arc::new(PeerWorld::start(14));
    for (n, key) in [AgentKey::generate(), AgentKey::generate_of(aauth_client::KeyType::Es256)].into_iter().enumerate()
    {
        let dir = tempfile::tempdir().unwrap();
        let client = AAuthClient::builder(key, world.url("ap"))
            .ca_file(&world.ca_file())
            .enroll_url(world.enroll_url())
            .refresh_url(world.refresh_url())
            .agent_token_cache_dir(dir.path().to_owned())
            .build()
            .unwrap();
        // Within the 5-minute margin from the start: the next use refreshes it.
        world.set_agent_token_lifetime(120);
        let first = client.enroll().await.unwrap();
        world.set_agent_token_lifetime(3600);
        let refreshed = client.agent_identity().await.unwrap();
        let n = n as u64 + 1;
        assert_eq!(world.agent_provider_calls(), (n, n));
        assert_eq!(refreshed.agent_id, first.agent_id);
        assert!(refreshed.expires_at > first.expires_at);
        client.agent_identity().await.unwrap();
        assert_eq!(world.agent_provider_calls(), (n, n));
    }
}

/// A self-hosted agent (bootstrap -02): no agent provider; the agent's own domain (the
/// world's fifth server) serves the metadata and JWKS the client gives, the agent issues
/// its own agent token, and `introspection-aauth`'s person and access servers and the
/// `aauth` resource verify it against them through the whole flow: a mission, a person
/// token, an auth token, the resource's `200`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_self_hosted_agent_goes_through_the_flow_with_the_pypi_peers() {
    let world = Arc::new(PeerWorld::start_self_hosted(18));
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let resource = world.url("resource");
    let self_hosted = |mission: Option<&str>| {
        let mut builder = AAuthClient::builder(key.clone(), world.url("self"))
            .self_hosted("Dana.Home".into())
            .person_server(world.url("ps"))
            .ca_file(&world.ca_file())
            .agent_token_cache_dir(dir.path().to_owned())
            .login_hint("dana".into())
            .tenant("acme".into());
        if let Some(mission) = mission {
            builder = builder.mission(mission.to_owned());
        }
        builder.build().unwrap()
    };
    let first = self_hosted(None);
    // Until its documents are published, the person server cannot verify its token.
    let resources = [resource.clone()];
    let unverified = first.propose_mission("read the data", &resources).await.unwrap_err();
    assert!(unverified.to_string().contains("401"), "{unverified}");
    world.publish_self_hosted(&first.self_hosted_documents().unwrap());
    let identity = first.enroll().await.unwrap();
    assert_eq!(identity.agent_id, "aauth:Dana.Home@127.0.0.22");
    assert_eq!(identity.person_server, Some(world.url("ps")));

    let (mission, ()) = tokio::join!(first.propose_mission("read the data", &resources), approve(&world, "mission"));
    let mission = mission.unwrap();
    let working = self_hosted(Some(&mission.s256));
    let response = working.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["mission_s256"], mission.s256.as_str());
    // Nothing went to the world's agent provider.
    assert_eq!(world.agent_provider_calls(), (0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_flow_with_introspection_aauth_and_aauth() {
    let world = Arc::new(PeerWorld::start(2));
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let resource = world.url("resource");

    let first = client(&world, key.clone(), dir.path(), None);
    let identity = first.enroll().await.unwrap();
    // Agent identifiers keep their case (protocol -11).
    assert_eq!(identity.agent_id, "aauth:OmniAgent@127.0.0.2");
    assert_eq!(identity.agent_id, world.agent_id());
    assert_eq!(identity.person_server, Some(world.url("ps")));

    let resources = [resource.clone()];
    let (mission, ()) = tokio::join!(first.propose_mission("read the data", &resources), approve(&world, "mission"));
    let mission = mission.unwrap();
    assert!(mission.mission.contains("read the data"), "{mission:?}");
    assert_eq!(mission.resources, [resource.as_str().trim_end_matches('/')]);

    let working = client(&world, key.clone(), dir.path(), Some(&mission.s256));
    let response = working.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["iss"], world.url("as").as_str().trim_end_matches('/'), "the access server issued it: {body}");
    assert_eq!(body["mission_s256"], mission.s256.as_str());

    // Another client (another process) with the same key and folder presents the cached
    // auth token.
    let again = client(&world, key, dir.path(), Some(&mission.s256));
    let response = again.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);

    let (completed, ()) = tokio::join!(again.complete_mission(&mission.s256, "done"), approve(&world, "completion"));
    completed.unwrap();
    // A completed mission is over: a person token under it is refused, clearly.
    let fresh = tempfile::tempdir().unwrap();
    let late = client(&world, AgentKey::generate(), fresh.path(), Some(&mission.s256));
    let error = late.http_client().get(resource.join("/data").unwrap()).send().await.unwrap_err();
    let aauth = Error::from_middleware(&error).unwrap();
    assert!(matches!(aauth, Error::MissionNotFound { .. } | Error::MissionTerminated { .. }), "{aauth:?}");
}
