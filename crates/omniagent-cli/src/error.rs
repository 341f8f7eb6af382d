//! [`HostError`]: why the host could not read the config or start what it asks for.

use std::path::{Path, PathBuf};

/// A mistake in the config or the home folder: the host cannot go on until someone fixes
/// it (the `omniagent` binary exits with code 2). A skill that cannot load is not one of
/// these: the agent skips it, with the reason.
///
/// A variant that wraps another error shows it in its own message and does not return it
/// as its `source`, so that a chain printed in full (`{:#}`) shows it once.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// Neither `$OMNIAGENT_HOME` nor `$HOME` says where the home folder is.
    #[error("neither OMNIAGENT_HOME nor HOME is set; set OMNIAGENT_HOME")]
    NoHome,
    /// The config file cannot be read.
    #[error("cannot read config file {}: {error}", path.display())]
    ReadConfig {
        /// The file.
        path: PathBuf,
        /// Why it cannot be read.
        error: std::io::Error,
    },
    /// The config says something it may not: `FILE:LINE:COLUMN: key: problem`.
    #[error("{}{}: {message}", config_name(file.as_deref()), at.map(|(line, column)| format!(":{line}:{column}")).unwrap_or_default())]
    InvalidConfig {
        /// The config file; `None` for the built-in defaults.
        file: Option<PathBuf>,
        /// The line and column (from 1) of the mistake, when it is at one place.
        at: Option<(usize, usize)>,
        /// The key and what is wrong with it (`compiled: unknown field ...`).
        message: String,
    },
    /// The agent asked for has no overrides under `agents:`.
    #[error("unknown agent `{name}` in {} (agents configured: {})", config_name(file.as_deref()), agent_list(known))]
    UnknownAgent {
        /// The agent asked for.
        name: String,
        /// The config file; `None` for the built-in defaults.
        file: Option<PathBuf>,
        /// The agents the config has.
        known: Vec<String>,
    },
    /// `storage.backend: sqlite`, in a build without the `sqlite` feature.
    #[error(
        "storage.backend is sqlite, but this omniagent was built without the `sqlite` feature; \
         set `storage: {{backend: memory}}`"
    )]
    SqliteUnavailable,
    /// `storage.backend: redis`, in a build without the `redis` feature.
    #[error(
        "storage.backend is redis, but this omniagent was built without the `redis` feature; \
         set `storage: {{backend: sqlite}}` or `storage: {{backend: memory}}`"
    )]
    RedisUnavailable,
    /// The `storage:` section names no usable store (`backend: redis` without a `url`, a
    /// `url` whose secret cannot be resolved). The message never holds the URL itself.
    #[error("storage.{key}: {message}")]
    Storage {
        /// The key: `url` or `backend`.
        key: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The agent is its own MCP server: a server of its config runs omniagent with the
    /// same config and agent, directly or through other servers, and would start it again.
    #[cfg(feature = "mcp")]
    #[error(
        "agent `{agent}` of {} is an MCP server of itself: a server of that config runs omniagent with the same \
         config and agent (directly or through other servers), and so without end; remove that server",
        config_name(file.as_deref())
    )]
    OwnServer {
        /// The agent.
        agent: String,
        /// Its config file; `None` for the built-in defaults.
        file: Option<PathBuf>,
    },
    /// The AAuth agent has nowhere to enroll: no `aauth.agent_provider`, and no override.
    #[cfg(feature = "aauth")]
    #[error("no AAuth agent provider: set `aauth.agent_provider` in the config (or pass --agent-provider)")]
    NoAgentProvider,
    /// A URL of the `aauth:` section (or its override) is not one.
    #[cfg(feature = "aauth")]
    #[error("aauth.{key}: `{text}` is not a URL: {error}")]
    NotAUrl {
        /// The key: `agent_provider` or `person_server`.
        key: &'static str,
        /// What it says.
        text: String,
        /// Why it is not a URL.
        error: url::ParseError,
    },
    /// The agent key can be neither loaded nor created.
    #[cfg(feature = "aauth")]
    #[error("aauth.key: {error}")]
    AAuthKey {
        /// Why.
        error: aauth_client::Error,
    },
    /// The trust lock cannot be read (a corrupt lock is never an empty trust).
    #[error("{error}")]
    Trust {
        /// Why, naming the file.
        error: skill_core::Error,
    },
    /// The AAuth client cannot be built (a CA file that cannot be read, ...).
    #[cfg(feature = "aauth")]
    #[error("aauth: {error}")]
    AAuthClient {
        /// Why.
        error: aauth_client::Error,
    },
    /// The audit file (`observability.audit.path`) cannot be opened.
    #[error("observability.audit: cannot open {path}: {error}")]
    Audit {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The current mission's file cannot be written or removed.
    #[cfg(feature = "aauth")]
    #[error("aauth: cannot write the current mission {}: {error}", path.display())]
    MissionFile {
        /// The file, `aauth/mission.json` in the home.
        path: std::path::PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// How messages name a config: its path, or the built-in defaults.
fn config_name(file: Option<&Path>) -> String {
    match file {
        Some(path) => path.display().to_string(),
        None => "the built-in defaults".to_owned(),
    }
}

fn agent_list(known: &[String]) -> String {
    if known.is_empty() { "none".to_owned() } else { known.join(", ") }
}
