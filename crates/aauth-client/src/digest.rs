//! `Content-Digest` (RFC 9530) with SHA-256: what AAuth signatures cover for a body.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use sha2::{Digest as _, Sha256};

/// The `Content-Digest` field value of `body`: `sha-256=:<base64 of SHA-256(body)>:`, an
/// RFC 8941 dictionary with one byte-sequence member (RFC 9530 §2). The digest is over
/// the bytes as sent (no content coding is applied here).
pub fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        // The body of RFC 9421's example messages, and the empty body (SHA-256 of nothing).
        assert_eq!(content_digest(b"{\"hello\": \"world\"}"), "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:");
        assert_eq!(content_digest(b""), "sha-256=:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=:");
    }
}
