//! A pids cgroup per child: the one process limit that holds for root (who is above
//! `RLIMIT_NPROC`) and that counts a child's tasks, not all of its user's.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The cgroup folders' names begin with this and the creating process's pid.
const PREFIX: &str = "child-sandbox-";

/// The pids hierarchies tried: cgroup v1's controller, then the v2 root when it delegates
/// `pids`.
const V1: &str = "/sys/fs/cgroup/pids";
const V2: &str = "/sys/fs/cgroup";

/// A pids cgroup made for one child, removed on drop (when it is empty by then).
#[derive(Debug)]
pub(super) struct Cgroup {
    path: PathBuf,
}

impl Cgroup {
    /// Makes a cgroup that lets at most `processes` tasks run; the reason why not when
    /// no pids hierarchy is writable.
    pub(super) fn create(processes: u64) -> Result<Self, String> {
        let root =
            hierarchy().ok_or_else(|| "no writable pids cgroup (needs root or a delegated cgroup)".to_owned())?;
        sweep(root);
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!("{PREFIX}{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
        let path = root.join(name);
        std::fs::create_dir(&path).map_err(|error| format!("cannot make {}: {error}", path.display()))?;
        let cgroup = Self { path };
        std::fs::write(cgroup.path.join("pids.max"), processes.to_string())
            .map_err(|error| format!("cannot set pids.max: {error}"))?;
        Ok(cgroup)
    }

    /// Its `cgroup.procs`, opened for the child to write itself into; `None` if it
    /// cannot be opened.
    pub(super) fn procs(&self) -> Option<File> {
        std::fs::OpenOptions::new().write(true).open(self.path.join("cgroup.procs")).ok()
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Fails while a task is left in it; a later sweep removes it.
        let _ = std::fs::remove_dir(&self.path);
    }
}

/// The pids hierarchy this process may make cgroups in, found once.
fn hierarchy() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<&'static Path>> = std::sync::OnceLock::new();
    *FOUND.get_or_init(|| {
        let writable = |path: &Path| nix::unistd::access(path, nix::unistd::AccessFlags::W_OK).is_ok();
        let v1 = Path::new(V1);
        if v1.join("pids.max").exists() || v1.join("cgroup.procs").exists() {
            return writable(v1).then_some(v1);
        }
        let v2 = Path::new(V2);
        let delegated = std::fs::read_to_string(v2.join("cgroup.subtree_control"))
            .is_ok_and(|controllers| controllers.split_whitespace().any(|controller| controller == "pids"));
        (delegated && writable(v2)).then_some(v2)
    })
}

/// Removes the cgroups of processes that are gone (a crash left them); one still in use
/// cannot be removed.
fn sweep(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) =
            name.to_str().and_then(|name| name.strip_prefix(PREFIX)).and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        if !Path::new("/proc").join(owner).exists() {
            let _ = std::fs::remove_dir(entry.path());
        }
    }
}
