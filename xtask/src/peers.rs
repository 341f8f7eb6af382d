//! The real peers the integration tests run against, fetched once into a cache folder and
//! reused: today the skills of the `openclaw` npm package.
//!
//! The folder is `$OMNIAGENT_PEERS`, else `$XDG_CACHE_HOME/omniagent-peers`, else
//! `~/.cache/omniagent-peers`. `crates/skill-markdown/tests/openclaw.rs` looks in the same
//! place when `OMNIAGENT_OPENCLAW_DIR` is not set.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, bail};

/// The OpenClaw release whose skills the tests load; `tests/fixtures/openclaw-<version>.json`
/// holds what they state.
pub(crate) const OPENCLAW_VERSION: &str = "2026.9.6";

/// The folders of the package the tests read; the rest of its 12,000 files are not extracted.
const OPENCLAW_SKILL_DIRS: [&str; 2] = ["package/skills", "package/custodian-skills"];

/// The environment variable that tells the tests where the extracted package is.
pub(crate) const OPENCLAW_DIR_VAR: &str = "OMNIAGENT_OPENCLAW_DIR";

/// The peers cache folder, from the environment.
pub(crate) fn peers_dir() -> anyhow::Result<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("OMNIAGENT_PEERS") {
        return Ok(PathBuf::from(dir));
    }
    // The XDG spec says a relative value is to be ignored.
    if let Some(cache) = non_empty("XDG_CACHE_HOME").map(PathBuf::from).filter(|cache| cache.is_absolute()) {
        return Ok(cache.join("omniagent-peers"));
    }
    let home =
        non_empty("HOME").context("cannot find the peers folder: set OMNIAGENT_PEERS, XDG_CACHE_HOME or HOME")?;
    Ok(PathBuf::from(home).join(".cache").join("omniagent-peers"))
}

/// Makes sure `<peers>/openclaw-<version>/package/{skills,custodian-skills}` exist and
/// returns `<peers>/openclaw-<version>/package`.
///
/// The package is fetched with `npm pack` (the published tarball; no install script runs)
/// and only the skill folders are extracted. The work happens in a staging folder that is
/// renamed into place at the end, so an interrupted install is never taken for a done one.
pub(crate) fn ensure_openclaw(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = peers.join(format!("openclaw-{OPENCLAW_VERSION}"));
    let package = installed.join("package");
    if is_complete(&installed) {
        return Ok(package);
    }
    let started = Instant::now();
    eprintln!("xtask: fetching the skills of openclaw@{OPENCLAW_VERSION} into {}", installed.display());
    std::fs::create_dir_all(peers).with_context(|| format!("cannot create {}", peers.display()))?;
    let staging = peers.join(format!(".openclaw-{OPENCLAW_VERSION}.partial-{}", std::process::id()));
    remove_dir_if_present(&staging)?;
    if let Err(error) = fetch_openclaw_into(&staging) {
        // Best effort: the error that matters is the one returned.
        let _ = std::fs::remove_dir_all(&staging);
        return Err(error);
    }

    // What is there is incomplete (it failed the check above): it goes.
    remove_dir_if_present(&installed)?;
    if let Err(error) = std::fs::rename(&staging, &installed) {
        // Another run may have finished first; its copy is as good as ours.
        if !is_complete(&installed) {
            return Err(error).with_context(|| format!("cannot move {} to {}", staging.display(), installed.display()));
        }
        remove_dir_if_present(&staging)?;
    }
    eprintln!("xtask: openclaw@{OPENCLAW_VERSION} skills ready in {:.1?}", started.elapsed());
    Ok(package)
}

/// Fetches the package into `staging` (a new folder) and extracts its skill folders.
fn fetch_openclaw_into(staging: &Path) -> anyhow::Result<()> {
    std::fs::create_dir(staging).with_context(|| format!("cannot create {}", staging.display()))?;
    let tarball = npm_pack(&format!("openclaw@{OPENCLAW_VERSION}"), staging)?;
    run(Command::new("tar").arg("xzf").arg(&tarball).arg("-C").arg(staging).args(OPENCLAW_SKILL_DIRS), "tar")?;
    std::fs::remove_file(&tarball).with_context(|| format!("cannot remove {}", tarball.display()))?;
    if !is_complete(staging) {
        bail!("the openclaw@{OPENCLAW_VERSION} tarball has no {}", OPENCLAW_SKILL_DIRS.join(" or "));
    }
    Ok(())
}

fn is_complete(installed: &Path) -> bool {
    OPENCLAW_SKILL_DIRS.iter().all(|dir| installed.join(dir).is_dir())
}

/// Runs `npm pack <spec>` into `destination` and returns the tarball's path.
fn npm_pack(spec: &str, destination: &Path) -> anyhow::Result<PathBuf> {
    let npm = if cfg!(windows) { "npm.cmd" } else { "npm" };
    let mut command = Command::new(npm);
    command
        .args(["pack", spec, "--ignore-scripts", "--loglevel=warn", "--pack-destination"])
        .arg(destination)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit());
    let output = match command.output() {
        Ok(output) => output,
        Err(error) if error.kind() == ErrorKind::NotFound => bail!(
            "npm is not installed: the integration tests need it once to fetch {spec} into {} \
             (install Node.js and npm, or point OMNIAGENT_PEERS at a folder that already has it)",
            destination.parent().unwrap_or(destination).display()
        ),
        Err(error) => return Err(error).context("cannot run npm"),
    };
    if !output.status.success() {
        bail!("npm pack {spec} failed ({})", output.status);
    }
    // npm prints the tarball's file name as its last line.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let file_name = stdout.lines().map(str::trim).rfind(|line| line.ends_with(".tgz"));
    let tarball = file_name.map(|name| destination.join(name)).filter(|path| path.is_file());
    tarball.with_context(|| format!("npm pack {spec} printed no tarball name: {stdout:?}"))
}

fn run(command: &mut Command, what: &str) -> anyhow::Result<()> {
    let status = command.status().with_context(|| format!("cannot run {what}"))?;
    if !status.success() {
        bail!("{what} failed ({status})");
    }
    Ok(())
}

fn remove_dir_if_present(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(error) if error.kind() != ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}
