//! MCP servers through the CLI: configured in `mcp.servers`, pasted from an MCP client's
//! `mcpServers`, listed and called with `tools list` / `tools call`.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use test_peers::{sample_server_or_panic as sample_server, server_everything_or_panic as server_everything};

use crate::{Home, json, run};

fn sample_config(extra_servers: &str) -> String {
    format!(
        "compiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    sample:\n      command: {}\n      args: [--page-size, \"3\"]\n{extra_servers}",
        sample_server().display()
    )
}

#[test]
fn mcp_tools_are_listed_with_their_source_and_called() {
    let home = Home::new().with_config(&sample_config(""));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let tools = listing["tools"].as_array().unwrap();
    let echo = tools.iter().find(|tool| tool["name"] == "sample__echo").expect("sample__echo is listed");
    assert_eq!(echo["source"], json!({"kind": "mcp", "skill": "sample", "tool": "echo"}));
    assert_eq!(echo["input_schema"]["required"], json!(["text"]));
    let from_sample = tools.iter().filter(|tool| tool["source"]["skill"] == "sample").count();
    assert_eq!(from_sample, test_peers::SAMPLE_SERVER_TOOLS.len(), "every page of the server's tool list: {tools:?}");

    let (code, stdout, _) =
        run(home.omniagent(&["--json", "tools", "call", "sample__add", "--args", r#"{"a":2,"b":3}"#]));
    assert_eq!(code, 0);
    assert_eq!(
        json(&stdout),
        json!({"content": [{"type": "text", "text": "5"}], "structuredContent": {"sum": 5}, "isError": false})
    );

    let (code, _, stderr) =
        run(home.omniagent(&["tools", "call", "sample__env", "--args", r#"{"name":"OMNIAGENT_UNSET_VAR"}"#]));
    assert_eq!((code, stderr.as_str()), (1, "tool error: OMNIAGENT_UNSET_VAR is not set\n"));
}

#[test]
fn a_bad_part_of_a_tool_schema_costs_only_itself() {
    let home = Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    sample:\n      command: {}\n      args: [--odd-schemas]\n",
        sample_server().display()
    ));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    for name in ["sample__echo", "sample__remote_ref", "sample__bad_schema"] {
        assert!(names.contains(&name), "{names:?}");
    }
    assert_eq!(listing["skipped"], json!([]));
    assert_eq!(listing["skipped_tools"], json!([]));
    // `bad_schema`'s `x` has `type: 12`: that keyword goes, the tool stays.
    let [left_out] = listing["left_out_keywords"].as_array().unwrap().as_slice() else { panic!("{listing}") };
    assert_eq!(
        (&left_out["skill"], &left_out["tool"], &left_out["location"], &left_out["keyword"]),
        (&json!("sample"), &json!("bad_schema"), &json!("/properties/x"), &json!("type"))
    );
    let bad_schema = listing["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "sample__bad_schema");
    let bad_schema = bad_schema.unwrap();
    assert_eq!(bad_schema["input_schema"]["properties"]["x"], json!({}));
    assert!(
        bad_schema["description"]
            .as_str()
            .unwrap()
            .ends_with("Not checked (left out of the input schema): type at /properties/x."),
        "{bad_schema}"
    );

    let (code, stdout, _) = run(home.omniagent(&["tools", "list"]));
    assert_eq!(code, 0);
    assert!(
        stdout.contains("sample tool bad_schema: `type` at /properties/x left out of its input schema: "),
        "{stdout}"
    );
    // Every tool is callable, the one with a `$ref` to a URL too (that part unchecked).
    let (code, stdout, _) =
        run(home.omniagent(&["tools", "call", "sample__echo", "--args", r#"{"text":"still here"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "still here\n"));
    let (code, stdout, stderr) =
        run(home.omniagent(&["tools", "call", "sample__remote_ref", "--args", r#"{"thing":{"any":1}}"#]));
    assert_eq!((code, stdout.as_str()), (0, "{\"thing\":{\"any\":1}}\n"), "{stderr}");
    let (code, stdout, stderr) =
        run(home.omniagent(&["tools", "call", "sample__bad_schema", "--args", r#"{"x":"any"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "{\"x\":\"any\"}\n"), "{stderr}");
}

#[test]
fn a_crash_is_an_error_of_that_call_only() {
    let home = Home::new().with_config(&sample_config(""));
    let started = Instant::now();
    let (code, _, stderr) = run(home.omniagent(&["tools", "call", "sample__crash"]));
    assert_eq!(code, 1, "{stderr}");
    // The log may say first that the server exited unasked (its status).
    assert!(
        stderr.lines().any(|line| line.starts_with("error: MCP server `sample` stopped during the call")),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(5), "took {:?}", started.elapsed());
}

#[test]
fn tools_call_starts_only_the_named_server() {
    let broken = format!("    broken:\n      command: {}\n      args: [--exit-at-start]\n", sample_server().display());
    let home = Home::new().with_config(&sample_config(&broken));
    let (code, stdout, stderr) =
        run(home.omniagent(&["tools", "call", "sample__echo", "--args", r#"{"text":"only me"}"#]));
    assert_eq!((code, stdout.as_str(), stderr.as_str()), (0, "only me\n", ""), "the broken server is never started");

    // A tool of the server that did not start: why it did not, rather than "unknown tool".
    let (code, _, stderr) = run(home.omniagent(&["-q", "tools", "call", "broken__echo"]));
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "error: `broken__echo`: the skill `broken` did not load: init failed: start-up failed: the server exited \
         before it answered (exit status: 7); it ran sandboxed, and a path outside sandbox.read and sandbox.write, \
         or sandbox.network, may be why (sandbox: off tells)\n"
    );
    // What the server printed is in the log, which a person at a terminal sees by default.
    let (_, _, stderr) = run(home.omniagent(&["tools", "call", "broken__echo"]));
    let logged =
        stderr.lines().find(|line| line.contains("fatal: sample failure")).unwrap_or_else(|| panic!("{stderr}"));
    assert!(logged.contains("WARN") && logged.contains("server=broken"), "{logged}");

    // The gateway logs the skipped skill once, and what the server printed beside it.
    let (_, _, stderr) = run(home.omniagent(&["mcp", "serve", "--eager"]));
    let lines: Vec<&str> = stderr.lines().filter(|line| line.contains("broken")).collect();
    assert!(
        matches!(lines[..], [printed, skipped] if skipped.contains("skill skipped") && printed.contains("fatal: sample failure")),
        "{stderr}"
    );

    let (code, stdout, _) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0);
    let skipped = &json(&stdout)["skipped"];
    assert_eq!(skipped[0]["skill"], json!("broken"));
    assert_eq!(
        skipped[0]["reason"],
        json!(
            "init failed: start-up failed: the server exited before it answered (exit status: 7); it ran sandboxed, and a path outside sandbox.read and sandbox.write, or sandbox.network, may be why (sandbox: off tells)"
        )
    );
}

#[test]
fn a_pasted_claude_desktop_config_works_as_is() {
    let home = Home::new();
    let config = home.write(
        "claude_desktop_config.json",
        &serde_json::to_string_pretty(&json!({
            "globalShortcut": "Ctrl+Space",
            "mcpServers": {
                "sample": {"command": sample_server(), "args": [], "env": {"GREETING": "hello"}, "disabled": false}
            }
        }))
        .unwrap(),
    );
    let config = config.to_str().unwrap();
    let (code, stdout, stderr) =
        run(home.omniagent(&["-c", config, "tools", "call", "sample__env", "--args", r#"{"name":"GREETING"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "hello\n"), "{stderr}");
    assert!(stderr.contains("ignoring `globalShortcut`, which omniagent does not use"), "{stderr}");
    assert!(stderr.contains("mcpServers.sample: ignoring `disabled`, which omniagent does not use"), "{stderr}");
}

#[test]
fn server_everything_over_stdio() {
    let home = Home::new()
        .with_config(&format!("mcp:\n  servers:\n    everything:\n      command: {}\n", server_everything().display()));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let echo = listing["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "everything__echo").cloned();
    assert_eq!(
        echo.expect("everything__echo is listed")["source"],
        json!({"kind": "mcp", "skill": "everything", "tool": "echo"})
    );

    let (code, stdout, _) =
        run(home.omniagent(&["tools", "call", "everything__echo", "--args", r#"{"message":"hi"}"#]));
    assert_eq!((code, stdout.as_str()), (0, "Echo: hi\n"));
}

/// server-everything's HTTP transport, on a free loopback port, ended when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    fn start() -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(server_everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server-everything starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "server-everything did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn server_everything_over_streamable_http() {
    let server = HttpServer::start();
    let home = Home::new().with_config(&format!(
        "mcpServers:\n  remote:\n    type: http\n    url: http://127.0.0.1:{}/mcp\n    headers: {{X-Agent: \"${{env:OMNIAGENT_TEST_AGENT}}\"}}\n",
        server.port
    ));
    let mut command = home.omniagent(&["--json", "tools", "list"]);
    command.env("OMNIAGENT_TEST_AGENT", "tester");
    let (code, stdout, stderr) = run(command);
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let echo = listing["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "remote__echo").cloned();
    assert_eq!(
        echo.expect("remote__echo is listed")["source"],
        json!({"kind": "mcp", "skill": "remote", "tool": "echo"})
    );

    let mut command = home.omniagent(&["tools", "call", "remote__echo", "--args", r#"{"message":"over http"}"#]);
    command.env("OMNIAGENT_TEST_AGENT", "tester");
    let (code, stdout, stderr) = run(command);
    assert_eq!((code, stdout.as_str()), (0, "Echo: over http\n"), "{stderr}");
}

/// A server's secret reaches its process environment, and nothing else: not the output
/// of other commands, not trace-level logs, not `config show`.
#[test]
fn a_server_secret_reaches_only_the_server() {
    const CANARY: &str = "canary-mcp-41d2";
    let home = Home::new().with_config(&format!(
        "mcp:\n  servers:\n    sample:\n      command: {}\n      required_env: [TOKEN]\n      secrets: {{TOKEN: env:OMNIAGENT_TEST_TOKEN}}\n",
        sample_server().display()
    ));
    let commands: &[&[&str]] = &[
        &["-vvv", "tools", "list"],
        &["-vvv", "--json", "tools", "list"],
        &["-vvv", "tools", "call", "sample__echo", "--args", r#"{"text":"hello"}"#],
        &["-vvv", "tools", "call", "sample__crash"],
        &["-vvv", "config", "show"],
        &["-vvv", "config", "check"],
    ];
    for args in commands {
        let mut command = home.omniagent(args);
        command.env("OMNIAGENT_TEST_TOKEN", CANARY);
        let (_, stdout, stderr) = run(command);
        assert!(!stdout.contains(CANARY), "{args:?} printed the secret:\n{stdout}");
        assert!(!stderr.contains(CANARY), "{args:?} logged the secret:\n{stderr}");
    }
    let mut command = home.omniagent(&["tools", "call", "sample__env", "--args", r#"{"name":"TOKEN"}"#]);
    command.env("OMNIAGENT_TEST_TOKEN", CANARY);
    assert_eq!(run(command).1, format!("{CANARY}\n"), "the server sees its secret as TOKEN");

    let mut command = home.omniagent(&["--json", "tools", "list"]);
    command.env_remove("OMNIAGENT_TEST_TOKEN");
    let (code, stdout, _) = run(command);
    assert_eq!(code, 0);
    assert_eq!(json(&stdout)["skipped"], json!([{"skill": "sample", "reason": "missing secret TOKEN"}]));
}

/// A server's request for input (here the conformance fixture's form with a default for
/// every field) outside the gateway: declined without a terminal, accepted with the
/// defaults under `--elicitation defaults`; in both protocol eras (the server answers
/// 2026-07-28 calls with `input_required`, 2025-11-25 ones with `elicitation/create`).
#[test]
fn elicitations_are_declined_without_a_terminal_and_take_defaults_when_asked() {
    for era in ["auto", "2025-11-25"] {
        let home = Home::new().with_config(&format!(
            "compiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    forms:\n      command: {}\n      args: [--conformance]\n      protocol_version: \"{era}\"\n",
            sample_server().display()
        ));
        let call = |flags: &[&str]| {
            let mut args = flags.to_vec();
            args.extend(["tools", "call", "forms__test_elicitation_sep1034_defaults"]);
            let (code, stdout, stderr) = run(home.omniagent(&args));
            assert_eq!(code, 0, "{era} {flags:?}: {stderr}");
            stdout
        };
        let declined = call(&[]);
        assert!(declined.contains("action=decline"), "{era}: {declined}");
        let accepted = call(&["--elicitation", "defaults"]);
        assert!(accepted.contains("action=accept") && accepted.contains("John Doe"), "{era}: {accepted}");
    }
}

#[test]
fn omniagent_as_a_server_of_itself_is_refused_at_the_first_repeat() {
    let home = Home::new();
    let config = home.path().join("config.yaml");
    let (omniagent, config_text) = (env!("CARGO_BIN_EXE_omniagent"), config.to_str().unwrap());
    // `again` serves this agent, which would start `again` once more, and so on; `other`
    // serves another agent, whose own `other` and `again` would come back to one of the two.
    home.write(
        "config.yaml",
        &format!(
            "storage: {{backend: memory}}\nmcp:\n  servers:\n    again: {{command: {omniagent}, args: [-c, {config_text}, mcp, serve]}}\n    other: {{command: {omniagent}, args: [-c, {config_text}, --agent, other, mcp, serve]}}\nagents:\n  other: {{}}\n"
        ),
    );
    let mut list = home.omniagent(&["--json", "tools", "list"]);
    list.timeout(Duration::from_secs(60));
    let (code, stdout, stderr) = run(list);
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let skipped = listing["skipped"].as_array().unwrap();
    let [again] = skipped.as_slice() else { panic!("{listing}") };
    assert_eq!(again["skill"], "again");
    let reason = again["reason"].as_str().unwrap();
    assert!(reason.contains(&format!("agent `default` of {config_text} is an MCP server of itself")), "{reason}");
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(names.contains(&"other__memory__remember"), "the agent `other` is served: {names:?}");
    assert!(
        !names.iter().any(|name| name.starts_with("other__other__") || name.starts_with("other__again__")),
        "{names:?}"
    );
    assert_eq!(processes_naming(&config), Vec::<String>::new(), "every copy has stopped");
}

/// The command lines of the running processes that name `path`.
fn processes_naming(path: &std::path::Path) -> Vec<String> {
    let path = path.to_str().unwrap();
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .map(|line| String::from_utf8_lossy(&line).replace('\0', " "))
        .filter(|line| line.contains(path))
        .collect()
}

#[test]
fn a_variable_that_is_not_text_in_omniagents_environment_is_no_trouble() {
    use std::os::unix::ffi::OsStrExt as _;
    let home = Home::new().with_config(&sample_config(""));
    let mut call = home.omniagent(&["tools", "call", "sample__echo", "--args", r#"{"text":"fine"}"#]);
    call.env("OMNIAGENT_TEST_NOT_TEXT", std::ffi::OsStr::from_bytes(b"\xff\xfe"));
    let (code, stdout, stderr) = run(call);
    assert_eq!((code, stdout.as_str()), (0, "fine\n"), "{stderr}");
}
