//! Rate limits: a token bucket per limit and client (GCRA), kept in the process, or in
//! Redis so that every replica of a gateway draws from the same buckets.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use skill_core::{CallContext, CallFuture, CallLayer, Next, ToolError, wildcard_matches};

use crate::config::RateLimitConfig;

/// Why a rate limit cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("rate limit {index} (client `{client}`, tool `{tool}`): {reason}")]
pub(crate) struct LimitError {
    index: usize,
    client: String,
    tool: String,
    reason: &'static str,
}

/// One limit: which calls it counts, and its buckets.
struct Limit {
    client: String,
    tool: String,
    per_minute: NonZeroU32,
    burst: NonZeroU32,
    buckets: DefaultKeyedRateLimiter<String>,
}

impl Limit {
    fn counts(&self, call: &CallContext<'_>) -> bool {
        wildcard_matches(&self.client, &call.caller.client) && wildcard_matches(&self.tool, call.item.name)
    }

    /// The refusal of a call over this limit, which may go again after `wait`.
    fn refusal(&self, call: &CallContext<'_>, wait: Duration) -> ToolError {
        ToolError::Refused {
            layer: "rate_limit",
            message: format!(
                "rate limit: `{}` may make {} calls a minute (bursts of {}) to `{}`; try again in {:.1} s",
                call.caller.client,
                self.per_minute,
                self.burst,
                self.tool,
                wait.as_secs_f64().max(0.1)
            ),
        }
    }
}

/// The limits of `policy.rate_limits`, as one layer of the call path: a call takes a
/// token from every limit that counts it, and is refused, with the time to wait, by the
/// first whose bucket is empty.
pub(crate) struct RateLimits {
    limits: Vec<Limit>,
    /// Made once: making a clock reads the CPU's features and calibrates it.
    clock: DefaultClock,
    /// Where the buckets are when replicas share them.
    #[cfg(feature = "redis")]
    shared: Option<shared::SharedBuckets>,
}

impl std::fmt::Debug for RateLimits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimits").field("limits", &self.limits.len()).finish_non_exhaustive()
    }
}

impl RateLimits {
    /// The limits `configs` give, their buckets in this process.
    pub(crate) fn new(configs: &[RateLimitConfig]) -> Result<Self, LimitError> {
        let limits =
            configs.iter().enumerate().map(|(index, config)| limit(index, config)).collect::<Result<_, _>>()?;
        Ok(Self {
            limits,
            clock: DefaultClock::default(),
            #[cfg(feature = "redis")]
            shared: None,
        })
    }

    /// The same limits with their buckets in the Redis server `server`, under `prefix`:
    /// every process that names that server and prefix draws from the same buckets.
    #[cfg(feature = "redis")]
    pub(crate) fn shared(self, server: std::sync::Arc<skill_core::RedisConnection>, prefix: &str) -> Self {
        Self { shared: Some(shared::SharedBuckets::new(server, prefix)), ..self }
    }

    /// Takes a token from each local bucket that counts the call; the first that has
    /// none refuses it.
    fn take_local(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        for limit in self.limits.iter().filter(|limit| limit.counts(call)) {
            if let Err(not_until) = limit.buckets.check_key(&call.caller.client) {
                return Err(limit.refusal(call, not_until.wait_time_from(self.clock.now())));
            }
        }
        Ok(())
    }
}

impl CallLayer for RateLimits {
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        #[cfg(feature = "redis")]
        if let Some(shared) = &self.shared {
            return Box::pin(async move {
                for (index, limit) in self.limits.iter().enumerate().filter(|(_, limit)| limit.counts(call)) {
                    if let Some(wait) = shared.take(index, limit, &call.caller.client).await? {
                        return Err(limit.refusal(call, wait));
                    }
                }
                next.run().await
            });
        }
        match self.take_local(call) {
            Ok(()) => next.run(),
            Err(refusal) => Box::pin(std::future::ready(Err(refusal))),
        }
    }
}

fn limit(index: usize, config: &RateLimitConfig) -> Result<Limit, LimitError> {
    let error = |reason| LimitError { index, client: config.client.clone(), tool: config.tool.clone(), reason };
    let per_minute = NonZeroU32::new(config.per_minute).ok_or_else(|| error("`per_minute` must be at least 1"))?;
    let burst = match config.burst {
        None => per_minute,
        Some(burst) => NonZeroU32::new(burst).ok_or_else(|| error("`burst` must be at least 1"))?,
    };
    let buckets = RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst));
    Ok(Limit { client: config.client.clone(), tool: config.tool.clone(), per_minute, burst, buckets })
}

#[cfg(feature = "redis")]
mod shared {
    //! Buckets in Redis: each is the theoretical arrival time of the next call (GCRA),
    //! read and moved on by one script, so replicas never both take the last token.

    use std::sync::Arc;
    use std::time::Duration;

    use skill_core::{RedisConnection, ToolError};

    use super::Limit;

    /// Takes a token from the bucket `KEYS[1]`, which refills one token every `ARGV[1]`
    /// microseconds and holds `ARGV[2]`; answers 0, or the microseconds to wait. The
    /// server's clock is the only one read, so replicas' clocks need not agree.
    const TAKE: &str = r"
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local next_tat = tat + interval
local allowed_at = next_tat - interval * burst
if allowed_at > now then return allowed_at - now end
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.floor((next_tat - now) / 1000) + 1)
return 0
";

    pub(super) struct SharedBuckets {
        server: Arc<RedisConnection>,
        prefix: String,
        script: redis::Script,
    }

    impl SharedBuckets {
        pub(super) fn new(server: Arc<RedisConnection>, prefix: &str) -> Self {
            Self { server, prefix: prefix.to_owned(), script: redis::Script::new(TAKE) }
        }

        /// Takes a token from `client`'s bucket of `limit` (the `index`th); the wait
        /// when it has none. A server that cannot be reached refuses the call: a limit
        /// that cannot be counted is not lifted.
        pub(super) async fn take(
            &self,
            index: usize,
            limit: &Limit,
            client: &str,
        ) -> Result<Option<Duration>, ToolError> {
            // The key names the limit as configured, so a changed limit starts afresh.
            let key = format!(
                "{}rate:{index}:{}:{}:{}:{}:{client}",
                self.prefix, limit.per_minute, limit.burst, limit.client, limit.tool
            );
            let interval = 60_000_000 / u64::from(limit.per_minute.get());
            let burst = limit.burst.get();
            let waited: u64 = self
                .server
                .run(|mut connection| {
                    let mut invocation = self.script.key(&key);
                    invocation.arg(interval).arg(burst);
                    async move { invocation.invoke_async(&mut connection).await }
                })
                .await
                .map_err(|failure| ToolError::Refused {
                    layer: "rate_limit",
                    message: format!("rate limit: the shared buckets cannot be reached ({failure}); try again later"),
                })?;
            Ok((waited > 0).then(|| Duration::from_micros(waited)))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use skill_core::{Agent, Caller, MemorySkill};

    use super::*;

    fn config(client: &str, tool: &str, per_minute: u32, burst: Option<u32>) -> RateLimitConfig {
        RateLimitConfig { client: client.to_owned(), tool: tool.to_owned(), per_minute, burst }
    }

    #[tokio::test]
    async fn a_burst_lets_exactly_its_size_through_per_client_and_names_the_wait() {
        let limits = RateLimits::new(&[config("*", "memory__re*", 60, Some(10))]).unwrap();
        let agent = Agent::builder().with_compiled_skill(MemorySkill::new()).layer(Arc::new(limits)).build();
        agent.init_compiled_skills().await;
        let bob = agent.acting_for(Caller::new("bob"));
        let mut through = 0;
        let mut refusals = Vec::new();
        for _ in 0..30 {
            match bob.call_tool("memory__recall", json!({"key": "k"})).await {
                Ok(_) => through += 1,
                Err(refusal) => refusals.push(refusal),
            }
        }
        assert_eq!(through, 10);
        assert!(matches!(&refusals[0], ToolError::Refused { layer: "rate_limit", .. }), "{:?}", refusals[0]);
        assert!(refusals[0].to_string().contains("try again in"), "{}", refusals[0]);
        // Another client has a bucket of its own; a tool no limit counts is not limited.
        assert!(agent.acting_for(Caller::new("alice")).call_tool("memory__recall", json!({"key": "k"})).await.is_ok());
        assert!(bob.call_tool("memory__forget", json!({"key": "k"})).await.is_ok());
    }

    #[test]
    fn a_limit_of_nothing_is_refused() {
        let error = RateLimits::new(&[config("bob", "*", 0, None)]).unwrap_err();
        assert_eq!(error.to_string(), "rate limit 0 (client `bob`, tool `*`): `per_minute` must be at least 1");
    }
}
