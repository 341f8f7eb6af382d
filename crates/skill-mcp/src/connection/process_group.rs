//! A stdio server's process group, and the rule that keeps signals to it from reaching
//! anyone else's.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// How soon a closing server is first looked at again to see whether it has exited: most
/// exit within a millisecond of their stdin's end. Each wait after is twice as long, up
/// to [`EXIT_POLL_SLOWEST`].
const EXIT_POLL_FIRST: Duration = Duration::from_millis(1);
const EXIT_POLL_SLOWEST: Duration = Duration::from_millis(10);

/// A stdio server: the leader of its own process group, which this guard alone reaps.
/// It kills the whole group (the server and anything it started: `npx` starts `node`,
/// which may start more) on [`end`](Self::end), [`kill`](Self::kill) and drop, even
/// without an async runtime.
///
/// # Why a signal to the group never reaches someone else's
///
/// A group is addressed by its leader's pid. The kernel hands out no pid that is still a
/// process's pid or a group's id, and an exited child keeps its pid, as a zombie, until
/// its parent reaps it. So while the leader is unreaped its group id names this group
/// only: the leader and whatever it started that stayed in the group, grandchildren that
/// outlived it included. Once the leader is reaped the id stays reserved only while some
/// member of the group lives; after the last one exits, an unrelated process may get the
/// pid and lead a group of that id, which a late `killpg` would hit. Whether the group
/// is empty cannot be asked and acted on in one step, so after the reap nothing is sent.
///
/// Hence the invariant: **the group is signalled only while its leader is unreaped.** The
/// guard owns the leader's [`tokio::process::Child`], the only handle that reaps it
/// (tokio reaps a child only through its handle, or once the handle was dropped), and
/// reaps it only after its last signal: [`leader_state`](Self::leader_state) learns of
/// an exit without reaping, and [`reap`](Self::reap) gives up the handle before it
/// waits, so that every later signal is refused. A crashed server thus stays a zombie
/// until its connection is closed (at once in the background, by the next call, by
/// `close` or on drop), which kills what is left of its group and only then reaps it.
#[derive(Debug)]
pub(super) struct ProcessGroupGuard {
    /// The leader, until it is reaped (or found reaped by someone else).
    leader: Option<tokio::process::Child>,
    /// The group's id: the leader's pid.
    pgid: Pid,
    /// The leader's sandbox (its cgroup and temporary folder), let go once it is reaped.
    confinement: Option<crate::sandbox::Confinement>,
}

/// The standard streams of a server, piped to us.
#[derive(Debug)]
pub(super) struct Pipes {
    pub(super) stdin: tokio::process::ChildStdin,
    pub(super) stdout: tokio::process::ChildStdout,
    pub(super) stderr: tokio::process::ChildStderr,
}

/// Where a group's leader is, as far as signalling its group goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeaderState {
    /// Running (or stopped): its pid, so the group's id, is reserved.
    Running,
    /// Exited but unreaped, a zombie: its pid is still reserved.
    Exited,
    /// Reaped: the group's id may belong to someone else by now.
    Reaped,
}

impl ProcessGroupGuard {
    /// Starts `command` as the leader of a new process group, with its standard streams
    /// piped to us.
    pub(super) fn spawn(command: &mut tokio::process::Command) -> std::io::Result<(Self, Pipes)> {
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let mut leader = command.spawn()?;
        let Some(pid) = leader.id().and_then(|pid| i32::try_from(pid).ok()) else {
            // No group id to guard: tokio kills the leader by its own pid, which it holds
            // until it reaps it.
            let _ = leader.start_kill();
            return Err(std::io::Error::other("the server's process id is out of range"));
        };
        let pipes = (leader.stdin.take(), leader.stdout.take(), leader.stderr.take());
        // From here on, an error drops the guard, which kills the group.
        let guard = Self { leader: Some(leader), pgid: Pid::from_raw(pid), confinement: None };
        match pipes {
            (Some(stdin), Some(stdout), Some(stderr)) => Ok((guard, Pipes { stdin, stdout, stderr })),
            _ => Err(std::io::Error::other("the server's standard streams are not all piped")),
        }
    }

    /// Keeps the leader's sandbox until the leader is reaped.
    pub(super) fn keep(&mut self, confinement: crate::sandbox::Confinement) {
        self.confinement = Some(confinement);
    }

    /// The leader's process id.
    pub(super) fn pid(&self) -> Option<u32> {
        u32::try_from(self.pgid.as_raw()).ok()
    }

    /// Whether the leader runs, has exited unreaped, or is reaped. An exit is seen with
    /// `waitid(WNOWAIT)`, which leaves the zombie, and so the id, in place. A leader that
    /// is no child of ours to wait for any more, which only someone else reaping it can
    /// cause, counts as reaped from then on.
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    fn leader_state(&mut self) -> LeaderState {
        use nix::errno::Errno;
        use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
        if self.leader.is_none() {
            return LeaderState::Reaped;
        }
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(self.pgid), flags) {
            Ok(WaitStatus::StillAlive) | Err(Errno::EINTR) => LeaderState::Running,
            Ok(_) => LeaderState::Exited,
            Err(_) => {
                self.leader = None;
                LeaderState::Reaped
            }
        }
    }

    /// Whether the leader runs or is reaped. Without `waitid(WNOWAIT)` (which nix offers
    /// on Linux, Android and FreeBSD only) an exit is learnt only by reaping: the group is
    /// then signalled no more, and what the leader left in it may outlive it.
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    fn leader_state(&mut self) -> LeaderState {
        match self.leader.as_mut().map(tokio::process::Child::try_wait) {
            Some(Ok(None)) => LeaderState::Running,
            _ => {
                self.leader = None;
                LeaderState::Reaped
            }
        }
    }

    /// Sends `signal` to the whole group if its leader is unreaped (see the type's doc);
    /// returns whether it did.
    fn signal_group(&mut self, signal: Signal) -> bool {
        if self.leader_state() == LeaderState::Reaped {
            return false;
        }
        // The leader, alive or a zombie, holds the id, so the group exists: there is no
        // error to act on.
        let _ = killpg(self.pgid, signal);
        true
    }

    /// Whether the leader exits within `bound` (or has exited); it is not reaped.
    pub(super) async fn exits_within(&mut self, bound: Duration) -> bool {
        let started = tokio::time::Instant::now();
        let mut poll = EXIT_POLL_FIRST;
        loop {
            if self.leader_state() != LeaderState::Running {
                return true;
            }
            if started.elapsed() >= bound {
                return false;
            }
            tokio::time::sleep(poll).await;
            poll = (poll * 2).min(EXIT_POLL_SLOWEST);
        }
    }

    /// Ends the server once its stdin is closed: it gets `bound` to exit by itself, then
    /// `bound` after SIGTERM to its group; then the group gets SIGKILL, which also ends
    /// whatever the leader left behind, and the leader is reaped.
    pub(super) async fn end(&mut self, bound: Duration) {
        if !self.exits_within(bound).await && self.signal_group(Signal::SIGTERM) {
            self.exits_within(bound).await;
        }
        self.signal_group(Signal::SIGKILL);
        self.reap(bound).await;
    }

    /// Kills the group at once and reaps the leader; returns the leader's status.
    pub(super) async fn kill(mut self, bound: Duration) -> Option<ExitStatus> {
        self.signal_group(Signal::SIGKILL);
        self.reap(bound).await
    }

    /// Reaps the leader, after which the group is never signalled again, and returns its
    /// status; a leader that does not die within `bound` is left to tokio, which reaps
    /// dropped children.
    async fn reap(&mut self, bound: Duration) -> Option<ExitStatus> {
        let mut leader = self.leader.take()?;
        let status = tokio::time::timeout(bound, leader.wait()).await.ok()?.ok();
        self.confinement.take();
        status
    }
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        if !self.signal_group(Signal::SIGKILL) {
            return;
        }
        // Reaped after the kill: by a task where there is a runtime, else by tokio once
        // the handle is dropped here.
        if let (Some(mut leader), Ok(runtime)) = (self.leader.take(), tokio::runtime::Handle::try_current()) {
            let confinement = self.confinement.take();
            runtime.spawn(async move {
                let _ = leader.wait().await;
                drop(confinement);
            });
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use std::time::Instant;

    use tokio::io::AsyncReadExt;

    use super::*;

    /// How long a test waits for a process to change state.
    const BOUND: Duration = Duration::from_secs(5);

    fn spawn_shell(script: &str) -> (ProcessGroupGuard, Pipes) {
        let mut command = tokio::process::Command::new("/bin/sh");
        command.arg("-c").arg(script);
        ProcessGroupGuard::spawn(&mut command).expect("/bin/sh starts")
    }

    /// The state letter and parent pid of `pid` in `/proc`, or `None` once it has no entry.
    fn state_and_parent(pid: Pid) -> Option<(char, i32)> {
        test_peers::proc_stat(pid).map(|stat| (stat.state, stat.parent))
    }

    fn ours() -> i32 {
        i32::try_from(std::process::id()).expect("a pid fits in i32")
    }

    /// Waits until `done` holds, for at most [`BOUND`].
    async fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < BOUND, "{what} did not happen within {BOUND:?}");
            tokio::time::sleep(EXIT_POLL_SLOWEST).await;
        }
    }

    #[tokio::test]
    async fn an_exited_leader_keeps_its_id_until_the_guard_has_signalled_and_reaped_it() {
        let (mut guard, _pipes) = spawn_shell("exit 0");
        let pgid = guard.pgid;
        wait_until("the leader's exit", || guard.leader_state() == LeaderState::Exited).await;
        // Seeing the exit did not reap it: it is still our zombie, its id reserved.
        assert_eq!(state_and_parent(pgid), Some(('Z', ours())));
        assert!(guard.signal_group(Signal::SIGKILL), "an unreaped leader's group is signalled");

        guard.reap(BOUND).await;
        assert_eq!(state_and_parent(pgid), None, "the leader was reaped");
        assert_eq!(guard.leader_state(), LeaderState::Reaped);
        assert!(!guard.signal_group(Signal::SIGKILL), "a reaped leader's id may be someone else's");
    }

    #[tokio::test]
    async fn a_leader_reaped_elsewhere_is_never_signalled() {
        let (mut guard, _pipes) = spawn_shell("exit 0");
        // Someone else waits for the leader, as rmcp's transport did when it owned it.
        let reaped = nix::sys::wait::waitpid(guard.pgid, None).expect("the leader is our child");
        assert!(matches!(reaped, nix::sys::wait::WaitStatus::Exited(_, 0)), "{reaped:?}");
        assert!(!guard.signal_group(Signal::SIGTERM), "the group of a reaped leader was signalled");
        assert_eq!(guard.leader_state(), LeaderState::Reaped);
    }

    #[tokio::test]
    async fn end_kills_what_an_exited_leader_left_in_its_group() {
        let (mut guard, mut pipes) = spawn_shell("sleep 3600 >/dev/null 2>&1 </dev/null & echo $!");
        let mut printed = String::new();
        pipes.stdout.read_to_string(&mut printed).await.expect("the leader prints the grandchild's pid");
        let grandchild = Pid::from_raw(printed.trim().parse().expect("a pid"));
        let leader = guard.pgid;
        wait_until("the leader's exit", || guard.leader_state() == LeaderState::Exited).await;
        assert!(state_and_parent(grandchild).is_some_and(|(state, _)| state != 'Z'), "the grandchild runs");

        let started = Instant::now();
        guard.end(BOUND).await;
        assert!(started.elapsed() < Duration::from_secs(1), "an exited leader waited {:?}", started.elapsed());
        assert_eq!(state_and_parent(leader), None, "the leader was reaped");
        // The grandchild is no child of ours: whoever adopted it reaps it, or it stays a
        // zombie of theirs.
        wait_until("the grandchild's death", || state_and_parent(grandchild).is_none_or(|(state, _)| state == 'Z'))
            .await;
    }

    #[tokio::test]
    async fn a_dropped_guard_kills_its_group() {
        let (guard, _pipes) = spawn_shell("sleep 3600");
        let leader = guard.pgid;
        drop(guard);
        wait_until("the leader's death and reaping", || state_and_parent(leader).is_none()).await;
    }
}
