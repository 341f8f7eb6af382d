//! `omniagent mcp serve`, driven by MCP clients written by others (the Python SDK, the MCP
//! Inspector CLI) and by our own: over stdio and streamable HTTP, in both protocol eras,
//! with per-client agents, faults and a clean stop.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_peers::sample_server_or_panic as sample_server;

mod audit;
mod console;
mod faults;
mod host_config;
mod lifecycle;
mod oauth;
mod policy;
mod python_servers;
mod resources;
mod sandboxed;
mod skill_tools;
mod telemetry;
mod tool_search;
mod trust;
mod ts_sdk;

use crate::{Home, raw_http_status};

/// Sends a thousand `sample__echo` calls at once to `gateway` with the Python SDK
/// (`python_load.py`), and checks that each is answered with its own text.
pub(super) fn thousand_concurrent_echoes(gateway: &HttpGateway) {
    let output = std::process::Command::new(test_peers::mcp_python_or_panic())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_load.py"))
        .args([gateway.url().as_str(), "sample__echo", "1000"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}\n{}", gateway.stderr.lock().unwrap());
    let out: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(out, json!({"answered": 1000, "wrong": []}));
}

/// The Python SDK's client script.
fn python_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_client.py")
}

/// Runs the Python SDK client in `mode` against `target` (`["stdio", command, args...]` or
/// `["http", url, token?]`) with `plan`, and returns what it printed.
pub(super) fn python(mode: &str, target: &[&str], plan: Value, env: &[(&str, &str)]) -> Value {
    python_with_stderr(mode, target, plan, env).0
}

/// As [`python`], with what the client and the server it started wrote on stderr.
pub(crate) fn python_with_stderr(mode: &str, target: &[&str], plan: Value, env: &[(&str, &str)]) -> (Value, String) {
    let mut command = std::process::Command::new(test_peers::mcp_python_or_panic());
    command.arg(python_client()).arg(mode).args(target).envs(env.iter().copied());
    run_client(command, "the Python client", &plan)
}

/// Runs a client `command` (named `what`) that reads `plan` on stdin and prints what it
/// found as JSON; that JSON and what the client (and a server it started) wrote on stderr.
pub(crate) fn run_client(mut command: std::process::Command, what: &str, plan: &Value) -> (Value, String) {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("{what} starts: {error}"));
    child.stdin.take().unwrap().write_all(plan.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what} failed ({}):\n{stderr}", output.status);
    let out = serde_json::from_str(&stdout).unwrap_or_else(|error| panic!("not JSON ({error}): {stdout}\n{stderr}"));
    (out, stderr.into_owned())
}

/// An in-process HTTP API with its OpenAPI document: `GET /greet?name=` answers
/// `{"greeting": "hello NAME"}`.
struct GreetApi {
    port: u16,
    _runtime: std::thread::JoinHandle<()>,
}

/// The greet API's logo (Redoc's `x-logo`), which its tools show.
const GREET_LOGO: &str = "https://greet.example/logo.png";

impl GreetApi {
    fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let runtime = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let router = axum::Router::new().route(
                    "/greet",
                    axum::routing::get(|uri: axum::http::Uri| async move {
                        let name = uri.query().and_then(|query| query.strip_prefix("name=")).unwrap_or_default();
                        let body = json!({"greeting": format!("hello {name}")}).to_string();
                        ([(axum::http::header::CONTENT_TYPE, "application/json")], body)
                    }),
                );
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                axum::serve(listener, router).await.unwrap();
            });
        });
        Self { port, _runtime: runtime }
    }

    fn document(&self) -> String {
        json!({
            "openapi": "3.1.0",
            "info": {"title": "greet", "version": "1", "x-logo": {"url": GREET_LOGO}},
            "servers": [{"url": format!("http://127.0.0.1:{}", self.port)}],
            "paths": {"/greet": {"get": {
                "operationId": "greet",
                "summary": "Greet someone",
                "parameters": [{"name": "name", "in": "query", "required": true, "schema": {"type": "string"}}],
                "responses": {"200": {"description": "the greeting"}}
            }}}
        })
        .to_string()
    }
}

/// A home whose agent has the memory skill, the sample server (`sample__*`), the greet
/// API (`greet__greet`) and one markdown skill, `hello`.
fn gateway_home(api: &GreetApi) -> Home {
    let home = Home::new();
    home.write("greet.json", &api.document());
    home.write("skills/hello/SKILL.md", "---\nname: hello\ndescription: Greet people warmly\n---\nSay hello.\n");
    home.with_config(&format!(
        "storage: {{backend: memory}}\nmcp:\n  servers:\n    sample:\n      command: {}\nopenapi:\n  greet:\n    spec: greet.json\n",
        sample_server().display()
    ))
}

fn plan() -> Value {
    json!({
        "calls": [
            ["memory__remember", {"key": "city", "value": "Lyon"}],
            ["memory__recall", {"key": "city"}],
            ["sample__add", {"a": 2, "b": 3}],
            ["greet__greet", {"name": "Ada"}],
            ["no_such_tool", {}],
            ["sample__add", {"a": "two"}],
            ["sample__refuse", {"message": "`n` must be even"}]
        ],
        "prompts": [["skills__hello", {}], ["skills__system_prompt", {"base": "You are kind."}]],
        "reads": ["skill://hello/SKILL.md"],
    })
}

/// The `field` of each item the client listed under `list` (`"prompts"`, `"resources"`).
pub(super) fn listed<'a>(out: &'a Value, list: &str, field: &str) -> Vec<&'a str> {
    let items = out[list].as_array().unwrap_or_else(|| panic!("no {list} in {out}"));
    items.iter().map(|item| item[field].as_str().unwrap_or_else(|| panic!("no {field} in {item}"))).collect()
}

pub(super) fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_else(|| panic!("no text in {result}"))
}

/// What the plan must give, in either era and over either transport.
fn check_listing_and_calls(out: &Value) {
    let tools: Vec<&str> = out["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    for expected in ["memory__remember", "sample__add", "sample__echo", "greet__greet"] {
        assert!(tools.contains(&expected), "{expected} in {tools:?}");
    }
    let recall = out["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "memory__recall").unwrap();
    assert_eq!(recall["annotations"]["readOnlyHint"], json!(true), "{recall}");
    let add = out["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "sample__add").unwrap();
    assert_eq!(add["outputSchema"]["properties"]["sum"]["type"], json!("integer"), "the upstream's output schema");
    let greet = out["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "greet__greet").unwrap();
    assert_eq!(greet["annotations"]["readOnlyHint"], json!(true), "GET is read-only: {greet}");

    // Icons: the upstream tool's own, else its server's; the API's logo; none for memory.
    let icon = |tool: &str, field: &str| {
        let found = out["tools"].as_array().unwrap().iter().find(|listed| listed["name"] == tool).unwrap();
        found["icons"][0][field].clone()
    };
    assert_eq!(
        (icon("sample__add", "mimeType"), icon("sample__add", "theme")),
        (json!("image/svg+xml"), json!("dark"))
    );
    assert_eq!((icon("sample__echo", "mimeType"), icon("sample__echo", "sizes")), (json!("image/png"), json!(["1x1"])));
    assert_eq!(icon("greet__greet", "src"), json!(GREET_LOGO));
    assert_eq!(recall.get("icons"), None, "{recall}");

    // The skills' catalog, as the server's instructions, which hosts may give the model.
    let instructions = out["instructions"].as_str().unwrap_or_else(|| panic!("no instructions"));
    assert!(instructions.starts_with("# Skills\n") && instructions.contains("`skills__activate`"), "{instructions}");
    assert!(instructions.contains("/hello\">Greet people warmly</skill>"), "{instructions}");

    let prompts = listed(out, "prompts", "name");
    assert!(prompts.contains(&"skills__hello") && prompts.contains(&"skills__system_prompt"), "{prompts:?}");

    let calls = out["calls"].as_array().unwrap();
    assert_eq!(text_of(&calls[0]), "remembered `city`");
    assert_eq!(text_of(&calls[1]), "Lyon");
    assert_eq!((text_of(&calls[2]), &calls[2]["structuredContent"]), ("5", &json!({"sum": 5})));
    assert!(text_of(&calls[3]).contains(r#""greeting":"hello Ada""#), "{}", calls[3]);
    // Only an unknown tool is a protocol error (invalid params); arguments that fail the
    // tool's input schema are a result with `isError` naming each field, for the model to
    // read and correct (SEP-1303), as is an upstream's own refusal of them.
    let unknown = calls[4]["error"].as_str().unwrap_or_else(|| panic!("an error for an unknown tool: {}", calls[4]));
    assert!(unknown.contains("unknown tool `no_such_tool`"), "{unknown}");
    assert_eq!(calls[4]["code"], json!(-32602), "{}", calls[4]);
    assert_eq!(calls[5]["isError"], json!(true), "{}", calls[5]);
    let bad = text_of(&calls[5]);
    assert!(bad.starts_with("invalid arguments for `sample__add`"), "{bad}");
    assert!(bad.contains("/a: \"two\" is not of type \"integer\"") && bad.contains("\"b\" is a required"), "{bad}");
    assert_eq!(calls[6]["isError"], json!(true), "{}", calls[6]);
    assert!(text_of(&calls[6]).contains("MCP server `sample`: `n` must be even"), "{}", calls[6]);

    let resources = listed(out, "resources", "uri");
    assert!(resources.contains(&"skill://hello/SKILL.md"), "the skill's file as a resource: {resources:?}");
    let manifest = &out["reads"][0]["contents"][0];
    assert_eq!(manifest["mimeType"], json!("text/markdown"));
    assert!(manifest["text"].as_str().unwrap().starts_with("---\nname: hello\n"), "{manifest}");

    let hello = &out["prompt_results"][0]["messages"][0]["content"]["text"];
    assert!(hello.as_str().unwrap().ends_with("Say hello."), "{hello}");
    let system = out["prompt_results"][1]["messages"][0]["content"]["text"].as_str().unwrap();
    assert!(system.starts_with("You are kind.\n\n# Skills") && system.contains("<skill name=\"hello\""), "{system}");
}

#[test]
fn python_sdk_over_stdio_in_both_eras() {
    let api = GreetApi::start();
    let home = gateway_home(&api);
    let omniagent = env!("CARGO_BIN_EXE_omniagent");
    let home_dir = home.path().to_str().unwrap();
    for (mode, version) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let out = python(mode, &["stdio", omniagent, "mcp", "serve"], plan(), &[("OMNIAGENT_HOME", home_dir)]);
        assert_eq!(out["protocol_version"], json!(version));
        check_listing_and_calls(&out);
    }
}

/// `omniagent mcp serve --http ADDR` in `home`, killed on drop.
pub(crate) struct HttpGateway {
    child: Child,
    port: u16,
    pub(crate) stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpGateway {
    pub(crate) fn start(home: &Home, extra_args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::start_on(free_port(), home, extra_args, env)
    }

    /// As [`Self::start`], on `port`.
    pub(crate) fn start_on(port: u16, home: &Home, extra_args: &[&str], env: &[(&str, &str)]) -> Self {
        let address = format!("127.0.0.1:{port}");
        let mut args = vec!["mcp", "serve", "--http", address.as_str()];
        args.extend_from_slice(extra_args);
        let mut child = home
            .omniagent_process(&args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("omniagent mcp serve starts");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let collected = std::sync::Arc::clone(&stderr);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                collected.lock().unwrap().push_str(&format!("{line}\n"));
            }
        });
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("the gateway exited ({status}) before listening:\n{}", stderr.lock().unwrap());
            }
            assert!(started.elapsed() < Duration::from_secs(20), "the gateway did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port, stderr }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The status of a bare `POST /mcp` (an `initialize`) with `headers` added.
    fn post_status(&self, headers: &str) -> u16 {
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        raw_http_status(("127.0.0.1", self.port), &request)
    }
}

/// A loopback port free now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Drop for HttpGateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn python_sdk_over_http_in_both_eras() {
    let api = GreetApi::start();
    let home = gateway_home(&api);
    let gateway = HttpGateway::start(&home, &[], &[]);
    for (mode, version) in [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")] {
        let (out, stderr) = python_with_stderr(mode, &["http", &gateway.url()], plan(), &[]);
        assert_eq!(out["protocol_version"], json!(version), "{}", gateway.stderr.lock().unwrap());
        check_listing_and_calls(&out);
        // The SDK ends its 2025-11-25 session with a DELETE, and warns unless told 200 or 204.
        assert!(!stderr.contains("Session termination failed"), "{stderr}");
    }
    let host = format!("Host: 127.0.0.1:{}\r\n", gateway.port);
    assert_eq!(gateway.post_status(&host), 200);
    assert_eq!(gateway.post_status("Host: evil.example\r\n"), 403, "a Host that is not allowed");
    assert_eq!(
        gateway.post_status(&format!("{host}Origin: http://evil.example\r\n")),
        403,
        "an Origin that is not allowed"
    );
}

/// Two clients, each with its own token and agent: the sample server's environment seen
/// through one holds that client's secret and never the other's, and each offers the
/// tools its agent's `tools:` section chooses.
#[test]
fn each_http_client_gets_its_own_agent() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}
mcp:
  servers:
    sample:
      command: {}
      secrets: {{GATEWAY_SECRET: \"env:DEFAULT_SECRET\"}}
serve:
  clients:
    alice: {{token: \"env:ALICE_TOKEN\", agent: alice}}
    bob: {{token: \"env:BOB_TOKEN\", agent: bob}}
agents:
  alice: {{mcp: {{servers: {{sample: {{secrets: {{GATEWAY_SECRET: \"env:ALICE_SECRET\"}}}}}}}}}}
  bob:
    mcp: {{servers: {{sample: {{secrets: {{GATEWAY_SECRET: \"env:BOB_SECRET\"}}}}}}}}
    tools: {{exclude: [sample__add]}}
",
        sample_server().display()
    ));
    let env = [
        ("ALICE_TOKEN", "token-of-alice"),
        ("BOB_TOKEN", "token-of-bob"),
        ("ALICE_SECRET", "secret-of-alice"),
        ("BOB_SECRET", "secret-of-bob"),
        ("DEFAULT_SECRET", "secret-of-default"),
    ];
    let gateway = HttpGateway::start(&home, &[], &env);
    let secret_plan = json!({"calls": [["sample__env", {"name": "GATEWAY_SECRET"}], ["sample__pid", {}]]});
    let mut pids = Vec::new();
    for (token, secret) in [("token-of-alice", "secret-of-alice"), ("token-of-bob", "secret-of-bob")] {
        for mode in ["legacy", "2026-07-28"] {
            let out = python(mode, &["http", &gateway.url(), token], secret_plan.clone(), &[]);
            assert_eq!(text_of(&out["calls"][0]), secret, "{mode}: {}", gateway.stderr.lock().unwrap());
            pids.push(text_of(&out["calls"][1]).to_owned());
            let offers_add = out["tools"].as_array().unwrap().iter().any(|tool| tool["name"] == "sample__add");
            assert_eq!(offers_add, token == "token-of-alice", "{mode}: bob's agent leaves `sample__add` out");
        }
    }
    assert_eq!(pids[0], pids[1], "one upstream process per client, kept across sessions and eras");
    assert_ne!(pids[0], pids[2], "each client has its own upstream process");

    let host = format!("Host: 127.0.0.1:{}\r\n", gateway.port);
    assert_eq!(gateway.post_status(&host), 401, "no token");
    assert_eq!(gateway.post_status(&format!("{host}Authorization: Bearer token-of-eve\r\n")), 401, "a wrong token");
    assert_eq!(gateway.post_status(&format!("{host}Authorization: Bearer token-of-alice\r\n")), 200);
    let stderr = gateway.stderr.lock().unwrap();
    for secret in ["token-of-alice", "secret-of-alice", "secret-of-bob"] {
        assert!(!stderr.contains(secret), "{secret} in the gateway's log:\n{stderr}");
    }
}

#[test]
fn a_non_loopback_address_without_clients_refuses_to_start() {
    let home = Home::new().with_config("storage: {backend: memory}\n");
    let (code, _, stderr) = crate::run(home.omniagent(&["mcp", "serve", "--http", "0.0.0.0:0"]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("serve.clients"), "{stderr}");
}

/// What the gateway would refuse in `serve:` is named, with its key, by `config check` as
/// by `mcp serve` before it starts (over stdio too), both with exit code 2.
#[test]
fn serve_section_mistakes_are_named_by_config_check_and_before_the_gateway_starts() {
    let cases = [
        (
            "serve: {clients: {alice: {token: \"env:T\", agent: nobody}}}",
            "serve.clients.alice.agent: unknown agent `nobody`",
        ),
        (
            "serve: {clients: {\"oauth:alice\": {token: \"env:T\"}}}",
            "serve.clients.oauth:alice: a client name may not have a `:`",
        ),
        ("serve: {http: localhost}", "serve.http: `localhost` is not an address such as 127.0.0.1:8765"),
        (
            "serve: {http: \"0.0.0.0:8765\"}",
            "serve.http 0.0.0.0:8765: serving a non-loopback address needs `serve.clients`",
        ),
        ("serve: {oauth: {issuer: https://auth.example}}", "serve.oauth needs serve.url"),
        (
            "serve: {url: https://gw.example/mcp, oauth: {issuer: auth.example}}",
            "serve.oauth.issuer: `auth.example` is not a URL",
        ),
        (
            "serve: {url: https://gw.example/mcp, oauth: {issuer: https://auth.example, agents: {alice: nobody}}}",
            "serve.oauth.agents.alice: unknown agent `nobody`",
        ),
        (
            "serve: {url: https://gw.example/mcp, oauth: {issuer: https://auth.example, scope: [x]}}",
            "unknown field `scope`",
        ),
    ];
    for (serve, expected) in cases {
        let home = Home::new().with_config(&format!("storage: {{backend: memory}}\n{serve}\n"));
        for command in [&["config", "check"][..], &["mcp", "serve", "--http", "127.0.0.1:0"], &["mcp", "serve"]] {
            let (code, _, stderr) = crate::run(home.omniagent(command));
            assert_eq!(code, 2, "{serve}: {stderr}");
            assert!(stderr.contains(expected), "{serve}: {stderr}");
        }
    }
    // A non-loopback `serve.http` with clients is fine.
    let home = Home::new().with_config("serve: {http: \"0.0.0.0:8765\", clients: {alice: {token: \"env:T\"}}}\n");
    let mut command = home.omniagent(&["config", "check"]);
    command.env("T", "token-of-alice");
    let (code, stdout, stderr) = crate::run(command);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
}

/// A home whose agent has only the sample server, calls bounded by `call_timeout`.
pub(super) fn sample_home(call_timeout: &str) -> Home {
    Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    sample:\n      command: {}\n      timeout: {{call: {call_timeout}}}\n",
        sample_server().display()
    ))
}

#[test]
fn the_inspector_cli_lists_and_calls_over_stdio() {
    let home = sample_home("60s");
    let inspector = |method_args: &[&str]| {
        let output = std::process::Command::new(test_peers::mcp_inspector_or_panic())
            .arg("--cli")
            .args(["-e", &format!("OMNIAGENT_HOME={}", home.path().display())])
            .args([env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"])
            .args(method_args)
            .current_dir(home.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{stderr}");
        serde_json::from_slice::<Value>(&output.stdout).unwrap_or_else(|error| panic!("{error}: {stderr}"))
    };
    let listed = inspector(&["--method", "tools/list"]);
    let names: Vec<&str> =
        listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"sample__add") && names.contains(&"sample__echo"), "{names:?}");
    let called = inspector(&["--method", "tools/call", "--tool-name", "sample__add", "--tool-arg", "a=2", "b=3"]);
    assert_eq!(called["structuredContent"], json!({"sum": 5}), "{called}");
}

/// Our own MCP client in front of our gateway: an upstream that adds a tool makes the
/// gateway announce `list_changed`, and our client then lists the new tool.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn omniagent_in_front_of_omniagent_sees_list_changes() {
    let home = sample_home("60s");
    let config: skill_mcp::ServerConfig = serde_json::from_value(json!({
        "command": env!("CARGO_BIN_EXE_omniagent"),
        "args": ["mcp", "serve"],
        "env": {"OMNIAGENT_HOME": home.path()}
    }))
    .unwrap();
    let agent = skill_core::Agent::builder().with_compiled_skill(skill_mcp::McpSkill::new("gw", config)).build();
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.loaded, ["gw"], "{:?}", report.skipped);
    let output = agent.call_tool("gw__sample__echo", json!({"text": "through two gateways"})).await.unwrap();
    assert_eq!(output, skill_core::ToolOutput::text("through two gateways"));

    agent.call_tool("gw__sample__add_tool", json!({"name": "fresh"})).await.unwrap();
    let started = Instant::now();
    while agent.find_tool("gw__sample__fresh").is_err() {
        assert!(started.elapsed() < Duration::from_secs(10), "the new tool never reached our client");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let output = agent.call_tool("gw__sample__fresh", json!({"k": 1})).await.unwrap();
    assert_eq!(output, skill_core::ToolOutput::text(r#"{"k":1}"#));

    // Our client listens (`subscriptions/listen`) until it closes the gateway's input;
    // the gateway then ends that stream, rather than wait for it as for a call (rmcp
    // waits up to 5 s for those).
    let closing = Instant::now();
    agent.close().await;
    assert!(closing.elapsed() < Duration::from_secs(3), "the gateway took {:?} to stop", closing.elapsed());
}

/// Waits up to ten seconds for `done`.
async fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < Duration::from_secs(10), "{what} did not happen within 10 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Editing a SKILL.md or the config reaches a connected client as list_changed; a broken
/// edit keeps the last good config and says where it is broken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_to_skills_and_config_reach_connected_clients() {
    let config = |memory: bool| {
        format!(
            "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: {memory}}}}}\nmcp:\n  servers:\n    sample:\n      command: {}\n",
            sample_server().display()
        )
    };
    let home = Home::new().with_config(&config(true));
    home.write("skills/first/SKILL.md", "---\nname: first\ndescription: The first skill\n---\nFirst.\n");
    let gateway = HttpGateway::start(&home, &["--eager"], &[]);
    let client_config: skill_mcp::ServerConfig = serde_json::from_value(json!({"url": gateway.url()})).unwrap();
    let agent = skill_core::Agent::builder().with_compiled_skill(skill_mcp::McpSkill::new("gw", client_config)).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["gw"]);
    let prompt_names = |agent: &skill_core::Agent| -> Vec<String> {
        agent.prompts().iter().map(|prompt| prompt.name().to_owned()).collect()
    };
    assert!(prompt_names(&agent).contains(&"gw__skills__first".to_owned()), "{:?}", prompt_names(&agent));

    home.write("skills/second/SKILL.md", "---\nname: second\ndescription: A skill added later\n---\nSecond.\n");
    eventually("the new skill's prompt", || prompt_names(&agent).contains(&"gw__skills__second".to_owned())).await;
    // The skills read for the first session's instructions (and the agent) are read again.
    let later_session = python("legacy", &["http", &gateway.url()], json!({}), &[]);
    let instructions = later_session["instructions"].as_str().unwrap_or_default();
    assert!(instructions.contains("A skill added later"), "{instructions}");

    let sample_pid = agent.call_tool("gw__sample__pid", json!({})).await.unwrap();
    home.write("config.yaml", &config(false));
    eventually("the memory tools' removal", || agent.find_tool("gw__memory__remember").is_err()).await;
    assert_eq!(
        agent.call_tool("gw__sample__echo", json!({"text": "still here"})).await.unwrap(),
        skill_core::ToolOutput::text("still here")
    );
    assert_ne!(
        agent.call_tool("gw__sample__pid", json!({})).await.unwrap(),
        sample_pid,
        "the changed agent started again"
    );

    home.write("config.yaml", "storage: {backend: memory}\ncompiled: {memroy: {}}\n");
    let config_file = home.path().join("config.yaml").display().to_string();
    eventually("the broken edit's error", || gateway.stderr.lock().unwrap().contains(&format!("{config_file}:2:")))
        .await;
    let stderr = gateway.stderr.lock().unwrap().clone();
    assert!(stderr.contains("keeping the last good config"), "{stderr}");
    assert_eq!(
        agent.call_tool("gw__sample__echo", json!({"text": "unchanged"})).await.unwrap(),
        skill_core::ToolOutput::text("unchanged")
    );
    assert!(agent.find_tool("gw__memory__remember").is_err(), "the last good config still holds");
    agent.close().await;
}

/// GitHub's OpenAPI document gives 1,223 tools: a client gets every one through pages of
/// the gateway's `tools/list`, each once.
#[test]
fn every_page_of_a_long_tool_list_reaches_the_client() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\nopenapi:\n  github:\n    spec: {}\n    base_url: http://127.0.0.1:9\n",
        test_peers::github_openapi_or_panic().display()
    ));
    let gateway = HttpGateway::start(&home, &[], &[]);
    let out = python("2026-07-28", &["http", &gateway.url()], json!({}), &[]);
    let names: Vec<&str> = out["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    let unique: std::collections::BTreeSet<&str> = names.iter().copied().collect();
    assert_eq!((names.len(), unique.len()), (1223, 1223));
    assert!(names.windows(2).all(|pair| pair[0] < pair[1]), "in name order, page after page");
}
