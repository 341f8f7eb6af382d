//! Bytes as lowercase hex text: the digests of installed files and of MCP servers' callers.

use std::fmt::Write as _;

/// `bytes` as lowercase hex, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut text, byte| {
        let _ = write!(text, "{byte:02x}");
        text
    })
}
