//! What the audit adds to a call: `memory__recall` through an agent the host starts from
//! a config (`omniagent_host::start_agent`, as the CLI and the gateway do), without an
//! audit (`off`), with one to a file with arguments as a digest (`digest`, the default)
//! and redacted (`redacted`). The difference is the audit layer's cost per call: building
//! the line, hashing or redacting the arguments, one `write` under the file's lock.
//!
//! Every variant runs on a current-thread runtime with `Runtime::block_on`, so the
//! runtime's cost is in each figure and cancels out in the differences.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use omniagent_host::{Config, Home, Person, Wanted, start_agent};
use serde_json::json;

fn agent(runtime: &tokio::runtime::Runtime, folder: &Path, observability: &str) -> skill_core::Agent {
    let file = folder.join("config.yaml");
    let text = format!("storage: {{backend: memory}}\nskills: {{enabled: false}}\n{observability}");
    let config = Config::parse(&file, &text).expect("a valid config").for_agent(None).expect("the default agent");
    let agent = runtime
        .block_on(start_agent(&config, &Home::new(folder), Wanted::All, Person::default()))
        .expect("the agent starts");
    let remembered = runtime.block_on(agent.call_tool("memory__remember", json!({"key": "city", "value": "Lyon"})));
    assert!(remembered.is_ok(), "{remembered:?}");
    agent
}

fn audit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let folder = tempfile::tempdir().expect("a temporary folder");
    let arguments = json!({"key": "city"});
    let mut group = c.benchmark_group("audit");
    for (name, observability) in [
        ("off", String::new()),
        ("digest", "observability: {audit: {path: digest.jsonl}}\n".to_owned()),
        ("redacted", "observability: {audit: {path: redacted.jsonl, arguments: redacted}}\n".to_owned()),
    ] {
        let agent = agent(&runtime, folder.path(), &observability);
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(agent.call_tool(black_box("memory__recall"), black_box(arguments.clone()))))
        });
    }
    group.finish();
}

criterion_group!(benches, audit);
criterion_main!(benches);
