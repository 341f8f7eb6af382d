//! Where `mcp serve --http` keeps its 2025-11-25 sessions: in the Redis server of
//! `storage:` when the top level's backend is `redis`, so that replicas sharing it serve
//! each other's sessions; else in the process.

use std::sync::Arc;

use omniagent_host::Config;
use skill_mcp::server::RedisSessionStore;

/// The shared session store of `config`, if its storage is Redis.
pub(super) async fn store(config: &Config) -> anyhow::Result<Option<Arc<RedisSessionStore>>> {
    let Some(url) = omniagent_host::sessions_redis_url(config).await? else { return Ok(None) };
    let store =
        RedisSessionStore::new(&url).map_err(|error| crate::UsageError::new(format!("storage.url: {error}")))?;
    tracing::info!("2025-11-25 sessions are kept in {}, for every replica", store.shown_url());
    Ok(Some(Arc::new(store)))
}
