//! A server's standard error: drained all the time, so the child never blocks on a full
//! pipe, logged through tracing, and its last lines kept for the log line of a failure.
//!
//! What a server prints is never part of a failure's message: a gateway's clients (remote
//! ones over HTTP too) would read paths and tokens the server prints. The last lines go
//! to the log at warn level instead, under the gateway call that failed, which the
//! message names. A person running a command at their terminal sees them there too, as
//! the command logs warnings to its stderr by default.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

/// How many of the last lines are kept.
const KEPT_LINES: usize = 20;
/// Lines are cut to this many bytes in the buffer (the log gets them whole).
const KEPT_LINE_BYTES: usize = 400;

/// How long a server that closed its stderr is given to exit, for its status to be logged.
const EXIT_BOUND: Duration = Duration::from_millis(500);
/// How long a server that stopped answering is given to close its stderr, for its last
/// lines to be read (a crash closes stdout and stderr at once, but they are read apart).
const CLOSE_BOUND: Duration = Duration::from_millis(500);

/// The last lines a server wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
    /// Set once the server is up: an exit before is a failed start-up, reported as one.
    running: AtomicBool,
    /// Set when the connection ends the server: its exit is then no news.
    stopping: AtomicBool,
    /// Becomes true once the server closed its stderr and every line is kept.
    closed: tokio::sync::watch::Sender<bool>,
}

impl StderrTail {
    /// The kept lines, oldest first, joined for an error message (empty when none).
    pub(crate) fn text(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// The kept lines once the server closed its stderr, or after [`CLOSE_BOUND`] if it
    /// keeps it open: for the failure of a server that stopped answering.
    pub(crate) async fn text_when_closed(&self) -> String {
        let mut closed = self.closed.subscribe();
        let _ = tokio::time::timeout(CLOSE_BOUND, closed.wait_for(|closed| *closed)).await;
        self.text()
    }

    /// The server is up (its handshake is done): from now on an exit unasked is logged.
    pub(crate) fn running(&self) {
        self.running.store(true, Ordering::Release);
    }

    /// The connection is ending the server: its exit is not logged.
    pub(crate) fn stopping(&self) {
        self.stopping.store(true, Ordering::Release);
    }

    fn push(&self, line: &str) {
        let mut kept = line.to_owned();
        if kept.len() > KEPT_LINE_BYTES {
            let cut = (0..=KEPT_LINE_BYTES).rev().find(|idx| kept.is_char_boundary(*idx)).unwrap_or(0);
            kept.truncate(cut);
            kept.push('…');
        }
        let mut lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if lines.len() == KEPT_LINES {
            lines.pop_front();
        }
        lines.push_back(kept);
    }
}

/// Reads `stderr` until the child closes it, in chunks (a line without an end cannot
/// grow memory without bound), logging each line at debug level under `server`.
/// The returned task ends when the child closes its stderr; if the server (process `pid`)
/// then exited unasked (crashed, or was killed), that is logged at warn level with its
/// exit status.
pub(crate) fn drain(
    server: String,
    pid: Option<u32>,
    mut stderr: ChildStderr,
) -> (Arc<StderrTail>, tokio::task::JoinHandle<()>) {
    let tail = Arc::new(StderrTail::default());
    // Held weakly: once the connection is dropped, no one reads the lines, and its
    // server's end (the guard's kill) is no news.
    let kept = Arc::downgrade(&tail);
    let task = tokio::spawn(async move {
        let mut chunk = vec![0u8; 16 * 1024];
        let mut partial: Vec<u8> = Vec::new();
        loop {
            let n_read = match stderr.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n_read) => n_read,
            };
            partial.extend_from_slice(&chunk[..n_read]);
            while let Some(end) = partial.iter().position(|byte| *byte == b'\n') {
                let line = String::from_utf8_lossy(&partial[..end]).trim_end().to_owned();
                tracing::debug!(server = %server, "stderr: {line}");
                if let Some(kept) = kept.upgrade() {
                    kept.push(&line);
                }
                partial.drain(..=end);
            }
            if partial.len() > 64 * 1024 {
                if let Some(kept) = kept.upgrade() {
                    kept.push(&String::from_utf8_lossy(&partial));
                }
                partial.clear();
            }
        }
        let Some(kept) = kept.upgrade() else { return };
        if !partial.is_empty() {
            kept.push(String::from_utf8_lossy(&partial).trim_end());
        }
        kept.closed.send_replace(true);
        if !kept.running.load(Ordering::Acquire) || kept.stopping.load(Ordering::Acquire) {
            return;
        }
        let status = match pid {
            Some(pid) => exit_status(pid).await,
            None => Some(None),
        };
        // Asked to stop while it was being looked at, or still running (its stderr was
        // closed, or handed to a process of its own): nothing to report.
        let Some(status) = status.filter(|_| !kept.stopping.load(Ordering::Acquire)) else { return };
        let status = status.as_deref().unwrap_or("status unknown");
        tracing::warn!(server = %server, pid, "the MCP server exited unasked ({status}); it restarts on the next call");
    });
    (tail, task)
}

/// Logs a server's last stderr lines at warn level, as what `failure` of `server` left
/// there, under the gateway call running in this task if any. Nothing when there are none.
pub(crate) fn log_tail(server: &str, failure: &str, stderr: &str) {
    if stderr.is_empty() {
        return;
    }
    let stderr = stderr.replace('\n', " | ");
    match call_id() {
        Some(call) => tracing::warn!(server = %server, call, "{failure}; the server's stderr: {stderr}"),
        None => tracing::warn!(server = %server, "{failure}; the server's stderr: {stderr}"),
    }
}

/// What a failure's message says of the stderr lines [`log_tail`] logged: in a gateway
/// call, where its operator finds them; nothing otherwise (the log line is right there).
pub(crate) fn logged_under_call(stderr: &str) -> String {
    match call_id() {
        Some(call) if !stderr.is_empty() => format!(" (the server's stderr is in the gateway's log, call={call})"),
        _ => String::new(),
    }
}

/// The number of the gateway call running in this task.
fn call_id() -> Option<u64> {
    #[cfg(feature = "server")]
    return crate::server::Caller::current().map(|caller| caller.id());
    #[cfg(not(feature = "server"))]
    None
}

/// How the process `pid`, a child of ours not yet reaped, exited (`Some(None)`: it exited,
/// how is not known), or `None` while it runs, after [`EXIT_BOUND`]. The exit is seen
/// with `waitid(WNOWAIT)`, which leaves the process to its guard to reap.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
async fn exit_status(pid: u32) -> Option<Option<String>> {
    use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
    let Ok(pid) = i32::try_from(pid) else { return Some(None) };
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
    let started = tokio::time::Instant::now();
    loop {
        match waitid(Id::Pid(nix::unistd::Pid::from_raw(pid)), flags) {
            Ok(WaitStatus::Exited(_, code)) => return Some(Some(format!("exit status {code}"))),
            Ok(WaitStatus::Signaled(_, signal, _)) => return Some(Some(format!("killed by {signal}"))),
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR) => {}
            // Reaped already, which only its guard does, once it ended the server.
            Ok(_) | Err(_) => return None,
        }
        if started.elapsed() >= EXIT_BOUND {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Without `waitid(WNOWAIT)` the exit cannot be seen without reaping: a server whose
/// stderr closed is taken to have exited, how unknown.
#[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
async fn exit_status(_pid: u32) -> Option<Option<String>> {
    Some(None)
}
