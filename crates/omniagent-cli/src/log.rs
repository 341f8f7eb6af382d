//! Logs that show no secret: a writer for `tracing_subscriber` that replaces every value
//! the host has marked as secret with `REDACTED` before a line reaches stderr.
//!
//! The host marks each secret it resolves and each value an MCP server's config carries
//! (its `env` and `headers` values, its URL's password and query values, and the values
//! of the variables they name), because not every crate that logs is ours: rmcp logs a
//! failed request with its URL, query and all.
//!
//! ```
//! use std::io::Write as _;
//!
//! omniagent_host::log::hide("s3cret-token");
//! let mut line = Vec::new();
//! omniagent_host::log::RedactingWriter::new(&mut line).write_all(b"GET /x?key=s3cret-token\n")?;
//! // The line is written when the writer is dropped, whole.
//! assert_eq!(line, b"GET /x?key=REDACTED\n");
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Write};
use std::sync::{PoisonError, RwLock};

use skill_core::redact::REDACTED;

/// Values shorter than this are not hidden: no credential is that short, and hiding `1`
/// or `on` would garble every line.
const SHORTEST_HIDDEN: usize = 4;

/// The values no log line may show, longest first (so that a value containing another
/// is replaced whole).
static HIDDEN: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Marks `value` as secret: from now on, no log line written through a
/// [`RedactingWriter`] shows it.
pub fn hide(value: &str) {
    if value.len() < SHORTEST_HIDDEN {
        return;
    }
    let mut hidden = HIDDEN.write().unwrap_or_else(PoisonError::into_inner);
    if !hidden.iter().any(|known| known == value) {
        hidden.push(value.to_owned());
        hidden.sort_by_key(|known| std::cmp::Reverse(known.len()));
    }
}

/// `text` with every hidden value replaced by `REDACTED`.
fn redacted(text: &str) -> String {
    let hidden = HIDDEN.read().unwrap_or_else(PoisonError::into_inner);
    hidden.iter().fold(text.to_owned(), |text, value| text.replace(value.as_str(), REDACTED))
}

/// Collects one event's text and writes it, redacted, to `inner` when dropped: an event
/// may be written in pieces, and a secret may straddle two.
#[derive(Debug)]
pub struct RedactingWriter<W: Write> {
    inner: W,
    line: Vec<u8>,
}

impl<W: Write> RedactingWriter<W> {
    /// A writer to `inner`.
    pub fn new(inner: W) -> Self {
        Self { inner, line: Vec::new() }
    }
}

impl<W: Write> Write for RedactingWriter<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.line.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<W: Write> Drop for RedactingWriter<W> {
    fn drop(&mut self) {
        let text = redacted(&String::from_utf8_lossy(&self.line));
        // A log line that cannot be written has nowhere else to go.
        let _ = self.inner.write_all(text.as_bytes()).and_then(|()| self.inner.flush());
    }
}

/// Stderr through a [`RedactingWriter`], one per event: the binary's log writer.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactingStderr;

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for RedactingStderr {
    type Writer = RedactingWriter<io::Stderr>;

    fn make_writer(&'a self) -> Self::Writer {
        RedactingWriter::new(io::stderr())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_values_are_replaced_whole_and_short_ones_are_not_hidden() {
        hide("abcd-1234");
        hide("abcd-1234-efgh");
        hide("on");
        assert_eq!(redacted("x=abcd-1234-efgh y=abcd-1234 z=on"), "x=REDACTED y=REDACTED z=on");
        let mut out = Vec::new();
        {
            let mut writer = RedactingWriter::new(&mut out);
            writer.write_all(b"token abcd-").unwrap();
            writer.write_all(b"1234 sent\n").unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "token REDACTED sent\n");
    }
}
