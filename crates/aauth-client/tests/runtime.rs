//! The client's file work and the async runtime: a token cache file that is slow to read
//! delays the request that reads it, never the runtime's other tasks.

#![cfg(unix)]

use std::io::Write as _;
use std::time::{Duration, Instant};

use aauth_client::{AAuthClient, AgentKey};
use url::Url;

/// Regression (hardening issue, blocking work on the async runtime): the token cache is
/// read on a blocking thread. Here the resource's token cache file is a FIFO, whose `open`
/// waits until someone opens it for writing, as a read waits on a stalled disk. On this
/// single-threaded runtime, a read on the runtime's own thread would stop every task until
/// then, timers too.
#[tokio::test(flavor = "current_thread")]
async fn a_stalled_token_cache_read_does_not_stall_the_runtime() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    // A port nothing listens on: once the read is over, the request fails at enrollment.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let nowhere = Url::parse(&format!("http://{closed}")).unwrap();
    let client = AAuthClient::builder(AgentKey::generate(), nowhere.clone())
        .allow_http_loopback(true)
        .person_server(nowhere.clone())
        .agent_token_cache_dir(dir.path().join("aauth"))
        .build()
        .unwrap();
    let url = nowhere.join("/data").unwrap();
    let fifo = client.resource_token_cache_file(&url).unwrap();
    let folder = fifo.parent().unwrap();
    std::fs::create_dir(folder).unwrap();
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o700)).unwrap();
    let made = std::process::Command::new("mkfifo").arg("-m").arg("600").arg(&fifo).status().unwrap();
    assert!(made.success(), "mkfifo: {made}");

    // Whatever the client does, the FIFO gets a writer after a while, which ends the read
    // (opened for reading too, so that this open never waits).
    let release = std::thread::spawn({
        let fifo = fifo.clone();
        move || {
            std::thread::sleep(Duration::from_secs(3));
            let released = Instant::now();
            let mut writer = std::fs::OpenOptions::new().read(true).write(true).open(&fifo).unwrap();
            writer.write_all(b"not a token cache").unwrap();
            released
        }
    });
    let started = Instant::now();
    let request = tokio::spawn(async move { client.http_client().post(url).body("{}").send().await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    let alive = Instant::now();
    let answer = request.await.unwrap();
    let released = release.join().unwrap();
    assert!(
        alive < released,
        "the runtime stalled: a 100 ms timer fired after {:?}, once the read was released",
        alive - started
    );
    // The file read was no token cache: the request went on, to an agent provider that is
    // not there.
    let error = answer.unwrap_err().to_string();
    assert!(error.contains("agent provider"), "{error}");
}
