//! `${VAR}` expansion in MCP server arguments, headers and URLs: it never panics, text
//! without `${` comes back as it was, and an error never quotes the text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let lookup = |name: &str| (name.len() % 2 == 0).then(|| format!("<{name}>"));
    match skill_mcp::expand(text, lookup) {
        Ok(expanded) => {
            if !text.contains("${") {
                assert_eq!(expanded, text);
            }
        }
        Err(error) => {
            let rest = text.rsplit_once('}').map_or(text, |(_, rest)| rest);
            if rest.len() > 12 && !rest.contains("${") {
                assert!(!error.contains(rest), "the error quotes the text: {error}");
            }
        }
    }
});
