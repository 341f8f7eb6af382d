//! `cargo xtask fuzz [SECONDS] [TARGET...]`: runs every cargo-fuzz target of `fuzz/` (or
//! the ones named) for SECONDS (default 60) each, one after the other, on the nightly toolchain, and prints each
//! target's executions and findings.
//!
//! Each target starts from its committed seeds (`fuzz/seeds/<target>`) and the corpus of
//! earlier runs (`fuzz/corpus/<target>`, not committed), where libFuzzer keeps what it
//! finds new; a crashing input lands in `fuzz/artifacts/<target>/`, and becomes a
//! regression test beside the code it broke.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// The targets, in `fuzz/Cargo.toml`'s order.
const TARGETS: [&str; 8] =
    ["skill_md", "config", "openapi_document", "parameter", "aauth_headers", "expand", "mcp_lines", "install_archive"];

/// What one target's run came to.
struct Outcome {
    target: &'static str,
    executions: u64,
    crashed: bool,
}

pub(crate) fn fuzz(root: &Path, seconds: u64, only: &[String]) -> anyhow::Result<()> {
    if let Some(unknown) = only.iter().find(|name| !TARGETS.contains(&name.as_str())) {
        bail!("no fuzz target `{unknown}` (the targets: {})", TARGETS.join(", "));
    }
    let fuzz_dir = root.join("fuzz");
    let has_cargo_fuzz = Command::new("cargo")
        .args(["+nightly", "fuzz", "--version"])
        .current_dir(&fuzz_dir)
        .output()
        .is_ok_and(|output| output.status.success());
    if !has_cargo_fuzz {
        bail!("cargo-fuzz on the nightly toolchain is needed: run `cargo install --locked cargo-fuzz`");
    }
    let mut outcomes = Vec::new();
    for target in TARGETS.into_iter().filter(|target| only.is_empty() || only.iter().any(|name| name == target)) {
        let corpus = format!("corpus/{target}");
        std::fs::create_dir_all(fuzz_dir.join(&corpus)).with_context(|| format!("cannot create fuzz/{corpus}"))?;
        let seeds = format!("seeds/{target}");
        let max_time = format!("-max_total_time={seconds}");
        let args = ["+nightly", "fuzz", "run", target, &corpus, &seeds, "--", &max_time, "-print_final_stats=1"];
        eprintln!("xtask: (in fuzz/) cargo {}", args.join(" "));
        let output = Command::new("cargo")
            .args(args)
            .current_dir(&fuzz_dir)
            .stdout(Stdio::inherit())
            .output()
            .with_context(|| format!("cannot run cargo fuzz run {target}"))?;
        let log = String::from_utf8_lossy(&output.stderr);
        outcomes.push(Outcome { target, executions: executions(&log), crashed: !output.status.success() });
        if !output.status.success() {
            // The end of the log holds the crash and the artifact's path.
            let tail: Vec<&str> = log.lines().rev().take(40).collect();
            eprintln!("{}", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
    }
    eprintln!("\n{:<18} {:>14}  findings", "target", "executions");
    for outcome in &outcomes {
        let findings = if outcome.crashed { "a crash: see fuzz/artifacts/" } else { "none" };
        eprintln!("{:<18} {:>14}  {findings}", outcome.target, outcome.executions);
    }
    if outcomes.iter().any(|outcome| outcome.crashed) {
        bail!("a fuzz target crashed");
    }
    Ok(())
}

/// The executions libFuzzer reports in its final stats (`stat::number_of_executed_units: N`).
fn executions(log: &str) -> u64 {
    log.lines()
        .rev()
        .filter_map(|line| line.strip_prefix("stat::number_of_executed_units:"))
        .find_map(|count| count.trim().parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn executions_come_from_the_final_stats() {
        let log =
            "#1024\tpulse  cov: 10\nstat::number_of_executed_units: 123456\nstat::average_exec_per_sec:     2057\n";
        assert_eq!(super::executions(log), 123_456);
        assert_eq!(super::executions("==1== ERROR: libFuzzer: deadly signal\n"), 0);
    }
}
