//! Busy polling for the gateway over stdio (`--busy-poll`, off by default): after its
//! thread wakes, the runtime keeps polling for I/O for a short window before it sleeps
//! again.
//!
//! A call through the gateway wakes it twice (the host's request, then the upstream's
//! answer) and wakes each of the other processes once more than a direct call would. On
//! a machine whose idle cores sleep deeply (most virtual machines), each wake-up of a
//! sleeping thread costs tens of microseconds. For a client that calls back to back,
//! polling through the window catches the upstream's answer and the next request without
//! sleeping: a call through the gateway took about as long as a direct one
//! (`gateway_stdio_call` in `cargo xtask bench`). A host calls as its model works, with
//! long gaps between calls: the gateway is asleep when each call comes, and polling only
//! spent the window's CPU time per wake-up (`gateway_host_pace`). Hence off by default.
//! An idle gateway does not poll.

use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::runtime::{Builder, Runtime};
use tokio::sync::Notify;

/// A one-thread runtime that polls for `window` after each wake-up (see the module doc);
/// a plain one for a zero window.
pub(crate) fn runtime(window: Duration) -> io::Result<Runtime> {
    if window.is_zero() {
        return Builder::new_current_thread().enable_all().build();
    }
    let woke = Arc::new(Notify::new());
    let runtime = Builder::new_current_thread()
        .enable_all()
        .on_thread_unpark({
            let woke = Arc::clone(&woke);
            move || woke.notify_one()
        })
        .build()?;
    runtime.spawn(poll_after_each_wake_up(woke, window));
    Ok(runtime)
}

/// Keeps the runtime from sleeping for `window` after each wake-up: a task that yields
/// is run again only after the runtime has polled for I/O and timers without waiting.
async fn poll_after_each_wake_up(woke: Arc<Notify>, window: Duration) {
    loop {
        woke.notified().await;
        let until = Instant::now() + window;
        while Instant::now() < until {
            tokio::task::yield_now().await;
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// How many times this thread has slept (waited in a system call) so far.
    fn sleeps() -> u64 {
        let status = std::fs::read_to_string("/proc/thread-self/status").expect("the thread's status");
        status
            .lines()
            .find_map(|line| line.strip_prefix("voluntary_ctxt_switches:"))
            .and_then(|count| count.trim().parse().ok())
            .expect("a count of voluntary context switches")
    }

    /// How many times the runtime's thread sleeps across ten 1 ms timers that follow a
    /// wake-up.
    fn sleeps_across_timers(runtime: &Runtime) -> u64 {
        runtime.block_on(async {
            // The runtime sleeps here and wakes when the timer is due.
            tokio::time::sleep(Duration::from_millis(5)).await;
            let before = sleeps();
            for _ in 0..10 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            sleeps() - before
        })
    }

    #[test]
    fn the_runtime_does_not_sleep_within_the_window_after_a_wake_up() {
        let polling = runtime(Duration::from_millis(500)).unwrap();
        assert!(sleeps_across_timers(&polling) <= 2, "a timer due within the window is met by polling");
        let sleeping = runtime(Duration::ZERO).unwrap();
        assert!(sleeps_across_timers(&sleeping) >= 10, "without the window, each timer is waited for");
    }
}
