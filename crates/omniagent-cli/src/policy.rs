//! The policy layers of the call path: rules that may refuse a call (`policy.rules`) and
//! rate limits (`policy.rate_limits`).

mod limits;
mod rules;
mod variables;

pub(crate) use self::limits::RateLimits;
pub(crate) use self::rules::Rules;

use std::sync::Arc;

use skill_core::CallLayer;

use crate::HostError;
use crate::config::PolicyConfig;

/// The layers `policy` makes, in the order the call path takes them: the rules, then the
/// rate limits (their buckets in `shared` when replicas share a Redis server). None for
/// what it leaves empty, so that an agent without a policy pays nothing for one.
pub(crate) fn layers(
    policy: &PolicyConfig,
    #[cfg(feature = "redis")] shared: Option<Arc<skill_core::RedisConnection>>,
) -> Result<Vec<Arc<dyn CallLayer>>, HostError> {
    let invalid = |message: String| HostError::InvalidConfig { file: None, at: None, message };
    let mut layers: Vec<Arc<dyn CallLayer>> = Vec::new();
    if !policy.rules.is_empty() {
        layers.push(Arc::new(Rules::compile(&policy.rules).map_err(|error| invalid(error.to_string()))?));
    }
    if !policy.rate_limits.is_empty() {
        let limits = RateLimits::new(&policy.rate_limits).map_err(|error| invalid(format!("policy.{error}")))?;
        #[cfg(feature = "redis")]
        let limits = match shared {
            Some(server) => limits.shared(server, SHARED_PREFIX),
            None => limits,
        };
        layers.push(Arc::new(limits));
    }
    Ok(layers)
}

/// A rule of `policy.rules`, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleView {
    /// Its name, which a refusal names.
    pub name: String,
    /// `deny` or `allow`.
    pub effect: &'static str,
    /// Its CEL condition.
    pub condition: String,
}

/// A limit of `policy.rate_limits`, as the console shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateLimitView {
    /// The clients it counts (a pattern).
    pub client: String,
    /// The items it counts (a pattern).
    pub tool: String,
    /// Calls a minute, on average.
    pub per_minute: u32,
    /// Calls at once.
    pub burst: u32,
}

impl RateLimitView {
    /// Whether `reason`, an audit line's for a refusal by the `rate_limit` layer, is this
    /// limit's (the refusal names the limit's numbers and pattern).
    pub fn refused(&self, reason: &str) -> bool {
        let named =
            format!("may make {} calls a minute (bursts of {}) to `{}`", self.per_minute, self.burst, self.tool);
        reason.contains(&named)
    }
}

/// The rules and rate limits of `config`'s policy, in order.
pub fn policy_of(config: &crate::AgentConfig) -> (Vec<RuleView>, Vec<RateLimitView>) {
    let policy = &config.sections.policy;
    let rules = policy
        .rules
        .iter()
        .map(|rule| match (&rule.deny, &rule.allow) {
            (Some(deny), _) => RuleView { name: rule.name.clone(), effect: "deny", condition: deny.clone() },
            (None, allow) => {
                RuleView { name: rule.name.clone(), effect: "allow", condition: allow.clone().unwrap_or_default() }
            }
        })
        .collect();
    let limits = policy
        .rate_limits
        .iter()
        .map(|limit| RateLimitView {
            client: limit.client.clone(),
            tool: limit.tool.clone(),
            per_minute: limit.per_minute,
            burst: limit.burst.unwrap_or(limit.per_minute),
        })
        .collect();
    (rules, limits)
}

/// Where the shared rate limits' buckets are kept in Redis.
#[cfg(feature = "redis")]
const SHARED_PREFIX: &str = "omniagent:policy:";
