//! Confining a server's process as it is spawned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::profile::{self, Server};
use super::{Effective, Network, OPEN_FILES};
use crate::Error;

/// What a confined server holds while it runs: its cgroup and its temporary folder,
/// removed when it is dropped (once the server is gone).
#[derive(Debug, Default)]
pub(crate) struct Confinement {
    _confined: Option<child_sandbox::Confined>,
    tmp: Option<PathBuf>,
}

impl Drop for Confinement {
    fn drop(&mut self) {
        if let Some(tmp) = &self.tmp {
            let _ = std::fs::remove_dir_all(tmp);
        }
    }
}

/// Has `process` (the server `server` runs as `command` with `args`, `env` and `cwd`)
/// start confined by `sandbox`, and logs what of it cannot be applied; with
/// `required`, that is an error instead. `sandbox: off` is logged at every start.
pub(crate) fn confine(
    server: &str,
    process: &mut tokio::process::Command,
    launch: (&str, &[String], &BTreeMap<String, String>, Option<&Path>),
    sandbox: &Effective,
) -> Result<Confinement, Error> {
    if !sandbox.enabled {
        tracing::warn!(server, "sandbox: off: the server runs with all of the user's rights");
        return Ok(Confinement::default());
    }
    let (command, args, env, cwd) = launch;
    let own_cwd;
    let (cwd, cwd_configured) = match cwd {
        Some(cwd) => (cwd, true),
        None => {
            own_cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
            (own_cwd.as_path(), false)
        }
    };
    let tmp = temporary_folder(env)
        .map_err(|error| Error::Sandbox { reason: format!("cannot make the server's temporary folder: {error}") })?;
    let mut confinement = Confinement { _confined: None, tmp: Some(tmp.clone()) };
    process.env("TMPDIR", &tmp);
    // The variables set for this server, not those every server inherits, may name its
    // data (`OMNIAGENT_HOME`, a database).
    let named: Vec<String> = env
        .iter()
        .filter(|(name, _)| !crate::environment::INHERITED_VARS.contains(&name.as_str()))
        .map(|(_, value)| value.clone())
        .collect();
    let launched = Server { command, args, env, named: &named, cwd, cwd_configured };
    let (read, write) = profile::paths(&launched, sandbox, &tmp);
    let network = match &sandbox.network {
        Network::All => child_sandbox::Network::All,
        Network::None => child_sandbox::Network::None,
        Network::Only(allowed) => {
            // Without the egress proxy a list allows nothing: fail closed, and say so.
            tracing::warn!(
                server,
                "sandbox: network {}: hosts are not let through yet (no egress proxy); the server has no network",
                allowed.join(" ")
            );
            child_sandbox::Network::None
        }
    };
    let policy = child_sandbox::Policy {
        read,
        write,
        network,
        memory: Some(sandbox.memory),
        processes: Some(sandbox.processes),
        open_files: Some(OPEN_FILES),
    };
    let prepared =
        child_sandbox::Sandbox::prepare(&policy).map_err(|error| Error::Sandbox { reason: error.to_string() })?;
    let missing: Vec<String> = prepared.missing().iter().map(ToString::to_string).collect();
    if !missing.is_empty() {
        if sandbox.required {
            return Err(Error::Sandbox { reason: format!("{} (sandbox.required is set)", missing.join("; ")) });
        }
        for part in &missing {
            tracing::warn!(server, "sandbox: {part}; the server starts without it");
        }
    }
    confinement._confined = Some(prepared.install(process.as_std_mut()));
    Ok(confinement)
}

/// Why a server that exited during start-up did, for a reason a user can act on: `reason`,
/// and for a sandboxed server that it ran sandboxed and the setting most likely to need a
/// change, as its `stderr` suggests. The reason reaches a gateway's clients, so it never
/// quotes `stderr` (the log does).
pub(crate) fn explained(reason: String, sandbox: &Effective, stderr: &str) -> String {
    if !sandbox.enabled {
        return reason;
    }
    let said = |words: &[&str]| words.iter().any(|word| stderr.contains(word));
    let denied_path = said(&["EACCES", "Permission denied", "PermissionError", "EPERM", "Operation not permitted"]);
    let denied_network = sandbox.network != Network::All
        && said(&["ECONNREFUSED", "ENETUNREACH", "EAI_AGAIN", "getaddrinfo", "Network is unreachable", "socket"]);
    let setting = if denied_network {
        "its network is cut: allow what it reaches with sandbox.network"
    } else if denied_path {
        "it was denied a path: add it to sandbox.read or sandbox.write (its stderr in the log names it)"
    } else {
        "a path outside sandbox.read and sandbox.write, or sandbox.network, may be why (sandbox: off tells)"
    };
    format!("{reason}; it ran sandboxed, and {setting}")
}

/// A new folder, only the user's, for the server's temporary files: under its `TMPDIR`,
/// else the system's.
fn temporary_folder(env: &BTreeMap<String, String>) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = env.get("TMPDIR").filter(|dir| !dir.is_empty()).map_or_else(std::env::temp_dir, PathBuf::from);
    let name = format!("omniagent-sandbox-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let folder = base.join(name);
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&folder)?;
    Ok(folder)
}
