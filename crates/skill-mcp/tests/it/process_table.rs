//! Whether a process is gone, read from `/proc`.
//!
//! A process is gone when `/proc/<pid>` no longer exists, or when it is a zombie that
//! another process must reap: it has exited, and only its entry is left. A zombie whose
//! parent is this test process is *not* gone, since it means we never reaped our child.
//! A process that was killed but has not died yet shows SIGKILL among its pending signals.

use std::time::{Duration, Instant};

/// How long a process may take to disappear after it was told to end.
pub(crate) const EXIT_BOUND: Duration = Duration::from_secs(2);

/// The state letter and parent pid of `pid`, or `None` once it has no `/proc` entry.
fn state_and_parent(pid: i32) -> Option<(char, i32)> {
    test_peers::proc_stat(pid).map(|stat| (stat.state, stat.parent))
}

/// Whether `pid` is gone (see the module doc).
pub(crate) fn is_gone(pid: i32) -> bool {
    let ours = i32::try_from(std::process::id()).expect("a pid fits in i32");
    match state_and_parent(pid) {
        None => true,
        Some((state, parent)) => state == 'Z' && parent != ours,
    }
}

/// Whether `pid` is running (present and not a zombie).
pub(crate) fn is_running(pid: i32) -> bool {
    state_and_parent(pid).is_some_and(|(state, _)| state != 'Z')
}

/// Whether `pid` is present as a child of this test process, running or unreaped.
pub(crate) fn is_present_as_ours(pid: i32) -> bool {
    let ours = i32::try_from(std::process::id()).expect("a pid fits in i32");
    state_and_parent(pid).is_some_and(|(_, parent)| parent == ours)
}

/// Whether `pid` has SIGKILL pending, for the process or one of its threads: it was
/// killed and is on its way out.
pub(crate) fn has_sigkill_pending(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return false };
    let sigkill_bit = 1u64 << (9 - 1);
    status
        .lines()
        .filter_map(|line| line.strip_prefix("SigPnd:").or_else(|| line.strip_prefix("ShdPnd:")))
        .filter_map(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .any(|mask| mask & sigkill_bit != 0)
}

/// Polls until every process of `pids` is gone, for at most [`EXIT_BOUND`]; panics
/// naming `what` and the survivors otherwise.
pub(crate) async fn assert_all_gone(pids: &[i32], what: &str) {
    let started = Instant::now();
    loop {
        let survivors: Vec<(i32, Option<(char, i32)>)> =
            pids.iter().filter(|pid| !is_gone(**pid)).map(|pid| (*pid, state_and_parent(*pid))).collect();
        if survivors.is_empty() {
            return;
        }
        assert!(
            started.elapsed() < EXIT_BOUND,
            "{what}: still present after {EXIT_BOUND:?} (pid, (state, parent)): {survivors:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
