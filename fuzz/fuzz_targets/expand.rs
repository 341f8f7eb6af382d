//! `${VAR}` expansion in MCP server arguments, headers and URLs: it never panics, text
//! without `${` comes back as it was, and an error never quotes the text: it is one of
//! two messages, one of which names a variable (what stands between a `${` and a `}`).
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
            let named = error
                .strip_prefix("`${")
                .and_then(|rest| rest.strip_suffix("}` names a variable that is not set"))
                .is_some_and(|name| !name.contains('}') && text.contains(&format!("${{{name}}}")));
            assert!(error == "a `${` is not closed by `}`" || named, "the error says more than it may: {error}");
        }
    }
});
