//! The `aauth` commands against independent AAuth -11 implementations from PyPI,
//! unmodified (`aauth_harness::PeerWorld`: `introspection-aauth`'s person and access
//! servers, an agent provider and a resource built on `aauth` 0.5.0), as a new user runs
//! them: `enroll` at the provider's own issuance URL, `mission propose` approved by the
//! person, `fetch` with a person token under the mission and an auth token from the
//! access server through the person server, a second `fetch` reusing the tokens,
//! `mission status`, `mission complete`; with an ES256 key (`aauth.key_type`). Also an
//! OpenAPI skill with `aauth: true` called under the current mission, and a self-hosted
//! agent (`aauth.self_hosted`, `aauth publish`) going through the same flow.

use aauth_harness::PeerWorld;

use crate::{Home, json, run};

fn home_for(world: &PeerWorld) -> Home {
    Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\naauth:\n  agent_provider: {}\n  enroll_url: {}\n  ca_file: {}\n  \
         login_hint: dana\n  tenant: acme\n  justification: to read the data\n  key_type: es256\n",
        world.url("ap"),
        world.enroll_url(),
        world.ca_file().display(),
    ))
}

#[test]
fn mission_then_fetch_then_complete_against_the_pypi_peers() {
    let world = PeerWorld::start(6);
    let home = home_for(&world);
    let resource = world.url("resource").join("/data").unwrap();

    let (code, enrolled, stderr) = run(home.omniagent(&["--json", "aauth", "enroll"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&enrolled)["agent_id"], world.agent_id());
    let key: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join("aauth/agent.jwk")).unwrap()).unwrap();
    assert_eq!((&key["kty"], &key["alg"]), (&"EC".into(), &"ES256".into()));

    let proposing = home.omniagent(&[
        "--json",
        "aauth",
        "mission",
        "propose",
        "read the data",
        "--resource",
        world.url("resource").as_str(),
    ]);
    let ((code, proposed, stderr), ()) = std::thread::scope(|scope| {
        let proposal = scope.spawn(|| run(proposing));
        world.approve("mission");
        (proposal.join().unwrap(), ())
    });
    assert_eq!(code, 0, "{stderr}");
    let mission = json(&proposed);
    assert!(mission["mission"].as_str().unwrap().contains("read the data"), "{mission}");

    let (code, status, stderr) = run(home.omniagent(&["--json", "aauth", "mission", "status"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&status)["s256"], mission["s256"]);

    let (code, fetched, stderr) = run(home.omniagent(&["aauth", "fetch", resource.as_str()]));
    assert_eq!(code, 0, "{stderr}");
    let body = json(&fetched);
    assert_eq!(body["iss"], world.url("as").as_str().trim_end_matches('/'), "{body}");
    assert_eq!(body["mission_s256"], mission["s256"]);
    // Another process reuses the tokens the first left in the home.
    let (code, again, stderr) = run(home.omniagent(&["aauth", "fetch", resource.as_str()]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&again)["sub"], body["sub"]);

    let completing = home.omniagent(&["aauth", "mission", "complete", "--summary", "read it"]);
    let (code, _, stderr) = std::thread::scope(|scope| {
        let completion = scope.spawn(|| run(completing));
        world.approve("completion");
        completion.join().unwrap()
    });
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(home.omniagent(&["aauth", "mission", "status"]));
    assert_eq!(code, 1);
    assert!(stderr.contains("no current mission"), "{stderr}");
}

/// The person approves the first approval of `kind` while `command` runs.
fn approved(world: &PeerWorld, command: assert_cmd::Command, kind: &str) -> (i32, String, String) {
    std::thread::scope(|scope| {
        let running = scope.spawn(|| run(command));
        world.approve(kind);
        running.join().unwrap()
    })
}

const DATA_DOCUMENT: &str = r#"{"openapi": "3.1.0", "info": {"title": "PyPI resource", "version": "1"},
  "paths": {"/data": {"get": {"operationId": "read", "responses": {"200": {"description": "the data"}}}}}}"#;

/// An OpenAPI skill with `aauth: true` calls the resource under the current mission: its
/// person token request names the mission, and the auth token comes from the access
/// server through the person server.
#[test]
fn an_openapi_skill_calls_under_the_current_mission() {
    let world = PeerWorld::start(23);
    let home = Home::new();
    home.write("data.json", DATA_DOCUMENT);
    let home = home.with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\naauth:\n  agent_provider: {}\n  enroll_url: {}\n  ca_file: {}\n  \
         login_hint: dana\n  tenant: acme\nopenapi:\n  data: {{spec: data.json, base_url: '{}', aauth: true}}\n",
        world.url("ap"),
        world.enroll_url(),
        world.ca_file().display(),
        world.url("resource"),
    ));
    let resource = world.url("resource");
    let propose =
        home.omniagent(&["--json", "aauth", "mission", "propose", "read the data", "--resource", resource.as_str()]);
    let (code, proposed, stderr) = approved(&world, propose, "mission");
    assert_eq!(code, 0, "{stderr}");
    let mission = json(&proposed);

    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "call", "data__read"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let answer = &json(&stdout)["structuredContent"];
    assert_eq!(answer["mission_s256"], mission["s256"], "{answer}");
    assert_eq!(answer["iss"], world.url("as").as_str().trim_end_matches('/'), "{answer}");
    assert_eq!(answer["tenant"], "acme", "{answer}");
}

/// A self-hosted agent: `aauth publish` writes its metadata and JWKS, which its domain
/// (the world's fifth server) then serves; it issues its own agent token (`whoami`), and
/// the person and access servers and the resource verify it through a mission and a fetch.
#[test]
fn a_self_hosted_agent_publishes_its_documents_and_goes_through_the_flow() {
    let world = PeerWorld::start_self_hosted(27);
    let home = Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\naauth:\n  agent_provider: {}\n  self_hosted: Dana\n  \
         person_server: {}\n  ca_file: {}\n  login_hint: dana\n  tenant: acme\n",
        world.url("self"),
        world.url("ps"),
        world.ca_file().display(),
    ));
    let site = home.path().join("site");
    let (code, _, stderr) = run(home.omniagent(&["aauth", "publish", site.to_str().unwrap()]));
    assert_eq!(code, 0, "{stderr}");
    let read =
        |path: &str| -> serde_json::Value { serde_json::from_slice(&std::fs::read(site.join(path)).unwrap()).unwrap() };
    let documents =
        aauth_client::SelfHostedDocuments { metadata: read(".well-known/aauth-agent.json"), jwks: read("jwks.json") };
    assert_eq!(documents.metadata["issuer"], world.url("self").as_str().trim_end_matches('/'));
    world.publish_self_hosted(&documents);

    let (code, whoami, stderr) = run(home.omniagent(&["--json", "aauth", "whoami"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&whoami)["agent_id"], "aauth:Dana@127.0.0.31");

    let resource = world.url("resource");
    let propose =
        home.omniagent(&["--json", "aauth", "mission", "propose", "read the data", "--resource", resource.as_str()]);
    let (code, proposed, stderr) = approved(&world, propose, "mission");
    assert_eq!(code, 0, "{stderr}");
    let (code, fetched, stderr) = run(home.omniagent(&["aauth", "fetch", resource.join("/data").unwrap().as_str()]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&fetched)["mission_s256"], json(&proposed)["s256"]);
    assert_eq!(world.agent_provider_calls(), (0, 0));
}

/// `aauth publish` is for a self-hosted agent only.
#[test]
fn publish_without_self_hosted_is_a_usage_error() {
    let home =
        Home::new().with_config("compiled: {memory: {enabled: false}}\naauth:\n  agent_provider: https://ap.example\n");
    let (code, _, stderr) = run(home.omniagent(&["aauth", "publish", home.path().join("site").to_str().unwrap()]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("set aauth.self_hosted"), "{stderr}");
}
