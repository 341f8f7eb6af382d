//! Secrets never show: not in output, errors, logs at trace level, or `config show`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use test_peers::sample_server_or_panic as sample_server;

use crate::gateway::python_with_stderr;
use crate::{Home, run};

const CANARY: &str = "canary-5d1e0b7f";
/// The AAuth key of RFC 8037 (Appendix A): its private part `d`, and `x`.
const KEY_D: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
const KEY_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

/// The canary sweep: one canary value enters through every way a secret can, the error
/// paths are driven (a server that fails to start, an API answering 500, an unreachable
/// URL, a redirect, an agent provider that is not there), and every command runs, plain
/// and with `--json`, at trace level: the canary shows in no stream of any of them, nor
/// does the AAuth key's private part.
#[test]
fn a_canary_secret_never_appears_anywhere() {
    let api = ErrorApi::start();
    let unreachable = free_port();
    let home = Home::new();
    let file = home.write("token", CANARY);
    home.write("aauth/agent.jwk", &format!(r#"{{"kty":"OKP","crv":"Ed25519","d":"{KEY_D}","x":"{KEY_X}"}}"#));
    std::fs::set_permissions(home.path().join("aauth/agent.jwk"), std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .unwrap();
    home.write(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\nmetadata:\n  requires:\n    secrets:\n      - name: TOKEN\n---\nDeploy with $TOKEN.\n",
    );
    home.write("api.yaml", &api.document());
    let home = home.with_config(&format!(
        "storage: {{backend: memory}}
skills:
  config:
    deploy: {{secrets: {{TOKEN: \"{CANARY}\"}}}}
compiled:
  memory:
    secrets: {{LITERAL: \"{CANARY}\", FROM_ENV: env:OMNIAGENT_CANARY, FROM_FILE: \"file:{file}\", BROKEN: env:OMNIAGENT_TEST_UNSET}}
mcp:
  servers:
    sample:
      command: {sample}
      env: {{SAMPLE_TOKEN: \"{CANARY}\"}}
      secrets: {{API_KEY: env:OMNIAGENT_CANARY}}
    broken:
      command: /bin/sh
      args: [-c, 'echo starting >&2; exit 3', '${{API_KEY}}']
      env: {{TOKEN: \"{CANARY}\"}}
      secrets: {{API_KEY: \"literal:{CANARY}\"}}
    redirected:
      url: \"http://127.0.0.1:{api_port}/mcp?key={CANARY}\"
      headers: {{X-Api-Key: \"{CANARY}\", Authorization: \"Bearer ${{TOKEN}}\"}}
      secrets: {{TOKEN: env:OMNIAGENT_CANARY}}
    unreachable:
      url: \"http://user:{CANARY}@127.0.0.1:{unreachable}/mcp?token=${{TOKEN}}\"
      secrets: {{TOKEN: env:OMNIAGENT_CANARY}}
openapi:
  failing: {{spec: api.yaml, auth: {{bearer: {{token: \"{CANARY}\"}}}}}}
  keyed: {{spec: api.yaml, auth: {{api_key: {{api_key_env: OMNIAGENT_CANARY}}}}}}
  signed: {{spec: api.yaml, aauth: true}}
aauth: {{agent_provider: \"http://127.0.0.1:{unreachable}\", allow_http_loopback: true}}
",
        file = file.display(),
        sample = sample_server().display(),
        api_port = api.port,
    ));
    let env = [("OMNIAGENT_CANARY", CANARY)];
    let check = |what: &str, text: &str| {
        for secret in [CANARY, KEY_D] {
            assert!(!text.contains(secret), "{what} showed a secret:\n{text}");
        }
    };
    let commands: &[&[&str]] = &[
        &["tools", "list"],
        &["tools", "call", "memory__remember", "--args", r#"{"key":"k","value":"v"}"#],
        &["tools", "call", "memory__nope"],
        &["tools", "call", "sample__echo", "--args", r#"{"text":"hi"}"#],
        &["tools", "call", "failing__fail"],
        &["tools", "call", "keyed__fail"],
        &["tools", "call", "signed__fail"],
        &["tools", "call", "broken__anything"],
        &["tools", "call", "redirected__anything"],
        &["tools", "call", "unreachable__anything"],
        &["config", "show"],
        &["config", "check"],
        &["config", "path"],
        &["skills", "list", "--all"],
        &["skills", "info", "deploy"],
        &["skills", "check"],
        &["prompt"],
        &["aauth", "whoami"],
        &["aauth", "enroll"],
        &["aauth", "fetch", &format!("http://127.0.0.1:{}/fail", api.port)],
    ];
    let mut seen = String::new();
    for args in commands {
        for json in [false, true] {
            let mut full = vec!["-vvv"];
            full.extend(json.then_some("--json"));
            full.extend_from_slice(args);
            let mut command = home.omniagent(&full);
            command.envs(env).env_remove("OMNIAGENT_TEST_UNSET");
            let (_, stdout, stderr) = run(command);
            check(&format!("{full:?} on stdout"), &stdout);
            check(&format!("{full:?} on stderr"), &stderr);
            seen.push_str(&stdout);
            seen.push_str(&stderr);
        }
    }
    // The error paths were taken.
    for reached in ["500 Internal Server Error", "HTTP 307", "Connection refused", "start-up failed", "REDACTED"] {
        assert!(seen.contains(reached), "no command reached `{reached}`");
    }
    let omniagent = env!("CARGO_BIN_EXE_omniagent");
    let plan = serde_json::json!({
        "calls": [["sample__echo", {"text": "hi"}], ["failing__fail", {}], ["memory__recall", {"key": "k"}]],
        "prompts": [["skills__deploy", {}]],
        "reads": ["skill://deploy/SKILL.md"],
    });
    let home_dir = home.path().display().to_string();
    let (out, stderr) = python_with_stderr(
        "legacy",
        &["stdio", omniagent, "-vvv", "mcp", "serve"],
        plan,
        &[("OMNIAGENT_CANARY", CANARY), ("OMNIAGENT_HOME", &home_dir)],
    );
    assert!(out["calls"].as_array().is_some_and(|calls| calls.len() == 3), "{out}");
    check("mcp serve's answers", &out.to_string());
    check("mcp serve's log", &stderr);
    assert_eq!(api.redirect_targets_seen(), 0, "a redirect was followed");
}

/// A port nothing listens on.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()).unwrap().port()
}

/// A loopback HTTP server for the error paths: `/mcp` redirects to `/elsewhere` (counted),
/// every other path answers 500.
struct ErrorApi {
    port: u16,
    elsewhere: Arc<AtomicUsize>,
}

impl ErrorApi {
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let elsewhere = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&elsewhere);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut request_line = String::new();
                let _ = reader.read_line(&mut request_line);
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
                    line.clear();
                }
                let path = request_line.split(' ').nth(1).unwrap_or_default();
                let answer = if path.starts_with("/mcp") {
                    format!("HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{port}/elsewhere\r\n")
                } else {
                    if path.starts_with("/elsewhere") {
                        seen.fetch_add(1, Ordering::SeqCst);
                    }
                    "HTTP/1.1 500 Internal Server Error\r\ncontent-type: text/plain\r\n".to_owned()
                };
                let body = "the server failed";
                let _ = write!(stream, "{answer}content-length: {}\r\nconnection: close\r\n\r\n{body}", body.len());
            }
        });
        ErrorApi { port, elsewhere }
    }

    fn redirect_targets_seen(&self) -> usize {
        self.elsewhere.load(Ordering::SeqCst)
    }

    /// A document of one operation, `fail` (`GET /fail`), secured by a bearer token and
    /// an API key, on this server.
    fn document(&self) -> String {
        serde_json::json!({
            "openapi": "3.1.0",
            "info": {"title": "failing", "version": "1"},
            "servers": [{"url": format!("http://127.0.0.1:{}", self.port)}],
            "components": {"securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "key": {"type": "apiKey", "name": "api_key", "in": "query"}
            }},
            "security": [{"bearer": []}, {"key": []}],
            "paths": {"/fail": {"get": {"operationId": "fail", "responses": {"500": {"description": "always"}}}}}
        })
        .to_string()
    }
}

/// A bad reference is reported by naming the reference, and a literal by `[REDACTED]`.
#[test]
fn bad_references_name_the_reference_never_a_value() {
    let check = |reference: &str, expect: &str| {
        let home =
            Home::new().with_config(&format!("compiled:\n  memory:\n    secrets:\n      TOKEN: \"{reference}\"\n"));
        let (code, _, stderr) = run(home.omniagent(&["config", "check"]));
        assert_eq!(code, 2, "{stderr}");
        assert_eq!(stderr, format!("error: {}:{expect}\n", home.path().join("config.yaml").display()));
    };
    check(
        &format!("admin:{CANARY}"),
        "4:14: compiled.memory.secrets.TOKEN: the value starts with an unknown secret reference scheme (use \
         `env:NAME`, `file:PATH`, `op://VAULT/ITEM/FIELD`, `literal:VALUE`, or a plain value without a `word:` prefix)",
    );
    check("env:", "4:14: compiled.memory.secrets.TOKEN: secret reference `env:`: expected env:NAME");

    let home = Home::new().with_config("compiled:\n  memory:\n    secrets:\n      TOKEN: op://Private/GitHub/token\n");
    let mut command = home.omniagent(&["config", "check"]);
    command.env("PATH", home.path());
    let (code, stdout, _) = run(command);
    assert_eq!(code, 1);
    assert!(
        stdout.contains(
            "error  compiled.memory.secrets.TOKEN: secret reference `op://Private/GitHub/token`: cannot run the 1Password CLI `op` (entity not found)"
        ),
        "{stdout}"
    );
}

/// An agent's start resolves each secret of `skills.config` once, for its guard and for
/// the markdown skills alike: an `op://` reference runs the 1Password CLI (which may ask
/// the person to approve) each time. The CLI cannot run here: a stand-in on `PATH`
/// counts its runs.
#[test]
fn a_markdown_skills_secret_is_resolved_once_per_start() {
    let home = Home::new();
    let runs = home.path().join("op-runs");
    let op = home.write("bin/op", &format!("#!/bin/sh\necho \"$@\" >> '{}'\nprintf deploy-token\n", runs.display()));
    std::fs::set_permissions(&op, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    home.write(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\nmetadata:\n  requires:\n    secrets:\n      - name: TOKEN\n---\nDeploy with $TOKEN.\n",
    );
    let home = home.with_config(
        "storage: {backend: memory}\nskills:\n  config:\n    deploy: {secrets: {TOKEN: op://Private/Deploy/token}}\n",
    );
    let mut command = home.omniagent(&["tools", "list"]);
    let path = std::env::var("PATH").unwrap_or_default();
    command.env("PATH", format!("{}:{path}", home.path().join("bin").display()));
    let (code, stdout, stderr) = run(command);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("skills__activate"), "{stdout}");
    let runs = std::fs::read_to_string(&runs).unwrap();
    assert_eq!(runs, "read --no-newline op://Private/Deploy/token\n", "one `op read` a start");
}
