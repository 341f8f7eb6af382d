//! Agent-level tool names: `{skill}__{tool}`, limited to `[A-Za-z0-9_-]` and 64
//! characters, the limits model APIs put on tool names.

use sha2::{Digest, Sha256};

/// The longest agent-level tool name.
pub const MAX_TOOL_NAME_LEN: usize = 64;

/// The agent-level name of `tool` in `skill`.
///
/// Characters outside `[A-Za-z0-9_-]` become `_`. A name longer than 64 characters keeps
/// its first 55 and ends with `-` and 8 hex digits of the SHA-256 of the full unsanitized
/// name: stable across runs and versions, and different for names that share a prefix.
pub fn agent_tool_name(skill: &str, tool: &str) -> String {
    let full = format!("{skill}__{tool}");
    shorten_tool_name(&full, sanitize_tool_name(&full))
}

/// The scheme of agent-level resource URIs: `omniagent://{skill}/{uri}`.
pub const RESOURCE_URI_SCHEME: &str = "omniagent";

/// The scheme of MCP Apps' UI resources, which an agent-level URI keeps (hosts render
/// only `ui://` resources): `ui://{skill}/{rest}` for the skill's `ui://{rest}`.
const UI_SCHEME: &str = "ui";

/// The agent-level URI of the resource `uri` of `skill`: `omniagent://{skill}/{uri}`, or
/// `ui://{skill}/{rest}` for a UI resource `ui://{rest}`; the skill's name
/// percent-encoded outside `[A-Za-z0-9._~-]`, the rest kept as it is (a URI template
/// stays a template). [`split_agent_resource_uri`] reverses it.
pub fn agent_resource_uri(skill: &str, uri: &str) -> String {
    let (scheme, rest) = match uri.strip_prefix("ui://") {
        Some(rest) => (UI_SCHEME, rest),
        None => (RESOURCE_URI_SCHEME, uri),
    };
    let mut text = format!("{scheme}://");
    for byte in skill.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            text.push(char::from(byte));
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    text.push('/');
    text.push_str(rest);
    text
}

/// The skill and its own URI of an agent-level resource URI made by
/// [`agent_resource_uri`]; `None` for any other URI. Any `ui://{a}/{b}` splits, into the
/// skill `a` and `ui://{b}`: whether a skill of that name gives it is the agent's to say.
pub fn split_agent_resource_uri(uri: &str) -> Option<(String, String)> {
    let (rest, ui) = match uri.strip_prefix(RESOURCE_URI_SCHEME).and_then(|rest| rest.strip_prefix("://")) {
        Some(rest) => (rest, false),
        None => (uri.strip_prefix("ui://")?, true),
    };
    let (encoded, original) = rest.split_once('/')?;
    let mut bytes = Vec::with_capacity(encoded.len());
    let mut input = encoded.bytes();
    while let Some(byte) = input.next() {
        if byte != b'%' {
            bytes.push(byte);
            continue;
        }
        let hex = [input.next()?, input.next()?];
        bytes.push(u8::from_str_radix(std::str::from_utf8(&hex).ok()?, 16).ok()?);
    }
    let original = if ui { format!("ui://{original}") } else { original.to_owned() };
    Some((String::from_utf8(bytes).ok()?, original))
}

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize_tool_name(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// `sanitized` (ASCII, made from `full`) if it fits in 64 characters, else its first 55,
/// `-`, and 8 hex digits of the SHA-256 of `full`: the one shortening rule for every tool
/// name, so that long names stay stable and distinct wherever they are made.
pub fn shorten_tool_name(full: &str, sanitized: String) -> String {
    if sanitized.len() <= MAX_TOOL_NAME_LEN {
        return sanitized;
    }
    let digest = Sha256::digest(full.as_bytes());
    let suffix: String = digest[..4].iter().map(|byte| format!("{byte:02x}")).collect();
    format!("{}-{suffix}", &sanitized[..MAX_TOOL_NAME_LEN - 1 - suffix.len()])
}

/// Up to three of `candidates` that look like `name` (a typo, a transposition, a missing
/// prefix), best first: for "did you mean" hints.
pub fn close_names<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut scored: Vec<(f64, &str)> = candidates
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(score, candidate)| *score >= 0.8 || strsim::damerau_levenshtein(name, candidate) <= 2)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, candidate)| candidate.to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitized_and_bounded() {
        let check = |skill: &str, tool: &str, expect: &str| assert_eq!(agent_tool_name(skill, tool), expect);
        check("memory", "recall", "memory__recall");
        check("git hub", "repos.get/{id}", "git_hub__repos_get__id_");
        check("café", "naïve", "caf___na_ve");
        check("s", &"x".repeat(61), &format!("s__{}", "x".repeat(61)));
        check("s", &"x".repeat(62), "s__xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-382c910f");
    }

    #[test]
    fn resource_uris_round_trip() {
        for (skill, uri, agent_uri) in [
            ("everything", "test://static/resource/1", "omniagent://everything/test://static/resource/1"),
            ("my server", "file:///a b", "omniagent://my%20server/file:///a b"),
            ("a/b%", "x://{id}", "omniagent://a%2Fb%25/x://{id}"),
            ("café", "", "omniagent://caf%C3%A9/"),
            ("apps", "ui://get-time/mcp-app.html", "ui://apps/get-time/mcp-app.html"),
            ("my apps", "ui://charts/{kind}", "ui://my%20apps/charts/{kind}"),
        ] {
            assert_eq!(agent_resource_uri(skill, uri), agent_uri);
            assert_eq!(split_agent_resource_uri(agent_uri), Some((skill.to_owned(), uri.to_owned())));
        }
        for other in ["test://x", "omniagent:/x/y", "omniagent://no-slash", "omniagent://%zz/x", "ui://%4/x", "ui://x"]
        {
            assert_eq!(split_agent_resource_uri(other), None, "{other}");
        }
    }

    #[test]
    fn long_names_with_a_shared_prefix_stay_distinct() {
        let a = agent_tool_name("api", &format!("{}_a", "get".repeat(30)));
        let b = agent_tool_name("api", &format!("{}_b", "get".repeat(30)));
        assert_eq!((a.len(), b.len()), (64, 64));
        assert_ne!(a, b);
    }

    #[test]
    fn close_names_rank_similar_names_first() {
        let names = ["memory__remember", "memory__recall", "memory__forget", "other__thing"];
        assert_eq!(
            close_names("memory__remembr", names.into_iter()),
            ["memory__remember", "memory__forget", "memory__recall"]
        );
        assert_eq!(close_names("zzz", names.into_iter()), Vec::<String>::new());
        assert_eq!(close_names("gti", ["git", "http-apis", "omniagent"].into_iter()), ["git"]);
    }
}
