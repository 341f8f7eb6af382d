//! Project automation, run as `cargo xtask <task>`.
//!
//! - `cargo xtask test`: everything CI checks: formatting, clippy (`-D warnings`), the
//!   build without default features, every test (nextest when installed, plus doctests),
//!   the benchmarks compiled (not run), and `cargo deny`.
//! - `cargo xtask bench`: runs the benchmarks and prints their figures.

// xtask talks to people on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

#[cfg(test)]
mod tidy;

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
        _ => {
            eprintln!(
                "usage: cargo xtask <test|bench>\n\n  test   run every check CI runs\n  bench  run the benchmarks"
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
    cargo(root, &["fmt", "--all", "--check"])?;
    cargo(root, &["clippy", "--workspace", "--all-targets", "--all-features", "--", "-D", "warnings"])?;
    cargo(root, &["clippy", "-p", "omniagent-cli", "--no-default-features", "--", "-D", "warnings"])?;
    cargo(root, &["build", "-p", "omniagent-cli", "--no-default-features"])?;
    if has_nextest(root) {
        cargo(root, &["nextest", "run", "--workspace", "--all-features", "--no-fail-fast"])?;
        cargo(root, &["test", "--workspace", "--all-features", "--doc"])?;
    } else {
        eprintln!("xtask: cargo-nextest not found, using cargo test");
        cargo(root, &["test", "--workspace", "--all-features", "--no-fail-fast"])?;
    }
    cargo(root, &["test", "--workspace", "--benches", "--no-run"])?;
    if !has_cargo_subcommand(root, "deny") {
        bail!("cargo-deny is not installed: run `cargo install --locked cargo-deny`");
    }
    cargo(root, &["deny", "--all-features", "check", "licenses", "bans", "sources"])?;
    eprintln!("xtask: all checks passed in {:.0?}", started.elapsed());
    Ok(())
}

fn bench(root: &Path) -> anyhow::Result<()> {
    cargo(root, &["bench", "-p", "skill-core", "--bench", "call_tool"])?;
    cargo(root, &["bench", "-p", "omniagent-cli", "--bench", "cold_start"])
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
    eprintln!("xtask: cargo {}", args.join(" "));
    let status = Command::new(cargo_program())
        .args(args)
        .current_dir(root)
        .status()
        .with_context(|| format!("cannot run cargo {}", args.join(" ")))?;
    if !status.success() {
        bail!("cargo {} failed ({status})", args.join(" "));
    }
    Ok(())
}
