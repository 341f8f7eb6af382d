//! The policy layers of the call path: rules that may refuse a call (`policy.rules`) and
//! rate limits (`policy.rate_limits`), counting what they do in a [`PolicyState`].

mod buckets;
mod limits;
mod rules;
mod state;
mod variables;

pub use self::buckets::BucketView;
pub(crate) use self::limits::RateLimits;
pub(crate) use self::rules::Rules;
pub use self::state::{PolicyReport, PolicyState, RateLimitView, RuleView};

use std::sync::Arc;

use skill_core::CallLayer;

use crate::HostError;
use crate::config::PolicyConfig;

/// The layers `policy` makes, in the order the call path takes them: the rules, then the
/// rate limits (their buckets in `shared` when replicas share a Redis server), counting
/// what they do in `state`. None for what it leaves empty, so that an agent without a
/// policy pays nothing for one.
pub(crate) fn layers(
    policy: &PolicyConfig,
    state: &PolicyState,
    #[cfg(feature = "redis")] shared: Option<Arc<skill_core::RedisConnection>>,
) -> Result<Vec<Arc<dyn CallLayer>>, HostError> {
    let invalid = |message: String| HostError::InvalidConfig { file: None, at: None, message };
    let mut layers: Vec<Arc<dyn CallLayer>> = Vec::new();
    if !policy.rules.is_empty() {
        layers.push(Arc::new(Rules::counted_in(&policy.rules, state).map_err(|error| invalid(error.to_string()))?));
    }
    if !policy.rate_limits.is_empty() {
        let limits =
            RateLimits::kept_in(&policy.rate_limits, state).map_err(|error| invalid(format!("policy.{error}")))?;
        #[cfg(feature = "redis")]
        let limits = match shared {
            Some(server) => {
                state.share(&server);
                limits.shared(server, SHARED_PREFIX)
            }
            None => limits,
        };
        layers.push(Arc::new(limits));
    }
    Ok(layers)
}

/// Where the shared rate limits' buckets are kept in Redis.
#[cfg(feature = "redis")]
const SHARED_PREFIX: &str = "omniagent:policy:";
