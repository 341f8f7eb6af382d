//! Two `omniagent mcp serve --http` replicas sharing one `redis-server`, behind nginx
//! round robin, all on loopback, run from the deployment example's own files
//! (`deploy/replicas/`, with only their ports changed): a replica killed mid-run loses
//! nothing but the calls it had in flight, in either protocol era.

use std::io::{BufRead as _, BufReader};
use std::net::TcpListener;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::Home;

/// The calls the client makes; the kill comes before the one in the middle.
const CALLS: usize = 1000;
/// The bearer token of the example's `team` client.
const TOKEN: &str = "replicas-test-token";
/// How many calls the client has in flight at once (`WINDOW` in the script): the most
/// that may fail.
const WINDOW: usize = 4;

fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/replicas").join(file)
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// What a child writes on stderr, gathered as it comes.
fn collect_stderr(child: &mut Child) -> Arc<Mutex<String>> {
    let stderr = Arc::new(Mutex::new(String::new()));
    let lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let collected = Arc::clone(&stderr);
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            collected.lock().unwrap().push_str(&format!("{line}\n"));
        }
    });
    stderr
}

fn wait_for_port(port: u16, what: &str, child: &mut Child, stderr: &Mutex<String>) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("{what} exited ({status}) before listening:\n{}", stderr.lock().unwrap());
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A replica as the example's README starts it: its own home, the example's config.
struct Replica {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
    _home: Home,
}

impl Replica {
    fn start(redis_url: &str) -> Self {
        let home = Home::new();
        let port = free_port();
        let config = example("config.yaml");
        let address = format!("127.0.0.1:{port}");
        let mut child = home
            .omniagent_process(&["--config", config.to_str().unwrap(), "mcp", "serve", "--http", &address])
            .env("OMNIAGENT_REDIS_URL", redis_url)
            .env("OMNIAGENT_TEAM_TOKEN", TOKEN)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("omniagent mcp serve starts");
        let stderr = collect_stderr(&mut child);
        wait_for_port(port, "a replica", &mut child, &stderr);
        Self { child, port, stderr, _home: home }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// nginx with the example's `nginx.conf`, unprivileged, in a prefix folder of its own.
struct Nginx {
    child: Child,
    port: u16,
    prefix: tempfile::TempDir,
    stderr: Arc<Mutex<String>>,
}

impl Nginx {
    fn start(replicas: [u16; 2]) -> Self {
        if Command::new("nginx").arg("-v").output().is_err() {
            panic!("nginx is not installed: install it (`apt-get install nginx-light`) to run this test");
        }
        let port = free_port();
        let mut conf = std::fs::read_to_string(example("nginx.conf")).unwrap();
        for (example_address, port) in [("8766", replicas[0]), ("8767", replicas[1]), ("8080", port)] {
            let example_address = format!("127.0.0.1:{example_address}");
            assert!(conf.contains(&example_address), "the example's nginx.conf names {example_address}");
            conf = conf.replace(&example_address, &format!("127.0.0.1:{port}"));
        }
        let prefix = tempfile::tempdir().unwrap();
        // nginx's workers run as `nobody` when the test runs as root.
        std::fs::set_permissions(prefix.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        std::fs::write(prefix.path().join("nginx.conf"), conf).unwrap();
        let mut child = Command::new("nginx")
            .arg("-p")
            .arg(prefix.path())
            .args(["-c", "nginx.conf", "-e", "stderr", "-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("nginx starts");
        let stderr = collect_stderr(&mut child);
        wait_for_port(port, "nginx", &mut child, &stderr);
        Self { child, port, prefix, stderr }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// The access log's lines: time, method, status, the replica(s) tried, the request's
    /// MCP-Protocol-Version.
    fn access_log(&self) -> String {
        std::fs::read_to_string(self.prefix.path().join("access.log")).unwrap_or_default()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGQUIT: the master stops its workers too.
        let _ = Command::new("kill").args(["-QUIT", &self.child.id().to_string()]).status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn replicas_client() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/replicas_client.py")
}

#[test]
fn two_replicas_behind_nginx_lose_nothing_but_the_calls_in_flight_when_one_is_killed() {
    let redis = test_peers::RedisServer::start();
    let mut first = Replica::start(&redis.url());
    let second = Replica::start(&redis.url());
    let nginx = Nginx::start([first.port, second.port]);

    let output = Command::new(test_peers::mcp_python_or_panic())
        .arg(replicas_client())
        .args([&nginx.url(), TOKEN, &first.child.id().to_string(), &CALLS.to_string()])
        .stdin(Stdio::null())
        .output()
        .expect("the Python client starts");
    let logs = || {
        format!(
            "client:\n{}\nfirst replica:\n{}\nsecond replica:\n{}\nnginx:\n{}",
            String::from_utf8_lossy(&output.stderr),
            first.stderr.lock().unwrap(),
            second.stderr.lock().unwrap(),
            nginx.stderr.lock().unwrap()
        )
    };
    assert!(output.status.success(), "the Python client failed ({}):\n{}", output.status, logs());
    let out: Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("not JSON ({error}):\n{}", logs()));

    let status = first.child.try_wait().unwrap().expect("the first replica was killed");
    assert_eq!(status.signal(), Some(9), "killed by SIGKILL");

    // The kill lasts from the signal until the process is dead (every thread gone but the
    // zombie main thread): a call in flight at any moment of it may fail; one that starts
    // after it must not.
    let (kill_at, dead_at) = (out["kill_at"].as_f64().unwrap(), out["dead_at"].as_f64().unwrap());
    let calls = out["calls"].as_array().unwrap();
    assert_eq!(calls.len(), CALLS);
    let mut failed = Vec::new();
    for call in calls {
        if call["ok"] == true {
            continue;
        }
        let (start, end) = (call["start"].as_f64().unwrap(), call["end"].as_f64().unwrap());
        assert!(start < dead_at && kill_at < end, "only a call in flight at the kill may fail: {call}\n{}", logs());
        failed.push(call);
    }
    assert!(failed.len() <= WINDOW, "at most the calls in flight fail: {failed:?}");
    let after_kill = calls.iter().filter(|call| call["start"].as_f64().unwrap() > dead_at).count();
    assert!(after_kill >= CALLS / 2 - WINDOW, "the calls after the kill were made ({after_kill})");
    for mode in ["legacy", "2026-07-28"] {
        let answered = calls.iter().filter(|call| call["mode"] == mode && call["ok"] == true).count();
        assert!(answered >= CALLS / 2 - WINDOW, "{mode}: {answered} calls answered");
    }

    // Every acknowledged write is there, through the replica left.
    let recalled = out["recalled"].as_object().unwrap();
    let listed: Vec<&str> = out["listed"].as_array().unwrap().iter().map(|key| key.as_str().unwrap()).collect();
    for call in calls.iter().filter(|call| call["ok"] == true) {
        let i = call["i"].as_u64().unwrap();
        let key = format!("k{i:04}");
        assert_eq!(recalled[&key], format!("v{i:04}"), "{key} was acknowledged, so it is kept");
        assert!(listed.contains(&key.as_str()), "{key} is listed");
    }
    assert!(listed.len() <= CALLS, "nothing but the calls' notes: {}", listed.len());

    // Both replicas answered the 2025-11-25 session's calls: without the shared session
    // store the second would have answered 404 to the session the first one made, or
    // the other way round.
    let log = nginx.access_log();
    for replica in [first.port, second.port] {
        let address = format!("127.0.0.1:{replica}");
        let served = log
            .lines()
            .filter(|line| {
                let fields: Vec<&str> = line.split(' ').collect();
                fields.get(1..5).is_some_and(|fields| {
                    fields[0] == "POST" && fields[1] == "200" && fields[2] == address && fields[3] == "2025-11-25"
                })
            })
            .count();
        assert!(served > CALLS / 10, "replica {address} answered {served} calls of the session:\n{log}");
    }
    drop(redis);
}

/// The Redis URL is a secret: a replica whose server refuses it (a password the server
/// does not ask for) names the store in its errors and logs without the password.
#[test]
fn the_redis_url_password_reaches_no_error_and_no_log() {
    let redis = test_peers::RedisServer::start();
    let replica = Replica::start(&format!("redis://:hunter2@127.0.0.1:{}/", redis.port()));
    let url = format!("http://127.0.0.1:{}/mcp", replica.port);
    let plan = serde_json::json!({"calls": [["memory__remember", {"key": "a", "value": "b"}]]});
    let (out, client_stderr) = crate::gateway::python_with_stderr("legacy", &["http", &url, TOKEN], plan, &[]);
    let call = out["calls"][0].to_string();
    assert!(call.contains(&format!("redis://127.0.0.1:{}/", redis.port())), "the store is named: {call}");
    std::thread::sleep(Duration::from_millis(200));
    let stderr = replica.stderr.lock().unwrap().clone();
    assert!(
        stderr.contains("redis session store redis://127.0.0.1:"),
        "the session store's failure is logged: {stderr}"
    );
    for text in [&call, &stderr, &client_stderr] {
        assert!(!text.contains("hunter2"), "{text}");
    }
}
