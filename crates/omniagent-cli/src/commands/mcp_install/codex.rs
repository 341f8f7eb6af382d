//! Codex keeps its MCP servers in TOML (`~/.codex/config.toml`), which its own `codex mcp
//! add` writes: the entry goes in through that command, and `codex mcp get --json` tells
//! what is there already.

use std::process::Command;

use anyhow::Context as _;
use serde_json::{Map, Value};

use super::EntryChange;
use crate::UsageError;

/// The entry as a table of Codex's config file, for `--print` and for a person without
/// `codex` on the PATH.
pub(super) fn table(name: &str, entry: &Value) -> String {
    let string = |value: &Value| serde_json::to_string(value).expect("JSON strings serialize");
    let key = if !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        name.to_owned()
    } else {
        string(&Value::String(name.to_owned()))
    };
    // A JSON string is a TOML basic string too: the same quotes and escapes.
    let mut table = format!("[mcp_servers.{key}]\n");
    if let Some(url) = entry.get("url") {
        table.push_str(&format!("url = {}\n", string(url)));
        if let Some(variable) = entry.get("bearer_token_env_var") {
            table.push_str(&format!("bearer_token_env_var = {}\n", string(variable)));
        }
        return table;
    }
    table.push_str(&format!("command = {}\n", string(&entry["command"])));
    let args: Vec<String> = entry["args"].as_array().into_iter().flatten().map(string).collect();
    table.push_str(&format!("args = [{}]\n", args.join(", ")));
    if let Some(env) = entry["env"].as_object() {
        table.push_str(&format!("\n[mcp_servers.{key}.env]\n"));
        for (variable, value) in env {
            table.push_str(&format!("{variable} = {}\n", string(value)));
        }
    }
    table
}

/// Adds the entry through `codex mcp add`, unless Codex has it already; returns what
/// changed. Another entry of that name is replaced only with `force`.
pub(super) fn add(name: &str, entry: &Value, force: bool) -> anyhow::Result<EntryChange> {
    let program = if cfg!(windows) { "codex.cmd" } else { "codex" };
    let Some(codex) = super::on_path(program.as_ref()).find(|found| found.is_file()) else {
        return Err(UsageError::new(format!(
            "Codex's `codex` command is not on PATH; with Codex installed, run this again, or add this to \
             ~/.codex/config.toml:\n{}",
            table(name, entry)
        ))
        .into());
    };
    // Codex's messages without its backtraces, which a Rust developer's environment asks for.
    let codex_command = || {
        let mut command = Command::new(&codex);
        command.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
        command
    };
    let got = codex_command().args(["mcp", "get", name, "--json"]).output().context("cannot run `codex mcp get`")?;
    // `codex mcp get` fails for a name it does not have.
    let existing = got.status.success().then(|| serde_json::from_slice::<Value>(&got.stdout).ok()).flatten();
    let change = match existing {
        None => EntryChange::Added,
        Some(existing) if same(&existing["transport"], entry) => return Ok(EntryChange::Unchanged),
        Some(_) if force => EntryChange::Replaced,
        Some(_) => {
            return Err(UsageError::new(format!(
                "Codex already has an MCP server `{name}` that says something else (`codex mcp get {name}`); \
                 `--force` replaces it, `--name` gives this one another name"
            ))
            .into());
        }
    };
    let mut add = codex_command();
    add.args(["mcp", "add", name]);
    if let Some(url) = entry["url"].as_str() {
        add.args(["--url", url]);
        if let Some(variable) = entry["bearer_token_env_var"].as_str() {
            add.args(["--bearer-token-env-var", variable]);
        }
    } else {
        for (variable, value) in entry["env"].as_object().into_iter().flatten() {
            add.arg("--env").arg(format!("{variable}={}", value.as_str().unwrap_or_default()));
        }
        add.arg("--").args(super::command_line(entry));
    }
    let added = add.output().context("cannot run `codex mcp add`")?;
    if !added.status.success() {
        anyhow::bail!("`codex mcp add` failed ({}): {}", added.status, String::from_utf8_lossy(&added.stderr).trim());
    }
    Ok(change)
}

/// Whether the transport `codex mcp get --json` gives starts or reaches what `entry` does.
fn same(transport: &Value, entry: &Value) -> bool {
    if entry.get("url").is_some() {
        return transport["type"] == "streamable_http"
            && transport["url"] == entry["url"]
            && transport["bearer_token_env_var"] == entry["bearer_token_env_var"];
    }
    let env = |value: &Value| value.as_object().filter(|env| !env.is_empty()).cloned().unwrap_or_else(Map::new);
    transport["type"] == "stdio"
        && transport["command"] == entry["command"]
        && transport["args"] == entry["args"]
        && env(&transport["env"]) == env(&entry["env"])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_table_quotes_what_toml_would_not_take_bare() {
        let entry = json!({"command": "C:\\omni agent\\omniagent.exe", "args": ["--agent", "a\"b", "mcp", "serve"],
            "env": {"OMNIAGENT_HOME": "/home/ada/.omniagent"}});
        assert_eq!(
            table("omni agent", &entry),
            "[mcp_servers.\"omni agent\"]\ncommand = \"C:\\\\omni agent\\\\omniagent.exe\"\n\
             args = [\"--agent\", \"a\\\"b\", \"mcp\", \"serve\"]\n\n\
             [mcp_servers.\"omni agent\".env]\nOMNIAGENT_HOME = \"/home/ada/.omniagent\"\n"
        );
        assert!(
            table("omniagent", &json!({"command": "/bin/omniagent", "args": []}))
                .starts_with("[mcp_servers.omniagent]\n")
        );
    }
}
