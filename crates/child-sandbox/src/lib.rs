//! Confines a child process between fork and exec, with the kernel's own tools and no
//! container runtime: Landlock filesystem (and TCP) rules, a seccomp denylist,
//! `no_new_privs`, a network namespace, resource limits, a pids cgroup, and a `/proc` of
//! its own that lists only its own processes.
//!
//! Everything that allocates or opens files (the Landlock ruleset and its rules, the BPF
//! program, the cgroup) is prepared by [`Sandbox::prepare`] in the parent; what runs in the
//! child after `fork` ([`Sandbox::install`]'s `pre_exec`) only makes system calls on what
//! was prepared, which is async-signal-safe. The parent is never confined.
//!
//! A part the kernel or the user's rights do not allow (no Landlock, no right to create a
//! network namespace or a cgroup) is left out, and [`Sandbox::missing`] says which and
//! why, so that the caller can refuse or log it. Linux only: elsewhere every part is
//! missing.

use std::fmt;
use std::path::PathBuf;

#[cfg(target_os = "linux")]
mod linux;

/// What a confined child may do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// Paths it may read and execute (and list, for folders), each with what is below it.
    pub read: Vec<PathBuf>,
    /// Paths it may also write, create in and remove from.
    pub write: Vec<PathBuf>,
    /// Where it may connect.
    pub network: Network,
    /// Its data (heap) limit in bytes, per process (`RLIMIT_DATA`).
    pub memory: Option<u64>,
    /// How many tasks (processes and threads) it and its descendants may run at once: in
    /// a pids cgroup of its own; where none can be made (an ordinary user without a
    /// delegated cgroup), through `RLIMIT_NPROC`, set to the tasks its user runs when it
    /// is prepared plus this many (root, whom that limit does not hold, needs the cgroup).
    pub processes: Option<u64>,
    /// How many files each of its processes may hold open.
    pub open_files: Option<u64>,
}

/// Where a confined child may connect.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Network {
    /// Anywhere.
    #[default]
    All,
    /// Nowhere: no IP socket, and a network namespace of its own where one can be made.
    None,
    /// Only TCP to this port (an egress proxy on the loopback interface): no UDP or raw
    /// socket, and with Landlock's TCP rules (ABI 4) no other port.
    Proxy(u16),
}

/// A part of the confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Part {
    /// Landlock's filesystem rules.
    Filesystem,
    /// Landlock's scopes: no signal to, and no ptrace or `/proc` secrets of, processes
    /// outside the sandbox; no abstract unix socket outside it.
    Scopes,
    /// The network mode.
    Network,
    /// The seccomp denylist.
    Seccomp,
    /// The memory limit.
    Memory,
    /// The process limit.
    Processes,
    /// A `/proc` that lists its own processes only.
    ProcessView,
}

impl fmt::Display for Part {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Part::Filesystem => "filesystem rules",
            Part::Scopes => "process scopes",
            Part::Network => "network",
            Part::Seccomp => "seccomp filter",
            Part::Memory => "memory limit",
            Part::Processes => "process limit",
            Part::ProcessView => "process view",
        })
    }
}

/// A part left out, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The part.
    pub part: Part,
    /// Why it could not be applied.
    pub reason: String,
}

impl fmt::Display for Missing {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{}: {}", self.part, self.reason)
    }
}

/// Why a sandbox could not be prepared.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Landlock refused the ruleset or a rule.
    #[error("landlock: {0}")]
    Landlock(String),
    /// seccompiler refused the filter.
    #[error("seccomp: {0}")]
    Seccomp(String),
}

#[cfg(target_os = "linux")]
pub use linux::{Confined, Sandbox};

#[cfg(not(target_os = "linux"))]
mod elsewhere;
#[cfg(not(target_os = "linux"))]
pub use elsewhere::{Confined, Sandbox};
