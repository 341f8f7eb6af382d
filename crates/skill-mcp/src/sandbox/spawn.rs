//! Confining a server's process as it is spawned.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::profile::{self, Server};
use super::proxy::Proxy;
use super::{Effective, Network, OPEN_FILES};
use crate::Error;

/// What a confined server holds while it runs: its cgroup and its temporary folder,
/// removed when it is dropped (once the server is gone).
#[derive(Debug, Default)]
pub(crate) struct Confinement {
    _confined: Option<child_sandbox::Confined>,
    tmp: Option<PathBuf>,
    /// The egress proxy of a `network` list.
    _proxy: Option<Proxy>,
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
    let mut confinement = Confinement { _confined: None, tmp: Some(tmp.clone()), _proxy: None };
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
            // The proxy is its only way out: names and ports are checked there.
            let proxy = Proxy::start(server, allowed)
                .map_err(|error| Error::Sandbox { reason: format!("cannot start the egress proxy: {error}") })?;
            for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"] {
                process.env(name, proxy.url());
            }
            process.env_remove("NO_PROXY").env_remove("no_proxy");
            let port = proxy.port();
            confinement._proxy = Some(proxy);
            child_sandbox::Network::Proxy(port)
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

/// The temporary folders' names begin with this and the pid of the omniagent that made them.
const TMP_PREFIX: &str = "omniagent-sandbox-";

/// Removes the temporary folders that omniagents which are gone left behind (one killed
/// before it could close its servers).
fn sweep(base: &Path) {
    // Whether a process is gone is read from /proc; without it nothing is removed.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let owner =
            name.to_str().and_then(|name| name.strip_prefix(TMP_PREFIX)).and_then(|rest| rest.split('-').next());
        if let Some(owner) = owner.filter(|owner| !owner.is_empty() && owner.bytes().all(|byte| byte.is_ascii_digit()))
            && !Path::new("/proc").join(owner).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A new folder, only the user's, for the server's temporary files: under its `TMPDIR`,
/// else the system's.
fn temporary_folder(env: &BTreeMap<String, String>) -> std::io::Result<PathBuf> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let base = env.get("TMPDIR").filter(|dir| !dir.is_empty()).map_or_else(std::env::temp_dir, PathBuf::from);
    sweep(&base);
    let name = format!("{TMP_PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let folder = base.join(name);
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&folder)?;
    Ok(folder)
}
