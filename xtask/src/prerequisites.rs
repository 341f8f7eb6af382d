//! What `cargo xtask test` needs beyond the Rust toolchain, Node and Python, made present
//! before anything long runs, so that a fresh machine's run does not fail after the
//! build: `cargo-deny` (installed with `cargo install --locked`), and `redis-server`,
//! `nginx`, `chromium` and `prometheus`, which the Redis store's tests, the two-replicas
//! test, the console's browser test and the telemetry test start from the PATH (installed with `apt-get` when xtask runs as root; otherwise xtask stops at once and
//! names the commands to run). `cargo xtask bench` needs the same two and `socat`, the
//! byte relay `gateway_host_pace` measures the gateway against.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

/// A program started from the PATH, with the Debian package that has it.
type Program = (&'static str, &'static str);

const REDIS: Program = ("redis-server", "redis-server");
/// `nginx-light`: the smallest build with the proxy and upstream modules the replicas'
/// `nginx.conf` uses.
const NGINX: Program = ("nginx", "nginx-light");
const SOCAT: Program = ("socat", "socat");
/// Debian's Chromium, the real browser of the console's tests (driven by playwright-core).
const CHROMIUM: Program = ("chromium", "chromium");
/// Debian's Prometheus, which scrapes the gateway's `/metrics` in the telemetry test.
const PROMETHEUS: Program = ("prometheus", "prometheus");

/// The programs the tests start from the PATH.
const TEST_PROGRAMS: [Program; 4] = [REDIS, NGINX, CHROMIUM, PROMETHEUS];

/// The programs the benchmarks start from the PATH.
pub(crate) const BENCH_PROGRAMS: [Program; 3] = [REDIS, NGINX, SOCAT];

/// Makes sure every prerequisite of the tests is there: the system's packages first (a
/// missing one that cannot be installed stops the run in a second), then cargo-deny (a
/// few minutes' build the first time).
pub(crate) fn ensure(root: &Path) -> anyhow::Result<()> {
    ensure_programs("test", &TEST_PROGRAMS)?;
    if !crate::has_cargo_subcommand(root, "deny") {
        let args = ["install", "--locked", "cargo-deny"];
        eprintln!("xtask: cargo-deny is not installed: cargo {}", args.join(" "));
        let status = Command::new(crate::cargo_program())
            .args(args)
            .current_dir(root)
            .status()
            .context("cannot run cargo install")?;
        if !status.success() {
            bail!("cargo install --locked cargo-deny failed ({status})");
        }
    }
    Ok(())
}

/// Makes sure each of `programs`, which `cargo xtask {task}` needs, is on the PATH,
/// installing the Debian packages of those that are not with `apt-get` (its package lists
/// updated once first), or stops, naming the commands to run, when xtask is not root or
/// there is no `apt-get`.
pub(crate) fn ensure_programs(task: &str, programs: &[Program]) -> anyhow::Result<()> {
    let missing: Vec<&Program> = programs.iter().filter(|(program, _)| !on_path(program)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let packages: Vec<&str> = missing.iter().map(|(_, package)| *package).collect();
    let names = packages.join(" ");
    if !on_path("apt-get") {
        let programs: Vec<&str> = missing.iter().map(|(program, _)| *program).collect();
        bail!(
            "`cargo xtask {task}` needs {} on the PATH, and there is no apt-get here to install them: \
             install them with the system's package manager (Debian's packages: {names}), then run \
             `cargo xtask {task}` again",
            programs.join(", ")
        );
    }
    if !is_root() {
        bail!(
            "`cargo xtask {task}` needs the Debian packages {names}, which only root can install: run \
             `sudo apt-get update && sudo apt-get install -y {names}`, then `cargo xtask {task}` again"
        );
    }
    eprintln!("xtask: installing {names} with apt-get");
    apt_get(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq"];
    install.extend_from_slice(&packages);
    apt_get(&install)
}

fn apt_get(args: &[&str]) -> anyhow::Result<()> {
    let status = Command::new("apt-get")
        .args(args)
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .context("cannot run apt-get")?;
    if !status.success() {
        bail!("apt-get {} failed ({status})", args.join(" "));
    }
    Ok(())
}

/// Whether `program` is a file in a folder of the PATH, where the tests look for it.
fn on_path(program: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        let file = format!("{program}{}", std::env::consts::EXE_SUFFIX);
        std::env::split_paths(&path).any(|dir| dir.join(&file).is_file())
    })
}

/// Whether xtask runs as root (`id -u` says 0); false where there is no `id`.
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|output| output.status.success() && output.stdout.trim_ascii() == b"0")
}
