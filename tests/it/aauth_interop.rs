//! The `aauth` commands against independent AAuth -11 implementations from PyPI,
//! unmodified (`aauth_harness::PeerWorld`: `introspection-aauth`'s person and access
//! servers, an agent provider and a resource built on `aauth` 0.5.0), as a new user runs
//! them: `enroll` at the provider's own issuance URL, `mission propose` approved by the
//! person, `fetch` with a person token under the mission and an auth token from the
//! access server through the person server, a second `fetch` reusing the tokens,
//! `mission status`, `mission complete`; with an ES256 key (`aauth.key_type`).

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
