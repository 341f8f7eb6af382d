//! The embedded store: shared by processes of one agent, separate between agents.

use std::thread;

use serde_json::json;

use crate::{Home, json, run};

/// Two `omniagent` processes at a time write 500 keys each into the same store: every
/// write lands, none fails.
#[test]
fn two_processes_writing_at_once_lose_nothing() {
    let home = Home::new();
    thread::scope(|scope| {
        for side in ["left", "right"] {
            let home = &home;
            scope.spawn(move || {
                for key_idx in 0..500 {
                    let args = json!({"key": format!("{side}-{key_idx:03}"), "value": "x"}).to_string();
                    let (code, _, stderr) =
                        run(home.omniagent(&["tools", "call", "memory__remember", "--args", &args]));
                    assert_eq!(code, 0, "{side} {key_idx}: {stderr}");
                }
            });
        }
    });
    let (code, stdout, _) = run(home.omniagent(&["--json", "tools", "call", "memory__list"]));
    assert_eq!(code, 0);
    let keys = json(&stdout)["structuredContent"]["keys"].as_array().unwrap().len();
    assert_eq!(keys, 1000);
}

#[test]
fn agents_keep_separate_memories() {
    let home = Home::new().with_config("agents:\n  alice: {}\n  bob: {}\n");
    let remember = |agent: &str, value: &str| {
        let args = json!({"key": "name", "value": value}).to_string();
        assert_eq!(run(home.omniagent(&["--agent", agent, "tools", "call", "memory__remember", "--args", &args])).0, 0);
    };
    let recall = |agent: &[&str]| {
        let mut args = agent.to_vec();
        args.extend(["tools", "call", "memory__recall", "--args", r#"{"key":"name"}"#]);
        run(home.omniagent(&args))
    };
    remember("alice", "Alice");
    remember("bob", "Bob");
    assert_eq!(recall(&["--agent", "alice"]).1, "Alice\n");
    assert_eq!(recall(&["--agent", "bob"]).1, "Bob\n");
    assert_eq!(recall(&[]).0, 1, "the default agent remembers nothing");
}

#[test]
fn the_memory_backend_keeps_nothing_between_processes() {
    let home = Home::new().with_config("storage: {backend: memory}\n");
    let args = json!({"key": "a", "value": "1"}).to_string();
    assert_eq!(run(home.omniagent(&["tools", "call", "memory__remember", "--args", &args])).0, 0);
    assert_eq!(run(home.omniagent(&["tools", "call", "memory__recall", "--args", r#"{"key":"a"}"#])).0, 1);
    assert!(!home.path().join("state").exists());
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// `storage: {backend: redis}`: a note remembered by one process is recalled by the next,
/// and `config show` names the URL's reference, never the URL.
#[test]
fn the_redis_backend_keeps_state_between_processes() {
    let server = test_peers::RedisServer::start();
    let home = Home::new().with_config("storage: {backend: redis, url: \"${REDIS_URL}\"}\n");
    let with_url = |args: &[&str]| {
        let mut command = home.omniagent(args);
        command.env("REDIS_URL", server.url());
        run(command)
    };
    let args = json!({"key": "city", "value": "Lyon"}).to_string();
    let (code, _, stderr) = with_url(&["tools", "call", "memory__remember", "--args", &args]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = with_url(&["tools", "call", "memory__recall", "--args", r#"{"key":"city"}"#]);
    assert_eq!((code, stdout.as_str()), (0, "Lyon\n"), "{stderr}");
    assert!(!home.path().join("state").exists(), "nothing is kept in the home");

    let (code, stdout, stderr) = with_url(&["config", "show"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("backend: redis"), "{stdout}");
    assert!(!stdout.contains(&server.url()) && !stdout.contains("127.0.0.1"), "{stdout}");
}

/// A Redis that is down fails the call with a message naming the store, its URL without
/// the password; the password is in no output.
#[test]
fn a_redis_that_is_down_is_a_clear_error_without_the_password() {
    let port = free_port();
    let home = Home::new().with_config("storage: {backend: redis, url: env:REDIS_URL}\n");
    let args = json!({"key": "city", "value": "Lyon"}).to_string();
    let mut command = home.omniagent(&["tools", "call", "memory__remember", "--args", &args]);
    command.env("REDIS_URL", format!("redis://:hunter2-password@127.0.0.1:{port}/"));
    let (code, stdout, stderr) = run(command);
    assert_ne!(code, 0);
    let output = format!("{stdout}{stderr}");
    assert!(output.contains(&format!("redis store redis://127.0.0.1:{port}/")), "{output}");
    assert!(!output.contains("hunter2"), "{output}");

    let mut command = home.omniagent(&["config", "show"]);
    command.env("REDIS_URL", format!("redis://:hunter2-password@127.0.0.1:{port}/"));
    let (code, stdout, _) = run(command);
    assert_eq!(code, 0);
    assert!(stdout.contains("url: env:REDIS_URL") && !stdout.contains("hunter2"), "{stdout}");
}
