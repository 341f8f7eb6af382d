//! The console's pages (`serve.console: true`) as a browser gets them, with GitHub's
//! OpenAPI document (1,223 operations) as a skill of the admin's agent and 10,000 lines in
//! the audit (target: each page within 20 ms): a `GET` with the admin's bearer token to a
//! gateway started with `--eager`, answered whole, over a new loopback connection each
//! time (as a browser's first request would be). The overview counts the last hour's
//! calls (all 10,000 lines are of it); the calls page shows the latest 200, or those of
//! one client; the policy page a rate limit (a rule would cost the tools page its check
//! of every item).

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};

const TOKEN: &str = "bench-admin-token";

/// The gateway, ended when dropped.
struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `omniagent mcp serve --http --eager` with the console and GitHub's document;
/// returns once it listens (its agent started before that).
fn start(home: &std::path::Path) -> (Gateway, u16) {
    let config = format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: [], tools: false}}\n\
         openapi:\n  github: {{spec: '{}'}}\nobservability: {{audit: {{}}}}\n\
         policy: {{rate_limits: [{{tool: 'github__*', per_minute: 600}}]}}\nserve:\n  console: true\n  clients:\n    root: {{token: \"env:ROOT_TOKEN\", admin: true}}\n",
        test_peers::github_openapi_or_panic().display()
    );
    std::fs::write(home.join("config.yaml"), config).expect("a writable temporary folder");
    std::fs::write(home.join("audit.jsonl"), audit_lines(AUDIT_LINES)).expect("a writable temporary folder");
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port").port();
    let address = format!("127.0.0.1:{port}");
    let child = Command::new(env!("CARGO_BIN_EXE_omniagent"))
        .args(["mcp", "serve", "--eager", "--http", &address])
        .env("OMNIAGENT_HOME", home)
        .env("ROOT_TOKEN", TOKEN)
        .env_remove("OMNIAGENT_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("omniagent runs");
    let gateway = Gateway(child);
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed() < Duration::from_secs(60), "the gateway did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    (gateway, port)
}

/// How many lines the audit holds.
const AUDIT_LINES: usize = 10_000;

/// `count` audit lines of the last minutes, as the gateway writes them: two clients in
/// turn, one call in ten an error.
fn audit_lines(count: usize) -> String {
    let now = std::time::SystemTime::now();
    (0..count)
        .map(|n| {
            let time = omniagent_host::audit::rfc3339_millis(now - Duration::from_millis((count - n) as u64 * 50));
            let client = if n % 2 == 0 { "root" } else { "bob" };
            let (outcome, kind) = if n % 10 == 0 { ("error", "\"failed\"") } else { ("ok", "null") };
            format!(
                "{{\"time\":\"{time}\",\"client\":\"{client}\",\"agent\":\"{client}\",\"identity\":null,\
                 \"kind\":\"tool\",\"item\":\"github__repos_get\",\"skill\":\"github\",\"source\":\"openapi\",\
                 \"arguments\":\"sha256:07a4\",\"outcome\":\"{outcome}\",\"error_kind\":{kind},\"layer\":null,\
                 \"reason\":null,\"duration_ms\":12.5,\"trace_id\":\"4bf92f3577b34da6a3ce929d0e0e4736\"}}\n"
            )
        })
        .collect()
}

/// `GET path` with the admin's token; the body's length (the status must be 200).
fn get(port: u16, path: &str) -> usize {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("the gateway listens");
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).expect("the request is sent");
    let mut response = Vec::new();
    stream.read_to_end(&mut response).expect("an answer");
    assert!(response.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&response[..200.min(response.len())]));
    response.len()
}

fn pages(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("a temporary folder");
    let (_gateway, port) = start(home.path());
    let tools = get(port, "/console/tools");
    assert!(tools > 1_223 * 100, "every operation is on the tools page ({tools} bytes)");
    let pages = [
        ("overview", "/console"),
        ("tools", "/console/tools"),
        ("calls", "/console/calls"),
        ("calls_of_one_client", "/console/calls?client=bob&outcome=error"),
        ("policy", "/console/policy"),
    ];
    for (name, path) in pages {
        c.bench_function(&format!("console/{name}_github_openapi"), |b| b.iter(|| get(port, path)));
    }
}

criterion_group!(benches, pages);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
