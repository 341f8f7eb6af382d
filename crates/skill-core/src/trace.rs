//! W3C trace context (`traceparent`), as it crosses the agent: a client's request
//! brings one, and the call passes it on to what it calls (an upstream MCP server's
//! `_meta.traceparent`, an HTTP API's `traceparent` header).
//!
//! While a call runs, [`current`] is the trace context its requests carry: the call's
//! own (its span, when a telemetry layer made one), else the client's.

use std::fmt;
use std::str::FromStr;

tokio::task_local! {
    static CURRENT: TraceParent;
}

/// A `traceparent` (W3C Trace Context, version `00`): the trace, the span that is the
/// parent of whatever is made under it, and the flags (bit 0: sampled).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TraceParent {
    /// The trace's id: 16 bytes, not all zero.
    pub trace_id: [u8; 16],
    /// The parent span's id: 8 bytes, not all zero.
    pub span_id: [u8; 8],
    /// The trace flags.
    pub flags: u8,
}

impl TraceParent {
    /// Whether the trace is sampled (recorded by whoever made the parent span).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The same trace under another parent span.
    #[must_use]
    pub fn child(&self, span_id: [u8; 8]) -> Self {
        Self { span_id, ..*self }
    }

    /// The trace id as 32 lowercase hex digits, as logs and audit lines show it.
    pub fn trace_id_hex(&self) -> String {
        base16ct::lower::encode_string(&self.trace_id)
    }
}

/// Why a `traceparent` was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a W3C traceparent (`00-<32 hex>-<16 hex>-<2 hex>`)")]
pub struct InvalidTraceParent;

impl FromStr for TraceParent {
    type Err = InvalidTraceParent;

    /// Parses a `traceparent` header value. A later version's value is read by its
    /// version-00 prefix, as the W3C recommendation asks; version `ff`, all-zero ids and
    /// anything malformed are refused.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim();
        let bytes = text.as_bytes();
        if bytes.len() < 55 || (bytes.len() > 55 && (text.starts_with("00") || bytes[55] != b'-')) {
            return Err(InvalidTraceParent);
        }
        let part = |range: std::ops::Range<usize>| text.get(range).ok_or(InvalidTraceParent);
        let version = part(0..2)?;
        if version == "ff" || [2, 35, 52].iter().any(|&dash| bytes[dash] != b'-') {
            return Err(InvalidTraceParent);
        }
        let mut version_byte = [0u8; 1];
        unhex(version, &mut version_byte)?;
        let mut parent = TraceParent { trace_id: [0; 16], span_id: [0; 8], flags: 0 };
        unhex(part(3..35)?, &mut parent.trace_id)?;
        unhex(part(36..52)?, &mut parent.span_id)?;
        let mut flags = [0u8; 1];
        unhex(part(53..55)?, &mut flags)?;
        parent.flags = flags[0];
        if parent.trace_id == [0; 16] || parent.span_id == [0; 8] {
            return Err(InvalidTraceParent);
        }
        Ok(parent)
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mut trace_id, mut span_id) = ([0; 32], [0; 16]);
        let trace_id = base16ct::lower::encode_str(&self.trace_id, &mut trace_id).map_err(|_| fmt::Error)?;
        let span_id = base16ct::lower::encode_str(&self.span_id, &mut span_id).map_err(|_| fmt::Error)?;
        write!(f, "00-{trace_id}-{span_id}-{:02x}", self.flags)
    }
}

impl fmt::Debug for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TraceParent({self})")
    }
}

/// The trace context the requests of the running call carry, if any.
pub fn current() -> Option<TraceParent> {
    CURRENT.try_with(|parent| *parent).ok()
}

/// Runs `future` with `parent` as the [`current`] trace context.
pub async fn scope<F: Future>(parent: TraceParent, future: F) -> F::Output {
    CURRENT.scope(parent, future).await
}

/// Reads lowercase hex digits into `out`, which they must fill exactly.
fn unhex(text: &str, out: &mut [u8]) -> Result<(), InvalidTraceParent> {
    let length = out.len();
    match base16ct::lower::decode(text, out) {
        Ok(read) if read.len() == length && text.len() == length * 2 => Ok(()),
        _ => Err(InvalidTraceParent),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_reads_and_writes_back() {
        let parent: TraceParent = EXAMPLE.parse().unwrap();
        assert!(parent.sampled());
        assert_eq!(parent.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(parent.to_string(), EXAMPLE);
        assert_eq!(parent.child([1; 8]).to_string(), "00-4bf92f3577b34da6a3ce929d0e0e4736-0101010101010101-01");
    }

    #[test]
    fn a_later_version_is_read_by_its_prefix_and_bad_values_are_refused() {
        let later = format!("01{}-what-comes-later", &EXAMPLE[2..]);
        assert_eq!(later.parse::<TraceParent>().unwrap().trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
        ] {
            assert_eq!(bad.parse::<TraceParent>(), Err(InvalidTraceParent), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_current_trace_context_is_the_scopes() {
        assert_eq!(current(), None);
        let parent: TraceParent = EXAMPLE.parse().unwrap();
        assert_eq!(scope(parent, async { current() }).await, Some(parent));
    }
}
