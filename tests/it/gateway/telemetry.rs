//! Telemetry of the HTTP gateway, seen by real receivers: Debian's Prometheus scrapes
//! `/metrics`; an OTLP/HTTP receiver decoding the real protobuf (PyPI
//! `opentelemetry-proto`) gets the gateway's spans and those of a FastMCP upstream, in the
//! trace the Python SDK client started, with a span for each MCP request (its lists too);
//! an OpenAPI call carries `traceparent` to the API.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{HttpGateway, free_port, run_client, text_of};
use crate::Home;

/// OTLP's `SPAN_KIND_SERVER`.
const SERVER: i64 = 2;

/// How long a receiver is given to see what the test waits for.
const PATIENCE: Duration = Duration::from_secs(60);

/// A GET of `path` on a loopback port: the status, the headers (lowercase names) and the body.
pub(super) fn get(port: u16, path: &str) -> (u16, String, String) {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("the server listens");
    let request = format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("the request is sent");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("a response");
    let response = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    let status = head.split(' ').nth(1).and_then(|status| status.parse().ok()).expect("a status line");
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.into() };
    (status, head.to_ascii_lowercase(), body)
}

/// A chunked body's content.
fn unchunk(mut body: &str) -> String {
    let mut content = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
        if size == 0 {
            break;
        }
        content.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
    content
}

/// Waits, polling, until `found` finds what it looks for in what `poll` gives.
fn eventually<T>(what: &str, mut poll: impl FnMut() -> Value, mut found: impl FnMut(&Value) -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        let seen = poll();
        if let Some(found) = found(&seen) {
            return found;
        }
        assert!(started.elapsed() < PATIENCE, "{what} not seen in {PATIENCE:?}; last seen: {seen:#}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A process killed on drop.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The OTLP receiver (`otlp_receiver.py`) and its port.
fn otlp_receiver() -> (Killed, u16) {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/otlp_receiver.py");
    let mut child = std::process::Command::new(test_peers::otel_python_or_panic())
        .arg(script)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the OTLP receiver starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("the receiver's port");
    let port = line.trim().parse().unwrap_or_else(|_| panic!("not a port: {line:?}"));
    (Killed(child), port)
}

/// An HTTP API (`GET /greet`) that keeps the `traceparent` of each request it gets.
fn traced_api() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let kept = Arc::clone(&seen);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let router = axum::Router::new().route(
                "/greet",
                axum::routing::get(move |headers: axum::http::HeaderMap| async move {
                    let traceparent = headers.get("traceparent").and_then(|value| value.to_str().ok());
                    kept.lock().unwrap().push(traceparent.unwrap_or_default().to_owned());
                    ([(axum::http::header::CONTENT_TYPE, "application/json")], r#"{"greeting":"hello"}"#)
                }),
            );
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, router).await.unwrap();
        });
    });
    (port, seen)
}

/// The Python SDK client (in the telemetry test's environment) over HTTP with `plan`.
fn python_client(gateway: &HttpGateway, plan: &Value) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_client.py");
    let mut command = std::process::Command::new(test_peers::otel_python_or_panic());
    command.arg(script).args(["legacy", "http", &gateway.url()]);
    run_client(command, "the Python client", plan).0
}

#[test]
fn a_trace_crosses_the_gateway_into_a_fastmcp_upstream_and_an_http_api() {
    let (_receiver, receiver_port) = otlp_receiver();
    let (api_port, api_traceparents) = traced_api();
    let endpoint = format!("http://127.0.0.1:{receiver_port}");
    let home = Home::new();
    home.write(
        "api.json",
        &json!({
            "openapi": "3.1.0",
            "info": {"title": "api", "version": "1"},
            "servers": [{"url": format!("http://127.0.0.1:{api_port}")}],
            "paths": {"/greet": {"get": {"operationId": "greet", "responses": {"200": {"description": "a greeting"}}}}}
        })
        .to_string(),
    );
    let fastmcp =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/fastmcp_traced.py");
    let home = home.with_config(&format!(
        "storage: {{backend: memory}}
observability: {{otlp: {{endpoint: '{endpoint}'}}}}
mcp:
  servers:
    traced:
      command: {python}
      args: ['{fastmcp}']
      env: {{OTEL_EXPORTER_OTLP_ENDPOINT: '{endpoint}'}}
openapi:
  api: {{spec: api.json}}
",
        python = test_peers::otel_python_or_panic().display(),
        fastmcp = fastmcp.display(),
    ));
    let gateway = HttpGateway::start(&home, &[], &[]);
    let (tool_trace, tool_parent) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let (api_trace, api_parent) = ("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331");
    let plan = json!({"calls": [
        ["traced__echo", {"text": "through"}, {"traceparent": format!("00-{tool_trace}-{tool_parent}-01")}],
        ["api__greet", {}, {"traceparent": format!("00-{api_trace}-{api_parent}-01")}],
    ]});
    let out = python_client(&gateway, &plan);
    assert_eq!(text_of(&out["calls"][0]), "through", "{out:#}");
    assert!(text_of(&out["calls"][1]).contains("hello"), "{out:#}");

    let received = || {
        let (status, _, body) = get(receiver_port, "/received");
        assert_eq!(status, 200);
        serde_json::from_str::<Value>(&body).unwrap()
    };
    let spans = |seen: &Value| seen["spans"].as_array().cloned().unwrap_or_default();
    let named = |name: &'static str| {
        move |seen: &Value| spans(seen).into_iter().find(|span| span["name"] == name && span["service"] == "omniagent")
    };
    // The client's list of tools has its span (kind server), in its session.
    let list_span = eventually("the gateway's span of tools/list", received, named("tools/list"));
    let session = list_span["attributes"]["mcp.session.id"].as_str().unwrap_or_default().to_owned();
    assert!(!session.is_empty(), "{list_span:#}");
    assert_eq!(list_span["kind"], SERVER, "{list_span:#}");
    assert_eq!(list_span["attributes"]["mcp.method.name"], "tools/list", "{list_span:#}");
    assert_eq!(list_span["attributes"]["network.transport"], "tcp", "{list_span:#}");
    // The gateway's span of the request to call the tool is the client's span's child,
    // in its trace, and the tool call's span is the request's child.
    let request_span =
        eventually("the gateway's request span of traced__echo", received, named("tools/call traced__echo"));
    assert_eq!(request_span["trace_id"], tool_trace, "{request_span:#}");
    assert_eq!(request_span["parent_span_id"], tool_parent, "{request_span:#}");
    assert_eq!(request_span["kind"], SERVER, "{request_span:#}");
    let attributes = &request_span["attributes"];
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["gen_ai.tool.name"], "traced__echo");
    assert_eq!(attributes["mcp.session.id"], session.as_str());
    let tool_span = eventually("the gateway's span of traced__echo", received, named("execute_tool traced__echo"));
    assert_eq!(tool_span["trace_id"], tool_trace, "{tool_span:#}");
    assert_eq!(tool_span["parent_span_id"], request_span["span_id"], "{tool_span:#}");
    let attributes = &tool_span["attributes"];
    assert_eq!(attributes["gen_ai.operation.name"], "execute_tool");
    assert_eq!(attributes["gen_ai.tool.name"], "traced__echo");
    assert_eq!(attributes["mcp.method.name"], "tools/call");
    assert_eq!(attributes["omniagent.source"], "mcp");
    assert_eq!(attributes["mcp.session.id"], session.as_str());
    // The upstream's own span is the gateway span's child, in the same trace.
    let upstream = eventually("FastMCP's span under the gateway's", received, |seen| {
        spans(seen)
            .into_iter()
            .find(|span| span["service"] == "fastmcp-upstream" && span["parent_span_id"] == tool_span["span_id"])
    });
    assert_eq!(upstream["trace_id"], tool_trace, "{upstream:#}");

    // The API got the OpenAPI call's span as the parent of its request.
    let api_request = eventually("the gateway's request span of api__greet", received, named("tools/call api__greet"));
    assert_eq!(api_request["parent_span_id"], api_parent, "{api_request:#}");
    let api_span = eventually("the gateway's span of api__greet", received, named("execute_tool api__greet"));
    assert_eq!(api_span["trace_id"], api_trace, "{api_span:#}");
    assert_eq!(api_span["parent_span_id"], api_request["span_id"], "{api_span:#}");
    assert_eq!(api_span["attributes"]["omniagent.source"], "openapi");
    let api_span_id = api_span["span_id"].as_str().unwrap();
    assert_eq!(*api_traceparents.lock().unwrap(), [format!("00-{api_trace}-{api_span_id}-01")]);
}

#[test]
fn prometheus_scrapes_the_calls_counter_and_the_probes_answer_without_a_token() {
    let home = Home::new().with_config(
        "storage: {backend: memory}
observability: {metrics: true}
serve:
  clients:
    alice: {token: alice-token}
",
    );
    let gateway = HttpGateway::start(&home, &[], &[]);
    let port = gateway.port;
    assert_eq!(get(port, "/healthz").0, 200);
    let (status, _, body) = get(port, "/readyz");
    assert_eq!((status, body.as_str()), (200, "ready\n"));

    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_client.py");
    let mut command = std::process::Command::new(test_peers::otel_python_or_panic());
    command.arg(script).args(["legacy", "http", &gateway.url(), "alice-token"]);
    let plan = json!({"calls": [
        ["memory__remember", {"key": "city", "value": "Lyon"}],
        ["memory__remember", {"key": "river", "value": "Rhône"}],
        ["memory__recall", {"key": "city"}],
    ]});
    let out = run_client(command, "the Python client", &plan).0;
    assert_eq!(text_of(&out["calls"][2]), "Lyon", "{out:#}");

    let (status, head, text) = get(port, "/metrics");
    assert_eq!(status, 200, "{text}");
    assert!(head.contains("content-type: application/openmetrics-text"), "{head}");
    assert!(
        text.contains(
            "omniagent_calls_total{item=\"memory__remember\",kind=\"tool\",source=\"skill\",client=\"alice\"} 2"
        ),
        "{text}"
    );

    let folder = tempfile::tempdir().unwrap();
    let config = folder.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global: {{scrape_interval: 1s}}\nscrape_configs:\n  - job_name: omniagent\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        ),
    )
    .unwrap();
    let prometheus_port = free_port();
    let _prometheus = Killed(
        std::process::Command::new("prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", folder.path().join("data").display()))
            .arg(format!("--web.listen-address=127.0.0.1:{prometheus_port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("Debian's prometheus starts (cargo xtask test installs it)"),
    );
    let query = || {
        let Ok(_) = std::net::TcpStream::connect(("127.0.0.1", prometheus_port)) else { return Value::Null };
        let (_, _, body) = get(prometheus_port, "/api/v1/query?query=omniagent_calls_total");
        serde_json::from_str(&body).unwrap_or(Value::Null)
    };
    let counts = eventually("the calls counter in Prometheus", query, |answer| {
        let series = answer["data"]["result"].as_array()?;
        let count = |item: &str| {
            series
                .iter()
                .find(|one| one["metric"]["item"] == item)
                .map(|one| one["value"][1].as_str().unwrap().to_owned())
        };
        Some((count("memory__remember")?, count("memory__recall")?))
    });
    assert_eq!(counts, ("2".to_owned(), "1".to_owned()));
}

#[test]
fn a_cli_call_is_traced_and_its_span_and_metrics_sent_before_the_command_ends() {
    let (_receiver, receiver_port) = otlp_receiver();
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nobservability: {{otlp: {{endpoint: 'http://127.0.0.1:{receiver_port}'}}}}\n"
    ));
    let (code, stdout, stderr) = crate::run(home.omniagent(&[
        "tools",
        "call",
        "memory__remember",
        "--args",
        r#"{"key": "city", "value": "Lyon"}"#,
    ]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    // Sent before the command exited: the receiver has it already.
    let (_, _, body) = get(receiver_port, "/received");
    let received: Value = serde_json::from_str(&body).unwrap();
    let span = received["spans"]
        .as_array()
        .unwrap()
        .iter()
        .find(|span| span["name"] == "execute_tool memory__remember")
        .unwrap_or_else(|| panic!("no span of the call: {received:#}"));
    assert_eq!(span["attributes"]["omniagent.client"], "cli");
    assert_eq!(span["parent_span_id"], "", "a call of the CLI starts its trace: {span:#}");
    let metrics = received["metrics"].as_array().unwrap();
    assert!(metrics.iter().any(|name| name == "omniagent.calls"), "{received:#}");
}

#[test]
fn readyz_tells_when_the_redis_store_is_gone_and_back() {
    let redis = test_peers::RedisServer::start();
    let home = Home::new().with_config(&format!("storage: {{backend: redis, url: '{}'}}\n", redis.url()));
    let gateway = HttpGateway::start(&home, &[], &[]);
    assert_eq!(get(gateway.port, "/readyz").0, 200);
    let port = redis.port();
    drop(redis);
    let (status, _, body) = get(gateway.port, "/readyz");
    assert_eq!(status, 503, "{body}");
    assert!(body.starts_with("the store"), "{body}");
    // Alive all the same.
    assert_eq!(get(gateway.port, "/healthz").0, 200);
    let _redis = test_peers::RedisServer::start_on(port);
    let started = Instant::now();
    while get(gateway.port, "/readyz").0 != 200 {
        assert!(started.elapsed() < PATIENCE, "/readyz did not see Redis back");
        std::thread::sleep(Duration::from_millis(200));
    }
}
