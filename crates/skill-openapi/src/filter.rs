//! Which operations become tools: `include` and `exclude` by operationId, tag or path glob.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use skill_core::wildcard_matches;

/// One way to pick operations.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OperationMatcher {
    /// The operation whose `operationId` is exactly this.
    OperationId(String),
    /// The operations tagged with exactly this.
    Tag(String),
    /// The operations whose path template matches this glob: segments split on `/`, `*`
    /// matches any characters within one segment, a whole `**` segment matches any number
    /// of segments (none included): `/repos/*/issues/**`.
    Path(String),
}

/// The operations that become tools: those matching any `include` matcher (every operation
/// when `include` is empty), except those matching any `exclude` matcher.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OperationFilter {
    /// Operations to keep; empty keeps all.
    pub include: Vec<OperationMatcher>,
    /// Operations to leave out, even when included.
    pub exclude: Vec<OperationMatcher>,
}

/// What a filter looks at in one operation.
#[derive(Debug, Clone, Copy)]
pub struct OperationInfo<'a> {
    /// The `operationId`, if any.
    pub operation_id: Option<&'a str>,
    /// The operation's tags.
    pub tags: &'a [String],
    /// The path template, `/users/{id}`.
    pub path: &'a str,
}

impl OperationMatcher {
    /// Whether this matcher picks the operation.
    pub fn matches(&self, operation: &OperationInfo<'_>) -> bool {
        match self {
            OperationMatcher::OperationId(id) => operation.operation_id == Some(id.as_str()),
            OperationMatcher::Tag(tag) => operation.tags.iter().any(|candidate| candidate == tag),
            OperationMatcher::Path(glob) => {
                let pattern: Vec<&str> = glob.split('/').collect();
                let path: Vec<&str> = operation.path.split('/').collect();
                segments_match(&pattern, &path)
            }
        }
    }
}

impl OperationMatcher {
    /// Reads a matcher as the config writes it: a path glob starts with `/` (or is `**`),
    /// `tag:NAME` is a tag, and anything else is an `operationId`.
    pub fn parse(text: &str) -> Self {
        if text.starts_with('/') || text == "**" {
            OperationMatcher::Path(text.to_owned())
        } else if let Some(tag) = text.strip_prefix("tag:") {
            OperationMatcher::Tag(tag.to_owned())
        } else {
            OperationMatcher::OperationId(text.to_owned())
        }
    }
}

impl fmt::Display for OperationMatcher {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OperationMatcher::OperationId(id) => formatter.write_str(id),
            OperationMatcher::Tag(tag) => write!(formatter, "tag:{tag}"),
            OperationMatcher::Path(glob) => formatter.write_str(glob),
        }
    }
}

impl Serialize for OperationMatcher {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for OperationMatcher {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(|text| OperationMatcher::parse(&text))
    }
}

impl OperationFilter {
    /// Whether the operation becomes a tool.
    pub fn matches(&self, operation: &OperationInfo<'_>) -> bool {
        (self.include.is_empty() || self.include.iter().any(|matcher| matcher.matches(operation)))
            && !self.exclude.iter().any(|matcher| matcher.matches(operation))
    }
}

fn segments_match(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| segments_match(rest, &path[skip..])),
        Some((first, rest)) => path
            .split_first()
            .is_some_and(|(segment, path_rest)| wildcard_matches(first, segment) && segments_match(rest, path_rest)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_globs() {
        let check = |glob: &str, path: &str, expect: bool| {
            let operation = OperationInfo { operation_id: None, tags: &[], path };
            assert_eq!(OperationMatcher::Path(glob.into()).matches(&operation), expect, "{glob} on {path}");
        };
        check("/users", "/users", true);
        check("/users", "/users/{id}", false);
        check("/users/*", "/users/{id}", true);
        check("/users/*", "/users/{id}/repos", false);
        check("/users/**", "/users", true);
        check("/users/**", "/users/{id}/repos", true);
        check("/**/issues", "/repos/{owner}/{repo}/issues", true);
        check("/repos/*/*/issues*", "/repos/{owner}/{repo}/issues-events", true);
        check("/repos/{owner}/*", "/repos/{owner}/{repo}", true);
        check("**", "/anything/at/all", true);
    }

    #[test]
    fn matchers_read_from_their_config_text_and_back() {
        for (text, matcher) in [
            ("/repos/**", OperationMatcher::Path("/repos/**".into())),
            ("**", OperationMatcher::Path("**".into())),
            ("tag:issues", OperationMatcher::Tag("issues".into())),
            ("issues/list-for-repo", OperationMatcher::OperationId("issues/list-for-repo".into())),
        ] {
            assert_eq!(OperationMatcher::parse(text), matcher);
            assert_eq!(matcher.to_string(), text);
        }
    }

    #[test]
    fn include_then_exclude() {
        let tags = vec!["pets".to_owned()];
        let operation = OperationInfo { operation_id: Some("listPets"), tags: &tags, path: "/pets" };
        let filter = |include: Vec<OperationMatcher>, exclude: Vec<OperationMatcher>| {
            OperationFilter { include, exclude }.matches(&operation)
        };
        assert!(filter(vec![], vec![]));
        assert!(filter(vec![OperationMatcher::Tag("pets".into())], vec![]));
        assert!(!filter(vec![OperationMatcher::Tag("stores".into())], vec![]));
        assert!(!filter(vec![], vec![OperationMatcher::OperationId("listPets".into())]));
        assert!(!filter(vec![OperationMatcher::Path("/pets".into())], vec![OperationMatcher::Path("/**".into())]));
    }
}
