//! What each layer of the call path adds to a call, and all of them together (issue 38's
//! goal: at most 10 µs, or 3%): `memory__recall` through an agent the host starts from a
//! config (`omniagent_host::start_agent`, as the CLI and the gateway do), with
//! - every layer that can be turned off turned off (`off`);
//! - the policy's ten rules (some reading the arguments, none holding) and a rate limit
//!   (`policy`);
//! - the audit to a file, the arguments as a digest (`audit_digest`, the default) or
//!   redacted (`audit_redacted`);
//! - telemetry: a span exported over OTLP/HTTP to a receiver in this process, and the
//!   metrics (`telemetry`);
//! - all of these and the secret guard over an OpenAPI skill's bearer token (`all`).
//!
//! It runs with the binary's allocator (mimalloc). Telemetry is process-wide: the agents
//! without it start before it is installed. All run on the same multi-threaded runtime,
//! whose workers send the spans while the calls go on, as a gateway's do.

use std::hint::black_box;
use std::io::Write as _;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use omniagent_host::{Config, Home, Person, Wanted, start_agent};
use serde_json::json;

// The allocator of the `omniagent` binary, whose calls these are.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Ten rules as a team might write them, none of which holds for the calls measured.
const RULES: &str = r#"policy:
  rules:
    - {name: no-mallory, deny: 'client.name == "mallory"'}
    - {name: no-deletes, deny: 'tool.name.contains("__delete")'}
    - {name: not-etc, deny: 'has(arguments.path) && arguments.path.startsWith("/etc")'}
    - {name: github-is-alices, deny: 'tool.skill == "github" && client.name != "alice"'}
    - {name: guests-read, deny: '!tool.annotations.readOnlyHint && client.name == "guest"'}
    - {name: banned, deny: 'has(client.claims.groups) && "banned" in client.claims.groups'}
    - {name: no-etc-resources, deny: 'tool.kind == "resource" && tool.name.startsWith("file:///etc")'}
    - {name: no-metadata-service, deny: 'has(arguments.url) && arguments.url.contains("169.254.169.254")'}
    - {name: not-before-2000, deny: 'now < timestamp("2000-01-01T00:00:00Z")'}
    - {name: interns-stay-local, deny: 'tool.source == "openapi" && client.name == "intern"'}
  rate_limits:
    - {client: "*", tool: "*", per_minute: 1000000000, burst: 1000000000}
"#;

/// An OpenAPI document with one operation behind a bearer token: the secret the guard
/// looks for in every call's arguments.
const GREET: &str = r#"{"openapi": "3.0.3", "info": {"title": "greet", "version": "1"},
  "servers": [{"url": "http://127.0.0.1:9"}],
  "paths": {"/greet": {"get": {"operationId": "greet", "responses": {"200": {"description": "ok"}}}}}}"#;

/// An OTLP/HTTP receiver that takes every export (200, an empty protobuf answer).
fn receiver(runtime: &tokio::runtime::Runtime) -> u16 {
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let accept = || async { ([(axum::http::header::CONTENT_TYPE, "application/x-protobuf")], Vec::<u8>::new()) };
        let router = axum::Router::new()
            .route("/v1/traces", axum::routing::post(accept))
            .route("/v1/metrics", axum::routing::post(accept));
        tokio::spawn(async move { axum::serve(listener, router).await });
        port
    })
}

fn config(folder: &Path, rest: &str) -> Config {
    let text = format!("storage: {{backend: memory}}\nskills: {{enabled: false}}\n{rest}");
    Config::parse(&folder.join("config.yaml"), &text).expect("a valid config")
}

fn agent(runtime: &tokio::runtime::Runtime, folder: &Path, config: &Config) -> skill_core::Agent {
    let config = config.for_agent(None).expect("the default agent");
    let agent = runtime
        .block_on(start_agent(&config, &Home::new(folder), Wanted::All, Person::default()))
        .expect("the agent starts");
    assert!(agent.skipped().is_empty(), "{:?}", agent.skipped());
    let remembered = runtime.block_on(agent.call_tool("memory__remember", json!({"key": "city", "value": "Lyon"})));
    assert!(remembered.is_ok(), "{remembered:?}");
    agent
}

fn layers(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let folder = tempfile::tempdir().expect("a temporary folder");
    let write = |name: &str, text: &str| std::fs::write(folder.path().join(name), text).expect("a writable folder");
    write("greet.json", GREET);
    write("greet-token", "a-bearer-token-of-the-greet-api");
    let port = receiver(&runtime);
    let audit = |file: &str, arguments: &str| {
        let path = folder.path().join(file);
        format!("observability: {{audit: {{path: '{}', arguments: {arguments}}}}}\n", path.display())
    };
    let telemetry = format!("observability: {{otlp: {{endpoint: 'http://127.0.0.1:{port}'}}, metrics: true}}\n");
    let all = format!(
        "openapi:\n  greet:\n    spec: greet.json\n    auth: {{bearer: {{token_env: GREET_TOKEN}}}}\n    secrets: {{GREET_TOKEN: 'file:{token}'}}\n\
         {RULES}observability:\n  audit: {{path: '{audit}'}}\n  otlp: {{endpoint: 'http://127.0.0.1:{port}'}}\n  metrics: true\n",
        token = folder.path().join("greet-token").display(),
        audit = folder.path().join("all.jsonl").display(),
    );
    let mut agents = Vec::new();
    for (name, rest) in [
        ("off", "policy: {secrets: off}\n".to_owned()),
        ("policy", format!("{RULES}  secrets: off\n")),
        ("audit_digest", audit("digest.jsonl", "digest")),
        ("audit_redacted", audit("redacted.jsonl", "redacted")),
    ] {
        agents.push((name, agent(&runtime, folder.path(), &config(folder.path(), &rest))));
    }
    // Installed from the config that exports (the top level's `observability.otlp`).
    let all = config(folder.path(), &all);
    runtime.block_on(async { omniagent_host::telemetry::install(&all) }).expect("telemetry starts");
    agents.push(("telemetry", agent(&runtime, folder.path(), &config(folder.path(), &telemetry))));
    agents.push(("all", agent(&runtime, folder.path(), &all)));
    let arguments = json!({"key": "city"});
    let mut group = c.benchmark_group("layers");
    for (name, agent) in &agents {
        let name = *name;
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(agent.call_tool(black_box("memory__recall"), black_box(arguments.clone()))))
        });
    }
    group.finish();
    for file in ["digest.jsonl", "redacted.jsonl", "all.jsonl"] {
        let audited = std::fs::read_to_string(folder.path().join(file)).expect("the audit file");
        assert!(audited.lines().count() > 1, "every call is audited in {file}");
    }
    let text = omniagent_host::telemetry::prometheus_text().expect("the metrics are served");
    let dropped = text.lines().find(|line| line.starts_with("omniagent_telemetry_dropped_spans_total"));
    // Criterion calls faster than the exporter sends: the spans that do not fit are
    // dropped and counted, and no call waits.
    let _ = writeln!(std::io::stderr(), "{}", dropped.unwrap_or("no span dropped"));
}

criterion_group!(benches, layers);
criterion_main!(benches);
