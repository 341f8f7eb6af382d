//! Interop with independent AAuth -11 implementations, unmodified, from PyPI: the person
//! server and access server of `introspection-aauth`, and an agent provider and a
//! resource built on `aauth` 0.5.0's building blocks (`tests/aauth_world.py`), on port
//! 443 of loopback addresses under a `trustme` test CA. The full flow: enrollment at the
//! provider's own issuance URL (`hwk`, `{agent_token, expires_in}`), a mission proposed
//! and approved by the person through the person server's own API, a person token under
//! the mission, an auth token from the access server through the person server, the
//! resource's `200`; a second client with the same key and token folder reuses the
//! tokens; the mission is completed.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use aauth_client::{AAuthClient, AgentKey, Error};
use serde_json::Value;
use url::Url;

/// The Python world, stopped on drop.
struct World {
    child: Child,
    ready: Value,
    _dir: tempfile::TempDir,
}

impl Drop for World {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl World {
    fn start() -> World {
        let dir = tempfile::tempdir().unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/aauth_world.py");
        let mut child = Command::new(test_peers::aauth_peers_python_or_panic())
            .arg(script)
            .arg(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let ready =
            serde_json::from_str(line.strip_prefix("READY ").unwrap_or_else(|| panic!("not ready: {line}"))).unwrap();
        World { child, ready, _dir: dir }
    }

    fn url(&self, name: &str) -> Url {
        Url::parse(self.ready[name].as_str().unwrap()).unwrap()
    }

    /// Approves, as the person, the first approval of `kind` once the person server
    /// waits on it, through its own API (`PersonServer.decide`).
    async fn approve(&self, kind: &str) {
        let control = self.url("control");
        let http = reqwest::Client::new();
        loop {
            let waiting = http.get(control.join("/approvals").unwrap()).send().await.unwrap().bytes().await.unwrap();
            let waiting: Vec<Value> = serde_json::from_slice(&waiting).unwrap();
            if let Some(approval) = waiting.iter().find(|approval| approval["kind"] == kind) {
                let decided = http
                    .post(control.join("/decide").unwrap())
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(serde_json::json!({"id": approval["id"]}).to_string());
                assert_eq!(decided.send().await.unwrap().status(), 200);
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    fn client(&self, key: AgentKey, dir: &std::path::Path, mission: Option<&str>) -> AAuthClient {
        let ca = std::path::PathBuf::from(self.ready["ca"].as_str().unwrap());
        let mut builder = AAuthClient::builder(key, self.url("ap"))
            .ca_file(&ca)
            .enroll_url(self.url("ap").join("/ap/token").unwrap())
            .agent_token_cache_dir(dir.to_owned())
            .login_hint("dana".into())
            .tenant("acme".into())
            .on_interaction(|_, _| {});
        if let Some(mission) = mission {
            builder = builder.mission(mission.to_owned());
        }
        builder.build().unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_flow_with_introspection_aauth_and_aauth() {
    let world = World::start();
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let resource = world.url("resource");

    let client = world.client(key.clone(), dir.path(), None);
    let identity = client.enroll().await.unwrap();
    // Agent identifiers keep their case (protocol -11).
    assert_eq!(identity.agent_id, "aauth:OmniAgent@127.0.0.2");
    assert_eq!(identity.person_server, Some(world.url("ps")));

    let resources = [resource.clone()];
    let (mission, ()) = tokio::join!(client.propose_mission("read the data", &resources), world.approve("mission"));
    let mission = mission.unwrap();
    assert!(mission.mission.contains("read the data"), "{mission:?}");
    assert_eq!(mission.resources, [resource.as_str().trim_end_matches('/')]);

    let client = world.client(key.clone(), dir.path(), Some(&mission.s256));
    let response = client.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["iss"], world.ready["as"], "the access server issued the auth token: {body}");
    assert_eq!(body["mission_s256"], mission.s256.as_str());

    // Another client (another process) with the same key and folder presents the cached
    // auth token: no new token anywhere.
    let again = world.client(key, dir.path(), Some(&mission.s256));
    let response = again.http_client().get(resource.join("/data").unwrap()).send().await.unwrap();
    assert_eq!(response.status(), 200);

    let (completed, ()) = tokio::join!(again.complete_mission(&mission.s256, "done"), world.approve("completion"));
    completed.unwrap();
    // A completed mission is over: a person token under it is refused, clearly.
    let fresh = tempfile::tempdir().unwrap();
    let late = world.client(AgentKey::generate(), fresh.path(), Some(&mission.s256));
    let error = late.http_client().get(resource.join("/data").unwrap()).send().await.unwrap_err();
    let aauth = Error::from_middleware(&error).unwrap();
    assert!(matches!(aauth, Error::MissionNotFound { .. } | Error::MissionTerminated { .. }), "{aauth:?}");
}
