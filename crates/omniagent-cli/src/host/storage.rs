//! Where an agent's skills keep state (`storage:`), and the Redis server that replicas
//! share.

use std::sync::Arc;

#[cfg(feature = "redis")]
use skill_core::{ExposeSecret as _, SecretRef};
use skill_core::{KvStore, MemoryStore, SecretResolver};

use crate::HostError;
use crate::config::{AgentConfig, Home, StorageBackend};

pub(super) async fn store(
    config: &AgentConfig,
    home: &Home,
    resolver: &SecretResolver,
) -> Result<Arc<dyn KvStore>, HostError> {
    let storage = &config.sections.storage;
    if storage.url.is_some() && storage.backend != StorageBackend::Redis {
        return Err(HostError::Storage { key: "url", message: "only `backend: redis` takes a url".to_owned() });
    }
    match storage.backend {
        StorageBackend::Memory => Ok(Arc::new(MemoryStore::new())),
        #[cfg(feature = "sqlite")]
        StorageBackend::Sqlite => Ok(Arc::new(skill_core::SqliteStore::new(home.state_db()))),
        #[cfg(not(feature = "sqlite"))]
        StorageBackend::Sqlite => {
            let _ = home;
            Err(HostError::SqliteUnavailable)
        }
        #[cfg(feature = "redis")]
        StorageBackend::Redis => {
            let url = redis_url(storage.url.as_ref(), resolver).await?;
            let store = skill_core::RedisStore::new(&url)
                .map_err(|error| HostError::Storage { key: "url", message: error.to_string() })?;
            Ok(Arc::new(store))
        }
        #[cfg(not(feature = "redis"))]
        StorageBackend::Redis => {
            let _ = resolver;
            Err(HostError::RedisUnavailable)
        }
    }
}

/// The Redis server of `storage:` when it is `backend: redis`, which the replicas of a
/// gateway share their rate limits' buckets through; else `None`.
#[cfg(feature = "redis")]
pub(crate) async fn shared_redis(
    config: &AgentConfig,
    resolver: &SecretResolver,
) -> Result<Option<Arc<skill_core::RedisConnection>>, HostError> {
    let storage = &config.sections.storage;
    if storage.backend != StorageBackend::Redis {
        return Ok(None);
    }
    let url = redis_url(storage.url.as_ref(), resolver).await?;
    let server = skill_core::RedisConnection::new(&url, SHARED_RESPONSE_TIMEOUT)
        .map_err(|error| HostError::Storage { key: "url", message: error.to_string() })?;
    Ok(Some(Arc::new(server)))
}

/// How long a shared bucket's answer may take: a call waits for it.
#[cfg(feature = "redis")]
const SHARED_RESPONSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// The store of the top level's `storage:`, which the gateway's `/readyz` reads to tell
/// whether the state is reachable.
#[cfg(feature = "mcp")]
pub async fn top_level_store(config: &crate::Config, home: &Home) -> Result<Arc<dyn KvStore>, HostError> {
    store(&config.for_agent(None)?, home, &SecretResolver::default()).await
}

/// The Redis server of the top level's `storage:` when it is `backend: redis`, else
/// `None`: where `mcp serve --http` keeps its 2025-11-25 sessions, so that every replica
/// sharing that server can serve every session.
#[cfg(all(feature = "redis", feature = "mcp"))]
pub async fn sessions_redis_url(config: &crate::Config) -> Result<Option<skill_core::SecretString>, HostError> {
    let storage = &config.for_agent(None)?.sections.storage;
    if storage.backend != StorageBackend::Redis {
        return Ok(None);
    }
    redis_url(storage.url.as_ref(), &SecretResolver::default()).await.map(Some)
}

/// The Redis URL of `storage.url`: the secret resolved, then `${VAR}`, `${env:VAR}` and
/// `${VAR:-default}` expanded from the environment; it and its password are hidden from
/// the logs.
#[cfg(feature = "redis")]
pub(super) async fn redis_url(
    reference: Option<&SecretRef>,
    resolver: &SecretResolver,
) -> Result<skill_core::SecretString, HostError> {
    let error = |message: String| HostError::Storage { key: "url", message };
    let reference = reference.ok_or_else(|| error("`backend: redis` needs a url (`url: env:REDIS_URL`)".to_owned()))?;
    let resolved = resolver.resolve(reference).await.map_err(|failure| error(failure.to_string()))?;
    let url = skill_core::expand_vars(resolved.expose_secret(), |name| {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    })
    .map_err(error)?;
    crate::log::hide(&url);
    if let Ok(parsed) = url::Url::parse(&url) {
        parsed.password().into_iter().for_each(crate::log::hide);
    }
    Ok(skill_core::SecretString::from(url))
}
