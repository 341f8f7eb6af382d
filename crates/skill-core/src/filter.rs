//! Which of its skills' tools an agent offers: `include` and `exclude` patterns on
//! agent-level names, `*` matching any run of characters (`github__*`, `*__delete_*`).

use std::collections::BTreeSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::naming::MAX_TOOL_NAME_LEN;

/// The tools an agent offers: those whose agent-level name matches a pattern of
/// `include` (every tool when it is empty) and none of `exclude`. A tool left out is
/// never registered: it is neither listed nor called, and its input schema is never
/// compiled.
///
/// ```
/// use skill_core::ToolFilter;
///
/// let filter: ToolFilter = serde_json::from_str(r#"{"include": ["github__*"], "exclude": ["*__delete_*"]}"#).unwrap();
/// assert!(filter.offers("github__get_repo"));
/// assert!(!filter.offers("github__delete_repo"));
/// assert!(!filter.offers("memory__recall"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolFilter {
    /// Tools to offer; empty offers every tool.
    #[serde(default)]
    pub include: Vec<ToolPattern>,
    /// Tools to leave out, even when included.
    #[serde(default)]
    pub exclude: Vec<ToolPattern>,
}

impl ToolFilter {
    /// Whether the tool named `name` (agent-level) is offered.
    pub fn offers(&self, name: &str) -> bool {
        (self.include.is_empty() || self.include.iter().any(|pattern| pattern.matches(name)))
            && !self.exclude.iter().any(|pattern| pattern.matches(name))
    }

    /// Whether it offers every tool.
    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// The positions of the patterns that `name` matches, counting `include`'s first,
    /// then `exclude`'s.
    pub(crate) fn patterns_matching(&self, name: &str) -> impl Iterator<Item = usize> {
        let patterns = self.include.iter().chain(&self.exclude);
        patterns.enumerate().filter(move |(_, pattern)| pattern.matches(name)).map(|(at, _)| at)
    }

    /// What it did to the tools it was shown, given how many it left out and the
    /// positions of the patterns that matched any of them.
    pub(crate) fn report(&self, left_out: usize, matched: &BTreeSet<usize>) -> FilterReport {
        let unmatched = |first: usize, patterns: &[ToolPattern]| {
            let unmatched = patterns.iter().enumerate().filter(|(at, _)| !matched.contains(&(first + at)));
            unmatched.map(|(_, pattern)| pattern.0.clone()).collect()
        };
        FilterReport {
            left_out,
            unmatched_include: unmatched(0, &self.include),
            unmatched_exclude: unmatched(self.include.len(), &self.exclude),
        }
    }
}

/// What an agent's [`ToolFilter`] did to the tools of its loaded skills.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FilterReport {
    /// How many tools it left out.
    pub left_out: usize,
    /// The patterns of `include` that match no tool: likely misspelt, or for a skill
    /// that did not load.
    pub unmatched_include: Vec<String>,
    /// The patterns of `exclude` that match no tool.
    pub unmatched_exclude: Vec<String>,
}

impl FilterReport {
    /// A line for each pattern that matches no tool: ``include pattern `x` matches no tool``.
    pub fn unmatched_lines(&self) -> impl Iterator<Item = String> {
        let include = self.unmatched_include.iter().map(|pattern| ("include", pattern));
        let exclude = self.unmatched_exclude.iter().map(|pattern| ("exclude", pattern));
        include.chain(exclude).map(|(list, pattern)| format!("{list} pattern `{pattern}` matches no tool"))
    }
}

/// A pattern of agent-level tool names: their characters (`[A-Za-z0-9_-]`), and `*`,
/// which matches any run of them (none included). Anything else could never match, and
/// is refused.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ToolPattern(String);

impl ToolPattern {
    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        wildcard_matches(&self.0, name)
    }
}

impl TryFrom<String> for ToolPattern {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        let literal = text.chars().filter(|c| *c != '*').count();
        if text.is_empty() {
            Err("an empty pattern matches no tool".to_owned())
        } else if let Some(bad) = text.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '*'))) {
            Err(format!(
                "`{text}` can never match a tool: names hold only letters, digits, `_` and `-` (not `{bad}`), and `*` matches any run of them"
            ))
        } else if literal > MAX_TOOL_NAME_LEN {
            Err(format!("`{text}` can never match a tool: names are at most {MAX_TOOL_NAME_LEN} characters"))
        } else {
            Ok(Self(text))
        }
    }
}

impl From<ToolPattern> for String {
    fn from(pattern: ToolPattern) -> Self {
        pattern.0
    }
}

impl fmt::Debug for ToolPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// Whether `text` matches `pattern`, in which `*` matches any run of characters (none
/// included) and every other character only itself.
pub fn wildcard_matches(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((prefix, rest)) => {
            let Some(remainder) = text.strip_prefix(prefix) else { return false };
            (0..=remainder.len())
                .filter(|&start| remainder.is_char_boundary(start))
                .any(|start| wildcard_matches(rest, &remainder[start..]))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(include: &[&str], exclude: &[&str]) -> ToolFilter {
        let patterns =
            |texts: &[&str]| texts.iter().map(|text| ToolPattern::try_from((*text).to_owned()).unwrap()).collect();
        ToolFilter { include: patterns(include), exclude: patterns(exclude) }
    }

    #[test]
    fn include_then_exclude() {
        let everything = ToolFilter::default();
        assert!(everything.is_empty() && everything.offers("memory__recall"));
        let some = filter(&["github__*", "memory__recall"], &["*__delete_*"]);
        assert!(some.offers("github__get_repo"));
        assert!(some.offers("memory__recall"));
        assert!(!some.offers("memory__remember"), "an exact name matches only itself");
        assert!(!some.offers("github__delete_repo"), "excluded though included");
        assert!(!filter(&[], &["memory__*"]).offers("memory__recall"));
        assert!(filter(&[], &["memory__*"]).offers("skills__activate"));
    }

    #[test]
    fn a_star_matches_any_run_of_characters() {
        for (pattern, name) in [("*", ""), ("*", "a__b"), ("a*", "a"), ("*b", "ab"), ("a*b*c", "a__b__c"), ("**", "x")]
        {
            assert!(wildcard_matches(pattern, name), "{pattern} {name}");
        }
        for (pattern, name) in [("a*", "ba"), ("*b", "bc"), ("a*b*c", "acb"), ("abc", "ab"), ("", "a")] {
            assert!(!wildcard_matches(pattern, name), "{pattern} {name}");
        }
    }

    #[test]
    fn a_pattern_that_could_never_match_is_refused() {
        assert!(ToolPattern::try_from("github__get-repo_2*".to_owned()).is_ok());
        let error = ToolPattern::try_from("github.get".to_owned()).unwrap_err();
        assert!(error.contains("`github.get` can never match a tool") && error.contains("(not `.`)"), "{error}");
        assert!(ToolPattern::try_from(String::new()).is_err());
        assert!(ToolPattern::try_from("a".repeat(65)).is_err());
        assert!(ToolPattern::try_from(format!("{}*", "a".repeat(64))).is_ok());
    }
}
