//! The gateway on several hosts (issue 15): what Redis costs a call, and what a load
//! balancer and a second replica change. Every client is rmcp's streamable-HTTP client,
//! its response cache off; every call is `memory__remember` (one key, written again and
//! again), so each one writes to the store.
//!
//! - `replicas_remember`: one client, one call after another, on one
//!   `omniagent mcp serve --http`. `sqlite` with `storage: {backend: sqlite}` (the file in
//!   its `OMNIAGENT_HOME`), `redis` with `storage: {backend: redis}` on a `redis-server` of
//!   the system's packages on loopback, which also keeps the 2025-11-25 sessions. Each in
//!   both eras (`_legacy`: a 2025-11-25 session).
//! - `replicas_http_16_clients`: 16 clients, each its own connections, each making one
//!   call after another; an iteration is one call of each, so criterion's throughput is
//!   calls/s. `one_replica` calls one replica directly; `two_replicas_nginx` calls nginx
//!   (the deployment example's `deploy/replicas/nginx.conf`, its ports changed) in front
//!   of two replicas round robin. Both on the same `redis-server`; `_legacy` as above
//!   (behind nginx a session's requests alternate between the replicas).
//!
//! Clients run on a tokio runtime with 2 workers. On a 2-core machine they share the cores
//! with the servers, Redis and nginx, so two replicas cannot double a figure here: the
//! comparison shows what nginx and restoring sessions cost, not what a second host gains.
//!
//! Peers: `redis-server` and `nginx` from the system's packages.

use std::hint::black_box;
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientCacheConfig, ClientLifecycleMode, ClientServiceExt as _, RoleClient};
use serde_json::json;
use tempfile::TempDir;
use tokio::runtime::Runtime;

mod sixteen_clients;

use sixteen_clients::CLIENTS;

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("a tokio runtime")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("a loopback port").local_addr().expect("a bound address").port()
}

/// A process listening on a loopback port, killed on drop.
struct Server {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Server {
    fn start(mut command: Command, port: u16, dir: TempDir) -> Self {
        let mut child = command.stdin(Stdio::null()).stdout(Stdio::null()).spawn().expect("the server starts");
        let started = Instant::now();
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().expect("the server can be waited for") {
                panic!("the server exited ({status}) before listening on {port}");
            }
            assert!(started.elapsed() < Duration::from_secs(30), "the server did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, port, _dir: dir }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // SIGQUIT: nginx's master stops its workers; the gateway ends at once anyway.
        let _ = Command::new("kill").args(["-QUIT", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `omniagent mcp serve --http` with `storage` as its whole config, a home of its own.
fn gateway(storage: &str, redis_url: &str) -> Server {
    let home = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(home.path().join("config.yaml"), format!("storage: {storage}\n")).expect("a writable folder");
    let port = free_port();
    let mut command = Command::new(env!("CARGO_BIN_EXE_omniagent"));
    command
        .args(["mcp", "serve", "--http", &format!("127.0.0.1:{port}")])
        .env("OMNIAGENT_HOME", home.path())
        .env("OMNIAGENT_REDIS_URL", redis_url)
        .env_remove("OMNIAGENT_CONFIG");
    Server::start(command, port, home)
}

/// nginx with the deployment example's config in front of `replicas`.
fn nginx(replicas: [u16; 2]) -> Server {
    if Command::new("nginx").arg("-v").output().is_err() {
        panic!("nginx is not installed: install it (`apt-get install nginx-light`)");
    }
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/replicas/nginx.conf");
    let mut conf = std::fs::read_to_string(example).expect("the example's nginx.conf");
    let port = free_port();
    for (from, to) in [(8766, replicas[0]), (8767, replicas[1]), (8080, port)] {
        conf = conf.replace(&format!("127.0.0.1:{from}"), &format!("127.0.0.1:{to}"));
    }
    let prefix = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(prefix.path().join("nginx.conf"), conf).expect("a writable folder");
    let mut command = Command::new("nginx");
    command.arg("-p").arg(prefix.path()).args(["-c", "nginx.conf", "-e", "stderr", "-g", "daemon off;"]);
    Server::start(command, port, prefix)
}

fn lifecycle(legacy: bool) -> ClientLifecycleMode {
    if legacy {
        ClientLifecycleMode::Initialize
    } else {
        ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] }
    }
}

async fn client(url: &str, legacy: bool) -> RunningService<RoleClient, ()> {
    // The workspace's reqwest has rustls without a provider; plain HTTP still needs one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().expect("a reqwest client");
    let transport =
        StreamableHttpClientTransport::with_client(http, StreamableHttpClientTransportConfig::with_uri(url.to_owned()));
    let client = ().serve_with_lifecycle(transport, lifecycle(legacy)).await.expect("the server initializes");
    client.peer().set_response_cache_config(ClientCacheConfig::disabled()).await;
    client
}

fn remember() -> CallToolRequestParams {
    let serde_json::Value::Object(arguments) = json!({"key": "bench", "value": "a note"}) else { unreachable!() };
    CallToolRequestParams::new("memory__remember").with_arguments(arguments)
}

/// One call, checked: measuring an error path would flatter either side.
async fn check_remember(peer: &Peer<RoleClient>) {
    let result = peer.call_tool(remember()).await.expect("memory__remember answers");
    assert!(!result.is_error.unwrap_or(false), "{result:?}");
}

/// `calls_each` calls on every one of `peers` at once; the wall time until the last ends.
fn concurrent_calls(runtime: &Runtime, peers: &[Peer<RoleClient>], calls_each: u64) -> Duration {
    runtime.block_on(async {
        let mut tasks = tokio::task::JoinSet::new();
        let started = Instant::now();
        for peer in peers {
            let peer = peer.clone();
            tasks.spawn(async move {
                for _ in 0..calls_each {
                    black_box(peer.call_tool(remember()).await.expect("memory__remember answers"));
                }
            });
        }
        while let Some(joined) = tasks.join_next().await {
            joined.expect("a caller task");
        }
        started.elapsed()
    })
}

/// `count` clients on `url`, each checked once (which also makes the agent).
fn clients(runtime: &Runtime, url: &str, legacy: bool, count: u32) -> Vec<RunningService<RoleClient, ()>> {
    runtime.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..count {
            let client = client(url, legacy).await;
            check_remember(client.peer()).await;
            clients.push(client);
        }
        clients
    })
}

fn peers_of(clients: &[RunningService<RoleClient, ()>]) -> Vec<Peer<RoleClient>> {
    clients.iter().map(|client| client.peer().clone()).collect()
}

fn remember_sqlite_against_redis(c: &mut Criterion) {
    let redis = test_peers::RedisServer::start();
    let runtime = runtime();
    let sqlite = gateway("{backend: sqlite}", "");
    let on_redis = gateway("{backend: redis, url: env:OMNIAGENT_REDIS_URL}", &redis.url());
    let mut group = c.benchmark_group("replicas_remember");
    group
        .throughput(Throughput::Elements(1))
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (name, server, legacy) in [
        ("sqlite", &sqlite, false),
        ("redis", &on_redis, false),
        ("sqlite_legacy", &sqlite, true),
        ("redis_legacy", &on_redis, true),
    ] {
        let clients = clients(&runtime, &server.url(), legacy, 1);
        let peers = peers_of(&clients);
        group.bench_function(name, |b| b.iter_custom(|iters| concurrent_calls(&runtime, &peers, iters)));
    }
    group.finish();
}

fn one_replica_against_two_behind_nginx(c: &mut Criterion) {
    let redis = test_peers::RedisServer::start();
    let runtime = runtime();
    let storage = "{backend: redis, url: env:OMNIAGENT_REDIS_URL}";
    let (first, second) = (gateway(storage, &redis.url()), gateway(storage, &redis.url()));
    let balancer = nginx([first.port, second.port]);
    let mut group = sixteen_clients::group(c, "replicas_http_16_clients");
    for (name, url, legacy) in [
        ("one_replica", first.url(), false),
        ("two_replicas_nginx", balancer.url(), false),
        ("one_replica_legacy", first.url(), true),
        ("two_replicas_nginx_legacy", balancer.url(), true),
    ] {
        let clients = clients(&runtime, &url, legacy, CLIENTS);
        let peers = peers_of(&clients);
        group.bench_function(name, |b| b.iter_custom(|iters| concurrent_calls(&runtime, &peers, iters)));
    }
    group.finish();
}

criterion_group!(benches, remember_sqlite_against_redis, one_replica_against_two_behind_nginx);
criterion_main!(benches);
