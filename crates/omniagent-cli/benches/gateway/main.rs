//! The gateway (`omniagent mcp serve`, the release binary) beside its peers, every figure
//! of issue 10 in one run. Every client is rmcp's, the same for both sides of a figure,
//! with its response cache off (so each list is a round trip).
//!
//! - `gateway_stdio_call`: one `echo` call after another over stdio. `through_gateway`
//!   calls `sample__echo` on `omniagent mcp serve` whose config has `mcp-sample-server`
//!   as the upstream `sample`; `bare_rmcp` calls `echo` on `mcp-sample-server` itself.
//!   Target: `through_gateway` at most 1.2× `bare_rmcp`. Beside it,
//!   `through_gateway_busy_poll` is the same gateway with `--busy-poll 500`: what polling
//!   after each wake-up saves in this tight loop (see `busy_poll` in the binary).
//!   `gateway_stdio_call/cpu_per_call` (printed) is the CPU time (user + system, from
//!   /proc) that the process between client and server spends per call, the gateway's
//!   without and with polling, and the sample server's own: what polling costs.
//! - `gateway_host_pace`: the same question with a client that is not rmcp's, against a
//!   byte relay, back to back and at a host's pace (see `host_pace`).
//! - `gateway_http_16_clients`: 16 clients (each its own rmcp client, reqwest client and
//!   connections), stateless 2026-07-28 era, each making one call after another; an
//!   iteration is one call of each client, so criterion's throughput is calls/s.
//!   `memory_list` calls the compiled `memory__list` (`storage: {backend: memory}`) on
//!   `omniagent mcp serve --http` (target: at least 10,000 calls/s on 2 cores);
//!   `sample_echo_through_gateway` calls the upstream's `echo` through it, and
//!   `echo_through_fastmcp_proxy` the same `echo` through FastMCP's proxy
//!   (`fastmcp.server.create_proxy`, `tests/fixtures/gateway/bench_fastmcp.py`) of the same
//!   `mcp-sample-server`, served over streamable HTTP by FastMCP (target: ours at least 10×).
//!   `memory_list_legacy` is `memory_list` in the 2025-11-25 era (a session per client).
//! - `gateway_tools_list_github` and `gateway_tool_search_github`: listing and
//!   searching GitHub's 1,223 OpenAPI tools, beside FastMCP (see `github`).
//! - `gateway_idle_session_memory` (printed, not criterion): the gateway's VmRSS
//!   (/proc/PID/status) before and after opening 200 idle 2025-11-25 sessions over HTTP
//!   (initialize, initialized, the GET stream rmcp opens; each its own client), the agent
//!   already made by an earlier session; the difference divided by 200. Target: at most
//!   100 KiB. The peer is the FastMCP proxy, measured the same way.
//! - `gateway_session_open`: opening and closing a 2025-11-25 session over HTTP, with 500
//!   markdown skills (whose catalog is each session's instructions) and with none (see
//!   `skills`).
//! - `gateway_stdio_start`: spawn, `initialize` written at once, until its answer's line
//!   arrives; the upstream is configured but lazy (not started). `omniagent_mcp_serve`
//!   against `mcp_sample_server` (a bare rmcp server). Target: within 20 ms. The exit
//!   (stdin EOF) runs after each iteration, outside the timing.
//!
//! Clients run on a tokio runtime with 2 workers. On a 2-core machine they share the cores
//! with the servers they measure, so HTTP figures include the client's own work.
//!
//! Peers: `mcp-sample-server` of this target folder (`cargo build --release -p
//! mcp-sample-server`, which `cargo xtask bench` runs), GitHub's OpenAPI document and the
//! Python virtual environment with FastMCP from the peers cache (`cargo xtask peers`).
//! Printed figures are measured only under `cargo bench` (criterion's `--bench`), and
//! only when no filter is given or the filter is part of their name.

use std::hint::black_box;
use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group};
use rmcp::model::{CallToolRequestParams, CallToolResult, ProtocolVersion};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt as _, RoleClient, ServiceExt as _};
use serde_json::{Value, json};
use tempfile::TempDir;
use tokio::runtime::Runtime;

mod github;
mod host_pace;
#[path = "../sixteen_clients/mod.rs"]
mod sixteen_clients;
mod skills;

use sixteen_clients::CLIENTS;

/// Calls timed for `gateway_stdio_call/cpu_per_call`: enough that the clock ticks
/// (10 ms) are under 1% of the gateway's time.
const CPU_CALLS: u64 = 20_000;
/// Idle sessions opened in `gateway_idle_session_memory`.
const IDLE_SESSIONS: usize = 200;
/// Sessions opened at once while `gateway_idle_session_memory` opens them.
const OPENING_AT_ONCE: usize = 16;
/// How long a server may take from spawn to listening (FastMCP imports for seconds).
const LISTEN_BOUND: Duration = Duration::from_secs(60);

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

/// A temporary `OMNIAGENT_HOME` with `config` as its `config.yaml`.
fn home_with(config: &str) -> TempDir {
    let home = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(home.path().join("config.yaml"), config).expect("a writable temporary folder");
    home
}

/// A config with the memory skill in memory and `mcp-sample-server` as the upstream `sample`.
fn sample_upstream_config(sample_server: &Path) -> String {
    format!(
        "storage: {{backend: memory}}\nmcp:\n  servers:\n    sample:\n      command: '{}'\n",
        sample_server.display()
    )
}

/// `omniagent ARGS` with `home` as `OMNIAGENT_HOME`.
fn omniagent(home: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_omniagent"));
    command.args(args).env("OMNIAGENT_HOME", home).env_remove("OMNIAGENT_CONFIG");
    command
}

/// The Python helper that runs FastMCP's servers, with `args`.
fn fastmcp(args: &[&str]) -> Command {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/bench_fastmcp.py");
    let mut command = Command::new(test_peers::mcp_python_or_panic());
    command.arg(script).args(args);
    command
}

fn tool_call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    let Value::Object(arguments) = arguments else { unreachable!("tool arguments are an object") };
    CallToolRequestParams::new(name).with_arguments(arguments)
}

fn echo_call(name: &'static str) -> CallToolRequestParams {
    tool_call(name, json!({"text": "x"}))
}

fn memory_list_call() -> CallToolRequestParams {
    tool_call("memory__list", json!({}))
}

fn text_of(result: &CallToolResult) -> Option<&str> {
    result.content.first().and_then(|content| content.as_text()).map(|text| text.text.as_str())
}

/// Measuring an error path by mistake would flatter either side: checks one call's answer.
async fn check_echo(peer: &Peer<RoleClient>, params: &CallToolRequestParams) {
    let result = peer.call_tool(params.clone()).await.expect("echo answers");
    assert_eq!((result.is_error.unwrap_or(false), text_of(&result)), (false, Some("x")), "{result:?}");
}

async fn check_memory_list(peer: &Peer<RoleClient>) {
    let result = peer.call_tool(memory_list_call()).await.expect("memory__list answers");
    assert!(!result.is_error.unwrap_or(false), "{result:?}");
    assert_eq!(result.structured_content, Some(json!({"keys": []})), "{result:?}");
}

/// rmcp's client on a server it spawns, initialized, its response cache off; and the
/// server's process id.
async fn stdio_client(command: Command) -> (RunningService<RoleClient, ()>, u32) {
    let transport = TokioChildProcess::new(tokio::process::Command::from(command)).expect("the server starts");
    let pid = transport.id().expect("a running server has a pid");
    let client = ().serve(transport).await.expect("the server initializes");
    client.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
    (client, pid)
}

/// The MCP protocol era a streamable-HTTP client speaks.
#[derive(Debug, Clone, Copy)]
enum Era {
    /// 2025-11-25: `initialize`, a session, its GET stream.
    Legacy,
    /// 2026-07-28: `server/discover`, every request self-contained.
    Stateless,
}

impl Era {
    fn lifecycle(self) -> ClientLifecycleMode {
        match self {
            Era::Legacy => ClientLifecycleMode::Initialize,
            Era::Stateless => ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] },
        }
    }
}

/// rmcp's streamable-HTTP client on `url` in `era`, with a reqwest client (and so
/// connections) of its own, its response cache off.
async fn http_client(url: &str, era: Era) -> RunningService<RoleClient, ()> {
    // The workspace's reqwest has rustls without a provider; plain HTTP still needs one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().expect("a reqwest client");
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    let transport = StreamableHttpClientTransport::with_client(http, config);
    let client = ().serve_with_lifecycle(transport, era.lifecycle()).await.expect("the server initializes");
    client.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
    client
}

async fn http_clients(url: &str, era: Era, count: u32) -> Vec<RunningService<RoleClient, ()>> {
    let mut clients = Vec::new();
    for _ in 0..count {
        clients.push(http_client(url, era).await);
    }
    clients
}

/// `calls` calls of `params` on `peer`, one after the other.
async fn sequential_calls(peer: Peer<RoleClient>, params: CallToolRequestParams, calls: u64) {
    for _ in 0..calls {
        black_box(peer.call_tool(params.clone()).await.expect("the tool answers"));
    }
}

/// `calls_each` calls on every one of `peers` at once; the wall time until the last ends.
fn concurrent_calls(
    runtime: &Runtime,
    peers: &[Peer<RoleClient>],
    params: &CallToolRequestParams,
    calls_each: u64,
) -> Duration {
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        let started = Instant::now();
        for peer in peers {
            tasks.spawn(sequential_calls(peer.clone(), params.clone(), calls_each));
        }
        while let Some(joined) = tasks.join_next().await {
            joined.expect("a caller task");
        }
        started.elapsed()
    })
}

/// A server process listening on a loopback port, killed on drop.
struct ServerProcess {
    child: Child,
    port: u16,
}

impl ServerProcess {
    /// Spawns `command` (which must listen on `port`) and waits until it listens.
    fn start(mut command: Command, port: u16) -> Self {
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).spawn().expect("the server process starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().expect("the server process can be waited for") {
                panic!("the server exited ({status}) before listening on {port}");
            }
            assert!(started.elapsed() < LISTEN_BOUND, "the server did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The process's resident set (VmRSS), in KiB.
    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).expect("/proc is readable");
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).expect("a VmRSS line");
        line.split_whitespace().nth(1).and_then(|kib| kib.parse().ok()).expect("VmRSS in kB")
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        // Upstream servers see their stdin close and exit with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free a moment ago.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    listener.local_addr().expect("a bound address").port()
}

/// `omniagent mcp serve --http` in `home`.
fn http_gateway(home: &Path) -> ServerProcess {
    let port = free_port();
    ServerProcess::start(omniagent(home, &["mcp", "serve", "--http", &format!("127.0.0.1:{port}")]), port)
}

/// FastMCP's proxy of `mcp-sample-server` over streamable HTTP.
fn fastmcp_proxy(sample_server: &Path) -> ServerProcess {
    let port = free_port();
    let sample_server = sample_server.to_str().expect("a UTF-8 path");
    ServerProcess::start(fastmcp(&["proxy", &port.to_string(), sample_server]), port)
}

/// One way `gateway_stdio_call` calls `echo`: the bench's name, the process between
/// client and server (or the server, for the bare client) as `cpu_per_call` names it, its
/// id, the client and the call.
struct StdioRoute {
    name: &'static str,
    process: &'static str,
    pid: u32,
    client: RunningService<RoleClient, ()>,
    call: CallToolRequestParams,
}

impl StdioRoute {
    fn start(
        runtime: &Runtime,
        name: &'static str,
        process: &'static str,
        command: Command,
        tool: &'static str,
    ) -> Self {
        let (client, pid) = runtime.block_on(stdio_client(command));
        let call = echo_call(tool);
        // Through the gateway, the first call makes its agent and starts the upstream.
        runtime.block_on(check_echo(client.peer(), &call));
        Self { name, process, pid, client, call }
    }
}

fn stdio_call_overhead(c: &mut Criterion) {
    let sample_server = test_peers::sample_server_or_panic();
    let home = home_with(&sample_upstream_config(&sample_server));
    let runtime = runtime();
    let routes = [
        StdioRoute::start(
            &runtime,
            "through_gateway",
            "the gateway",
            omniagent(home.path(), &["mcp", "serve"]),
            "sample__echo",
        ),
        StdioRoute::start(
            &runtime,
            "through_gateway_busy_poll",
            "the gateway polling",
            omniagent(home.path(), &["mcp", "serve", "--busy-poll", "500"]),
            "sample__echo",
        ),
        StdioRoute::start(&runtime, "bare_rmcp", "mcp-sample-server", Command::new(&sample_server), "echo"),
    ];

    let mut group = c.benchmark_group("gateway_stdio_call");
    group
        .throughput(Throughput::Elements(1))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for route in &routes {
        group.bench_function(route.name, |b| {
            b.iter_custom(|iters| concurrent_calls(&runtime, &[route.client.peer().clone()], &route.call, iters))
        });
    }
    group.finish();
    #[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
    if test_peers::printed_figure_wanted("gateway_stdio_call/cpu_per_call") {
        let cpu_time = |pid: u32| test_peers::proc_stat(pid).expect("the process is running").cpu;
        let figures: Vec<String> = routes
            .iter()
            .map(|route| {
                let before = cpu_time(route.pid);
                runtime.block_on(sequential_calls(route.client.peer().clone(), route.call.clone(), CPU_CALLS));
                let micros = (cpu_time(route.pid) - before).as_secs_f64() * 1e6 / CPU_CALLS as f64;
                format!("{} {micros:.1} µs", route.process)
            })
            .collect();
        println!(
            "gateway_stdio_call/cpu_per_call: {} (user + system time of that process over {CPU_CALLS} calls)",
            figures.join(", ")
        );
    }
    runtime.block_on(async {
        for route in routes {
            route.client.cancel().await.unwrap_or_else(|error| panic!("{}'s client closes: {error}", route.name));
        }
    });
}

fn peers_of(clients: &[RunningService<RoleClient, ()>]) -> Vec<Peer<RoleClient>> {
    clients.iter().map(|client| client.peer().clone()).collect()
}

fn http_throughput(c: &mut Criterion) {
    let sample_server = test_peers::sample_server_or_panic();
    let home = home_with(&sample_upstream_config(&sample_server));
    let runtime = runtime();
    let gateway = http_gateway(home.path());
    let proxy = fastmcp_proxy(&sample_server);
    let ours = runtime.block_on(http_clients(&gateway.url(), Era::Stateless, CLIENTS));
    let ours_legacy = runtime.block_on(http_clients(&gateway.url(), Era::Legacy, CLIENTS));
    let theirs = runtime.block_on(http_clients(&proxy.url(), Era::Stateless, CLIENTS));
    let (ours, ours_legacy, theirs) = (peers_of(&ours), peers_of(&ours_legacy), peers_of(&theirs));
    let (memory_list, sample_echo, echo) = (memory_list_call(), echo_call("sample__echo"), echo_call("echo"));
    runtime.block_on(async {
        // The first request makes the agent (and the first echo starts the upstream).
        for peer in ours.iter().chain(&ours_legacy) {
            check_memory_list(peer).await;
            check_echo(peer, &sample_echo).await;
        }
        for peer in &theirs {
            check_echo(peer, &echo).await;
        }
    });

    let mut group = sixteen_clients::group(c, "gateway_http_16_clients");
    group.bench_function("memory_list", |b| {
        b.iter_custom(|iters| concurrent_calls(&runtime, &ours, &memory_list, iters))
    });
    group.bench_function("memory_list_legacy", |b| {
        b.iter_custom(|iters| concurrent_calls(&runtime, &ours_legacy, &memory_list, iters))
    });
    group.bench_function("sample_echo_through_gateway", |b| {
        b.iter_custom(|iters| concurrent_calls(&runtime, &ours, &sample_echo, iters))
    });
    group.sample_size(10);
    group.bench_function("echo_through_fastmcp_proxy", |b| {
        b.iter_custom(|iters| concurrent_calls(&runtime, &theirs, &echo, iters))
    });
    group.finish();
}

/// Opens `count` idle legacy sessions on `server` (a few at a time) and returns its
/// VmRSS before and after, in KiB, with the sessions still open.
async fn rss_around_sessions(server: &ServerProcess, count: usize) -> (u64, u64) {
    let url = server.url();
    // The first session's requests make what every later one shares (the agent).
    let warming = http_client(&url, Era::Legacy).await;
    black_box(warming.peer().list_tools(None).await.expect("tools/list answers"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = server.rss_kib();
    let mut sessions = Vec::new();
    while sessions.len() < count {
        let mut opening = tokio::task::JoinSet::new();
        for _ in 0..OPENING_AT_ONCE.min(count - sessions.len()) {
            let url = url.clone();
            opening.spawn(async move { http_client(&url, Era::Legacy).await });
        }
        while let Some(opened) = opening.join_next().await {
            sessions.push(opened.expect("a session task"));
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = server.rss_kib();
    drop(sessions);
    drop(warming);
    (before, after)
}

#[expect(clippy::print_stdout, reason = "a figure measured outside criterion, printed beside its report")]
fn idle_session_memory(_c: &mut Criterion) {
    let name = "gateway_idle_session_memory";
    if !test_peers::printed_figure_wanted(name) {
        return;
    }
    let sample_server = test_peers::sample_server_or_panic();
    let home = home_with(&sample_upstream_config(&sample_server));
    let runtime = runtime();
    let servers = [("omniagent", http_gateway(home.path())), ("fastmcp_proxy", fastmcp_proxy(&sample_server))];
    for (server_name, server) in &servers {
        let (before, after) = runtime.block_on(rss_around_sessions(server, IDLE_SESSIONS));
        let per_session = after.saturating_sub(before) as f64 / IDLE_SESSIONS as f64;
        println!(
            "{name}/{server_name}: {per_session:.1} KiB per idle 2025-11-25 session \
             (VmRSS {before} KiB, then {after} KiB with {IDLE_SESSIONS} more sessions)"
        );
    }
}

/// The `initialize` request of a 2025-11-25 client, as one line.
const INITIALIZE: &str = concat!(
    r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","#,
    r#""capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
    "\n"
);

/// Spawns `command`, writes `initialize` and waits for its answer's line: the time it
/// took. The process is ended (stdin EOF) after the timing.
fn spawn_to_first_answer(command: &mut Command) -> Duration {
    let started = Instant::now();
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().expect("the server starts");
    let mut stdin = child.stdin.take().expect("a piped stdin");
    stdin.write_all(INITIALIZE.as_bytes()).expect("the server reads stdin");
    let mut answer = String::new();
    BufReader::new(child.stdout.take().expect("a piped stdout")).read_line(&mut answer).expect("an answer line");
    let elapsed = started.elapsed();
    assert!(answer.contains(r#""protocolVersion""#), "not an initialize result: {answer}");
    drop(stdin);
    let status = child.wait().expect("the server can be waited for");
    assert!(status.success(), "the server exited with {status}");
    elapsed
}

fn stdio_start(c: &mut Criterion) {
    let sample_server = test_peers::sample_server_or_panic();
    let home = home_with(&sample_upstream_config(&sample_server));
    let mut gateway = omniagent(home.path(), &["mcp", "serve"]);
    let mut bare = Command::new(&sample_server);
    let mut group = c.benchmark_group("gateway_stdio_start");
    group.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    group.bench_function("omniagent_mcp_serve", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spawn_to_first_answer(&mut gateway)).sum())
    });
    group.bench_function("mcp_sample_server", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| spawn_to_first_answer(&mut bare)).sum())
    });
    group.finish();
}

criterion_group!(
    benches,
    stdio_call_overhead,
    host_pace::host_pace,
    http_throughput,
    github::tools_list_github,
    github::tool_search_github,
    idle_session_memory,
    skills::session_open,
    stdio_start
);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
