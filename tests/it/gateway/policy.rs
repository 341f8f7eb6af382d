//! Policy through the HTTP gateway, with the Python SDK as the clients alice and bob and
//! the reference memory and filesystem servers upstream: a rule that hides a tool from
//! one client and refuses it by name, a rule on the arguments, a rule that does not
//! compile, and rate limits, in one gateway and across two replicas sharing Redis.

use std::path::Path;

use serde_json::{Value, json};

use super::{HttpGateway, python};
use crate::Home;

const ALICE: &str = "alice-policy-token";
const BOB: &str = "bob-policy-token";

/// A config with the clients alice and bob, the memory server (its file in `folder`)
/// and the filesystem server (serving `folder`), and `extra` after it.
fn config(folder: &Path, extra: &str) -> String {
    format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: [], tools: false}}\n\
         serve: {{clients: {{alice: {{token: 'env:ALICE_TOKEN'}}, bob: {{token: 'env:BOB_TOKEN'}}}}}}\n\
         mcp:\n  servers:\n\
         \x20   memory:\n      command: {memory}\n      env: {{MEMORY_FILE_PATH: '{folder}/memory.jsonl'}}\n      sandbox: {{write: ['{folder}']}}\n\
         \x20   files:\n      command: {filesystem}\n      args: ['{folder}']\n      sandbox: {{write: ['{folder}']}}\n\
         {extra}",
        memory = test_peers::server_memory_or_panic().display(),
        filesystem = test_peers::server_filesystem_or_panic().display(),
        folder = folder.display(),
    )
}

fn tokens() -> [(&'static str, &'static str); 2] {
    [("ALICE_TOKEN", ALICE), ("BOB_TOKEN", BOB)]
}

/// The text of a call's result, and whether it is an error.
fn outcome(call: &Value) -> (String, bool) {
    let text = call["content"].as_array().into_iter().flatten().filter_map(|block| block["text"].as_str()).collect();
    (text, call["isError"] == json!(true))
}

fn names(listing: &Value) -> Vec<&str> {
    listing["tools"].as_array().unwrap().iter().filter_map(|tool| tool["name"].as_str()).collect()
}

#[test]
fn a_rule_hides_a_tool_from_bob_refuses_it_by_name_and_alice_calls_it() {
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("notes.txt"), "hello").unwrap();
    let rules = "policy:\n  rules:\n\
                 \x20   - {name: no-deletes-for-bob, deny: 'client.name == \"bob\" && tool.name.contains(\"__delete\")'}\n\
                 \x20   - {name: not-etc, deny: 'has(arguments.path) && arguments.path.startsWith(\"/etc\")'}\n";
    let home = Home::new().with_config(&config(folder.path(), rules));
    let gateway = HttpGateway::start(&home, &[], &tokens());
    let notes = folder.path().join("notes.txt").display().to_string();
    let plan = json!({"calls": [
        ["memory__delete_entities", {"entityNames": ["nobody"]}],
        ["files__read_text_file", {"path": "/etc/hostname"}],
        ["files__read_text_file", {"path": notes}],
    ]});

    let bob = python("2026-07-28", &["http", &gateway.url(), BOB], plan.clone(), &[]);
    let listed = names(&bob);
    assert!(listed.contains(&"memory__read_graph") && listed.contains(&"files__read_text_file"), "{listed:?}");
    assert!(!listed.iter().any(|name| name.contains("__delete")), "bob sees no delete tool: {listed:?}");
    let (text, is_error) = outcome(&bob["calls"][0]);
    assert!(is_error, "{}", bob["calls"][0]);
    assert!(text.contains("`no-deletes-for-bob`"), "the refusal names the rule: {text}");
    let (text, is_error) = outcome(&bob["calls"][1]);
    assert!(is_error && text.contains("`not-etc`"), "{text}");
    assert_eq!(outcome(&bob["calls"][2]), ("hello".to_owned(), false));

    let alice = python("2026-07-28", &["http", &gateway.url(), ALICE], plan, &[]);
    assert!(names(&alice).contains(&"memory__delete_entities"));
    let (text, is_error) = outcome(&alice["calls"][0]);
    assert!(!is_error, "alice deletes: {text}");
    let (text, is_error) = outcome(&alice["calls"][1]);
    assert!(is_error && text.contains("`not-etc`"), "the argument rule holds for alice too: {text}");
    assert_eq!(outcome(&alice["calls"][2]), ("hello".to_owned(), false));
}

#[test]
fn a_rule_that_does_not_compile_is_refused_as_the_config_loads_with_its_line() {
    let folder = tempfile::tempdir().unwrap();
    let rules = "policy:\n  rules:\n    - name: fine\n      deny: 'client.name == \"eve\"'\n    - name: broken\n      deny: 'tool.name.contains('\n";
    let home = Home::new().with_config(&config(folder.path(), rules));
    let line = std::fs::read_to_string(home.path().join("config.yaml"))
        .unwrap()
        .lines()
        .position(|line| line.contains("tool.name.contains("))
        .unwrap()
        + 1;
    let (code, _, stderr) = crate::run(home.omniagent(&["config", "check"]));
    assert_ne!(code, 0);
    assert!(stderr.contains(&format!("config.yaml:{line}:")), "the line is named: {stderr}");
    assert!(stderr.contains("policy rule `broken`: not a CEL expression"), "{stderr}");
}

/// Calls `memory__read_graph` `count` times as bob through the gateway at `url`, and
/// counts the calls that got through and those the rate limit refused.
fn burst(url: &str, count: usize) -> (usize, usize) {
    let calls: Vec<Value> = (0..count).map(|_| json!(["memory__read_graph", {}])).collect();
    let bob = python("2026-07-28", &["http", url, BOB], json!({"calls": calls}), &[]);
    let outcomes: Vec<(String, bool)> = bob["calls"].as_array().unwrap().iter().map(outcome).collect();
    let refused = outcomes.iter().filter(|(text, is_error)| *is_error && text.starts_with("rate limit:")).count();
    let through = outcomes.iter().filter(|(_, is_error)| !is_error).count();
    assert_eq!(through + refused, count, "every call either went through or was limited: {outcomes:?}");
    (through, refused)
}

const LIMITS: &str = "policy:\n  rate_limits:\n    - {client: bob, tool: 'memory__*', per_minute: 2, burst: 10}\n";

#[test]
fn thirty_calls_against_a_burst_of_ten_get_ten_through() {
    let folder = tempfile::tempdir().unwrap();
    let home = Home::new().with_config(&config(folder.path(), LIMITS));
    let gateway = HttpGateway::start(&home, &[], &tokens());
    assert_eq!(burst(&gateway.url(), 30), (10, 20));
}

#[test]
fn two_replicas_sharing_redis_share_the_buckets() {
    let redis = test_peers::RedisServer::start();
    let folder = tempfile::tempdir().unwrap();
    let shared = format!("storage: {{backend: redis, url: '{}'}}\n", redis.url());
    let text = config(folder.path(), LIMITS).replace("storage: {backend: memory}\n", &shared);
    let (first_home, second_home) = (Home::new().with_config(&text), Home::new().with_config(&text));
    let first = HttpGateway::start(&first_home, &[], &tokens());
    let second = HttpGateway::start(&second_home, &[], &tokens());
    let (through_first, _) = burst(&first.url(), 15);
    let (through_second, _) = burst(&second.url(), 15);
    assert_eq!(through_first + through_second, 10, "{through_first} + {through_second}");
    assert_eq!(through_first, 10, "the first replica took the whole burst");
}
