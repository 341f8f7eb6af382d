//! The sandbox on Linux: prepared in the parent, applied in the child.

use std::os::unix::process::CommandExt;
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, Scope,
};
use nix::sys::resource::{Resource, getrlimit, setrlimit};

use crate::{Error, Missing, Network, Part, Policy};

mod cgroup;
mod proc_view;
mod seccomp;

use self::cgroup::Cgroup;
use self::proc_view::ProcView;

/// A sandbox prepared for one child: install it on the command that starts it.
pub struct Sandbox {
    ruleset: Option<RulesetCreated>,
    filters: Vec<seccompiler::BpfProgram>,
    limits: Vec<(Resource, u64)>,
    new_network: bool,
    cgroup: Option<Cgroup>,
    proc_view: Option<ProcView>,
    missing: Vec<Missing>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Sandbox")
            .field("landlock", &self.ruleset.is_some())
            .field("filters", &self.filters.len())
            .field("limits", &self.limits)
            .field("new_network", &self.new_network)
            .field("cgroup", &self.cgroup)
            .field("proc_view", &self.proc_view.is_some())
            .field("missing", &self.missing)
            .finish()
    }
}

/// What stays of a sandbox once its child runs: the child's cgroup, removed when this is
/// dropped (after the child and its descendants are gone, else it stays until a later
/// sandbox finds it empty).
#[derive(Debug)]
pub struct Confined {
    _cgroup: Option<Cgroup>,
}

impl Sandbox {
    /// Prepares the confinement `policy` describes, leaving out (see
    /// [`missing`](Self::missing)) what this kernel or these rights do not allow.
    pub fn prepare(policy: &Policy) -> Result<Self, Error> {
        let mut missing = Vec::new();
        let abi = landlock_abi();
        // Where Landlock is missing, hidepid hides nothing from a process of the same user.
        let proc_view = match ProcView::prepare() {
            Ok(view) if abi != ABI::Unsupported => Some(view),
            Ok(_) => {
                let reason = "without Landlock a procfs of its own hides none of its user's processes".to_owned();
                missing.push(Missing { part: Part::ProcessView, reason });
                None
            }
            Err(reason) => {
                missing.push(Missing { part: Part::ProcessView, reason });
                None
            }
        };
        let ruleset = if abi == ABI::Unsupported {
            missing.push(Missing { part: Part::Filesystem, reason: "Landlock is not enabled in this kernel".into() });
            None
        } else {
            if abi < ABI::V6 {
                missing.push(Missing {
                    part: Part::Scopes,
                    reason: format!("Landlock ABI {} has no scopes (6 does)", abi as i32),
                });
            }
            let proc_root = proc_view.as_ref().map(ProcView::root);
            Some(ruleset(policy, abi, proc_root).map_err(|error| Error::Landlock(error.to_string()))?)
        };
        let new_network = policy.network == Network::None && network_namespaces();
        if policy.network == Network::None && !new_network {
            missing.push(Missing {
                part: Part::Network,
                reason: "no network namespace could be made (needs root); only IP sockets are denied".into(),
            });
        }
        if let Network::Proxy(_) = policy.network
            && abi < ABI::V4
        {
            missing.push(Missing {
                part: Part::Network,
                reason: "Landlock before ABI 4 has no TCP rules: TCP is not limited to the proxy".into(),
            });
        }
        let filters = seccomp::filters(policy.network).map_err(|error| Error::Seccomp(error.to_string()))?;
        let mut limits = Vec::new();
        if let Some(memory) = policy.memory {
            limits.push((Resource::RLIMIT_DATA, memory));
        }
        if let Some(files) = policy.open_files {
            let hard = getrlimit(Resource::RLIMIT_NOFILE).map_or(files, |(_, hard)| hard);
            limits.push((Resource::RLIMIT_NOFILE, files.min(hard)));
        }
        let cgroup = match policy.processes {
            Some(processes) => match Cgroup::create(processes) {
                Ok(cgroup) => Some(cgroup),
                Err(reason) => {
                    match user_process_limit(processes) {
                        Some(limit) => limits.push((Resource::RLIMIT_NPROC, limit)),
                        None => missing.push(Missing { part: Part::Processes, reason }),
                    }
                    None
                }
            },
            None => None,
        };
        Ok(Self { ruleset, filters, limits, new_network, cgroup, proc_view, missing })
    }

    /// The parts left out, each with why.
    pub fn missing(&self) -> &[Missing] {
        &self.missing
    }

    /// Has `command` confine its child between fork and exec. Its spawn fails with the
    /// system's error if a part prepared cannot be applied after all.
    pub fn install(self, command: &mut std::process::Command) -> Confined {
        let Sandbox { ruleset, filters, limits, new_network, cgroup, proc_view, missing: _ } = self;
        // Opened (close-on-exec) in the parent: the child only writes to it.
        let procs = cgroup.as_ref().and_then(Cgroup::procs);
        let mut ruleset = ruleset;
        let confine = move || -> std::io::Result<()> {
            // Only system calls on what was prepared from here on: no allocation, no lock.
            if let Some(procs) = &procs {
                // "0" moves the writing process, the child, into the cgroup.
                nix::unistd::write(procs, b"0")?;
            }
            for (resource, limit) in &limits {
                setrlimit(*resource, *limit, *limit)?;
            }
            let mut namespaces = nix::sched::CloneFlags::empty();
            namespaces.set(nix::sched::CloneFlags::CLONE_NEWNET, new_network);
            namespaces.set(nix::sched::CloneFlags::CLONE_NEWNS, proc_view.is_some());
            if !namespaces.is_empty() {
                nix::sched::unshare(namespaces)?;
            }
            if let Some(view) = &proc_view {
                view.enter()?;
            }
            drop_capabilities();
            if let Some(ruleset) = ruleset.take() {
                // Also sets no_new_privs.
                ruleset.restrict_self().map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
            }
            nix::sys::prctl::set_no_new_privs()?;
            for filter in &filters {
                seccompiler::apply_filter(filter).map_err(|_| std::io::Error::from_raw_os_error(libc::EPERM))?;
            }
            Ok(())
        };
        // SAFETY: `confine` only makes system calls (write, setrlimit, unshare, mount,
        // move_mount, landlock_restrict_self, prctl, seccomp) on values prepared before the fork; it
        // neither allocates nor takes a lock, so it is async-signal-safe as `pre_exec`
        // requires.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(confine);
        }
        Confined { _cgroup: cgroup }
    }
}

/// Empties the capability bounding set, so that the child (even root's) holds no
/// capability after exec: root's would otherwise let it read other processes' memory and
/// environment past Landlock (`CAP_PERFMON`, `CAP_SYS_PTRACE`) and more. Without
/// `CAP_SETPCAP` (an ordinary user, who has no capability to lose) each drop fails, which
/// changes nothing.
fn drop_capabilities() {
    for capability in 0..64 {
        // SAFETY: PR_CAPBSET_DROP takes a capability number and touches no memory.
        #[allow(unsafe_code)]
        let dropped = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, capability, 0, 0, 0) };
        if dropped != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
            // Past the kernel's last capability.
            break;
        }
    }
}

/// The ruleset of `policy` at `abi`: every filesystem access handled, those of the
/// `read` and `write` paths allowed, and reading the child's own procfs (`proc_root`);
/// with a network mode other than `all`, TCP handled too (only the proxy's port
/// allowed); the scopes of ABI 6.
fn ruleset(
    policy: &Policy,
    abi: ABI,
    proc_root: Option<std::os::fd::BorrowedFd<'_>>,
) -> Result<RulesetCreated, landlock::RulesetError> {
    let mut ruleset =
        Ruleset::default().set_compatibility(CompatLevel::BestEffort).handle_access(AccessFs::from_all(abi))?;
    if policy.network != Network::All && abi >= ABI::V4 {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi))?;
    }
    if abi >= ABI::V6 {
        ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    }
    let mut created = ruleset.create()?;
    let read = AccessFs::from_read(abi);
    let write = AccessFs::from_all(abi);
    for (paths, access) in [(&policy.read, read), (&policy.write, write)] {
        for path in paths {
            // A path that does not exist (yet) allows nothing.
            let Ok(fd) = PathFd::new(path) else { continue };
            created = created.add_rule(PathBeneath::new(fd, access))?;
        }
    }
    if let Some(root) = proc_root {
        created = created.add_rule(PathBeneath::new(root, read))?;
    }
    if let Network::Proxy(port) = policy.network
        && abi >= ABI::V4
    {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp))?;
    }
    Ok(created)
}

/// Without a pids cgroup, the process limit of an ordinary user's child: `RLIMIT_NPROC`,
/// which counts every task (process and thread) of the user, so set to those the user
/// runs now plus `processes`. `None` for root, whom the kernel exempts from it.
fn user_process_limit(processes: u64) -> Option<u64> {
    let (user, _) = real_user_and_threads(&std::fs::read_to_string("/proc/self/status").ok()?)?;
    if user == 0 {
        return None;
    }
    let (_, hard) = getrlimit(Resource::RLIMIT_NPROC).ok()?;
    Some(user_tasks(user).saturating_add(processes).min(hard))
}

/// How many tasks run with the real user id `user`, from `/proc`.
fn user_tasks(user: u32) -> u64 {
    let Ok(entries) = std::fs::read_dir("/proc") else { return 0 };
    entries
        .flatten()
        .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.bytes().all(|byte| byte.is_ascii_digit())))
        .filter_map(|entry| real_user_and_threads(&std::fs::read_to_string(entry.path().join("status")).ok()?))
        .filter_map(|(real, threads)| (real == user).then_some(threads))
        .sum()
}

/// The real user id and the thread count a `/proc/PID/status` gives.
fn real_user_and_threads(status: &str) -> Option<(u32, u64)> {
    let field = |name: &str| status.lines().find_map(|line| line.strip_prefix(name));
    let real = field("Uid:")?.split_whitespace().next()?.parse().ok()?;
    let threads = field("Threads:")?.trim().parse().ok()?;
    Some((real, threads))
}

/// The Landlock ABI of the running kernel, as far as the `landlock` crate knows ABIs.
fn landlock_abi() -> ABI {
    static ABI_FOUND: OnceLock<i32> = OnceLock::new();
    let version = *ABI_FOUND.get_or_init(|| {
        // SAFETY: with LANDLOCK_CREATE_RULESET_VERSION and no attributes the call only
        // returns the ABI version (or an error); it reads and writes no memory.
        #[allow(unsafe_code)]
        let version = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, 1u32) };
        i32::try_from(version).unwrap_or(0).max(0)
    });
    [ABI::V7, ABI::V6, ABI::V5, ABI::V4, ABI::V3, ABI::V2, ABI::V1]
        .into_iter()
        .find(|abi| version >= *abi as i32)
        .unwrap_or(ABI::Unsupported)
}

/// Whether this process may make network namespaces: tried once, on a thread of its own
/// (a thread's `unshare` moves only that thread).
fn network_namespaces() -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    *ALLOWED.get_or_init(|| {
        std::thread::spawn(|| nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNET).is_ok()).join().unwrap_or(false)
    })
}
