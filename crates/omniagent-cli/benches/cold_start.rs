//! The wall time of `omniagent --json tools list` from a cold process: start, read the
//! config, load the compiled skills, print the JSON, exit (target: under 20 ms).
//!
//! Each iteration starts a new process, so the figure includes process start-up and
//! dynamic linking, as a user (or an agent framework shelling out) sees it.

use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group, criterion_main};

fn tools_list(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let run = || {
        let status = Command::new(env!("CARGO_BIN_EXE_omniagent"))
            .args(["--json", "tools", "list"])
            .env("OMNIAGENT_HOME", home.path())
            .env_remove("OMNIAGENT_CONFIG")
            .stdout(Stdio::null())
            .status()
            .expect("omniagent runs");
        assert!(status.success());
    };
    c.bench_function("cold_start/json_tools_list", |b| b.iter(run));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = tools_list
}
criterion_main!(benches);
