//! The `policy:` section: rules that may refuse a call, rate limits, and the secret
//! egress guard.

use serde::{Deserialize, Serialize};

/// The `policy:` section.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PolicyConfig {
    /// CEL rules over `client`, `tool`, `arguments` and `now`, in order: the first that
    /// matches decides, and a call no rule matches is allowed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) rules: Vec<RuleConfig>,
    /// Token buckets per client and tool pattern; a call takes a token from every limit
    /// whose patterns match it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) rate_limits: Vec<RateLimitConfig>,
    /// The secret egress guard: `guard` (default) or `off`.
    #[serde(default, skip_serializing_if = "SecretsMode::is_default")]
    pub(crate) secrets: SecretsMode,
}

impl PolicyConfig {
    /// Whether the section says nothing (`config show` leaves it out then).
    pub(crate) fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// One rule: its name, and a CEL condition under `deny` or `allow`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RuleConfig {
    /// The rule's name, which a refusal names.
    pub(crate) name: String,
    /// A call this condition holds for is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) deny: Option<String>,
    /// A call this condition holds for is allowed, whatever the later rules say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) allow: Option<String>,
}

/// One rate limit: which calls it counts, and how many it lets through.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RateLimitConfig {
    /// The clients it counts (a name, or a pattern with `*`); default every client. Each
    /// client has its own bucket.
    #[serde(default = "every", skip_serializing_if = "is_every")]
    pub(crate) client: String,
    /// The items it counts (an agent-level name, or a pattern with `*`); default every
    /// item. The calls of all the items it matches share the client's bucket.
    #[serde(default = "every", skip_serializing_if = "is_every")]
    pub(crate) tool: String,
    /// How many calls a minute it lets through, on average.
    pub(crate) per_minute: u32,
    /// How many calls it lets through at once (default: `per_minute`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) burst: Option<u32>,
}

fn every() -> String {
    "*".to_owned()
}

fn is_every(pattern: &str) -> bool {
    pattern == "*"
}

/// What the secret egress guard does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SecretsMode {
    /// A call carrying a secret to a skill it is not bound to is refused.
    #[default]
    Guard,
    /// No guard.
    Off,
}

impl SecretsMode {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}
