//! Behaviour tests: run the real binary and speak JSON-RPC lines to it over stdio, as the
//! `skill-mcp` host will.

use std::{
    io::{BufRead as _, BufReader, Write as _},
    process::{Child, ChildStdin, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

use serde_json::{Value, json};

mod conformance;

const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// One running server, its stdin, and the lines of its stdout.
struct Session {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout_lines: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Session {
    fn start(args: &[&str]) -> Self {
        Self::start_with(args, json!({}))
    }

    /// Starts the server and initializes a session whose client declares `capabilities`.
    fn start_with(args: &[&str], capabilities: Value) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcp-sample-server"))
            .args(args)
            .env("SAMPLE_GREETING", "hello")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (line_tx, stdout_lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.expect("stdout is readable");
                let message = serde_json::from_str(&line).expect("stdout carries JSON lines");
                if line_tx.send(message).is_err() {
                    break;
                }
            }
        });
        let mut session = Self { stdin: child.stdin.take(), child, stdout_lines, next_id: 1 };
        let initialized = session.request(
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": capabilities,
                "clientInfo": { "name": "it", "version": "0" }
            }),
        );
        assert_eq!(initialized.0["serverInfo"]["name"], "mcp-sample-server", "{initialized:?}");
        assert_eq!(initialized.0["capabilities"]["tools"]["listChanged"], true);
        session.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
        session
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").expect("the server reads stdin");
    }

    /// Sends a request; returns its result (or error) and the notifications that came first.
    fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut notifications = Vec::new();
        loop {
            let message = self.stdout_lines.recv_timeout(ANSWER_TIMEOUT).expect("an answer in time");
            if message["id"] == id {
                let answer = message.get("result").or_else(|| message.get("error"));
                return (answer.expect("a result or an error").clone(), notifications);
            }
            notifications.push(message);
        }
    }

    /// Like [`Self::request`], but answers the server's own requests that come first
    /// with `answer_server(request)`.
    fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer_server: impl FnMut(&Value) -> Value,
    ) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let mut notifications = Vec::new();
        loop {
            let message = self.stdout_lines.recv_timeout(ANSWER_TIMEOUT).expect("an answer in time");
            if message["id"] == id && message.get("method").is_none() {
                let answer = message.get("result").or_else(|| message.get("error"));
                return (answer.expect("a result or an error").clone(), notifications);
            }
            if let Some(request_id) = message.get("id").filter(|_| message.get("method").is_some()) {
                let result = answer_server(&message);
                self.send(json!({ "jsonrpc": "2.0", "id": request_id, "result": result }));
                continue;
            }
            notifications.push(message);
        }
    }

    fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({ "name": tool, "arguments": arguments })).0
    }

    fn tool_names(&mut self) -> (Vec<String>, usize) {
        let mut names = Vec::new();
        let mut cursor = Value::Null;
        for n_pages in 1.. {
            let params = if cursor.is_null() { json!({}) } else { json!({ "cursor": cursor }) };
            let (page, _) = self.request("tools/list", params);
            let tools = page["tools"].as_array().expect("a tool list");
            names.extend(tools.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()));
            cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
            if cursor.is_null() {
                return (names, n_pages);
            }
        }
        unreachable!("the loop returns")
    }

    fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("waitable child") {
                return status;
            }
            assert!(started.elapsed() < timeout, "the server did not exit in {timeout:?}");
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _killed = self.child.kill();
        let _reaped = self.child.wait();
    }
}

#[test]
fn tool_answers() {
    let mut session = Session::start(&[]);
    let mut check = |tool: &str, arguments: Value, expected: Value| {
        assert_eq!(session.call(tool, arguments), expected, "tool {tool}");
    };
    check(
        "echo",
        json!({ "text": "a \"b\"\nc" }),
        json!({ "content": [{ "type": "text", "text": "a \"b\"\nc" }], "isError": false }),
    );
    check(
        "add",
        json!({ "a": -2, "b": 7 }),
        json!({
            "content": [{ "type": "text", "text": "5" }],
            "structuredContent": { "sum": 5 },
            "isError": false
        }),
    );
    check(
        "env",
        json!({ "name": "SAMPLE_GREETING" }),
        json!({ "content": [{ "type": "text", "text": "hello" }], "isError": false }),
    );
    check(
        "env",
        json!({ "name": "SAMPLE_UNSET" }),
        json!({ "content": [{ "type": "text", "text": "SAMPLE_UNSET is not set" }], "isError": true }),
    );
    check("sleep", json!({ "ms": 10 }), json!({ "content": [{ "type": "text", "text": "slept" }], "isError": false }));
    check("nope", json!({}), json!({ "code": -32602, "message": "tool not found" }));
    check("refuse", json!({ "message": "`n` must be even" }), json!({ "code": -32602, "message": "`n` must be even" }));
    let pid = session.child.id().to_string();
    assert_eq!(session.call("pid", json!({}))["content"][0]["text"], pid);
}

#[test]
fn tools_list_in_pages() {
    let mut session = Session::start(&["--page-size", "4"]);
    assert_eq!(session.tool_names(), (test_peers::SAMPLE_SERVER_TOOLS.map(String::from).to_vec(), 4));
    let (first_page, _) = session.request("tools/list", json!({}));
    assert_eq!(first_page["nextCursor"], "4");
}

#[test]
fn add_tool_notifies_before_answering() {
    let mut session = Session::start(&[]);
    let (answer, notifications) =
        session.request("tools/call", json!({ "name": "add_tool", "arguments": { "name": "zz_added" } }));
    assert_eq!(answer["content"][0]["text"], "added");
    assert_eq!(notifications, [json!({ "jsonrpc": "2.0", "method": "notifications/tools/list_changed" })]);
    let (names, _) = session.tool_names();
    assert_eq!(names.last().map(String::as_str), Some("zz_added"));
    assert_eq!(session.call("zz_added", json!({ "k": [1, null] }))["content"][0]["text"], r#"{"k":[1,null]}"#);
}

#[test]
fn crash_exits_3_without_answering() {
    let mut session = Session::start(&[]);
    session.send(json!({
        "jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": { "name": "crash", "arguments": {} }
    }));
    assert_eq!(session.wait(ANSWER_TIMEOUT).code(), Some(3));
    assert!(session.stdout_lines.recv_timeout(ANSWER_TIMEOUT).is_err());
}

#[test]
fn exits_soon_after_stdin_ends_even_with_a_hanging_call() {
    let mut session = Session::start(&[]);
    session.send(json!({
        "jsonrpc": "2.0", "id": 99, "method": "tools/call",
        "params": { "name": "hang", "arguments": {} }
    }));
    session.close_stdin();
    // One second of grace for answers still being computed, then exit.
    assert_eq!(session.wait(Duration::from_secs(5)).code(), Some(0));
}

#[test]
fn exit_at_start() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-sample-server"))
        .arg("--exit-at-start")
        .stdin(Stdio::null())
        .output()
        .expect("the server runs");
    assert_eq!(output.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&output.stderr), "fatal: sample failure\n");
    assert!(output.stdout.is_empty());
}
