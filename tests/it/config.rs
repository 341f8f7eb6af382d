//! `omniagent config path|show|check`, and how a bad config file stops every command.

use serde_json::json;

use crate::{Home, json, run};

#[test]
fn config_path_tells_which_file_and_why() {
    let home = Home::new();
    let (code, stdout, _) = run(home.omniagent(&["--json", "config", "path"]));
    assert_eq!(code, 0);
    assert_eq!(json(&stdout), json!({"path": null, "origin": "defaults", "exists": false, "home": home.path()}));

    let home = home.with_config("storage: {backend: memory}\n");
    let config = home.path().join("config.yaml");
    let (_, stdout, _) = run(home.omniagent(&["--json", "config", "path"]));
    assert_eq!(json(&stdout)["origin"], json!("home"));

    let other = home.write("other.yaml", "");
    let mut command = home.omniagent(&["--json", "config", "path"]);
    command.env("OMNIAGENT_CONFIG", &other);
    assert_eq!(json(&run(command).1)["origin"], json!("env"));

    let (_, stdout, _) = run(home.omniagent(&["-c", config.to_str().unwrap(), "config", "path"]));
    assert_eq!(stdout, format!("{} (from -c/--config)\n", config.display()));
}

#[test]
fn config_show_prints_the_effective_config_of_an_agent() {
    let home = Home::new().with_config(
        "compiled:\n  memory:\n    secrets: {TOKEN: env:TOKEN}\n\
         agents:\n  alice:\n    storage: {backend: memory}\n    compiled: {memory: {enabled: false}}\n",
    );
    let (code, stdout, _) = run(home.omniagent(&["config", "show"]));
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        "skills:\n  enabled: true\n  packs:\n  - omniagent-skills\n  paths: []\n  includes: []\n  excludes: []\n  max_injected: 20\n  prompt: full\n  max_prompt_chars: null\n  project: true\n  tools: true\n  config: {}\n\
         mcp:\n  servers: {}\nstorage:\n  backend: sqlite\ncompiled:\n  memory:\n    enabled: true\n    secrets:\n      TOKEN: env:TOKEN\n\
         trust:\n  tools: on-first-use\n  scan: withhold\n",
        "without --agent: the top level, which no agent's overrides change"
    );
    let (code, stdout, _) = run(home.omniagent(&["--json", "--agent", "alice", "config", "show"]));
    assert_eq!(code, 0);
    let shown = json(&stdout);
    assert_eq!(shown["storage"], json!({"backend": "memory"}));
    assert_eq!(shown["compiled"], json!({"memory": {"enabled": false, "secrets": {"TOKEN": "env:TOKEN"}}}));
    assert_eq!(shown["skills"]["packs"], json!(["omniagent-skills"]));
    assert!(shown.get("agents").is_none());
}

#[test]
fn a_bad_config_fails_every_command_with_file_line_and_key() {
    let check = |yaml: &str, expect: &str| {
        let home = Home::new().with_config(yaml);
        let config = home.path().join("config.yaml");
        for args in
            [&["tools", "list"][..], &["tools", "call", "memory__list"], &["config", "show"], &["config", "check"]]
        {
            let (code, stdout, stderr) = run(home.omniagent(args));
            assert_eq!(code, 2, "{args:?}: {stderr}");
            assert_eq!(stdout, "", "{args:?}");
            assert_eq!(stderr, format!("error: {}:{expect}\n", config.display()), "{args:?}");
        }
    };
    check("storage:\n  backnd: memory\n", "2:3: storage: unknown field `backnd`, expected `backend` or `url`");
    check(
        "compiled:\n  memory:\n    enabled: 3\n",
        "3:14: compiled.memory.enabled: invalid type: integer `3`, expected a boolean",
    );
    check(
        "storage: {backend: memory\n",
        "2:1: did not find expected ',' or '}', while parsing a flow mapping at line 1 column 10",
    );
}

#[test]
fn a_missing_config_file_or_agent_is_a_usage_error() {
    let home = Home::new();
    let (code, _, stderr) = run(home.omniagent(&["-c", "/nonexistent/omniagent.yaml", "tools", "list"]));
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: cannot read config file /nonexistent/omniagent.yaml: "), "{stderr}");

    let (code, _, stderr) = run(home.omniagent(&["--agent", "zed", "tools", "list"]));
    assert_eq!(
        (code, stderr.as_str()),
        (2, "error: unknown agent `zed` in the built-in defaults (agents configured: none)\n")
    );
}

#[test]
fn config_check_resolves_every_reference_and_reports_failures() {
    let home = Home::new();
    let token = home.write("token", "file-token\n");
    let home = home.with_config(&format!(
        "compiled:\n  memory:\n    secrets:\n      A: file:{}\n      B: env:OMNIAGENT_TEST_UNSET\n\
         agents:\n  alice: {{compiled: {{memory: {{secrets: {{B: env:OMNIAGENT_TEST_SET}}}}}}}}\n",
        token.display()
    ));
    let mut command = home.omniagent(&["--json", "config", "check"]);
    command.env("OMNIAGENT_TEST_SET", "set-value").env_remove("OMNIAGENT_TEST_UNSET");
    let (code, stdout, _) = run(command);
    assert_eq!(code, 1, "one reference does not resolve");
    let report = json(&stdout);
    assert_eq!(report["agents"], json!(["alice"]));
    let outcomes: Vec<(serde_json::Value, &str, bool)> = report["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|secret| (secret["agent"].clone(), secret["key"].as_str().unwrap(), secret["error"].is_null()))
        .collect();
    // alice's A is the top level's, checked once there.
    assert_eq!(
        outcomes,
        [
            (json!(null), "compiled.memory.secrets.A", true),
            (json!(null), "compiled.memory.secrets.B", false),
            (json!("alice"), "compiled.memory.secrets.B", true),
        ]
    );
    assert_eq!(
        report["secrets"][1]["error"],
        json!("secret reference `env:OMNIAGENT_TEST_UNSET`: environment variable `OMNIAGENT_TEST_UNSET` is not set")
    );

    let mut command = home.omniagent(&["--agent", "alice", "config", "check"]);
    command.env("OMNIAGENT_TEST_SET", "set-value");
    let (code, stdout, _) = run(command);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("ok     agents.alice: compiled.memory.secrets.B (env:OMNIAGENT_TEST_SET)\n"), "{stdout}");
    assert!(stdout.contains("ok     agents.alice: compiled.memory.secrets.A (file:"), "all of alice's own: {stdout}");
}

#[test]
fn config_check_resolves_the_gateways_client_tokens() {
    let home = Home::new().with_config(
        "serve:\n  clients:\n    alice: {token: env:OMNIAGENT_TEST_SET}\n    bob: {token: env:OMNIAGENT_TEST_UNSET}\n",
    );
    let mut command = home.omniagent(&["--json", "config", "check"]);
    command.env("OMNIAGENT_TEST_SET", "token-of-alice").env_remove("OMNIAGENT_TEST_UNSET");
    let (code, stdout, _) = run(command);
    assert_eq!(code, 1, "bob's token does not resolve: {stdout}");
    let report = json(&stdout);
    let outcomes: Vec<(&str, bool)> = report["secrets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|secret| (secret["key"].as_str().unwrap(), secret["error"].is_null()))
        .collect();
    assert_eq!(outcomes, [("serve.clients.alice.token", true), ("serve.clients.bob.token", false)]);
    assert!(!stdout.contains("token-of-alice"), "{stdout}");
}

#[test]
fn config_show_redacts_a_literal_client_token() {
    let home = Home::new()
        .with_config("serve:\n  clients:\n    alice: {token: hunter2plainvalue, agent: alice}\nagents:\n  alice: {}\n");
    let (code, stdout, stderr) = run(home.omniagent(&["config", "show"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("token: '[REDACTED]'"), "{stdout}");
    assert!(!stdout.contains("hunter2plainvalue") && !stderr.contains("hunter2plainvalue"), "{stdout}{stderr}");
}

#[test]
fn config_show_and_check_give_each_servers_effective_sandbox() {
    let home = Home::new().with_config(
        "mcp:
  sandbox: {network: none, memory: 1GiB}
  servers:
    notes: {command: npx, args: [-y, '@modelcontextprotocol/server-filesystem', ~/notes], sandbox: {write: [~/notes]}}
    legacy: {command: ./tool, sandbox: off}
    remote: {url: 'http://127.0.0.1:9/mcp'}
agents:
  open: {mcp: {sandbox: {network: all}}}
",
    );
    let (code, stdout, stderr) = run(home.omniagent(&["config", "check"]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("mcp.notes sandbox: network none, memory 1GiB, processes 256, write ~/notes"), "{stdout}");
    assert!(stdout.contains("warn   mcp.legacy sandbox: off"), "{stdout}");
    assert!(stdout.contains("agents.open: mcp.notes sandbox: network all, memory 1GiB"), "{stdout}");
    assert!(!stdout.contains("remote sandbox"), "{stdout}");
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "config", "show"]));
    assert_eq!(code, 0, "{stderr}");
    let servers = &json(&stdout)["mcp"]["servers"];
    let notes = &servers["notes"]["sandbox"];
    assert_eq!(notes["network"], "none", "{notes}");
    assert_eq!(notes["memory"], "1GiB", "{notes}");
    assert_eq!(notes["processes"], 256, "{notes}");
    assert_eq!(servers["legacy"]["sandbox"], "off");
    assert!(servers["remote"].get("sandbox").is_none(), "{servers}");
}

/// Every file and folder under `root`, relative to it, sorted.
fn paths_under(root: &std::path::Path) -> Vec<String> {
    let mut paths = Vec::new();
    let mut folders = vec![root.to_owned()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            paths.push(path.strip_prefix(root).unwrap().display().to_string());
            if path.is_dir() {
                folders.push(path);
            }
        }
    }
    paths.sort();
    paths
}

/// Regression (hardening issue, `config check` created the AAuth key): checking an agent
/// whose OpenAPI skill signs with AAuth writes nothing in a fresh home, not the key nor
/// its folder, and says the key will be created on first use; a key that is there is
/// named by its thumbprint.
#[cfg(unix)]
#[test]
fn config_check_of_a_signing_skill_writes_nothing_and_reports_the_missing_key() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = Home::new();
    home.write(
        "data.yaml",
        "openapi: 3.1.0\ninfo: {title: Data, version: '1'}\n\
         paths:\n  /data:\n    get: {operationId: query, responses: {'200': {description: the data}}}\n",
    );
    let home = home.with_config(
        "compiled: {memory: {enabled: false}}\n\
         aauth:\n  agent_provider: http://127.0.0.1:9\n  allow_http_loopback: true\n\
         openapi:\n  data: {spec: data.yaml, base_url: 'http://127.0.0.1:9', aauth: true}\n",
    );
    let key = home.path().join("aauth/agent.jwk");
    let key_entry = |stdout: &str| {
        let report = json(stdout);
        let secrets = report["secrets"].as_array().unwrap();
        assert_eq!(secrets.len(), 1, "{stdout}");
        assert_eq!((secrets[0]["key"].as_str(), secrets[0]["agent"].is_null()), (Some("aauth.key"), true));
        assert_eq!(report["documents"][0]["tools"], 1, "the signing skill still loads: {stdout}");
        secrets[0].clone()
    };

    let (code, stdout, stderr) = run(home.omniagent(&["--json", "config", "check"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let entry = key_entry(&stdout);
    let missing = format!("{}: does not exist yet, it will be created on first use", key.display());
    assert_eq!((entry["reference"].as_str(), entry["error"].is_null()), (Some(missing.as_str()), true));
    let (code, stdout, stderr) = run(home.omniagent(&["config", "check"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("ok     aauth.key ({missing})\n")), "{stdout}");
    assert_eq!(paths_under(home.path()), ["config.yaml", "data.yaml"], "config check wrote nothing");

    // RFC 8037's key (Appendix A.1), as the agent's: named by its thumbprint (A.3).
    home.write(
        "aauth/agent.jwk",
        r#"{"kty":"OKP","crv":"Ed25519","d":"nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}"#,
    );
    std::fs::set_permissions(home.path().join("aauth"), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "config", "check"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let found = format!("{}, thumbprint kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k", key.display());
    assert_eq!(key_entry(&stdout)["reference"].as_str(), Some(found.as_str()));
    assert!(!stdout.contains("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A"), "{stdout}");
    assert_eq!(paths_under(home.path()), ["aauth", "aauth/agent.jwk", "config.yaml", "data.yaml"]);

    // A key others can read fails the check, and is left as it is.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, stdout, _) = run(home.omniagent(&["--json", "config", "check"]));
    assert_eq!(code, 1, "{stdout}");
    let error = key_entry_error(&stdout);
    assert!(error.contains("readable by group or others"), "{error}");
    assert_eq!(std::fs::metadata(&key).unwrap().permissions().mode() & 0o777, 0o644);
}

/// The error of the `aauth.key` entry of a `config check --json` report.
fn key_entry_error(stdout: &str) -> String {
    let report = json(stdout);
    let secrets = report["secrets"].as_array().unwrap();
    let entry = secrets.iter().find(|secret| secret["key"] == "aauth.key").unwrap();
    entry["error"].as_str().unwrap().to_owned()
}
