//! What telemetry adds to a call: `memory__recall` through an agent the host starts from
//! a config (`omniagent_host::start_agent`, as the CLI and the gateway do), without
//! telemetry (`off`: the layer only passes a trace context on) and with it (`otlp`: a span
//! exported over OTLP/HTTP to a receiver in this process, and the metrics, served as
//! Prometheus text and exported over OTLP). The difference is the telemetry layer's cost
//! per call: the span, its attributes and its place in the export queue, and the metrics'
//! counters and histogram.
//!
//! Telemetry is process-wide: the agent without it starts before it is installed. Both
//! run on the same multi-threaded runtime, whose workers send the spans while the calls go
//! on, as a gateway's do.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use omniagent_host::{Config, Home, Person, Wanted, start_agent};
use serde_json::json;

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

fn config(folder: &Path, observability: &str) -> Config {
    let text = format!("storage: {{backend: memory}}\nskills: {{enabled: false}}\n{observability}");
    Config::parse(&folder.join("config.yaml"), &text).expect("a valid config")
}

fn agent(runtime: &tokio::runtime::Runtime, folder: &Path, config: &Config) -> skill_core::Agent {
    let config = config.for_agent(None).expect("the default agent");
    let agent = runtime
        .block_on(start_agent(&config, &Home::new(folder), Wanted::All, Person::default()))
        .expect("the agent starts");
    let remembered = runtime.block_on(agent.call_tool("memory__remember", json!({"key": "city", "value": "Lyon"})));
    assert!(remembered.is_ok(), "{remembered:?}");
    agent
}

fn telemetry(c: &mut Criterion) {
    let runtime =
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a runtime");
    let folder = tempfile::tempdir().expect("a temporary folder");
    let port = receiver(&runtime);
    let off = agent(&runtime, folder.path(), &config(folder.path(), ""));
    let on = config(
        folder.path(),
        &format!("observability: {{otlp: {{endpoint: 'http://127.0.0.1:{port}'}}, metrics: true}}\n"),
    );
    runtime.block_on(async { omniagent_host::telemetry::install(&on) }).expect("telemetry starts");
    let on = agent(&runtime, folder.path(), &on);
    let arguments = json!({"key": "city"});
    let mut group = c.benchmark_group("telemetry");
    for (name, agent) in [("off", &off), ("otlp", &on)] {
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(agent.call_tool(black_box("memory__recall"), black_box(arguments.clone()))))
        });
    }
    group.finish();
    let text = omniagent_host::telemetry::prometheus_text().expect("the metrics are served");
    let dropped = text.lines().find(|line| line.starts_with("omniagent_telemetry_dropped_spans_total")).unwrap_or("");
    #[expect(clippy::print_stdout, reason = "a figure counted outside criterion, printed beside its report")]
    {
        println!("{dropped}");
    }
}

criterion_group!(benches, telemetry);
criterion_main!(benches);
