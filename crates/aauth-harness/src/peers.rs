//! The independent AAuth -11 peers from PyPI, run by `peers/aauth_world.py` in the
//! virtual environment xtask installs (`test_peers::aauth_peers_python_or_panic`): the
//! person server and access server of `introspection-aauth`, unmodified, and an agent
//! provider and a resource built on `aauth` 0.5.0's building blocks, each on port 443
//! of its own loopback address under a `trustme` test CA.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use url::Url;

/// The peers' servers, stopped on drop.
pub struct PeerWorld {
    child: Child,
    ready: Value,
    _dir: tempfile::TempDir,
}

impl std::fmt::Debug for PeerWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PeerWorld").field("ready", &self.ready).finish_non_exhaustive()
    }
}

impl Drop for PeerWorld {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl PeerWorld {
    /// Starts the servers on `127.0.0.{first}` to `127.0.0.{first + 3}` (agent provider,
    /// person server, access server, resource); tests that run at once take different
    /// addresses. Returns once they listen.
    pub fn start(first: u8) -> PeerWorld {
        PeerWorld::start_with(first, false)
    }

    /// [`start`](Self::start), with a fifth server on `127.0.0.{first + 4}` (`self`): the
    /// domain of a self-hosted agent, serving what [`publish_self_hosted`](Self::publish_self_hosted)
    /// gave it, which the person and access servers accept as an agent provider.
    pub fn start_self_hosted(first: u8) -> PeerWorld {
        PeerWorld::start_with(first, true)
    }

    fn start_with(first: u8, self_hosted: bool) -> PeerWorld {
        let dir = tempfile::tempdir().unwrap();
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/peers/aauth_world.py");
        let mut command = Command::new(test_peers::aauth_peers_python_or_panic());
        command.arg(script).arg(dir.path()).arg(first.to_string());
        if self_hosted {
            command.arg("self-hosted");
        }
        let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let ready =
            serde_json::from_str(line.strip_prefix("READY ").unwrap_or_else(|| panic!("not ready: {line}"))).unwrap();
        PeerWorld { child, ready, _dir: dir }
    }

    /// The identifier of `server` (`ap`, `ps`, `as`, `resource`), or the control URL
    /// (`control`).
    pub fn url(&self, server: &str) -> Url {
        Url::parse(self.ready[server].as_str().unwrap()).unwrap()
    }

    /// The agent provider's issuance URL.
    pub fn enroll_url(&self) -> Url {
        self.url("ap").join("/ap/token").unwrap()
    }

    /// Publishes a self-hosted agent's metadata and JWKS on the `self` server.
    pub fn publish_self_hosted(&self, documents: &aauth_client::SelfHostedDocuments) {
        let body = serde_json::json!({"metadata": documents.metadata, "jwks": documents.jwks});
        self.control("POST", "/self-hosted", &body.to_string());
    }

    /// The agent provider's refresh URL (`jkt-jwt`).
    pub fn refresh_url(&self) -> Url {
        self.url("ap").join("/ap/refresh").unwrap()
    }

    /// Makes the agent provider issue agent tokens that last `seconds` from now on.
    pub fn set_agent_token_lifetime(&self, seconds: u64) {
        self.control("POST", "/agent-token-lifetime", &serde_json::json!({"seconds": seconds}).to_string());
    }

    /// How many agent tokens the agent provider issued at its issuance URL and at its
    /// refresh URL.
    pub fn agent_provider_calls(&self) -> (u64, u64) {
        let calls: Value = serde_json::from_str(&self.control("GET", "/ap-calls", "")).unwrap();
        (calls["token"].as_u64().unwrap(), calls["refresh"].as_u64().unwrap())
    }

    /// The agent identifier the agent provider gives.
    pub fn agent_id(&self) -> String {
        self.ready["agent_id"].as_str().unwrap().to_owned()
    }

    /// The test CA's certificate (PEM), which the servers' certificates chain to.
    pub fn ca_file(&self) -> PathBuf {
        PathBuf::from(self.ready["ca"].as_str().unwrap())
    }

    /// Approves, as the person, the first approval of `kind` (`mission`, `completion`,
    /// `auth_token`) once the person server waits on it, through its own API
    /// (`PersonServer.decide`). Blocks: async tests call it on a blocking thread.
    pub fn approve(&self, kind: &str) {
        loop {
            let waiting: Vec<Value> = serde_json::from_str(&self.control("GET", "/approvals", "")).unwrap();
            if let Some(approval) = waiting.iter().find(|approval| approval["kind"] == kind) {
                self.control("POST", "/decide", &serde_json::json!({"id": approval["id"]}).to_string());
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// One request to the control server, its `200` body.
    fn control(&self, method: &str, path: &str, body: &str) -> String {
        let control = self.url("control");
        let mut stream = TcpStream::connect(("127.0.0.1", control.port().unwrap())).unwrap();
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 200"), "{method} {path}: {answer}");
        body.to_owned()
    }
}
