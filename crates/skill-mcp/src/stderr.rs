//! A server's standard error: drained all the time, so the child never blocks on a full
//! pipe, logged through tracing, and its last lines kept for error messages.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

/// How many of the last lines are kept.
const KEPT_LINES: usize = 20;
/// Lines are cut to this many bytes in the buffer (the log gets them whole).
const KEPT_LINE_BYTES: usize = 400;

/// The last lines a server wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    /// The kept lines, oldest first, joined for an error message (empty when none).
    pub(crate) fn text(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
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
/// The returned task ends when the child closes its stderr.
pub(crate) fn drain(server: String, mut stderr: ChildStderr) -> (Arc<StderrTail>, tokio::task::JoinHandle<()>) {
    let tail = Arc::new(StderrTail::default());
    let kept = Arc::clone(&tail);
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
                kept.push(&line);
                partial.drain(..=end);
            }
            if partial.len() > 64 * 1024 {
                let line = String::from_utf8_lossy(&partial).into_owned();
                kept.push(&line);
                partial.clear();
            }
        }
        if !partial.is_empty() {
            kept.push(String::from_utf8_lossy(&partial).trim_end());
        }
    });
    (tail, task)
}
