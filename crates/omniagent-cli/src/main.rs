//! `omniagent`: list and call the tools an agent gets from its skills, and inspect the
//! config they come from.
//!
//! Exit codes: 0 success; 1 a tool reported an error or a check failed; 2 a usage or
//! config error (unknown tool, arguments that fail the tool's schema, a bad config file).
//!
//! ```console
//! $ omniagent tools call memory__remember --args '{"key":"city","value":"Lyon"}'
//! remembered `city`
//! $ omniagent tools call recall --args '{"key":"city"}'
//! Lyon
//! ```

mod args;
#[cfg(feature = "mcp")]
mod busy_poll;
mod commands;
mod render;

use std::fmt;
use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, parser::ValueSource};
use omniagent_host::HostError;
use skill_core::ToolError;

use crate::args::Cli;

/// mimalloc, not glibc's allocator: loading GitHub's OpenAPI document (13 MB) on a
/// worker thread spent a fifth of its time in glibc growing that thread's heap
/// (`mprotect`) and consolidating freed chunks.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A mistake in how the command was called: exit code 2, as for a [`HostError`] (a
/// mistake in the config).
#[derive(Debug)]
pub(crate) struct UsageError(String);

impl UsageError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let config_from_env = matches.value_source("config") == Some(ValueSource::EnvVariable);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(error) => error.exit(),
    };
    init_tracing(cli.global.verbose, cli.global.quiet, reports_loading(&cli.command));
    let runtime = match runtime_for(&cli.command) {
        Ok(runtime) => runtime,
        Err(error) => return fail(&anyhow::Error::new(error).context("cannot start the async runtime")),
    };
    match runtime.block_on(commands::run(cli, config_from_env)) {
        Ok(code) => code,
        Err(error) => fail(&error),
    }
}

/// One thread for a command, which does one thing at a time and must start fast, and
/// for the gateway over stdio, which serves one client (a thread saves the cross-thread
/// wake-ups of every call) and, if asked, polls after each wake-up (see `busy_poll`); every core
/// for the gateway over HTTP, which serves many.
fn runtime_for(command: &args::Command) -> std::io::Result<tokio::runtime::Runtime> {
    #[cfg(feature = "mcp")]
    if let args::Command::Mcp(args::McpCommand::Serve { http, busy_poll: window, .. }) = command {
        return match http {
            Some(_) => tokio::runtime::Builder::new_multi_thread().enable_all().build(),
            None => busy_poll::runtime(std::time::Duration::from_micros(*window)),
        };
    }
    let _ = command;
    tokio::runtime::Builder::new_current_thread().enable_all().build()
}

fn fail(error: &anyhow::Error) -> ExitCode {
    // A reader that stopped reading (`omniagent tools list | head`) is not a failure.
    let broken_pipe = error.chain().any(|cause| {
        let kind = match (cause.downcast_ref::<std::io::Error>(), cause.downcast_ref::<serde_json::Error>()) {
            (Some(io), _) => Some(io.kind()),
            (None, Some(json)) => json.io_error_kind(),
            (None, None) => None,
        };
        kind == Some(std::io::ErrorKind::BrokenPipe)
    });
    if broken_pipe {
        return ExitCode::SUCCESS;
    }
    render::error(error);
    if is_usage_error(error) { ExitCode::from(2) } else { ExitCode::FAILURE }
}

fn is_usage_error(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<UsageError>()
            || cause.is::<HostError>()
            || matches!(
                cause.downcast_ref::<ToolError>(),
                Some(ToolError::NotFound { .. } | ToolError::InvalidArguments { .. })
            )
    })
}

/// Whether the command's output reports what went wrong as the agent loaded its skills
/// (skills skipped, tools and parts of input schemas left out), as `tools list` and
/// `config check` do.
fn reports_loading(command: &args::Command) -> bool {
    matches!(
        command,
        args::Command::Tools(args::ToolsCommand::List) | args::Command::Config(args::ConfigCommand::Check)
    )
}

/// Logs go to stderr: warnings by default, `-v` info, `-vv` debug, `-vvv` trace, `-q`
/// errors only. Colour only on a terminal, and never with `NO_COLOR`. A command that
/// `reports_loading` does not log those warnings again by default.
fn init_tracing(verbose: u8, quiet: bool, reports_loading: bool) {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let level = match (quiet, verbose) {
        (true, _) => tracing::Level::ERROR,
        (false, 0) => tracing::Level::WARN,
        (false, 1) => tracing::Level::INFO,
        (false, 2) => tracing::Level::DEBUG,
        (false, _) => tracing::Level::TRACE,
    };
    let mut targets = tracing_subscriber::filter::Targets::new().with_default(level);
    if reports_loading && level == tracing::Level::WARN {
        targets = targets.with_target("skill_core::agent", tracing::Level::ERROR);
    }
    if level < tracing::Level::DEBUG {
        // rmcp's transport says "worker quit with fatal: …" when a connection ends, in
        // words of its own and without the server's name; the failure it ends reports
        // that, naming the server (`-vv` shows it all the same).
        targets = targets.with_target("rmcp::transport::worker", tracing::level_filters::LevelFilter::OFF);
    }
    let colour = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(omniagent_host::log::RedactingStderr)
        .with_ansi(colour)
        .with_target(false)
        .without_time()
        .finish()
        .with(targets)
        .init();
}
