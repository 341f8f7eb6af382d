//! What Linux's `/proc/PID/stat` says of a process: for tests that check processes end
//! (and who must reap them), and benchmarks that measure a process's CPU time. And what
//! its `/proc/PID/status` says of its confinement ([`is_confined`]).

use std::time::Duration;

/// Clock ticks a second in `/proc` (`USER_HZ`): 100 on Linux, whatever the kernel's own
/// tick rate.
const TICKS_PER_SECOND: u64 = 100;

/// The fields of a process's `/proc/PID/stat` that tests and benchmarks read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// Its state letter: `R` running, `S` sleeping, `Z` a zombie (exited, not reaped), …
    pub state: char,
    /// Its parent's pid.
    pub parent: i32,
    /// The CPU time it has used so far, user and system, in ticks of 10 ms.
    pub cpu: Duration,
}

/// The stat of process `pid`, or `None` once it has no `/proc` entry (it was reaped).
pub fn proc_stat(pid: impl std::fmt::Display) -> Option<ProcStat> {
    parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Whether process `pid` runs confined as the sandbox of stdio servers leaves each
/// process it confines: with `no_new_privs`, and seccomp filters beyond those this
/// process runs under (a container's own), as its `/proc/PID/status` says. `false` once
/// it is gone.
pub fn is_confined(pid: impl std::fmt::Display) -> bool {
    let field = |pid: &dyn std::fmt::Display, name: &str| -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        status.lines().find_map(|line| line.strip_prefix(name)?.strip_prefix(':')?.trim().parse().ok())
    };
    let filters = |pid: &dyn std::fmt::Display| field(pid, "Seccomp_filters");
    field(&pid, "NoNewPrivs") == Some(1) && filters(&pid) > filters(&"self")
}

/// `pid (comm) state ppid …`, where comm may hold spaces and parentheses: the fields
/// are those after its last `)`.
fn parse(stat: &str) -> Option<ProcStat> {
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    let ticks = |index: usize| fields.get(index)?.parse::<u64>().ok();
    // state, ppid, pgrp, session, tty_nr, tpgid, flags, minflt, cminflt, majflt,
    // cmajflt, utime, stime, …
    let cpu = ticks(11)? + ticks(12)?;
    Some(ProcStat {
        state: fields.first()?.chars().next()?,
        parent: fields.get(1)?.parse().ok()?,
        cpu: Duration::from_millis(cpu * 1000 / TICKS_PER_SECOND),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_with_spaces_and_parentheses_is_skipped() {
        let stat = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 120 0 0 0 31 9 0 0 20 0 1 0 99 1 1";
        let read = parse(stat).unwrap();
        assert_eq!(read, ProcStat { state: 'S', parent: 17, cpu: Duration::from_millis(400) });
        assert_eq!(parse("4242 (truncated) S 17"), None);
    }

    #[test]
    fn this_process_runs_under_its_parent() {
        let ours = proc_stat(std::process::id()).expect("this process has a /proc entry");
        assert_ne!(ours.state, 'Z', "a process reading its own stat has not exited");
        assert_eq!(u32::try_from(ours.parent).ok(), Some(std::os::unix::process::parent_id()));
        assert!(!is_confined(std::process::id()), "a process is not confined beyond itself");
    }
}
