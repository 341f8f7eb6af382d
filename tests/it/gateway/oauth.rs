//! The gateway as an OAuth 2.1 resource server (`serve.oauth`), against a real
//! authorization server (npm `oidc-provider`, run by `tests/fixtures/oauth/issuer.mjs`
//! with client credentials, resource indicators and RS256 JWT access tokens): valid
//! tokens reach each identity's own agent through the Python SDK; expired tokens, tokens
//! for another audience or from another issuer, and tokens without the scope are refused
//! with the exact `WWW-Authenticate`; a new signing key is picked up without a restart.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_peers::sample_server_or_panic as sample_server;

use super::{HttpGateway, free_port, python, text_of};
use crate::Home;

/// `issuer.mjs` on a free loopback port, stopped when dropped.
struct Issuer {
    child: Child,
    stdin: ChildStdin,
    url: String,
    port: u16,
    lines: Receiver<String>,
}

impl Issuer {
    fn start() -> Self {
        let install = test_peers::oidc_provider_or_panic();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/oauth/issuer.mjs");
        let mut child = std::process::Command::new(test_peers::oidc_provider_node(&install))
            .arg(script)
            .arg(test_peers::oidc_provider_package(&install))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("node runs the issuer");
        let stdin = child.stdin.take().unwrap();
        let (send, lines) = channel();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let first = lines.recv_timeout(Duration::from_secs(30)).expect("the issuer starts");
        let url = first.strip_prefix("listening on ").unwrap_or_else(|| panic!("not started: {first}")).to_owned();
        let port = url.rsplit(':').next().unwrap().parse().unwrap();
        Self { child, stdin, url, port, lines }
    }

    /// An access token of `client` for `resource` with `scope`, by the client
    /// credentials grant.
    fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let body = format!(
            "grant_type=client_credentials&client_id={client}&client_secret={client}-secret&scope={}&resource={}",
            scope.replace(' ', "+"),
            resource.replace(':', "%3A").replace('/', "%2F")
        );
        let request = format!(
            "POST /token HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.port,
            body.len()
        );
        let (status, _, body) = raw_http(self.port, &request);
        assert_eq!(status, 200, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        answer["access_token"].as_str().unwrap().to_owned()
    }

    /// Has the issuer sign with a new key (`kid` `rsa-2`, ...), and returns its `kid`.
    fn rotate(&mut self) -> String {
        self.stdin.write_all(b"rotate\n").unwrap();
        loop {
            let line = self.lines.recv_timeout(Duration::from_secs(30)).expect("the issuer rotates");
            // oidc-provider's own notices come on stdout too.
            if let Some(kid) = line.strip_prefix("rotated ") {
                return kid.to_owned();
            }
        }
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `request` to the loopback `port` and returns the status, the headers (names in
/// lower case) and the body (as sent: the JSON answers read here have a length, not
/// chunks).
fn raw_http(port: u16, request: &str) -> (u16, Vec<(String, String)>, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("the server listens");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").expect("an HTTP response");
    let mut lines = head.lines();
    let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|code| code.parse().ok()).unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    (status, headers, body.to_owned())
}

/// The status and `WWW-Authenticate` of an `initialize` sent to the gateway with `token`.
fn initialize(port: u16, token: Option<&str>) -> (u16, Option<String>) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let authorization = token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{authorization}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let (status, headers, _) = raw_http(port, &request);
    let challenge = headers.into_iter().find(|(name, _)| name == "www-authenticate").map(|(_, value)| value);
    (status, challenge)
}

fn get_json(port: u16, path: &str) -> Value {
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let (status, _, body) = raw_http(port, &request);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn oauth_tokens_of_a_real_issuer_reach_each_identitys_own_agent() {
    let mut issuer = Issuer::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}
mcp:
  servers:
    sample: {{command: {sample}}}
serve:
  url: {resource}
  clients:
    ops: {{token: \"env:OPS_TOKEN\"}}
  oauth:
    issuer: {issuer}
    scopes: [mcp:tools]
    agents: {{alice: alice, bob: bob, brief: ~}}
agents:
  alice: {{mcp: {{servers: {{sample: {{command: {sample}, secrets: {{GATEWAY_SECRET: \"env:ALICE_SECRET\"}}}}}}}}}}
  bob: {{mcp: {{servers: {{sample: {{command: {sample}, secrets: {{GATEWAY_SECRET: \"env:BOB_SECRET\"}}}}}}}}}}
",
        sample = sample_server().display(),
        issuer = issuer.url,
    ));
    let env = [("OPS_TOKEN", "token-of-ops"), ("ALICE_SECRET", "secret-of-alice"), ("BOB_SECRET", "secret-of-bob")];
    let gateway = HttpGateway::start_on(port, &home, &[], &env);
    let stderr = || gateway.stderr.lock().unwrap().clone();

    // A token that lives a second (and the leeway), taken first so the test can see it expire.
    let brief = issuer.token("brief", &resource, "mcp:tools");
    let brief_taken = Instant::now();
    assert_eq!(initialize(port, Some(&brief)).0, 200, "{}", stderr());

    // The metadata, at both well-known paths, without a token.
    let metadata = get_json(port, "/.well-known/oauth-protected-resource/mcp");
    assert_eq!(
        metadata,
        json!({
            "resource": resource,
            "authorization_servers": [issuer.url],
            "scopes_supported": ["mcp:tools"],
            "bearer_methods_supported": ["header"],
            "resource_name": "omniagent gateway",
        })
    );
    assert_eq!(get_json(port, "/.well-known/oauth-protected-resource"), metadata);

    // Two identities, each with its own agent (and its own upstream process).
    let plan = json!({"calls": [["sample__env", {"name": "GATEWAY_SECRET"}], ["sample__pid", {}]]});
    let mut tokens = Vec::new();
    let mut pids = Vec::new();
    for (client, secret) in [("alice", "secret-of-alice"), ("bob", "secret-of-bob")] {
        let token = issuer.token(client, &resource, "mcp:tools");
        for mode in ["legacy", "2026-07-28"] {
            let out = python(mode, &["http", &gateway.url(), &token], plan.clone(), &[]);
            assert_eq!(text_of(&out["calls"][0]), secret, "{client} {mode}: {}", stderr());
            pids.push(text_of(&out["calls"][1]).to_owned());
        }
        tokens.push(token);
    }
    assert_eq!(pids[0], pids[1], "one agent per identity, across sessions and eras");
    assert_ne!(pids[0], pids[2], "alice and bob are kept apart");
    // The static token still gets in, beside OAuth.
    assert_eq!(initialize(port, Some("token-of-ops")).0, 200);

    let metadata_url = format!("http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp");
    let invalid = |why: &str| {
        (
            401,
            Some(format!(
                r#"Bearer resource_metadata="{metadata_url}", error="invalid_token", error_description="{why}""#
            )),
        )
    };
    assert_eq!(
        initialize(port, None),
        (401, Some(format!(r#"Bearer resource_metadata="{metadata_url}", scope="mcp:tools""#)))
    );
    let elsewhere = issuer.token("alice", "http://127.0.0.1:9/other", "mcp:tools");
    assert_eq!(initialize(port, Some(&elsewhere)), invalid("the token is for another audience"));
    let other_issuer = Issuer::start();
    let forged = other_issuer.token("alice", &resource, "mcp:tools");
    assert_eq!(initialize(port, Some(&forged)), invalid("the token's signature does not verify"), "another issuer");
    let unscoped = issuer.token("alice", &resource, "mcp:other");
    assert_eq!(
        initialize(port, Some(&unscoped)),
        (
            403,
            Some(format!(
                r#"Bearer resource_metadata="{metadata_url}", error="insufficient_scope", scope="mcp:tools", error_description="the token lacks a required scope""#
            ))
        )
    );
    let carol = issuer.token("carol", &resource, "mcp:tools");
    assert_eq!(initialize(port, Some(&carol)).0, 403, "an identity mapped to no agent");
    assert_eq!(initialize(port, Some("not-a-jwt")), invalid("the token is not a JWT"));

    // Expired: one second of life, ten of leeway.
    std::thread::sleep(Duration::from_secs(13).saturating_sub(brief_taken.elapsed()));
    assert_eq!(initialize(port, Some(&brief)), invalid("the token has expired"));

    // A new key: tokens signed with it get in once the gateway fetches the keys again
    // (at most every 10 s), with no restart; the old key is then gone (a token of it not
    // presented before is refused; those verified in the last minute are still taken).
    let old_key = issuer.token("alice", &resource, "mcp:tools");
    let kid = issuer.rotate();
    assert_eq!(kid, "rsa-2");
    let rotated = issuer.token("alice", &resource, "mcp:tools");
    let started = Instant::now();
    while initialize(port, Some(&rotated)).0 != 200 {
        assert!(started.elapsed() < Duration::from_secs(15), "the new key was not picked up: {}", stderr());
        std::thread::sleep(Duration::from_millis(500));
    }
    let out = python("2026-07-28", &["http", &gateway.url(), &rotated], plan, &[]);
    assert_eq!(text_of(&out["calls"][0]), "secret-of-alice");
    assert_eq!(initialize(port, Some(&old_key)), invalid("the token is not signed by a key of the issuer"));

    let log = stderr();
    for token in tokens.iter().chain([&brief, &rotated, &forged, &unscoped]) {
        assert!(!log.contains(token.as_str()), "a token in the gateway's log:\n{log}");
    }
}

#[test]
fn a_policy_rule_reads_the_claims_of_an_oauth_identity() {
    let issuer = Issuer::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}
mcp: {{servers: {{sample: {{command: {sample}}}}}}}
serve:
  url: {resource}
  oauth: {{issuer: {issuer}, scopes: [mcp:tools], agents: {{alice: ~, bob: ~}}}}
policy:
  rules:
    - {{name: no-pids-for-bob, deny: 'client.claims.client_id == \"bob\" && tool.name == \"sample__pid\"'}}
",
        sample = sample_server().display(),
        issuer = issuer.url,
    ));
    let gateway = HttpGateway::start_on(port, &home, &[], &[]);
    let plan = json!({"calls": [["sample__pid", {}]]});
    let call = |client: &str| {
        let token = issuer.token(client, &resource, "mcp:tools");
        python("2026-07-28", &["http", &gateway.url(), &token], plan.clone(), &[])
    };
    let bob = call("bob");
    let names: Vec<&str> = bob["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(!names.contains(&"sample__pid") && names.contains(&"sample__add"), "{names:?}");
    assert_eq!(bob["calls"][0]["isError"], json!(true));
    assert!(text_of(&bob["calls"][0]).contains("`no-pids-for-bob`"), "{}", bob["calls"][0]);
    let alice = call("alice");
    assert!(text_of(&alice["calls"][0]).parse::<u32>().is_ok(), "alice gets the pid: {}", alice["calls"][0]);
}

/// The console (`serve.console`) lets in an OAuth identity whose token holds the scope
/// `omniagent:admin`, by bearer token and by its sign-in form, and no other.
#[test]
fn an_oauth_token_with_the_admin_scope_opens_the_console_and_one_without_it_does_not() {
    let issuer = Issuer::start();
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nserve:\n  url: {resource}\n  console: true\n  \
         oauth: {{issuer: {issuer}, scopes: [mcp:tools], agents: {{alice: ~, bob: ~}}}}\n",
        issuer = issuer.url,
    ));
    let _gateway = HttpGateway::start_on(port, &home, &[], &[]);
    let get = |token: &str| {
        let request = format!(
            "GET /console HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
        );
        raw_http(port, &request)
    };
    let admin = issuer.token("alice", &resource, "mcp:tools omniagent:admin");
    let (status, _, body) = get(&admin);
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("signed in as <code>oauth:alice</code>"), "{body}");
    let plain = issuer.token("bob", &resource, "mcp:tools");
    assert_eq!(get(&plain).0, 403);

    // The sign-in form takes the same tokens.
    let form = format!("GET /console/signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let (_, headers, body) = raw_http(port, &form);
    let cookie = headers.iter().find(|(name, _)| name == "set-cookie").unwrap().1.split(';').next().unwrap().to_owned();
    let csrf = body.split(r#"name="csrf" value=""#).nth(1).unwrap().split('"').next().unwrap().to_owned();
    let sign_in = |token: &str| {
        let body = format!("csrf={csrf}&token={token}");
        let request = format!(
            "POST /console/signin HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nCookie: {cookie}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        raw_http(port, &request).0
    };
    assert_eq!(sign_in(&plain), 403);
    assert_eq!(sign_in(&admin), 303);
}
