//! `omniagent mcp install`: the entry it writes in a host's config starts the gateway for a
//! program that reads that file as hosts do (the MCP Inspector CLI's `--config`, Codex
//! itself, and Gemini CLI, which connects), with the environment a host gives its
//! servers, not the shell's.

use std::path::Path;

use serde_json::{Value, json};

use super::sample_server;
use crate::Home;

/// The Inspector CLI started as a host starts it: `--config FILE --server NAME`, from `cwd`,
/// with no variable of the test's environment beside PATH and HOME.
fn inspector(file: &Path, name: &str, cwd: &Path, method_args: &[&str]) -> Value {
    let output = std::process::Command::new(test_peers::mcp_inspector_or_panic())
        .args(["--cli", "--config"])
        .arg(file)
        .args(["--server", name])
        .args(method_args)
        .current_dir(cwd)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", cwd)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| panic!("{error}: {stderr}"))
}

/// This process's PATH with `folder` first.
fn path_with(folder: &Path) -> std::ffi::OsString {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(folder.to_path_buf()).chain(std::env::split_paths(&path))).unwrap()
}

/// A home folder for Gemini CLI that trusts itself: Gemini CLI starts no server in a
/// folder it has not been told to trust.
fn gemini_user() -> tempfile::TempDir {
    let user = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(user.path().join(".gemini")).unwrap();
    let trusted = json!({user.path().to_str().unwrap(): "TRUST_FOLDER"});
    std::fs::write(user.path().join(".gemini/trustedFolders.json"), trusted.to_string()).unwrap();
    user
}

/// What `gemini mcp list` says of the server `omniagent`, run in the trusted folder
/// `user` (also its HOME) with PATH, HOME and `env` alone.
fn gemini_status(user: &Path, env: &[(&str, &str)]) -> String {
    let output = std::process::Command::new(test_peers::gemini_cli_or_panic())
        .args(["mcp", "list"])
        .current_dir(user)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", user)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    // It writes the list on stderr.
    let listed = String::from_utf8_lossy(&output.stderr);
    let line = listed.lines().find(|line| line.contains("omniagent:"));
    line.unwrap_or_else(|| panic!("no omniagent in:\n{listed}")).to_owned()
}

fn tool_names(listed: &Value) -> Vec<&str> {
    listed["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect()
}

#[test]
fn claude_desktops_entry_serves_the_agent_of_this_home_and_keeps_the_rest_of_the_file() {
    let home = super::sample_home("60s");
    let user = tempfile::tempdir().unwrap();
    let file = user.path().join(".config/Claude/claude_desktop_config.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let before = json!({"globalShortcut": "Alt+Space", "mcpServers": {"files": {"command": "npx", "args": ["files"]}}});
    // With the byte order mark some Windows editors write.
    std::fs::write(&file, format!("\u{feff}{before}")).unwrap();
    // A package manager's link on PATH, which an upgrade leaves in place.
    let link = user.path().join("bin/omniagent");
    std::fs::create_dir_all(link.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_omniagent"), &link).unwrap();
    let path = path_with(link.parent().unwrap());
    let install = |args: &[&str]| {
        let mut command = home.omniagent(&[&["mcp", "install", "claude-desktop"][..], args].concat());
        command.env("HOME", user.path()).env("PATH", &path).env_remove("XDG_CONFIG_HOME");
        crate::run(command)
    };

    let (code, stdout, stderr) = install(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Added `omniagent` to Claude Desktop's config"), "{stdout}");
    assert!(stdout.contains("Restart Claude Desktop"), "{stdout}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(after["globalShortcut"], before["globalShortcut"]);
    assert_eq!(after["mcpServers"]["files"], before["mcpServers"]["files"]);
    assert_eq!(after["mcpServers"]["omniagent"]["env"]["OMNIAGENT_HOME"], home.path().to_str().unwrap());
    assert_eq!(after["mcpServers"]["omniagent"]["command"], link.to_str().unwrap());

    // The host's environment has no OMNIAGENT_HOME and no target folder on its PATH: the
    // entry carries both.
    let listed = inspector(&file, "omniagent", user.path(), &["--method", "tools/list"]);
    assert!(tool_names(&listed).contains(&"sample__add"), "{listed}");

    // Again: nothing to change. Another agent under the same name: refused, file kept.
    let (code, stdout, _) = install(&[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("already"), "{stdout}");
    let written = std::fs::read_to_string(&file).unwrap();
    let (code, _, stderr) = install(&["--tool-search"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("already has a server `omniagent`") && stderr.contains("--force"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), written);
    let (code, stdout, stderr) = install(&["--tool-search", "--force", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(crate::json(&stdout)["change"], "replaced");
    let listed = inspector(&file, "omniagent", user.path(), &["--method", "tools/list"]);
    assert!(tool_names(&listed).contains(&"search_tools"), "{listed}");
}

#[test]
fn a_projects_entry_names_its_config_file_and_agent_as_given() {
    let home = Home::new();
    home.write(
        "project/agent.yaml",
        &format!(
            "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nagents:\n  alice:\n    mcp:\n      servers:\n        sample:\n          command: {}\n",
            sample_server().display()
        ),
    );
    let project = home.path().join("project");
    // `-c` relative to the folder `mcp install` runs in, which the host does not share.
    let mut command = home.omniagent(&["-c", "agent.yaml", "--agent", "alice", "mcp", "install", "claude-code"]);
    command.current_dir(&project);
    let (code, stdout, stderr) = crate::run(command);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Claude Code asks"), "{stdout}");
    assert!(!stderr.contains("note:"), "no secret is read from a variable: {stderr}");
    let file = project.join(".mcp.json");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let entry = &written["mcpServers"]["omniagent"];
    assert_eq!(entry["type"], "stdio");
    let config = project.join("agent.yaml");
    assert_eq!(entry["args"], json!(["-c", config, "--agent", "alice", "mcp", "serve"]));

    let called = inspector(
        &file,
        "omniagent",
        Path::new("/"),
        &["--method", "tools/call", "--tool-name", "sample__add", "--tool-arg", "a=2", "b=3"],
    );
    assert_eq!(called["structuredContent"], json!({"sum": 5}), "{called}");

    // `--print` writes nothing; an agent the config lacks is refused before any file is.
    let (code, stdout, _) =
        crate::run(home.omniagent(&["-c", config.to_str().unwrap(), "mcp", "install", "vscode", "--print"]));
    assert_eq!(code, 0);
    assert_eq!(crate::json(&stdout)["servers"]["omniagent"]["args"], json!(["-c", config, "mcp", "serve"]));
    assert!(!home.path().join(".vscode").exists());
    let mut command = home.omniagent(&["-c", "agent.yaml", "--agent", "bob", "mcp", "install", "cursor", "--project"]);
    command.current_dir(&project);
    let (code, _, stderr) = crate::run(command);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("unknown agent `bob`"), "{stderr}");
    assert!(!project.join(".cursor").exists());
}

/// Gemini CLI, an MCP host, connects to the gateway its settings now name, from a folder
/// where the `-c` given to `mcp install` would not be found as it was written.
#[test]
fn gemini_cli_connects_to_the_gateway_its_settings_name() {
    let home = Home::new();
    home.write(
        "project/agent.yaml",
        &format!(
            "storage: {{backend: memory}}\nmcp:\n  servers:\n    sample:\n      command: {}\n",
            sample_server().display()
        ),
    );
    let user = gemini_user();
    let settings = user.path().join(".gemini/settings.json");
    std::fs::write(&settings, r#"{"ui": {"theme": "GitHub"}}"#).unwrap();

    let mut command = home.omniagent(&["-c", "agent.yaml", "mcp", "install", "gemini"]);
    command.current_dir(home.path().join("project")).env("HOME", user.path());
    let (code, stdout, stderr) = crate::run(command);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Gemini CLI starts it"), "{stdout}");
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(written["ui"], json!({"theme": "GitHub"}));

    let line = gemini_status(user.path(), &[]);
    assert!(line.ends_with("- Connected"), "{line}");
}

/// With `--url`, the entry names a gateway already serving over HTTP, and the variable
/// the host reads the client's token from: Gemini CLI connects with that client's token
/// in the variable and not with another, and Codex reads back the URL and the variable.
/// The token is in no file.
#[test]
fn an_entry_for_a_gateway_over_http_names_the_variable_of_the_token() {
    let home = Home::new()
        .with_config("storage: {backend: memory}\nserve: {clients: {alice: {token: \"env:ALICE_TOKEN\"}}}\n");
    let gateway = super::HttpGateway::start(&home, &[], &[("ALICE_TOKEN", "token-of-alice")]);
    let user = gemini_user();
    let codex = test_peers::codex_or_panic();
    let codex_home = tempfile::tempdir().unwrap();
    let install = |host: &str| {
        let mut command =
            home.omniagent(&["mcp", "install", host, "--url", &gateway.url(), "--token-env", "OMNIAGENT_TOKEN"]);
        command
            .env("HOME", user.path())
            .env("CODEX_HOME", codex_home.path())
            .env("PATH", path_with(codex.parent().unwrap()));
        crate::run(command)
    };

    let (code, stdout, stderr) = install("gemini");
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&format!("reaches {}", gateway.url())), "{stdout}");
    let settings = std::fs::read_to_string(user.path().join(".gemini/settings.json")).unwrap();
    assert!(!settings.contains("token-of-alice"));
    let gemini_list = |token: &str| gemini_status(user.path(), &[("OMNIAGENT_TOKEN", token)]);
    let line = gemini_list("token-of-alice");
    assert!(line.ends_with("- Connected"), "{line}\n{}", gateway.stderr.lock().unwrap());
    let line = gemini_list("token-of-mallory");
    assert!(line.ends_with("- Disconnected"), "{line}");

    let (code, _, stderr) = install("codex");
    assert_eq!(code, 0, "{stderr}");
    let output = std::process::Command::new(&codex)
        .args(["mcp", "get", "omniagent", "--json"])
        .env("CODEX_HOME", codex_home.path())
        .output()
        .unwrap();
    let transport = &serde_json::from_slice::<Value>(&output.stdout).unwrap()["transport"];
    assert_eq!(transport["url"], gateway.url(), "{transport}");
    assert_eq!(transport["bearer_token_env_var"], "OMNIAGENT_TOKEN", "{transport}");
    let (code, again, _) = install("codex");
    assert!(code == 0 && again.contains("already"), "{again}");
}

/// A secret the config reads from a variable may not reach a server the host starts:
/// `mcp install` names each such variable and where the config reads it, never its value.
#[test]
fn secrets_read_from_variables_are_named_not_shown() {
    let home = Home::new().with_config(
        "mcp:\n  servers:\n    gh:\n      command: gh-mcp\n      secrets: {GITHUB_TOKEN: \"env:MY_GITHUB_TOKEN\"}\n\
         serve: {clients: {alice: {token: \"env:ALICE_TOKEN\"}}}\n",
    );
    let mut command = home.omniagent(&["mcp", "install", "cursor", "--project"]);
    command.env("MY_GITHUB_TOKEN", "ghp-secret-value").env("ALICE_TOKEN", "alice-secret-value");
    let (code, _, stderr) = crate::run(command);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("note: Cursor starts its servers with an environment of its own"), "{stderr}");
    assert!(stderr.contains("MY_GITHUB_TOKEN (mcp.servers.gh.secrets.GITHUB_TOKEN)"), "{stderr}");
    // Only over HTTP does the gateway read its clients' tokens.
    assert!(!stderr.contains("ALICE_TOKEN"), "{stderr}");
    assert!(!stderr.contains("secret-value"), "{stderr}");
    assert!(home.path().join(".cursor/mcp.json").is_file());
}

/// Codex writes its own TOML: `mcp install codex` goes in through `codex mcp add`, and
/// what `codex mcp get` then reads starts the gateway. `--print`'s table is one Codex
/// reads the same.
#[test]
fn codexs_entry_goes_in_through_codex_and_starts_the_gateway() {
    let home = super::sample_home("60s");
    let codex = test_peers::codex_or_panic();
    let path = path_with(codex.parent().unwrap());
    let codex_home = tempfile::tempdir().unwrap();
    let install = |args: &[&str]| {
        let mut command = home.omniagent(&[&["mcp", "install", "codex"][..], args].concat());
        command.env("CODEX_HOME", codex_home.path()).env("PATH", &path);
        crate::run(command)
    };
    let codex_get = |codex_home: &Path| {
        let output = std::process::Command::new(&codex)
            .args(["mcp", "get", "omniagent", "--json"])
            .env("CODEX_HOME", codex_home)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        serde_json::from_slice::<Value>(&output.stdout).unwrap()["transport"].clone()
    };

    let (code, stdout, stderr) = install(&[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("Added `omniagent` to Codex's config"), "{stdout}");
    let transport = codex_get(codex_home.path());
    assert_eq!(transport["args"], json!(["mcp", "serve"]), "{transport}");
    assert_eq!(transport["env"], json!({"OMNIAGENT_HOME": home.path()}), "{transport}");
    // Started with what Codex read, and nothing else of the test's environment.
    let config = codex_home.path().join("as-codex-starts-it.json");
    let server = json!({"command": transport["command"], "args": transport["args"], "env": transport["env"]});
    std::fs::write(&config, json!({"mcpServers": {"omniagent": server}}).to_string()).unwrap();
    let listed = inspector(&config, "omniagent", codex_home.path(), &["--method", "tools/list"]);
    assert!(tool_names(&listed).contains(&"sample__add"), "{listed}");

    let (code, stdout, _) = install(&[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("already"), "{stdout}");
    let (code, _, stderr) = install(&["--tool-search"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("Codex already has an MCP server `omniagent`"), "{stderr}");
    let (code, stdout, stderr) = install(&["--tool-search", "--force", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(crate::json(&stdout)["change"], "replaced");
    assert_eq!(codex_get(codex_home.path())["args"], json!(["mcp", "serve", "--tool-search"]));

    let (code, printed, _) = install(&["--print"]);
    assert_eq!(code, 0);
    let printed_home = tempfile::tempdir().unwrap();
    std::fs::write(printed_home.path().join("config.toml"), printed).unwrap();
    assert_eq!(codex_get(printed_home.path()), transport);
}
