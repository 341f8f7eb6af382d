//! `omniagent mcp install`: an entry that starts `omniagent mcp serve` in an MCP host's
//! config file, the rest of the file kept as it was.

mod codex;
mod remote;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use omniagent_host::Origin;
use serde_json::{Map, Value};

use super::Session;
use crate::UsageError;
use crate::args::McpHost;

/// `mcp install`'s options beside the host.
pub(super) struct Options {
    pub(super) name: String,
    pub(super) project: bool,
    pub(super) force: bool,
    pub(super) print: bool,
    pub(super) tool_search: bool,
    pub(super) url: Option<String>,
    pub(super) token_env: Option<String>,
}

/// What writing the entry changed in the host's file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum EntryChange {
    /// The file had no entry of that name.
    Added,
    /// `--force` replaced an entry of that name that said something else.
    Replaced,
    /// The file had the same entry already; it was not written.
    Unchanged,
}

pub(super) fn run(session: &Session, host: McpHost, options: &Options) -> anyhow::Result<ExitCode> {
    let entry = match &options.url {
        Some(url) => remote::entry(host, url, options.token_env.as_deref())?,
        None => {
            // The host gets what this command sees: a config or an agent that does not
            // load fails here, not later in the host, where its log is harder to find.
            let config = session.location.load()?.for_agent(session.agent.as_deref())?;
            crate::render::env_secrets_note(host, &env_secrets(&config))?;
            entry(session, host, options.tool_search)?
        }
    };
    if options.print {
        if host == McpHost::Codex {
            std::io::Write::write_all(&mut std::io::stdout().lock(), codex::table(&options.name, &entry).as_bytes())?;
            return Ok(ExitCode::SUCCESS);
        }
        let servers = Map::from_iter([(options.name.clone(), entry)]);
        let snippet = Map::from_iter([(host.servers_key().to_owned(), Value::Object(servers))]);
        crate::render::print_json(&snippet)?;
        return Ok(ExitCode::SUCCESS);
    }
    let file = config_file(host, options.project)?;
    let change = match host {
        McpHost::Codex => codex::add(&options.name, &entry, options.force)?,
        _ => write_entry(&file, host, &options.name, &entry, options.force)?,
    };
    crate::render::mcp_installed(host, &file, &options.name, &entry, change, session.json)?;
    Ok(ExitCode::SUCCESS)
}

impl McpHost {
    /// The host's name for people.
    pub(crate) fn title(self) -> &'static str {
        match self {
            McpHost::ClaudeDesktop => "Claude Desktop",
            McpHost::ClaudeCode => "Claude Code",
            McpHost::Cursor => "Cursor",
            McpHost::Vscode => "VS Code",
            McpHost::Codex => "Codex",
            McpHost::Gemini => "Gemini CLI",
        }
    }

    /// The host's name on the command line.
    pub(crate) fn value_name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).expect("no host is skipped").get_name().to_owned()
    }

    /// The key of the file's map of servers: VS Code names it `servers`, Codex's TOML
    /// `mcp_servers`, the others `mcpServers`.
    fn servers_key(self) -> &'static str {
        match self {
            McpHost::Vscode => "servers",
            McpHost::Codex => "mcp_servers",
            McpHost::ClaudeDesktop | McpHost::ClaudeCode | McpHost::Cursor | McpHost::Gemini => "mcpServers",
        }
    }
}

/// The entry: this binary by its full path, with the config, agent and home this command
/// has, serving over stdio.
fn entry(session: &Session, host: McpHost, tool_search: bool) -> anyhow::Result<Value> {
    let mut entry = Map::new();
    if matches!(host, McpHost::ClaudeCode | McpHost::Vscode) {
        entry.insert("type".into(), "stdio".into());
    }
    entry.insert("command".into(), text(&program()?)?.into());
    let mut args = Vec::new();
    // A config of the home folder is found again through OMNIAGENT_HOME; one named by `-c`
    // or OMNIAGENT_CONFIG is named in the entry, as the host's environment has neither.
    if let (Origin::Flag | Origin::Env, Some(config)) = (session.location.origin(), session.location.path()) {
        args.extend(["-c".to_owned(), text(&std::path::absolute(config)?)?]);
    }
    if let Some(agent) = &session.agent {
        args.extend(["--agent".to_owned(), agent.clone()]);
    }
    args.extend(["mcp".to_owned(), "serve".to_owned()]);
    if tool_search {
        args.push("--tool-search".to_owned());
    }
    entry.insert("args".into(), args.into());
    if std::env::var_os("OMNIAGENT_HOME").is_some_and(|home| !home.is_empty()) {
        let home = text(&std::path::absolute(session.home.root())?)?;
        entry.insert("env".into(), Value::Object(Map::from_iter([("OMNIAGENT_HOME".to_owned(), home.into())])));
    }
    Ok(Value::Object(entry))
}

/// The secrets `config` reads from environment variables when served over stdio, each
/// as (the key it is written under, the variable): a host starts its servers with an
/// environment of its own, which may not have them. (`serve.clients` serves HTTP only.)
fn env_secrets(config: &omniagent_host::AgentConfig) -> Vec<(String, String)> {
    config
        .secret_references()
        .into_iter()
        .filter(|(key, _)| !key.starts_with("serve."))
        .filter_map(|(key, reference)| match reference {
            skill_core::SecretRef::Env(variable) => Some((key, variable)),
            _ => None,
        })
        .collect()
}

/// This binary as the host should name it: as PATH finds it when that is this same file
/// (a package manager's link, which stays where it is when an upgrade moves the file it
/// points to), else where it is.
fn program() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe().context("cannot tell where this program is")?;
    let real = exe.canonicalize().unwrap_or_else(|_| exe.clone());
    let on_path = exe.file_name().and_then(|name| {
        on_path(name).find(|found| found.is_absolute() && found.canonicalize().is_ok_and(|found| found == real))
    });
    Ok(on_path.unwrap_or(exe))
}

/// Where PATH would look for a program named `name`, in its order.
fn on_path(name: &std::ffi::OsStr) -> impl Iterator<Item = PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|folder| folder.join(name)).collect::<Vec<_>>().into_iter()
}

pub(crate) use self::remote::url_of;

/// The entry's command and its arguments.
pub(crate) fn command_line(entry: &Value) -> impl Iterator<Item = &str> {
    std::iter::once(&entry["command"]).chain(entry["args"].as_array().into_iter().flatten()).filter_map(Value::as_str)
}

fn text(path: &Path) -> anyhow::Result<String> {
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| anyhow::anyhow!("{} is not UTF-8, which JSON cannot hold", path.display()))
}

/// The host's config file. A user's file goes in the host's own folder, which must exist
/// (else the host is most likely not installed); a project's folder is made when missing.
/// Codex's is where `codex mcp add` writes (it makes the folder).
fn config_file(host: McpHost, project: bool) -> anyhow::Result<PathBuf> {
    let here = || std::env::current_dir().context("cannot tell the current folder");
    let file = match (host, project) {
        (McpHost::Codex, true) => {
            return Err(UsageError::new("`codex mcp add` writes the user's Codex config; leave out --project").into());
        }
        (McpHost::Codex, false) => return Ok(codex_home()?.join("config.toml")),
        (McpHost::ClaudeDesktop, true) => {
            return Err(UsageError::new("Claude Desktop has no project config; leave out --project").into());
        }
        (McpHost::ClaudeDesktop, false) => app_config_dir()?.join("Claude").join("claude_desktop_config.json"),
        (McpHost::ClaudeCode, _) => return Ok(here()?.join(".mcp.json")),
        (McpHost::Cursor, true) => return Ok(here()?.join(".cursor").join("mcp.json")),
        (McpHost::Cursor, false) => user_home()?.join(".cursor").join("mcp.json"),
        (McpHost::Vscode, true) => return Ok(here()?.join(".vscode").join("mcp.json")),
        (McpHost::Vscode, false) => app_config_dir()?.join("Code").join("User").join("mcp.json"),
        (McpHost::Gemini, true) => return Ok(here()?.join(".gemini").join("settings.json")),
        (McpHost::Gemini, false) => user_home()?.join(".gemini").join("settings.json"),
    };
    let folder = file.parent().expect("a file in a folder");
    if !folder.is_dir() {
        return Err(UsageError::new(format!(
            "{} does not exist: is {} installed here? (`omniagent mcp install {} --print` prints the entry to add by hand)",
            folder.display(),
            host.title(),
            host.value_name(),
        ))
        .into());
    }
    Ok(file)
}

/// Codex's folder: $CODEX_HOME, else `~/.codex`.
fn codex_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("CODEX_HOME").filter(|home| !home.is_empty()) {
        Some(home) => Ok(PathBuf::from(home)),
        None => Ok(user_home()?.join(".codex")),
    }
}

/// The person's home folder (see [`skill_core::user_home`]).
fn user_home() -> anyhow::Result<PathBuf> {
    skill_core::user_home()
        .ok_or_else(|| UsageError::new("HOME is not set, so the host's config cannot be found").into())
}

/// Where desktop applications keep their settings: `~/Library/Application Support` on
/// macOS, %APPDATA% on Windows, else $XDG_CONFIG_HOME or `~/.config`.
fn app_config_dir() -> anyhow::Result<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|value: &std::ffi::OsString| !value.is_empty()).map(PathBuf::from);
    if cfg!(target_os = "macos") {
        return Ok(user_home()?.join("Library").join("Application Support"));
    }
    if cfg!(windows) {
        return var("APPDATA").ok_or_else(|| UsageError::new("APPDATA is not set").into());
    }
    match var("XDG_CONFIG_HOME").filter(|dir| dir.is_absolute()) {
        Some(dir) => Ok(dir),
        None => Ok(user_home()?.join(".config")),
    }
}

/// Puts `entry` under `name` in `file`'s map of servers, keeping every other key and
/// entry, and writes the file whole (a new file, flushed to disk, renamed over the old one,
/// with its permissions) unless nothing changed. An entry of that name that says something else is
/// replaced only with `force`.
fn write_entry(file: &Path, host: McpHost, name: &str, entry: &Value, force: bool) -> anyhow::Result<EntryChange> {
    // A file that is a link (dotfiles kept in a repository) is written where it points.
    let file = file.canonicalize().unwrap_or_else(|_| file.to_path_buf());
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => return Err(error).with_context(|| format!("cannot read {}", file.display())),
    };
    let by_hand = || format!("`omniagent mcp install {} --print` prints the entry to add by hand", host.value_name());
    // A byte order mark, which some Windows editors write, is no JSON.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut root = if text.trim().is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(text)
            .map_err(|error| UsageError::new(format!("{}: not JSON: {error}; {}", file.display(), by_hand())))?
    };
    let key = host.servers_key();
    let servers = match &mut root {
        Value::Object(top) => top.entry(key).or_insert_with(|| Value::Object(Map::new())),
        _ => return Err(UsageError::new(format!("{}: not a JSON object; {}", file.display(), by_hand())).into()),
    };
    // `"mcpServers": null`, as a settings editor may leave it, holds no servers.
    if servers.is_null() {
        *servers = Value::Object(Map::new());
    }
    let Value::Object(servers) = servers else {
        return Err(UsageError::new(format!("{}: `{key}` is not an object; {}", file.display(), by_hand())).into());
    };
    let change = match servers.get(name) {
        None => EntryChange::Added,
        Some(existing) if existing == entry => return Ok(EntryChange::Unchanged),
        Some(_) if force => EntryChange::Replaced,
        Some(_) => {
            return Err(UsageError::new(format!(
                "{} already has a server `{name}` that says something else; `--force` replaces it, `--name` gives this one another name",
                file.display()
            ))
            .into());
        }
    };
    servers.insert(name.to_owned(), entry.clone());
    let folder = file.parent().expect("a file in a folder");
    std::fs::create_dir_all(folder).with_context(|| format!("cannot make {}", folder.display()))?;
    let mut written =
        tempfile::NamedTempFile::new_in(folder).with_context(|| format!("cannot write in {}", folder.display()))?;
    serde_json::to_writer_pretty(&mut written, &root)?;
    std::io::Write::write_all(&mut written, b"\n")?;
    if let Ok(metadata) = std::fs::metadata(&file) {
        written.as_file().set_permissions(metadata.permissions())?;
    }
    // On disk before the rename, as `skills.lock` is: a crash leaves the old file or the
    // new one, never an empty one.
    written.as_file().sync_all()?;
    written.persist(&file).with_context(|| format!("cannot write {}", file.display()))?;
    Ok(change)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn written(before: &str, name: &str, entry: &Value, force: bool) -> (anyhow::Result<EntryChange>, String) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, before).unwrap();
        let change = write_entry(&file, McpHost::Cursor, name, entry, force);
        (change, std::fs::read_to_string(&file).unwrap())
    }

    #[test]
    fn an_entry_joins_the_others_and_every_other_key_stays_in_its_place() {
        let before = r#"{"globalShortcut": "Ctrl+Space", "mcpServers": {"files": {"command": "npx"}}, "z": 1}"#;
        let entry = json!({"command": "/bin/omniagent", "args": ["mcp", "serve"]});
        let (change, after) = written(before, "omniagent", &entry, false);
        assert_eq!(change.unwrap(), EntryChange::Added);
        let after: Value = serde_json::from_str(&after).unwrap();
        let keys: Vec<&String> = after.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["globalShortcut", "mcpServers", "z"]);
        assert_eq!(after["mcpServers"], json!({"files": {"command": "npx"}, "omniagent": entry}));
    }

    #[test]
    fn a_different_entry_of_that_name_is_replaced_only_with_force() {
        let before = r#"{"mcpServers": {"omniagent": {"command": "old"}}}"#;
        let entry = json!({"command": "new"});
        let (refused, after) = written(before, "omniagent", &entry, false);
        assert!(refused.unwrap_err().to_string().contains("already has a server `omniagent`"));
        assert_eq!(after, before, "a refused entry leaves the file as it was");
        let (change, after) = written(before, "omniagent", &entry, true);
        assert_eq!(change.unwrap(), EntryChange::Replaced);
        assert_eq!(serde_json::from_str::<Value>(&after).unwrap(), json!({"mcpServers": {"omniagent": entry}}));
        let (same, _) = written(&after, "omniagent", &entry, false);
        assert_eq!(same.unwrap(), EntryChange::Unchanged);
    }

    #[test]
    fn a_file_that_is_not_json_is_named_with_its_line_and_left_alone() {
        let before = "{\n  // my servers\n  \"mcpServers\": {}\n}\n";
        let (refused, after) = written(before, "omniagent", &json!({}), false);
        let message = refused.unwrap_err().to_string();
        assert!(message.contains("mcp.json: not JSON: key must be a string at line 2 column 3"), "{message}");
        assert!(message.contains("--print` prints the entry"), "{message}");
        assert_eq!(after, before);
        let (refused, _) = written(r#"{"mcpServers": []}"#, "omniagent", &json!({}), false);
        assert!(refused.unwrap_err().to_string().contains("`mcpServers` is not an object"));
        let (added, after) = written(r#"{"mcpServers": null}"#, "omniagent", &json!({}), false);
        assert_eq!(added.unwrap(), EntryChange::Added);
        assert_eq!(serde_json::from_str::<Value>(&after).unwrap(), json!({"mcpServers": {"omniagent": {}}}));
    }
}
