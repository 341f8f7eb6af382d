//! Rate limits: a token bucket per limit and client (GCRA), kept in the process, or in
//! Redis so that every replica of a gateway draws from the same buckets.

use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use skill_core::{CallContext, CallFuture, CallLayer, Next, ToolError, wildcard_matches};

use super::buckets::Buckets;
use super::state::PolicyState;
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
    /// Its buckets in this process (with shared buckets, the refusals this process
    /// counted), shared by every agent made with the same [`PolicyState`].
    buckets: Arc<Buckets>,
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
    /// The limits `configs` give, their buckets in this process, of their own.
    pub(crate) fn new(configs: &[RateLimitConfig]) -> Result<Self, LimitError> {
        Self::kept_in(configs, &PolicyState::default())
    }

    /// The limits `configs` give, their buckets kept in `state`.
    pub(crate) fn kept_in(configs: &[RateLimitConfig], state: &PolicyState) -> Result<Self, LimitError> {
        let limits =
            configs.iter().enumerate().map(|(index, config)| limit(index, config, state)).collect::<Result<_, _>>()?;
        Ok(Self {
            limits,
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
            if let Err(wait) = limit.buckets.take(&call.caller.client) {
                return Err(limit.refusal(call, wait));
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
                        limit.buckets.refused(&call.caller.client);
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

#[cfg(feature = "redis")]
pub(super) use self::shared::shared_views;

fn limit(index: usize, config: &RateLimitConfig, state: &PolicyState) -> Result<Limit, LimitError> {
    let error = |reason| LimitError { index, client: config.client.clone(), tool: config.tool.clone(), reason };
    let per_minute = NonZeroU32::new(config.per_minute).ok_or_else(|| error("`per_minute` must be at least 1"))?;
    let burst = match config.burst {
        None => per_minute,
        Some(burst) => NonZeroU32::new(burst).ok_or_else(|| error("`burst` must be at least 1"))?,
    };
    let buckets = state.buckets_of(index, config, per_minute, burst);
    Ok(Limit { client: config.client.clone(), tool: config.tool.clone(), per_minute, burst, buckets })
}

#[cfg(feature = "redis")]
mod shared {
    //! Buckets in Redis: each is the theoretical arrival time of the next call (GCRA),
    //! read and moved on by one script, so replicas never both take the last token.

    use std::collections::HashMap;
    use std::sync::Arc;
    use std::time::Duration;

    use skill_core::{RedisConnection, RedisFailure, ToolError};

    use super::Limit;
    use crate::config::RateLimitConfig;
    use crate::policy::buckets::BucketView;

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

    /// The server's time in microseconds, then the time each bucket of `KEYS` is full
    /// again (0 for one that is full: its key expired).
    const READ: &str = r"
local time = redis.call('TIME')
local answer = {tonumber(time[1]) * 1000000 + tonumber(time[2])}
for index, key in ipairs(KEYS) do answer[index + 1] = tonumber(redis.call('GET', key)) or 0 end
return answer
";

    /// The key of `client`'s bucket of the `index`th limit, `limit` (its `per_minute`,
    /// `burst`, and patterns), which ends with the client's name (the keys of every
    /// bucket of the limit start with the key of the client `""`). It names the limit as
    /// configured, so a changed limit starts afresh.
    fn key_of(prefix: &str, index: usize, limit: (u32, u32, &str, &str), client: &str) -> String {
        let (per_minute, burst, clients, tool) = limit;
        format!("{prefix}rate:{index}:{per_minute}:{burst}:{clients}:{tool}:{client}")
    }

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
            let numbers = (limit.per_minute.get(), limit.burst.get(), limit.client.as_str(), limit.tool.as_str());
            let key = key_of(&self.prefix, index, numbers, client);
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

    /// The buckets of the `index`th limit, `config`, in `server` under `prefix`: every
    /// client's that is not full (found with `SCAN`), and every client's of `refusals`
    /// (this process's, by client).
    pub(in crate::policy) async fn shared_views(
        server: &RedisConnection,
        prefix: &str,
        index: usize,
        config: &RateLimitConfig,
        mut refusals: HashMap<String, u64>,
    ) -> Result<Vec<BucketView>, RedisFailure> {
        let burst = config.burst.unwrap_or(config.per_minute);
        let base = key_of(prefix, index, (config.per_minute, burst, &config.client, &config.tool), "");
        // The limit's patterns may hold `*`, which SCAN's pattern must match as itself.
        let mut pattern = String::with_capacity(base.len() + 8);
        for char in base.chars() {
            if matches!(char, '*' | '?' | '[' | ']' | '\\') {
                pattern.push('\\');
            }
            pattern.push(char);
        }
        pattern.push('*');
        let mut keys: Vec<String> = server
            .run(|mut connection| {
                let pattern = pattern.clone();
                async move {
                    let (mut cursor, mut keys) = (0_u64, Vec::new());
                    loop {
                        let (next, found): (u64, Vec<String>) = redis::cmd("SCAN")
                            .arg(cursor)
                            .arg("MATCH")
                            .arg(&pattern)
                            .arg("COUNT")
                            .arg(1000)
                            .query_async(&mut connection)
                            .await?;
                        keys.extend(found);
                        if next == 0 {
                            return Ok(keys);
                        }
                        cursor = next;
                    }
                }
            })
            .await?;
        keys.sort();
        keys.dedup();
        let script = redis::Script::new(READ);
        let times: Vec<u64> = server
            .run(|mut connection| {
                let mut invocation = script.prepare_invoke();
                for key in &keys {
                    invocation.key(key);
                }
                async move { invocation.invoke_async(&mut connection).await }
            })
            .await?;
        let interval = Duration::from_micros(60_000_000 / u64::from(config.per_minute.max(1)));
        let now = times.first().copied().unwrap_or_default();
        let mut views: Vec<BucketView> = keys
            .iter()
            .zip(times.iter().skip(1))
            .filter_map(|(key, full_at)| {
                let client = key.strip_prefix(&base)?;
                let debt = Duration::from_micros(full_at.saturating_sub(now));
                Some(BucketView::of(client.to_owned(), debt, interval, burst, refusals.remove(client).unwrap_or(0)))
            })
            .collect();
        views.extend(
            refusals
                .into_iter()
                .map(|(client, refused)| BucketView::of(client, Duration::ZERO, interval, burst, refused)),
        );
        views.sort_by(|a, b| a.client.cmp(&b.client));
        Ok(views)
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
