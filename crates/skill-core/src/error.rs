//! The crate's error types: [`ToolError`] for tool calls, [`Error`] for everything else.

use std::path::PathBuf;
use std::time::Duration;

/// A boxed error, for failures whose type belongs to a skill implementation.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a tool call did not produce a [`crate::ToolOutput`].
///
/// A tool that ran and wants to report a failed operation to the model returns a
/// `ToolOutput` with `is_error` set instead; a `ToolError` means the call itself failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// The arguments do not match the tool's input schema.
    #[error("invalid arguments for `{tool}`: {}", .problems.join("; "))]
    InvalidArguments {
        /// The tool's agent-level name.
        tool: String,
        /// One entry per problem, each naming the field (`/path: message`).
        problems: Vec<String>,
    },
    /// No tool (prompt, resource, resource template) of that name is registered, or a
    /// bare tool name matches several tools.
    #[error("unknown {kind} `{name}`{}", did_you_mean(.suggestions))]
    NotFound {
        /// What the name was looked up as.
        kind: ItemKind,
        /// The name (or URI) that was asked for.
        name: String,
        /// Close or matching names, best first.
        suggestions: Vec<String>,
    },
    /// The tool ran and failed.
    #[error("{message}")]
    Failed {
        /// What went wrong, for the caller and the model.
        message: String,
    },
    /// The tool did not finish in time.
    #[error("timed out after {}", humantime(*.after))]
    Timeout {
        /// The bound that was exceeded.
        after: Duration,
    },
    /// The call was cancelled before it finished.
    #[error("cancelled")]
    Cancelled,
    /// The item is withheld by the agent's trust (changed since approved, not approved
    /// yet, or flagged by a scan rule): the message names the command that reviews it.
    #[error("{message}")]
    Withheld {
        /// Why, and what to run.
        message: String,
    },
    /// A layer of the call path refused the call: a policy rule, a rate limit, the
    /// secret egress guard. The message says why (the rule, the wait, the secret's
    /// reference), never a secret's value.
    #[error("{message}")]
    Refused {
        /// The layer that refused: `policy`, `rate_limit`, `secret_guard`.
        layer: &'static str,
        /// Why, for the caller and the model.
        message: String,
    },
}

/// What an agent looks a name up as: a [`ToolError::NotFound`] names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemKind {
    /// A tool, by its agent-level name.
    Tool,
    /// A prompt, by its agent-level name.
    Prompt,
    /// A resource, by its agent-level URI.
    Resource,
    /// A resource template, by its agent-level URI template.
    ResourceTemplate,
}

impl std::fmt::Display for ItemKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ItemKind::Tool => "tool",
            ItemKind::Prompt => "prompt",
            ItemKind::Resource => "resource",
            ItemKind::ResourceTemplate => "resource template",
        })
    }
}

impl ToolError {
    /// A [`ToolError::NotFound`] for `name` looked up as `kind`, without suggestions.
    pub fn not_found(kind: ItemKind, name: impl Into<String>) -> Self {
        ToolError::NotFound { kind, name: name.into(), suggestions: Vec::new() }
    }

    /// A [`ToolError::Failed`] with the given message.
    pub fn failed(message: impl std::fmt::Display) -> Self {
        ToolError::Failed { message: message.to_string() }
    }
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        [one] => format!("; did you mean `{one}`?"),
        [init @ .., last] => {
            let init: Vec<String> = init.iter().map(|name| format!("`{name}`")).collect();
            format!("; did you mean {} or `{last}`?", init.join(", "))
        }
    }
}

fn humantime(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// Errors of secrets, storage and skill registration.
///
/// Messages name the secret *reference* (`env:NAME`, `file:PATH`, `op://…`), never a
/// secret value.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A secret reference starts with a `word:` that is no scheme this crate knows. The
    /// word is not shown: it may be the start of a value (`admin:hunter2`).
    #[error(
        "the value starts with an unknown secret reference scheme{} (use `env:NAME`, `file:PATH`, \
         `op://VAULT/ITEM/FIELD`, `literal:VALUE`, or a plain value without a `word:` prefix)",
        .suggestion.map(|scheme| format!(" (did you mean `{scheme}:`?)")).unwrap_or_default()
    )]
    UnknownSecretScheme {
        /// The known scheme the word is a likely typo of (`evn` for `env`).
        suggestion: Option<&'static str>,
    },
    /// A secret reference is malformed (e.g. `env:` without a name).
    #[error("secret reference `{reference}`: {problem}")]
    InvalidSecretReference {
        /// The reference as written.
        reference: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// `env:NAME` names a variable that is not set (or is empty).
    #[error("secret reference `{reference}`: environment variable `{name}` is not set")]
    SecretEnvNotSet {
        /// The reference as written.
        reference: String,
        /// The variable's name.
        name: String,
    },
    /// `file:PATH` could not be read.
    #[error("secret reference `{reference}`: cannot read {}: {kind}", .path.display())]
    SecretFile {
        /// The reference as written.
        reference: String,
        /// The path, after `~` expansion.
        path: PathBuf,
        /// Why it could not be read (the I/O error kind, which never holds file content).
        kind: std::io::ErrorKind,
    },
    /// The 1Password CLI could not be started.
    #[error(
        "secret reference `{reference}`: cannot run the 1Password CLI `{program}` ({kind}); install it and sign in, or use another reference"
    )]
    OpUnavailable {
        /// The reference as written.
        reference: String,
        /// The program that was looked for.
        program: String,
        /// Why it could not be started.
        kind: std::io::ErrorKind,
    },
    /// `op read` exited with a failure.
    #[error("secret reference `{reference}`: `op read` failed ({status}){}", stderr_suffix(.stderr))]
    OpFailed {
        /// The reference as written.
        reference: String,
        /// The exit status.
        status: String,
        /// The first line of `op`'s standard error.
        stderr: String,
    },
    /// `op read` did not finish in time.
    #[error("secret reference `{reference}`: `op read` timed out after {}", humantime(*.after))]
    OpTimeout {
        /// The reference as written.
        reference: String,
        /// The bound that was exceeded.
        after: Duration,
    },
    /// A key-value store failed.
    #[error("storage error: {0}")]
    Storage(BoxError),
    /// A skill's new tools, prompts or resources were refused (a name collision, an
    /// invalid schema); its old ones stay.
    #[error("the new items of skill `{skill}` were refused: {reason}")]
    ItemsRefused {
        /// The skill's name.
        skill: String,
        /// Why, naming the item.
        reason: String,
    },
    /// A [`crate::SkillHandle`]'s skill is not loaded: it has not finished loading, or it
    /// was skipped. It registers nothing.
    #[error("skill `{skill}` is not loaded, so it registers nothing")]
    SkillNotLoaded {
        /// The skill's name.
        skill: String,
    },
    /// A [`crate::SkillHandle`]'s agent was closed or dropped: it takes nothing any more.
    #[error("the agent of skill `{skill}` is closed, so it registers nothing")]
    AgentClosed {
        /// The skill's name.
        skill: String,
    },
    /// The trust lock cannot be read, parsed or written.
    #[error("trust lock {}: {message}", .path.display())]
    TrustLock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() { String::new() } else { format!(": {stderr}") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_lists_suggestions_readably() {
        let check = |suggestions: &[&str], expect: &str| {
            let error = ToolError::NotFound {
                kind: ItemKind::Tool,
                name: "x".into(),
                suggestions: suggestions.iter().map(|s| s.to_string()).collect(),
            };
            assert_eq!(error.to_string(), expect);
        };
        check(&[], "unknown tool `x`");
        check(&["a"], "unknown tool `x`; did you mean `a`?");
        check(&["a", "b", "c"], "unknown tool `x`; did you mean `a`, `b` or `c`?");
        assert_eq!(
            ToolError::not_found(ItemKind::ResourceTemplate, "t://{x}").to_string(),
            "unknown resource template `t://{x}`"
        );
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(ToolError::Timeout { after: Duration::from_secs(30) }.to_string(), "timed out after 30s");
        assert_eq!(ToolError::Timeout { after: Duration::from_millis(1500) }.to_string(), "timed out after 1500ms");
    }
}
