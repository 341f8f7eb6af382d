//! Percent-encoding: the three character sets serialization needs.
//!
//! Every set encodes all non-ASCII text as its UTF-8 octets (RFC 3986 §2.5, RFC 6570
//! §1.6), with upper-case hex digits (RFC 3986 §2.1).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Everything but RFC 3986's unreserved characters `A-Z a-z 0-9 - . _ ~`: what RFC 6570
/// expansion without `+` leaves alone (RFC 6570 §3.2.1, "allow" set U).
const NOT_UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// Unreserved plus the RFC 3986 reserved characters that may stand unencoded in a query
/// string that is `application/x-www-form-urlencoded`: `: / ? @ ! $ ' ( ) * , ;`.
///
/// Left out on purpose (so encoded): `[`, `]` and `#`, which RFC 3986 §3.4 does not allow
/// in a query, and `&`, `=` and `+`, which form-urlencoding gives a meaning (OAS 3.1.1
/// §4.8.12.2.2 `allowReserved`, Appendix C, Appendix E). `%` is in the set; callers that
/// keep existing percent-encoded triples handle them before using it.
const NOT_QUERY_SAFE: &AsciiSet = &NOT_UNRESERVED
    .remove(b':')
    .remove(b'/')
    .remove(b'?')
    .remove(b'@')
    .remove(b'!')
    .remove(b'$')
    .remove(b'\'')
    .remove(b'(')
    .remove(b')')
    .remove(b'*')
    .remove(b',')
    .remove(b';');

/// How the text of a name or value is percent-encoded in a style-based serialization.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// RFC 6570 simple expansion: everything but unreserved characters is encoded.
    Unreserved,
    /// RFC 6570 reserved expansion (`allowReserved: true`): reserved characters that are
    /// safe in a form-urlencoded query and existing `%XX` triples pass through.
    AllowReserved,
}

impl Escape {
    pub(crate) fn apply(self, text: &str) -> String {
        match self {
            Escape::Unreserved => utf8_percent_encode(text, NOT_UNRESERVED).to_string(),
            Escape::AllowReserved => keep_triples(text),
        }
    }
}

/// Reserved expansion: percent-encoded triples are copied unchanged, any other `%` becomes
/// `%25`, and the rest is encoded with [`NOT_QUERY_SAFE`].
fn keep_triples(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut encoded = String::with_capacity(text.len());
    let mut plain_start = 0;
    let mut byte_idx = 0;
    while byte_idx < bytes.len() {
        let is_triple = bytes[byte_idx] == b'%'
            && bytes.get(byte_idx + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(byte_idx + 2).is_some_and(u8::is_ascii_hexdigit);
        if is_triple {
            // A triple is ASCII, so both slice ends fall on character boundaries.
            encoded.extend(utf8_percent_encode(&text[plain_start..byte_idx], NOT_QUERY_SAFE));
            encoded.push_str(&text[byte_idx..byte_idx + 3]);
            byte_idx += 3;
            plain_start = byte_idx;
        } else {
            byte_idx += 1;
        }
    }
    encoded.extend(utf8_percent_encode(&text[plain_start..], NOT_QUERY_SAFE));
    encoded
}

/// Content-based form-urlencoding (RFC 1866 §8.2.1, as OAS 3.1.1 §4.8.15.2 shows it): a
/// space becomes `+`, and every other character in [`NOT_QUERY_SAFE`] is percent-encoded,
/// `%`, `+`, `&` and `=` included: here they are always data.
///
/// The character set is the one OAS 3.1.1's own form-urlencoded examples use (`:` and `,`
/// stay, `"`, `{`, `}` and `+` are encoded); it is strict RFC 3986, which Appendix E says
/// is sufficient for validators.
pub(crate) fn form_urlencode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for (piece_idx, piece) in text.split(' ').enumerate() {
        if piece_idx > 0 {
            encoded.push('+');
        }
        encoded.extend(utf8_percent_encode(piece, NOT_QUERY_SAFE));
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::{Escape, form_urlencode};

    fn check(escape: Escape, text: &str, expect: &str) {
        assert_eq!(escape.apply(text), expect, "{escape:?} of {text:?}");
    }

    #[test]
    fn unreserved_expansion_encodes_all_but_unreserved() {
        check(Escape::Unreserved, "AZaz09-._~", "AZaz09-._~");
        check(Escape::Unreserved, ":/?#[]@", "%3A%2F%3F%23%5B%5D%40");
        check(Escape::Unreserved, "!$&'()*+,;=", "%21%24%26%27%28%29%2A%2B%2C%3B%3D");
        check(Escape::Unreserved, "a b%c|d\"e<>\\^`{}", "a%20b%25c%7Cd%22e%3C%3E%5C%5E%60%7B%7D");
        check(Escape::Unreserved, "%41", "%2541");
        check(Escape::Unreserved, "é", "%C3%A9");
        check(Escape::Unreserved, "❤️", "%E2%9D%A4%EF%B8%8F");
        check(Escape::Unreserved, "\n\t\u{7f}", "%0A%09%7F");
    }

    #[test]
    fn reserved_expansion_keeps_query_safe_reserved_characters_and_triples() {
        check(Escape::AllowReserved, ":/?@!$'()*,;", ":/?@!$'()*,;");
        // Not allowed in a query (`[`, `]`, `#`) or meaningful in form-urlencoding (`&`, `=`, `+`).
        check(Escape::AllowReserved, "[]#&=+", "%5B%5D%23%26%3D%2B");
        check(Escape::AllowReserved, "x%2By", "x%2By");
        check(Escape::AllowReserved, "100%", "100%25");
        check(Escape::AllowReserved, "%zz%4", "%25zz%254");
        check(Escape::AllowReserved, "a b|é", "a%20b%7C%C3%A9");
        check(Escape::AllowReserved, "é%C3%A9é", "%C3%A9%C3%A9%C3%A9");
    }

    #[test]
    fn form_urlencoding_uses_plus_for_space() {
        assert_eq!(form_urlencode("123 Example Dr."), "123+Example+Dr.");
        assert_eq!(form_urlencode("99999+1234"), "99999%2B1234");
        assert_eq!(form_urlencode("a&b=c%d"), "a%26b%3Dc%25d");
        assert_eq!(form_urlencode("{\"k\":1,\"v\":[]}"), "%7B%22k%22:1,%22v%22:%5B%5D%7D");
        assert_eq!(form_urlencode("  é"), "++%C3%A9");
    }
}
