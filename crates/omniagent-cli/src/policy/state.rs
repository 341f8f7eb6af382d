//! What the policy layers have done, for the console to show: each rule's hits and each
//! rate limit's buckets, kept by a [`PolicyState`] for every agent a process makes with
//! it, so that an agent made afresh (a changed config) goes on counting, and draws from
//! the same buckets while its limit is unchanged.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
#[cfg(test)]
use std::time::Duration;

use super::buckets::{BucketView, Buckets};
use crate::config::{RateLimitConfig, RuleConfig};

/// The rules' hits and the rate limits' buckets of the agents made with it: the gateway
/// gives one to all its agents (see [`crate::Person::policy`]). Cloning it shares it.
#[derive(Clone, Default)]
pub struct PolicyState(Arc<Inner>);

#[derive(Default)]
struct Inner {
    /// By the rule's name, effect and condition: a changed rule counts afresh.
    rules: Mutex<HashMap<RuleKey, Arc<AtomicU64>>>,
    /// By the limit's place and numbers, as the shared buckets' keys name it.
    limits: Mutex<HashMap<LimitKey, Arc<Buckets>>>,
    /// The Redis server whose buckets the limits draw from, once an agent has said so.
    #[cfg(feature = "redis")]
    shared: Mutex<Option<Arc<skill_core::RedisConnection>>>,
}

/// A rule: its name, effect and condition.
type RuleKey = (String, &'static str, String);

/// A limit: its place in `policy.rate_limits`, its patterns and its numbers.
type LimitKey = (usize, String, String, u32, u32);

impl std::fmt::Debug for PolicyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyState").finish_non_exhaustive()
    }
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
    /// The calls it decided (the first rule whose condition held for them), as this
    /// process counted them.
    pub hits: u64,
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
    /// The bucket of each client it has counted, by name; a client without one has a
    /// full bucket.
    pub buckets: Vec<BucketView>,
}

/// The rules and rate limits of a config, with what they have done.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyReport {
    /// The rules, in order.
    pub rules: Vec<RuleView>,
    /// The rate limits, in order.
    pub limits: Vec<RateLimitView>,
    /// The Redis server (its URL as it may be shown) whose buckets every replica shares,
    /// when they are shared; the refusals are still this process's.
    pub shared: Option<String>,
    /// Why the shared buckets could not be read (the limits then show none).
    pub error: Option<String>,
}

impl RuleView {
    fn of(rule: &RuleConfig) -> Self {
        let (effect, condition) = match (&rule.deny, &rule.allow) {
            (Some(deny), _) => ("deny", deny.clone()),
            (None, allow) => ("allow", allow.clone().unwrap_or_default()),
        };
        Self { name: rule.name.clone(), effect, condition, hits: 0 }
    }
}

impl PolicyState {
    /// The counter of the hits of `rule`, shared by every agent that compiles it.
    pub(super) fn hits_of(&self, rule: &RuleConfig) -> Arc<AtomicU64> {
        let RuleView { name, effect, condition, .. } = RuleView::of(rule);
        let mut rules = self.0.rules.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(rules.entry((name, effect, condition)).or_default())
    }

    /// The buckets of the `index`th limit, `config` (of `per_minute` and `burst`), shared
    /// by every agent that has it.
    pub(super) fn buckets_of(
        &self,
        index: usize,
        config: &RateLimitConfig,
        per_minute: NonZeroU32,
        burst: NonZeroU32,
    ) -> Arc<Buckets> {
        let key = (index, config.client.clone(), config.tool.clone(), per_minute.get(), burst.get());
        let mut limits = self.0.limits.lock().unwrap_or_else(PoisonError::into_inner);
        Arc::clone(limits.entry(key).or_insert_with(|| Arc::new(Buckets::new(per_minute, burst))))
    }

    /// Records that the limits draw from `server`'s buckets.
    #[cfg(feature = "redis")]
    pub(super) fn share(&self, server: &Arc<skill_core::RedisConnection>) {
        *self.0.shared.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(server));
    }

    /// The Redis server whose buckets `config`'s limits draw from: the one an agent was
    /// given, else `storage:`'s when it is Redis (before any agent has started).
    #[cfg(feature = "redis")]
    async fn shared_server(
        &self,
        config: &crate::AgentConfig,
    ) -> Result<Option<Arc<skill_core::RedisConnection>>, crate::HostError> {
        if config.sections.storage.backend != crate::config::StorageBackend::Redis {
            return Ok(None);
        }
        let known = self.0.shared.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if known.is_some() {
            return Ok(known);
        }
        let server = crate::host::storage::shared_redis(config, &skill_core::SecretResolver::default()).await?;
        if let Some(server) = &server {
            self.share(server);
        }
        Ok(server)
    }

    /// The rules and rate limits of `config`'s policy, in order, with their hits and
    /// buckets as they are now: read from the shared server when the limits draw from one.
    pub async fn report(&self, config: &crate::AgentConfig) -> PolicyReport {
        let policy = &config.sections.policy;
        let rules = policy
            .rules
            .iter()
            .map(|rule| {
                let mut view = RuleView::of(rule);
                let key = (view.name.clone(), view.effect, view.condition.clone());
                let rules = self.0.rules.lock().unwrap_or_else(PoisonError::into_inner);
                view.hits = rules.get(&key).map_or(0, |hits| hits.load(Ordering::Relaxed));
                view
            })
            .collect();
        let mut report = PolicyReport { rules, ..PolicyReport::default() };
        #[cfg(feature = "redis")]
        let shared = match self.shared_server(config).await {
            Ok(shared) => shared,
            Err(error) => {
                report.error = Some(error.to_string());
                None
            }
        };
        #[cfg(feature = "redis")]
        if let Some(server) = &shared {
            report.shared = Some(server.shown_url().to_owned());
        }
        for (index, limit) in policy.rate_limits.iter().enumerate() {
            let burst = limit.burst.unwrap_or(limit.per_minute);
            let key = (index, limit.client.clone(), limit.tool.clone(), limit.per_minute, burst);
            let buckets = self.0.limits.lock().unwrap_or_else(PoisonError::into_inner).get(&key).cloned();
            let mut view = RateLimitView {
                client: limit.client.clone(),
                tool: limit.tool.clone(),
                per_minute: limit.per_minute,
                burst,
                buckets: Vec::new(),
            };
            #[cfg(feature = "redis")]
            if let Some(server) = &shared {
                let refusals = buckets.map(|buckets| buckets.refusals()).unwrap_or_default();
                match super::limits::shared_views(server, super::SHARED_PREFIX, index, limit, refusals).await {
                    Ok(views) => view.buckets = views,
                    Err(error) => report.error = Some(error.to_string()),
                }
                report.limits.push(view);
                continue;
            }
            view.buckets = buckets.map(|buckets| buckets.views()).unwrap_or_default();
            report.limits.push(view);
        }
        report
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;
    use skill_core::{Agent, Caller, MemorySkill};

    use super::*;

    const POLICY: &str = "policy:\n  rules:\n\
                          \x20   - {name: alice-may, allow: 'client.name == \"alice\"'}\n\
                          \x20   - {name: no-forgetting, deny: 'tool.tool == \"forget\"'}\n\
                          \x20 rate_limits:\n    - {tool: memory__recall, per_minute: 1, burst: 2}\n";

    /// An agent with the memory skill and `config`'s policy, counting in `state`.
    async fn agent(config: &crate::AgentConfig, state: &PolicyState) -> Agent {
        let layers = super::super::layers(
            &config.sections.policy,
            state,
            #[cfg(feature = "redis")]
            None,
        )
        .unwrap();
        let builder = Agent::builder().with_compiled_skill(MemorySkill::new());
        let agent = layers.into_iter().fold(builder, |builder, layer| builder.layer(layer)).build();
        agent.init_compiled_skills().await;
        agent
    }

    #[tokio::test]
    async fn every_agent_made_with_a_state_counts_in_it_and_its_report_reads_them() {
        let config = crate::Config::parse(Path::new("config.yaml"), POLICY).unwrap().for_agent(None).unwrap();
        let state = PolicyState::default();
        // Two agents, as the gateway makes one for each client, or anew for a changed config.
        let (first, second) = (agent(&config, &state).await, agent(&config, &state).await);
        let forget = json!({"key": "a"});
        assert!(first.acting_for(Caller::new("alice")).call_tool("memory__forget", forget.clone()).await.is_ok());
        let bob = second.acting_for(Caller::new("bob"));
        for _ in 0..2 {
            assert!(bob.call_tool("memory__forget", forget.clone()).await.is_err());
        }
        // Bob's bucket of two is the same in both agents.
        assert!(first.acting_for(Caller::new("bob")).call_tool("memory__recall", forget.clone()).await.is_ok());
        assert!(bob.call_tool("memory__recall", forget.clone()).await.is_ok());
        let refused = bob.call_tool("memory__recall", forget.clone()).await.unwrap_err();
        assert!(refused.to_string().starts_with("rate limit:"), "{refused}");

        let report = state.report(&config).await;
        let hits: Vec<(&str, &str, u64)> =
            report.rules.iter().map(|rule| (rule.name.as_str(), rule.effect, rule.hits)).collect();
        assert_eq!(hits, [("alice-may", "allow", 1), ("no-forgetting", "deny", 2)]);
        let limit = &report.limits[0];
        assert_eq!((limit.tool.as_str(), limit.per_minute, limit.burst), ("memory__recall", 1, 2));
        let [bucket] = limit.buckets.as_slice() else { panic!("one client's bucket: {limit:?}") };
        assert_eq!((bucket.client.as_str(), bucket.available, bucket.refused), ("bob", 0, 1));
        assert!(bucket.next_in > Duration::ZERO && bucket.full_in > bucket.next_in, "{bucket:?}");
        assert_eq!(report.shared, None);

        // Another state counts nothing of theirs.
        let other = PolicyState::default().report(&config).await;
        assert!(other.rules.iter().all(|rule| rule.hits == 0) && other.limits[0].buckets.is_empty(), "{other:?}");
    }
}
