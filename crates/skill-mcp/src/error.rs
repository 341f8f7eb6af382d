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
    #[error("start-up timed out after {}ms", .after.as_millis())]
    StartupTimeout {
        /// The bound.
        after: Duration,
        /// The server's last stderr lines, kept out of the message (see [`Error::stderr`]).
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
    /// The server's sandbox could not be prepared, or a part of it is missing and
    /// `sandbox.required` is set.
    #[error("the sandbox cannot be applied: {reason}")]
    Sandbox {
        /// What is missing, or why it could not be prepared.
        reason: String,
    },
    /// Start-up failed (the server exited, or answered with an error).
    #[error("start-up failed: {reason}")]
    Startup {
        /// What went wrong.
        reason: String,
        /// The server's last stderr lines, kept out of the message (see [`Error::stderr`]).
        stderr: String,
    },
}

impl Error {
    /// The server's last stderr lines, when the failure kept them (empty otherwise).
    ///
    /// They are never part of the message, which reaches a gateway's clients: a server
    /// may print paths and tokens. They go to the log ([`Error::log_stderr`]).
    #[must_use]
    pub fn stderr(&self) -> &str {
        match self {
            Error::StartupTimeout { stderr, .. } | Error::Startup { stderr, .. } => stderr,
            _ => "",
        }
    }

    /// Logs the server's last stderr lines at warn level beside this failure of `server`.
    pub(crate) fn log_stderr(&self, server: &str) {
        crate::stderr::log_tail(server, &self.to_string(), self.stderr());
    }
}
