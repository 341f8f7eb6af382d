//! The wall time of `omniagent --json tools list` from a cold process: start, read the
//! config, load the compiled skills, print the JSON, exit (target: under 20 ms); and the
//! same with GitHub's OpenAPI document (13 MB, 1,223 operations) configured as a skill,
//! whose tools are all listed (target: under 250 ms, and within 1.5× of reading and
//! parsing that file with `serde_json`, measured beside it: in a process of its own, as
//! cold as the CLI, and in this process, warm).
//!
//! And the gateway's first answer: from spawning `omniagent mcp serve` (stdio) to the
//! answer of its first `tools/list`, with six real upstreams (the sample server,
//! server-everything, mcp-server-time, mcp-server-git, mcp-server-sqlite and a FastMCP
//! server) whose definitions the trust lock holds, answered from the lock (instant start,
//! target under 30 ms), beside `--eager`, which starts them all first, as every start
//! did before the lock.
//!
//! Each iteration starts a new process, so the figure includes process start-up and
//! dynamic linking, as a user (or an agent framework shelling out) sees it.

use std::path::Path;
use std::process::{Command, Stdio};

use criterion::{Criterion, criterion_group};

fn tools_list(home: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_omniagent"))
        .args(["--json", "tools", "list"])
        .env("OMNIAGENT_HOME", home)
        .env_remove("OMNIAGENT_CONFIG")
        .stdout(Stdio::null())
        .status()
        .expect("omniagent runs");
    assert!(status.success());
}

fn compiled_skills_only(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary folder");
    c.bench_function("cold_start/json_tools_list", |b| b.iter(|| tools_list(home.path())));
}

fn github_openapi(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let config = format!(
        "compiled: {{memory: {{enabled: false}}}}\nopenapi:\n  github: {{spec: '{}'}}\n",
        test_peers::github_openapi_or_panic().display()
    );
    std::fs::write(home.path().join("config.yaml"), config).expect("a writable temporary folder");
    c.bench_function("cold_start/json_tools_list_github_openapi", |b| b.iter(|| tools_list(home.path())));
    // The yardsticks beside it (issue 13: within 1.5×): reading the same file and parsing
    // it with serde_json, in a process of its own started as the CLI is (this program, told
    // by `PARSE_ONLY`), and in this process, where every iteration reuses the memory the
    // last one freed.
    let path = test_peers::github_openapi_or_panic();
    c.bench_function("cold_start/serde_json_parse_github_openapi_process", |b| {
        b.iter(|| {
            let status = Command::new(std::env::current_exe().expect("this benchmark's path"))
                .env(PARSE_ONLY, &path)
                .stdout(Stdio::null())
                .status()
                .expect("the benchmark runs");
            assert!(status.success());
        })
    });
    c.bench_function("cold_start/serde_json_parse_github_openapi", |b| b.iter(|| parse(&path)));
}

/// Spawns `omniagent mcp serve` (with `args`) in `home`, and returns once it answered
/// `initialize` and a first `tools/list` (with the number of tools), ending it then.
fn first_tools_list(home: &Path, args: &[&str]) -> usize {
    use std::io::{BufRead as _, Write as _};
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_omniagent"))
        .args(["mcp", "serve"])
        .args(args)
        .env("OMNIAGENT_HOME", home)
        .env_remove("OMNIAGENT_CONFIG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("omniagent runs");
    let mut stdin = gateway.stdin.take().expect("a pipe");
    let mut stdout = std::io::BufReader::new(gateway.stdout.take().expect("a pipe"));
    let requests = concat!(
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
        "\n",
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "\n",
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        "\n"
    );
    stdin.write_all(requests.as_bytes()).expect("the gateway reads");
    let mut line = String::new();
    let mut tools = 0;
    while stdout.read_line(&mut line).expect("the gateway answers") > 0 {
        if line.contains(r#""id":2"#) {
            tools = line.matches(r#""inputSchema""#).count();
            break;
        }
        line.clear();
    }
    drop(stdin);
    let _ = gateway.kill();
    let _ = gateway.wait();
    tools
}

fn pinned_upstreams(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let config = test_peers::six_upstreams_config(home.path());
    std::fs::write(home.path().join("config.yaml"), config).expect("a writable temporary folder");
    // The first sight records every definition in the lock.
    tools_list(home.path());
    let eager = first_tools_list(home.path(), &["--eager"]);
    assert!(eager > 20, "{eager} tools");
    assert_eq!(first_tools_list(home.path(), &[]), eager, "the lock answers with every tool");
    c.bench_function("cold_start/mcp_serve_first_tools_list_from_the_lock", |b| {
        b.iter(|| first_tools_list(home.path(), &[]))
    });
    c.bench_function("cold_start/mcp_serve_first_tools_list_eager", |b| {
        b.iter(|| first_tools_list(home.path(), &["--eager"]))
    });
}

/// Set to a file's path, this program only reads and parses that file, then exits.
const PARSE_ONLY: &str = "COLD_START_PARSE_ONLY";

fn parse(path: &Path) -> serde_json::Value {
    let bytes = std::fs::read(path).expect("GitHub's document is readable");
    serde_json::from_slice(&bytes).expect("GitHub's document is JSON")
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50);
    targets = compiled_skills_only
}
criterion_group! {
    name = openapi;
    config = Criterion::default().sample_size(10);
    targets = github_openapi, pinned_upstreams
}
fn main() {
    if let Some(path) = std::env::var_os(PARSE_ONLY) {
        parse(Path::new(&path));
        return;
    }
    benches();
    openapi();
    Criterion::default().configure_from_args().final_summary();
}
