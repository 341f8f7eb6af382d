//! The sandbox: under the default profile a hostile server (the sample server's
//! `--hostile` tools, each of which tries one thing) is denied each attempt with the
//! system's ordinary error, while it and the other servers keep serving; with
//! `sandbox: off` the same attempts succeed, so the test would see a sandbox missing.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skill_core::Agent;
use skill_mcp::McpSkill;

use crate::{SAMPLE, call_text, server_config};

/// A home of the test's own, with what a server must not reach: an SSH key, the
/// omniagent config and a shell profile.
struct Home {
    folder: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let folder = tempfile::tempdir().expect("a temporary folder");
        let home = folder.path();
        for (file, text) in [
            (".ssh/id_ed25519", "-----BEGIN OPENSSH PRIVATE KEY----- fake"),
            (".omniagent/config.yaml", "mcp: {servers: {}}"),
            (".bashrc", "# the user's own\n"),
        ] {
            let path = home.join(file);
            std::fs::create_dir_all(path.parent().expect("a folder")).expect("the folder is made");
            std::fs::write(path, text).expect("the file is written");
        }
        Self { folder }
    }

    fn path(&self, file: &str) -> PathBuf {
        self.folder.path().join(file)
    }

    /// The environment the servers inherit: this home, and the test's `PATH`.
    fn env(&self) -> HashMap<String, String> {
        HashMap::from([
            ("HOME".to_owned(), self.folder.path().display().to_string()),
            ("PATH".to_owned(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned())),
            ("OMNIAGENT_HOME".to_owned(), self.path(".omniagent").display().to_string()),
        ])
    }
}

/// An agent with the hostile sample server (settings `extra`) and a second, plain one
/// (`bystander`), both started.
async fn agent(home: &Home, extra: Value) -> Agent {
    let mut hostile = json!({"command": test_peers::sample_server_or_panic(), "args": ["--hostile"]});
    if let (Some(fields), Value::Object(extra)) = (hostile.as_object_mut(), extra) {
        fields.extend(extra);
    }
    let plain = json!({"command": test_peers::sample_server_or_panic()});
    let agent = Agent::builder()
        .with_compiled_skill(McpSkill::with_host_env(SAMPLE, server_config(hostile), home.env()))
        .with_compiled_skill(McpSkill::with_host_env("bystander", server_config(plain), home.env()))
        .build();
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.loaded, [SAMPLE, "bystander"], "skipped: {:?}", report.skipped);
    agent
}

async fn attempt(agent: &Agent, tool: &str, arguments: Value) -> String {
    call_text(agent, tool, arguments).await
}

fn path_arg(path: &Path) -> Value {
    json!({"path": path})
}

/// Asserts that `outcome` is a denial with `error` (the system's message).
fn assert_denied(what: &str, outcome: &str, error: &str) {
    assert!(outcome.starts_with("denied: ") && outcome.contains(error), "{what}: {outcome}");
}

/// Both servers still answer.
async fn assert_serving(agent: &Agent) {
    assert_eq!(call_text(agent, "echo", json!({"text": "still here"})).await, "still here");
    let output = agent.call_tool("bystander__echo", json!({"text": "me too"})).await.expect("the bystander answers");
    assert!(!output.is_error, "{output:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_profile_denies_each_attempt_and_everyone_keeps_serving() {
    let home = Home::new();
    let agent = agent(&home, json!({})).await;
    let gateway = std::process::id();

    let key = attempt(&agent, "read_file", path_arg(&home.path(".ssh/id_ed25519"))).await;
    assert_denied("reading ~/.ssh/id_ed25519", &key, "Permission denied");
    let config = attempt(&agent, "read_file", path_arg(&home.path(".omniagent/config.yaml"))).await;
    assert_denied("reading $OMNIAGENT_HOME/config.yaml", &config, "Permission denied");
    let profile = attempt(&agent, "write_file", path_arg(&home.path(".bashrc"))).await;
    assert_denied("writing ~/.bashrc", &profile, "Permission denied");
    assert_eq!(std::fs::read_to_string(home.path(".bashrc")).unwrap(), "# the user's own\n");
    let environ = attempt(&agent, "read_file", json!({"path": format!("/proc/{gateway}/environ")})).await;
    // Where the server has a `/proc` of its own (as root), the gateway is not there at all.
    let error = if has_process_view() { "No such file or directory" } else { "Permission denied" };
    assert_denied("reading the gateway's environ", &environ, error);
    let traced = attempt(&agent, "ptrace", json!({"pid": gateway})).await;
    assert_denied("ptrace of the gateway", &traced, "EPERM");
    let forks = attempt(&agent, "fork", json!({"count": 10_000})).await;
    assert_denied("10,000 processes", &forks, "Resource temporarily unavailable");
    let memory = attempt(&agent, "allocate", json!({"megabytes": 8 << 10})).await;
    assert_denied("8 GiB", &memory, "memory allocation");
    // What the server may do, it does: its temporary folder is its own.
    let scratch = call_text(&agent, "env", json!({"name": "TMPDIR"})).await;
    let written = attempt(&agent, "write_file", json!({"path": format!("{scratch}/notes")})).await;
    assert_eq!(written, "allowed: appended");
    assert_serving(&agent).await;
    agent.close().await;
    assert!(!Path::new(&scratch).exists(), "{scratch} outlived its server");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_off_lets_the_same_attempts_through() {
    let home = Home::new();
    let agent = agent(&home, json!({"sandbox": "off"})).await;
    let key = attempt(&agent, "read_file", path_arg(&home.path(".ssh/id_ed25519"))).await;
    assert!(key.starts_with("allowed: "), "{key}");
    let environ = attempt(&agent, "read_file", json!({"path": format!("/proc/{}/environ", std::process::id())})).await;
    assert!(environ.starts_with("allowed: "), "{environ}");
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_and_write_paths_open_what_they_name_and_nothing_beside() {
    let home = Home::new();
    let notes = home.path("notes");
    std::fs::create_dir(&notes).unwrap();
    let agent = agent(&home, json!({"sandbox": {"write": ["~/notes"], "read": ["~/.ssh"]}})).await;
    let written = attempt(&agent, "write_file", path_arg(&notes.join("today.md"))).await;
    assert_eq!(written, "allowed: appended");
    let key = attempt(&agent, "read_file", path_arg(&home.path(".ssh/id_ed25519"))).await;
    assert!(key.starts_with("allowed: "), "{key}");
    let key_written = attempt(&agent, "write_file", path_arg(&home.path(".ssh/id_ed25519"))).await;
    assert_denied("writing a `read` path", &key_written, "Permission denied");
    let config = attempt(&agent, "read_file", path_arg(&home.path(".omniagent/config.yaml"))).await;
    assert_denied("reading beside the paths", &config, "Permission denied");
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn network_none_reaches_no_listener() {
    let canary = std::net::TcpListener::bind("127.0.0.1:0").expect("a canary listener");
    canary.set_nonblocking(true).unwrap();
    let address = canary.local_addr().unwrap().to_string();
    let home = Home::new();
    let agent = agent(&home, json!({"sandbox": {"network": "none"}})).await;
    let connected = attempt(&agent, "connect", json!({"address": address})).await;
    assert_denied("connecting with network: none", &connected, "Permission denied");
    assert!(
        canary.accept().is_err_and(|error| error.kind() == std::io::ErrorKind::WouldBlock),
        "the canary was reached"
    );
    assert_serving(&agent).await;
    agent.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_denied_a_path_at_start_up_is_skipped_naming_the_setting() {
    let home = Home::new();
    let script = format!(
        "cat {} >/dev/null && exec {}",
        home.path(".ssh/id_ed25519").display(),
        test_peers::sample_server_or_panic().display()
    );
    let config = server_config(json!({"command": "/bin/sh", "args": ["-c", script]}));
    let agent = Agent::builder().with_compiled_skill(McpSkill::with_host_env(SAMPLE, config, home.env())).build();
    let report = agent.init_compiled_skills().await;
    let [skipped] = report.skipped.as_slice() else { panic!("one skipped skill expected: {:?}", report.skipped) };
    assert_eq!(
        skipped.reason,
        "init failed: start-up failed: the server exited before it answered (exit status: 1); it ran sandboxed, and \
         it was denied a path: add it to sandbox.read or sandbox.write (its stderr in the log names it)"
    );
    assert!(!skipped.reason.contains("id_ed25519"), "the reason quotes the server's stderr");
}

/// A listener on 127.0.0.1 that answers every request `200 <name>` and counts them.
fn web_server(name: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a listener");
    let port = listener.local_addr().unwrap().port();
    let served = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&served);
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut head = [0u8; 4096];
            let _ = stream.read(&mut head);
            let body = format!("hello from {name}");
            let _ =
                write!(stream, "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
        }
    });
    (port, served)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_network_list_lets_through_its_hosts_only_and_through_the_proxy_only() {
    let (allowed, allowed_served) = web_server("A");
    let (other, other_served) = web_server("B");
    let home = Home::new();
    let agent = agent(&home, json!({"sandbox": {"network": [format!("127.0.0.1:{allowed}")]}})).await;
    let fetched = attempt(&agent, "fetch", json!({"url": format!("http://127.0.0.1:{allowed}/")})).await;
    assert_eq!(fetched, "allowed: 200 OK hello from A");
    let refused = attempt(&agent, "fetch", json!({"url": format!("http://127.0.0.1:{other}/")})).await;
    assert!(refused.contains("403") && refused.contains("not in sandbox.network of sample"), "{refused}");
    // Around the proxy there is no way: TCP to any other port is denied.
    let direct = attempt(&agent, "connect", json!({"address": format!("127.0.0.1:{allowed}")})).await;
    assert_denied("connecting around the proxy", &direct, "Permission denied");
    assert_eq!(allowed_served.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(other_served.load(std::sync::atomic::Ordering::SeqCst), 0, "port B was reached");
    assert_serving(&agent).await;
    agent.close().await;
}

/// An ordinary user's ids for `setpriv`: `nobody` and its group, by number, as every
/// distribution numbers them.
const ORDINARY_USER: [&str; 3] = ["--reuid=65534", "--regid=65534", "--clear-groups"];

/// Whether a sandbox here gives its child a `/proc` of its own (it needs root).
fn has_process_view() -> bool {
    let sandbox = child_sandbox::Sandbox::prepare(&child_sandbox::Policy::default()).expect("a sandbox");
    sandbox.missing().iter().all(|missing| missing.part != child_sandbox::Part::ProcessView)
}

/// Whether this process runs as root (its real user id is 0).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|status| {
        status.lines().any(|line| line.starts_with("Uid:") && line.split_whitespace().nth(1) == Some("0"))
    })
}

/// Whether the ordinary user can run `program` (it is not in a folder only root reaches,
/// and `setpriv` is installed).
fn ordinary_user_runs(program: &Path) -> bool {
    std::process::Command::new("setpriv")
        .args(ORDINARY_USER)
        .args(["test", "-x"])
        .arg(program)
        .status()
        .is_ok_and(|status| status.success())
}

/// Run as root, the sandbox tests of this file run again as an ordinary user (`nobody`,
/// through `setpriv`), where the machine lets that user run this test binary and the
/// sample server. There no network namespace and no pids cgroup can be made (the process
/// limit is `RLIMIT_NPROC` instead), and each attempt is denied all the same. Run as an
/// ordinary user, the tests above already are that run.
#[test]
fn the_same_attempts_are_denied_as_an_ordinary_user() {
    if !is_root() {
        return;
    }
    let tests = std::env::current_exe().expect("the test binary");
    let server = test_peers::sample_server_or_panic();
    if !(ordinary_user_runs(&tests) && ordinary_user_runs(&server)) {
        #[expect(clippy::print_stderr, reason = "why a test that needs the machine's leave did nothing")]
        {
            eprintln!("nobody cannot run {} and {}: not run as an ordinary user", tests.display(), server.display());
        }
        return;
    }
    let output = std::process::Command::new("setpriv")
        .args(ORDINARY_USER)
        .arg("env")
        .arg("-i")
        .arg(format!("PATH={}", std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned())))
        .arg(format!("{}={}", test_peers::SAMPLE_SERVER_VAR, server.display()))
        .arg(&tests)
        .arg("sandbox::")
        .current_dir(std::env::temp_dir())
        .output()
        .expect("setpriv runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "as nobody:\n{stdout}\n{stderr}");
    for test in [
        "the_default_profile_denies_each_attempt_and_everyone_keeps_serving",
        "network_none_reaches_no_listener",
        "a_network_list_lets_through_its_hosts_only_and_through_the_proxy_only",
        "read_and_write_paths_open_what_they_name_and_nothing_beside",
    ] {
        assert!(stdout.contains(&format!("sandbox::{test} ... ok")), "{test} as nobody:\n{stdout}\n{stderr}");
    }
}
