//! The crate's error type.

use std::time::Duration;

/// Why an MCP server could not be started or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Names in `required_env` have no value.
    #[error("missing required env {}", .names.join(", "))]
    MissingEnv {
        /// The names without a value.
        names: Vec<String>,
    },
    /// `${VAR}` expansion failed in an argument, variable or header.
    #[error("{0}")]
    Expansion(String),
    /// A header name or value is not valid HTTP.
    #[error("header `{name}` is not valid HTTP")]
    Header {
        /// The header's name.
        name: String,
    },
    /// The program could not be started.
    #[error("cannot start `{command}`: {error}")]
    Spawn {
        /// The program.
        command: String,
        /// Why (in the message, as every reason of this type is, so not a `source`).
        error: std::io::Error,
    },
    /// The HTTP client could not be built.
    #[error("cannot build the HTTP client: {0}")]
    HttpClient(String),
    /// Start-up did not finish in time.
    #[error("start-up timed out after {}ms{}", .after.as_millis(), stderr_suffix(.stderr))]
    StartupTimeout {
        /// The bound.
        after: Duration,
        /// The server's last stderr lines.
        stderr: String,
    },
    /// The server requires an OAuth login, and this agent has no tokens for it.
    #[error("the server requires an OAuth login: run `omniagent mcp login {server}`")]
    LoginRequired {
        /// The server's name.
        server: String,
    },
    /// An OAuth login failed.
    #[error("OAuth login failed: {0}")]
    Login(String),
    /// Start-up failed (the server exited, or answered with an error).
    #[error("start-up failed: {reason}{}", stderr_suffix(.stderr))]
    Startup {
        /// What went wrong.
        reason: String,
        /// The server's last stderr lines.
        stderr: String,
    },
}

/// `; stderr: …` with the server's last lines, or nothing.
pub(crate) fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!("; stderr: {}", stderr.replace('\n', " | ")) }
}
