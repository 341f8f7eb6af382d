//! `mcp-sample-server`: a small MCP server over stdio, built on rmcp's server macros.
//!
//! It is the real peer that the `skill-mcp` integration tests and benchmarks run against:
//! it speaks MCP (JSON-RPC lines on stdin and stdout) with the same rmcp that real Rust
//! servers use, and each tool or flag provokes one behaviour a host must cope with. It is
//! not shipped to users.
//!
//! Run it by hand with a few JSON-RPC lines; keep stdin open while answers are pending,
//! because the server exits about a second after stdin ends:
//!
//! ```sh
//! cargo build -p mcp-sample-server
//! (printf '%s\n' \
//!   '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"sh","version":"0"}}}' \
//!   '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
//!   '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}'
//!  sleep 0.5) | target/debug/mcp-sample-server
//! ```
//!
//! # Tools
//!
//! | Tool | Arguments | Behaviour |
//! |---|---|---|
//! | `echo` | `text` | answers `text` unchanged |
//! | `add` | `a`, `b` (integers) | answers the sum as text, with `structuredContent` `{"sum": n}` and an output schema |
//! | `env` | `name` | answers the variable's value, or a tool error `<name> is not set` |
//! | `crash` | | exits with code 3 without answering |
//! | `hang` | | never answers and ignores cancellation |
//! | `sleep` | `ms` | answers `slept` after `ms` milliseconds; stops early when cancelled |
//! | `stderr` | `megabytes` | writes that many MiB of 64-byte lines to stderr, then answers `wrote N MB` |
//! | `add_tool` | `name` | adds a tool `name` that answers its arguments as JSON text, sends `notifications/tools/list_changed`, answers `added` |
//! | `spawn_child` | | starts `sleep 3600` in the server's process group and answers its pid |
//! | `pid` | | answers the server's pid |
//!
//! # Flags
//!
//! | Flag | Effect |
//! |---|---|
//! | `--page-size N` | serves `tools/list` in pages of `N` tools, with a numeric `nextCursor` |
//! | `--stderr-at-start MB` | writes `MB` MiB to stderr before serving (a host that does not drain stderr stalls here) |
//! | `--exit-at-start` | writes `fatal: sample failure` to stderr and exits with code 7 before serving |
//! | `--silent` | never answers, not even `initialize`: reads stdin until it ends, then exits 0 |
//!
//! `--stderr-at-start` runs before `--exit-at-start`, which runs before `--silent`.
//!
//! # Exit
//!
//! On stdin EOF the server lets rmcp send the answers of handlers that finish within
//! [`EOF_GRACE`] and then exits 0, even if a handler (such as `hang`) is still running.
//! Exit codes: 0 after EOF, 1 when serving fails, 2 for a bad command line, 3 from
//! `crash`, 7 from `--exit-at-start`. Nothing but MCP messages is written to stdout.
//!
//! Clients on protocol 2026-07-28 (no `initialize`) get `notifications/tools/list_changed`
//! through their `subscriptions/listen` streams instead of as a plain notification.

mod args;
mod eof_reader;
mod server;

use std::{
    io::{self, Write as _},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context as _;
use rmcp::ServiceExt as _;
use tokio::sync::watch;

use crate::{eof_reader::EofNotifyingReader, server::SampleServer};

/// How long the server keeps running after stdin ends, so that answers still being
/// computed can be sent.
const EOF_GRACE: Duration = Duration::from_secs(1);

fn main() -> ExitCode {
    let config = match args::parse(std::env::args().skip(1)) {
        Ok(config) => config,
        Err(error) => return fail(2, &error),
    };
    if config.stderr_at_start_megabytes > 0
        && let Err(error) = server::write_stderr(config.stderr_at_start_megabytes)
    {
        return fail(1, &format!("cannot write stderr: {error}"));
    }
    if config.exit_at_start {
        let _ignored = writeln!(io::stderr(), "fatal: sample failure");
        return ExitCode::from(7);
    }
    if config.silent {
        // Reading keeps the host's writes from blocking; nothing is ever answered.
        return match io::copy(&mut io::stdin().lock(), &mut io::sink()) {
            Ok(_) => ExitCode::SUCCESS,
            Err(error) => fail(1, &format!("cannot read stdin: {error}")),
        };
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => return fail(1, &format!("cannot start the tokio runtime: {error}")),
    };
    let served = runtime.block_on(serve(config.page_size));
    // Do not wait for handlers that never end (`hang`) or blocked stderr writes.
    runtime.shutdown_background();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(1, &format!("{error:#}")),
    }
}

/// Serves MCP on stdin and stdout until stdin ends (plus [`EOF_GRACE`]) or the service stops.
async fn serve(page_size: Option<usize>) -> anyhow::Result<()> {
    let (input_closed_tx, mut input_closed) = watch::channel(false);
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let transport = (EofNotifyingReader::new(stdin, input_closed_tx), stdout);
    let running =
        SampleServer::new(page_size, input_closed.clone()).serve(transport).await.context("mcp start-up failed")?;
    tokio::select! {
        quit_reason = running.waiting() => {
            quit_reason.context("mcp service failed")?;
        }
        () = async {
            let _closed = input_closed.wait_for(|&closed| closed).await;
            tokio::time::sleep(EOF_GRACE).await;
        } => {}
    }
    Ok(())
}

fn fail(code: u8, message: &dyn std::fmt::Display) -> ExitCode {
    let _ignored = writeln!(io::stderr(), "mcp-sample-server: {message}");
    ExitCode::from(code)
}
