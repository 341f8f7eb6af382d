//! The parameter serializer: any style, location, explode and value serializes or is
//! refused without panicking, and what it gives is safe where it goes: URI characters only
//! in a path or query, no control characters in a header or cookie.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use skill_openapi::serialize::{Location, ParameterSpec, SerializedParameter, Style};

const LOCATIONS: [Location; 4] = [Location::Path, Location::Query, Location::Header, Location::Cookie];
const STYLES: [Option<Style>; 8] = [
    None,
    Some(Style::Simple),
    Some(Style::Label),
    Some(Style::Matrix),
    Some(Style::Form),
    Some(Style::SpaceDelimited),
    Some(Style::PipeDelimited),
    Some(Style::DeepObject),
];

/// RFC 3986: unreserved, reserved and `%` (of a percent-encoded triple).
fn is_uri_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c)
}

fuzz_target!(|bytes: &[u8]| {
    let [settings, name_length, rest @ ..] = bytes else { return };
    let (name, value) = rest.split_at((*name_length as usize).min(rest.len()));
    let Ok(name) = std::str::from_utf8(name) else { return };
    let Ok(value) = serde_json::from_slice::<Value>(value) else { return };
    let mut spec = ParameterSpec::new(name, LOCATIONS[(settings & 3) as usize]);
    spec.style = STYLES[((settings >> 2) & 7) as usize];
    spec.explode = [None, Some(false), Some(true), None][((settings >> 5) & 3) as usize];
    spec.allow_reserved = settings & 0x80 != 0;
    let Ok(serialized) = spec.serialize(&value) else { return };
    match serialized {
        SerializedParameter::Path(text) => assert!(text.chars().all(is_uri_char), "{text:?}"),
        SerializedParameter::Query(pairs) => {
            for pair in pairs {
                assert!(pair.chars().all(is_uri_char), "{pair:?}");
            }
        }
        SerializedParameter::Header(text) => assert!(!text.chars().any(char::is_control), "{text:?}"),
        SerializedParameter::Cookie(pairs) => {
            for pair in pairs {
                assert!(!pair.chars().any(char::is_control), "{pair:?}");
            }
        }
        _ => {}
    }
});
