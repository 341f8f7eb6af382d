//! `mcp-sample-server`: a small MCP server over stdio, built on rmcp's server macros.
//!
//! It is the real peer that the `skill-mcp` integration tests and benchmarks run against:
//! it speaks MCP (JSON-RPC lines on stdin and stdout) with the same rmcp that real Rust
//! servers use, and each tool or flag provokes one behaviour a host must cope with. With
//! `--conformance` it also serves the fixtures of the MCP conformance suite, so a gateway
//! in front of it can be tested with that suite. It is not shipped to users.
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
//! | `crash` | `stderr` (optional) | writes `stderr` to stderr, then exits with code 3 without answering |
//! | `hang` | | never answers and ignores cancellation |
//! | `sleep` | `ms` | answers `slept` after `ms` milliseconds; when cancelled, stops and writes `mcp-sample-server: sleep cancelled` to stderr; with `_meta.progressToken`, reports progress 0 of `ms` as it begins |
//! | `stderr` | `megabytes` | writes that many MiB of 64-byte lines to stderr, then answers `wrote N MB` |
//! | `add_tool` | `name` | adds a tool `name` that answers its arguments as JSON text, sends `notifications/tools/list_changed`, answers `added` |
//! | `spawn_child` | | starts `sleep 3600` in the server's process group and answers its pid |
//! | `pid` | | answers the server's pid |
//! | `protocol_version` | | answers the protocol version the call was made in |
//! | `refuse` | `message` | answers a JSON-RPC invalid-params error (`-32602`) with `message`, as a server that finds arguments wrong does |
//! | `client` | | answers `{"clientInfo": …, "capabilities": …}`, what the client declared for this call (2026-07-28 `_meta`, else its `initialize`) |
//!
//! # Conformance fixtures (`--conformance`)
//!
//! The fixtures of `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (server scenarios),
//! with the names, texts and schemas the scenarios check, beside the tools above. Sessions
//! that began with `initialize` are asked with requests of the server's own
//! (`sampling/createMessage`, `elicitation/create`, `roots/list`); requests on protocol
//! 2026-07-28 (its `_meta` naming that version, even on such a session) get an
//! `InputRequiredResult` instead and complete when called again with `inputResponses`.
//!
//! | Tool | Arguments | Behaviour |
//! |---|---|---|
//! | `test_simple_text` | | text `This is a simple text response for testing.` |
//! | `test_image_content`, `test_audio_content` | | a 1x1 PNG (`image/png`), a short WAV (`audio/wav`) |
//! | `test_embedded_resource` | | resource `test://embedded-resource`, `text/plain` |
//! | `test_multiple_content_types` | | text, PNG image and JSON resource `test://mixed-content-resource` |
//! | `test_tool_with_logging` | | three `notifications/message` at info, 50 ms apart, then text |
//! | `test_tool_with_progress` | | progress 0, 50, 100 of 100 for `_meta.progressToken`, 50 ms apart; answers the token |
//! | `test_error_handling` | | a tool error (`isError`), not a JSON-RPC error |
//! | `test_sampling` | `prompt` | asks the client to sample `prompt` (max 100 tokens); answers `LLM response: …` |
//! | `test_elicitation` | `message` | elicits `username` and `email`; answers `User response: action=…, content=…` |
//! | `test_elicitation_sep1034_defaults`, `test_elicitation_sep1330_enums` | | elicits a form with defaults, with the five enum forms |
//! | `json_schema_2020_12_tool` | any | an input schema with `$schema`, `$defs`/`$anchor`, `allOf`/`anyOf`, `if`/`then`/`else` |
//! | `test_custom_headers` | `region`, `query` | answers `region=…`; `region` is mirrored as header `Mcp-Param-Region` |
//! | `test_missing_capability` | | error -32021 unless the client declared `sampling` |
//! | `test_streaming_elicitation` | | elicits a confirmation |
//! | `test_logging_tool` | | one log message, on 2026-07-28 only when `_meta` names a log level |
//! | `test_trigger_tool_change`, `test_trigger_prompt_change` | | announces that the tool or prompt list changed |
//! | `test_trigger_resource_update` | | announces (on sessions) that `test://watched-resource` changed |
//! | `test_input_required_result_*` | | the eight multi-round (SEP-2322) fixtures, 2026-07-28 only; `requestState` is HMAC-sealed |
//!
//! Prompts: `test_simple_prompt`, `test_prompt_with_arguments` (`arg1`, `arg2`),
//! `test_prompt_with_embedded_resource` (`resourceUri`), `test_prompt_with_image`, and
//! `test_input_required_result_prompt` (2026-07-28). Resources: `test://static-text`,
//! `test://static-binary`, `test://watched-resource` (subscribable; it never changes) and
//! the template `test://template/{id}/data`; an unknown URI is an error naming it in
//! `data.uri`. `completion/complete` completes the prompts' arguments and the template's
//! `id`; `logging/setLevel` sets the level of the session's log messages.
//!
//! # Flags
//!
//! | Flag | Effect |
//! |---|---|
//! | `--page-size N` | serves `tools/list` in pages of `N` tools, with a numeric `nextCursor` |
//! | `--stderr-at-start MB` | writes `MB` MiB to stderr before serving (a host that does not drain stderr stalls here) |
//! | `--exit-at-start` | writes `fatal: sample failure` to stderr and exits with code 7 before serving |
//! | `--silent` | never answers, not even `initialize`: reads stdin until it ends, then exits 0 |
//! | `--conformance` | also serves the conformance fixtures above (and their prompts, resources and completions) |
//! | `--odd-schemas` | also lists `bad_schema`, whose input schema does not compile (`"type": 12`), and `remote_ref`, whose schema has a `$ref` to a URL; both echo their arguments |
//! | `--hostile` | also lists tools that each try one thing a sandbox denies, answering `allowed: …` or `denied: <error>`: `read_file` and `write_file` (`path`), `ptrace` (`pid`: attach), `fork` (`count` processes `sleep 30` at once), `allocate` (`megabytes`, touched), `connect` (`address` host:port, TCP), `fetch` (`url`, through `HTTP_PROXY` if set) |
//! | `--http ADDR` | serves streamable HTTP at `http://ADDR/mcp` instead of stdio, with rmcp's defaults (sessions for `initialize`, stateless 2026-07-28 requests, loopback `Host` only); writes `listening on http://ADDR/mcp` to stderr, so port 0 works |
//!
//! | `--oauth-issuer URL` | with `--http`: `/mcp` is an OAuth protected resource of that issuer (its JWT access tokens, Ed25519-signed, for `http://ADDR/mcp` as audience, with scope `mcp:tools`; the `env` tool also needs `mcp:admin`, else 403 `insufficient_scope`), with RFC 9728 metadata at `/.well-known/oauth-protected-resource/mcp`; the issuer's keys are fetched at start |
//!
//! `--stderr-at-start` runs before `--exit-at-start`, which runs before `--silent`.
//!
//! Run the conformance suite against the fixtures directly:
//!
//! ```sh
//! target/debug/mcp-sample-server --conformance --http 127.0.0.1:8123 &
//! ~/.cache/omniagent-peers/mcp-conformance-0.2.0-alpha.12/conformance server \
//!   --url http://127.0.0.1:8123/mcp --requirements 2026-07-28 -o target/conformance
//! ```
//!
//! # Exit
//!
//! On stdin EOF the server lets rmcp send the answers of handlers that finish within
//! [`EOF_GRACE`] and then exits 0, even if a handler (such as `hang`) is still running.
//! Exit codes: 0 after EOF, 1 when serving fails, 2 for a bad command line, 3 from
//! `crash`, 7 from `--exit-at-start`. Nothing but MCP messages is written to stdout.
//! With `--http` the server runs until SIGINT or SIGTERM, then exits 0 within a second.
//!
//! Clients on protocol 2026-07-28 (no `initialize`) get `notifications/tools/list_changed`
//! through their `subscriptions/listen` streams instead of as a plain notification.

mod args;
mod conformance;
mod eof_reader;
mod hostile;
mod http;
mod icons;
mod oauth;
mod server;

use std::{
    io::{self, Write as _},
    process::ExitCode,
    time::Duration,
};

use anyhow::Context as _;
use rmcp::{ServerHandler, ServiceExt as _};
use tokio::sync::watch;

use crate::{args::Config, conformance::ConformanceServer, eof_reader::EofNotifyingReader, server::SampleServer};

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
    let served = runtime.block_on(serve(&config));
    // Do not wait for handlers that never end (`hang`) or blocked stderr writes.
    runtime.shutdown_background();
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(1, &format!("{error:#}")),
    }
}

/// Serves the sample server, with the conformance fixtures if asked, over stdio or HTTP.
async fn serve(config: &Config) -> anyhow::Result<()> {
    // Becomes `true` at stdin EOF, or at the stop signal in HTTP mode.
    let (input_closed_tx, input_closed) = watch::channel(false);
    let sample = SampleServer::new(config.page_size, input_closed.clone());
    if config.odd_schemas {
        sample.add_odd_schemas();
    }
    if config.hostile {
        sample.add_hostile_tools();
    }
    let fixtures = if config.conformance {
        Some(ConformanceServer::new(sample.clone()).context("cannot make a key for requestState")?)
    } else {
        None
    };
    let issuer = config.oauth_issuer.as_deref();
    match (config.http, fixtures) {
        (None, None) => serve_stdio(sample, input_closed_tx, input_closed).await,
        (None, Some(fixtures)) => serve_stdio(fixtures, input_closed_tx, input_closed).await,
        (Some(address), None) => http::serve(address, issuer, move || sample.clone(), input_closed_tx).await,
        (Some(address), Some(fixtures)) => {
            http::serve(address, issuer, move || fixtures.for_new_session(), input_closed_tx).await
        }
    }
}

/// Serves MCP on stdin and stdout until stdin ends (plus [`EOF_GRACE`]) or the service stops.
async fn serve_stdio(
    handler: impl ServerHandler,
    input_closed_tx: watch::Sender<bool>,
    mut input_closed: watch::Receiver<bool>,
) -> anyhow::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio_pipes();
    let transport = (EofNotifyingReader::new(stdin, input_closed_tx), stdout);
    let running = handler.serve(transport).await.context("mcp start-up failed")?;
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
