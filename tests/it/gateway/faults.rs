//! The gateway under faults: an upstream that crashes or hangs, a thousand calls at once,
//! a client that goes away mid-call, and SIGTERM. The upstreams run under the default
//! sandbox, which the crash, hang and SIGTERM tests check.

use std::time::{Duration, Instant};

use serde_json::json;

use super::{HttpGateway, python, sample_home, text_of};

#[test]
fn an_upstream_crash_or_hang_fails_only_that_call() {
    let home = sample_home("1s");
    let gateway = HttpGateway::start(&home, &[], &[]);
    let plan = json!({"calls": [
        ["sample__crash", {}],
        ["sample__echo", {"text": "back after the crash"}],
        ["sample__hang", {}],
        ["sample__echo", {"text": "back after the hang"}],
        ["sample__pid", {}]
    ]});
    let started = Instant::now();
    let out = python("2026-07-28", &["http", &gateway.url()], plan, &[]);
    let calls = &out["calls"];
    assert_eq!(calls[0]["isError"], json!(true), "{}", calls[0]);
    assert!(text_of(&calls[0]).contains("stopped during the call"), "{}", calls[0]);
    assert_eq!(text_of(&calls[1]), "back after the crash");
    assert_eq!((&calls[2]["isError"], text_of(&calls[2])), (&json!(true), "timed out after 1s"));
    assert_eq!(text_of(&calls[3]), "back after the hang");
    assert!(test_peers::is_confined(text_of(&calls[4])), "the upstream runs unconfined");
    assert!(started.elapsed() < Duration::from_secs(15), "took {:?}", started.elapsed());
}

#[test]
fn a_thousand_concurrent_http_calls_are_all_answered_in_order() {
    let home = sample_home("60s");
    let gateway = HttpGateway::start(&home, &[], &[]);
    super::thousand_concurrent_echoes(&gateway);
}

/// The process ids in the process group `pgid`, from /proc.
fn group_members(pgid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            // /proc/PID/stat: `pid (comm) state ppid pgrp ...`; comm may hold spaces.
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            let Some((_, rest)) = stat.rsplit_once(')') else { return false };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            fields.first() != Some(&"Z") && fields.get(2).and_then(|pgrp| pgrp.parse::<u32>().ok()) == Some(pgid)
        })
        .collect()
}

#[test]
fn sigterm_stops_the_gateway_and_every_upstream_process() {
    let home = sample_home("60s");
    let mut gateway = HttpGateway::start(&home, &["--eager"], &[]);
    let out = python(
        "2026-07-28",
        &["http", &gateway.url()],
        json!({"calls": [["sample__spawn_child", {}], ["sample__pid", {}]]}),
        &[],
    );
    let grandchild: u32 = text_of(&out["calls"][0]).parse().unwrap();
    let upstream: u32 = text_of(&out["calls"][1]).parse().unwrap();
    assert_eq!(group_members(upstream).len(), 2, "the upstream and its grandchild run in its group");
    assert!(test_peers::is_confined(upstream) && test_peers::is_confined(grandchild), "they run unconfined");

    let status = std::process::Command::new("kill").args(["-TERM", &gateway.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let started = Instant::now();
    let exit = loop {
        if let Some(exit) = gateway.child.try_wait().unwrap() {
            break exit;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the gateway still runs 20 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(exit.code(), Some(0), "{}", gateway.stderr.lock().unwrap());
    let deadline = Instant::now() + Duration::from_secs(2);
    while !group_members(upstream).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(group_members(upstream), Vec::<u32>::new(), "upstream {upstream} and grandchild {grandchild} are gone");
}

/// A 2026-07-28 client that goes away mid-call (drops its HTTP connection) cancels the
/// upstream call: the sample server says so on its stderr, which the gateway logs at
/// debug level.
#[test]
fn a_client_that_disconnects_mid_call_cancels_the_upstream_call() {
    use std::io::Write as _;
    let home = sample_home("60s");
    let gateway = HttpGateway::start(&home, &["-vv", "--eager"], &[]);
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}"#;
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"sample__sleep","arguments":{{"ms":60000}},{meta}}}}}"#
    );
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: sample__sleep\r\nContent-Length: {}\r\n\r\n{body}",
        body.len(),
        port = gateway.port
    );
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", gateway.port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    // The gateway answers nothing before the call ends; give the call time to reach the
    // upstream (already started), then go away.
    std::thread::sleep(Duration::from_millis(500));
    assert!(!gateway.stderr.lock().unwrap().contains("sleep cancelled"));
    drop(stream);
    let started = Instant::now();
    while !gateway.stderr.lock().unwrap().contains("mcp-sample-server: sleep cancelled") {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no cancellation upstream:\n{}",
            gateway.stderr.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A gateway whose config lists its own URL as a server: the request that comes back to
/// it through that server is refused (508), so the server is left out at once rather
/// than after the start-up bound it would wait on itself for.
#[test]
fn a_server_that_is_the_gateway_itself_is_refused_at_once() {
    let port = super::free_port();
    let home = crate::Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nmcp:\n  servers:\n    me: {{url: \"http://127.0.0.1:{port}/mcp\"}}\n"
    ));
    let gateway = HttpGateway::start_on(port, &home, &[], &[]);
    let started = Instant::now();
    let out =
        python("2026-07-28", &["http", &gateway.url()], json!({"calls": [["memory__recall", {"key": "k"}]]}), &[]);
    let elapsed = started.elapsed();
    let tools: Vec<&str> = out["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(tools.contains(&"memory__recall") && !tools.iter().any(|name| name.starts_with("me__")), "{tools:?}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}: the start-up bound is 30 s");
    let stderr = gateway.stderr.lock().unwrap();
    assert!(stderr.contains("skill skipped skill=me") && stderr.contains("HTTP 508"), "{stderr}");
    assert!(!stderr.contains("worker quit"), "said once, naming the server: {stderr}");
}
