//! What the gateway says, and to whom, as its upstreams fail and as it stops: an
//! upstream's stderr reaches the gateway's log and no client, an upstream killed while
//! the gateway runs is logged, a clean stop answers the calls in flight and logs no
//! error, and an unknown prompt is named as a prompt.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{HttpGateway, python, python_with_stderr, sample_home, text_of};

/// What the upstream prints on stderr before it crashes: a path and a token, as a real
/// server might print them.
const CANARY: &str = "canary-7f3a /home/alice/.secrets token=sk-canary";

/// The `_meta` every 2026-07-28 request carries.
const META_2026: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}"#;

/// A call's result names the gateway call whose log line holds the upstream's stderr
/// (`call=N`); that line is in `log` and holds the canary.
fn check_canary_logged_under_the_call(result: &Value, log: &str) {
    assert_eq!(result["isError"], json!(true), "{result}");
    let text = text_of(result);
    assert!(text.contains("stopped during the call"), "{text}");
    assert!(!result.to_string().contains("canary"), "the upstream's stderr reached the client: {result}");
    let call = text.split("call=").nth(1).and_then(|rest| rest.split(')').next()).unwrap_or_else(|| panic!("{text}"));
    let logged = log.lines().find(|line| line.contains(CANARY)).unwrap_or_else(|| panic!("no canary in:\n{log}"));
    assert!(logged.contains("WARN") && logged.contains(&format!("call={call}")), "{logged}");
}

#[test]
fn an_upstreams_stderr_is_in_the_gateways_log_and_in_no_clients_result() {
    let home = sample_home("60s");
    let crash = json!({"calls": [["sample__crash", {"stderr": CANARY}], ["sample__echo", {"text": "back"}]]});

    let gateway = HttpGateway::start(&home, &[], &[]);
    for mode in ["legacy", "2026-07-28"] {
        let out = python(mode, &["http", &gateway.url()], crash.clone(), &[]);
        check_canary_logged_under_the_call(&out["calls"][0], &gateway.stderr.lock().unwrap());
        assert_eq!(text_of(&out["calls"][1]), "back");
        // The log holds one canary line per crash so far; only the last is this call's.
        gateway.stderr.lock().unwrap().clear();
    }

    // Over stdio, the gateway's stderr (its log) is what the Python client passes on.
    let omniagent = env!("CARGO_BIN_EXE_omniagent");
    let home_dir = home.path().to_str().unwrap();
    let (out, log) =
        python_with_stderr("legacy", &["stdio", omniagent, "mcp", "serve"], crash, &[("OMNIAGENT_HOME", home_dir)]);
    check_canary_logged_under_the_call(&out["calls"][0], &log);
}

/// `omniagent tools call`, run by a person at a terminal, shows the upstream's stderr in
/// its own log (warnings go to its stderr by default), and its error says what failed.
#[test]
fn the_cli_shows_an_upstreams_stderr_in_its_log() {
    let home = sample_home("60s");
    let (code, stdout, stderr) = crate::run(home.omniagent(&[
        "tools",
        "call",
        "sample__crash",
        "--args",
        &json!({"stderr": CANARY}).to_string(),
    ]));
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(stderr.contains("stopped during the call"), "{stderr}");
    let logged = stderr.lines().find(|line| line.contains(CANARY)).unwrap_or_else(|| panic!("{stderr}"));
    assert!(logged.contains("WARN") && !logged.contains("call="), "{logged}");
}

#[test]
fn an_upstream_killed_while_the_gateway_runs_is_logged_at_warn() {
    let home = sample_home("60s");
    let gateway = HttpGateway::start(&home, &[], &[]);
    let out = python("2026-07-28", &["http", &gateway.url()], json!({"calls": [["sample__pid", {}]]}), &[]);
    let pid = text_of(&out["calls"][0]).to_owned();
    let status = std::process::Command::new("kill").args(["-KILL", &pid]).status().unwrap();
    assert!(status.success());
    let started = Instant::now();
    loop {
        let log = gateway.stderr.lock().unwrap().clone();
        if let Some(line) = log.lines().find(|line| line.contains("exited unasked")) {
            assert!(line.contains("WARN") && line.contains("server=sample"), "{line}");
            assert!(line.contains(&format!("pid={pid}")) && line.contains("killed by SIGKILL"), "{line}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no warning of the kill:\n{log}");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = python("2026-07-28", &["http", &gateway.url()], json!({"calls": [["sample__pid", {}]]}), &[]);
    assert_ne!(text_of(&out["calls"][0]), pid, "the next call started the server again");
}

/// Sends a 2026-07-28 request over a connection of its own; the answer is read later.
fn post_2026(port: u16, id: u32, method: &str, name: Option<&str>, params: &str) -> std::net::TcpStream {
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{META_2026},{params}}}}}"#);
    let name = name.map(|name| format!("Mcp-Name: {name}\r\n")).unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\n{name}Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// A gateway stopped by SIGTERM while a call runs, a 2026-07-28 client listens and a
/// 2025-11-25 session is open: the call is answered, the listening ends with its answer,
/// and nothing is logged at ERROR level.
#[test]
fn a_clean_stop_over_http_answers_the_calls_in_flight_and_logs_no_error() {
    let home = sample_home("60s");
    let mut gateway = HttpGateway::start(&home, &["--eager"], &[]);
    // A 2025-11-25 session, whose stream stays open.
    let session = python("legacy", &["http", &gateway.url()], json!({}), &[]);
    assert_eq!(session["protocol_version"], json!("2025-11-25"));
    let mut listening =
        post_2026(gateway.port, 1, "subscriptions/listen", None, r#""notifications":{"toolsListChanged":true}"#);
    let mut calling = post_2026(
        gateway.port,
        2,
        "tools/call",
        Some("sample__sleep"),
        r#""name":"sample__sleep","arguments":{"ms":1500}"#,
    );
    // The call reaches the upstream (started eagerly) well within this.
    std::thread::sleep(Duration::from_millis(500));
    let status = std::process::Command::new("kill").args(["-TERM", &gateway.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let (mut called, mut listened) = (String::new(), String::new());
    calling.read_to_string(&mut called).unwrap();
    listening.read_to_string(&mut listened).unwrap();
    let exit = gateway.child.wait().unwrap();
    // The thread reading the log ends with it.
    std::thread::sleep(Duration::from_millis(100));
    let log = gateway.stderr.lock().unwrap().clone();
    assert_eq!(exit.code(), Some(0), "{log}");
    assert!(called.contains(r#""text":"slept""#), "the call in flight is answered: {called}\n{log}");
    assert!(listened.contains(r#""id":1,"result""#), "the listening ends with its answer: {listened}");
    assert!(!log.contains("ERROR"), "{log}");
}

/// The gateway over stdio, run with `args` in `home`: the process, its input and its
/// output, read line by line.
fn stdio_gateway(
    home: &crate::Home,
    args: &[&str],
) -> (std::process::Child, std::process::ChildStdin, BufReader<std::process::ChildStdout>) {
    let mut gateway = home
        .omniagent_process(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = gateway.stdin.take().unwrap();
    let output = BufReader::new(gateway.stdout.take().unwrap());
    (gateway, input, output)
}

/// Over stdio, where a 2025-11-25 session's calls go past rmcp's service loops (the
/// lane): SIGTERM lets the call in flight be answered, while another the client cancelled
/// is not, and the stop logs no error.
#[test]
fn a_clean_stop_over_stdio_answers_the_call_in_flight_and_not_the_cancelled_one() {
    let home = sample_home("60s");
    let (mut gateway, mut input, mut output) = stdio_gateway(&home, &["mcp", "serve", "--eager"]);
    let mut send = |line: Value| input.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut next = || {
        let mut line = String::new();
        assert_ne!(output.read_line(&mut line).unwrap(), 0, "the gateway ended");
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}));
    assert_eq!(next()["id"], json!(1));
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let sleep = |id: u64, ms: u64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "sample__sleep", "arguments": {"ms": ms}}})
    };
    send(sleep(2, 60_000));
    send(sleep(3, 1500));
    send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}));
    // The calls reach the upstream (started eagerly) well within this.
    std::thread::sleep(Duration::from_millis(500));
    let status = std::process::Command::new("kill").args(["-TERM", &gateway.id().to_string()]).status().unwrap();
    assert!(status.success());
    let answer = next();
    assert_eq!(answer["id"], json!(3), "only the call in flight is answered: {answer}");
    assert_eq!(text_of(&answer["result"]), "slept", "{answer}");
    let mut rest = String::new();
    output.read_to_string(&mut rest).unwrap();
    assert_eq!(rest, "", "the cancelled call is not answered");
    let mut log = String::new();
    gateway.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(gateway.wait().unwrap().success(), "{log}");
    assert!(!log.contains("ERROR"), "{log}");
}

/// Over stdio: a 2026-07-28 client that listens, asks for a prompt that does not exist,
/// and leaves (closing both the gateway's input and its output) is told the prompt is
/// unknown, and the stop logs no error.
#[test]
fn an_unknown_prompt_is_named_and_a_clean_stop_over_stdio_logs_no_error() {
    let home = sample_home("60s");
    let (mut gateway, mut input, mut output) = stdio_gateway(&home, &["mcp", "serve"]);
    let mut send = |line: String| input.write_all(format!("{line}\n").as_bytes()).unwrap();
    send(format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{{META_2026},"notifications":{{"toolsListChanged":true}}}}}}"#
    ));
    send(format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"prompts/get","params":{{{META_2026},"name":"no_such_prompt"}}}}"#
    ));
    let answer = loop {
        let mut line = String::new();
        assert_ne!(output.read_line(&mut line).unwrap(), 0, "the gateway ended");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["id"] == json!(2) {
            break message;
        }
    };
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(answer["error"]["message"], json!("unknown prompt `no_such_prompt`"), "{answer}");
    drop((input, output));
    let mut log = String::new();
    gateway.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    assert!(gateway.wait().unwrap().success(), "{log}");
    assert!(!log.contains("ERROR"), "{log}");
}
