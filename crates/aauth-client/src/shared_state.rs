//! [`SharedState`]: where an agent keeps what the other processes acting as the same agent
//! (the same agent provider and key) must see: the agent token, the person and auth
//! tokens of each resource, and the seconds claimed for `created`. Two kinds: a token
//! cache folder ([`Files`], processes of one machine), and a Redis server
//! ([`RedisState`](crate::redis_state::RedisState), replicas on several machines).
//!
//! Both hold the same entries under the same names (`agent-token-<16 hex digits>` per
//! provider and key, `resource-tokens-<16 hex digits>` per provider, key and resource, a
//! claim per tuple and second) and the same text, and what is read back from either
//! passes the same checks (`enroll::from_cache_text`, `shared_tokens::from_cache_text`)
//! before it is used.

use std::path::{Path, PathBuf};

use async_trait::async_trait;

use crate::created::{self, Tuple};
use crate::enroll::{self, AgentToken};
use crate::metadata::ServerId;
use crate::private_file::{self, Purpose};
use crate::shared_tokens::{self, Owner, ResourceTokens};
use crate::{AgentKey, Error};

/// The state an agent shares with the other processes acting as it.
#[async_trait]
pub(crate) trait SharedState: Send + Sync {
    /// The token cache folder, for the state kept in files.
    fn folder(&self) -> Option<&Path> {
        None
    }

    /// What `Debug` shows of it: never a secret.
    fn describe(&self) -> String;

    /// The agent token kept for `provider` and `key`, if there is a usable one.
    async fn agent_token(&self, provider: &ServerId, key: &AgentKey) -> Result<Option<AgentToken>, Error>;

    /// Keeps `token` as the agent token of `provider` and `key`, replacing what was there.
    async fn keep_agent_token(&self, provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Result<(), Error>;

    /// The fresh, checked person and auth tokens kept for `owner`.
    async fn resource_tokens(&self, owner: Owner<'_>, now: u64) -> Result<ResourceTokens, Error>;

    /// Keeps `held` for `owner`, with the token of the other kind already kept where
    /// `held` has none ([`shared_tokens::merged`]).
    async fn keep_resource_tokens(&self, owner: Owner<'_>, held: ResourceTokens, now: u64) -> Result<(), Error>;

    /// Claims `second` as the `created` of `tuple`: true unless another process has. An
    /// error when that cannot be known.
    async fn claim(&self, tuple: &Tuple, second: u64) -> Result<bool, Error>;
}

/// The state in a token cache folder: private files, and `created` markers (see
/// `enroll`, `shared_tokens` and `created`). Its file work runs on tokio's blocking
/// threads.
#[derive(Debug)]
pub(crate) struct Files {
    dir: PathBuf,
}

impl Files {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Files { dir }
    }

    /// Runs `work` on the token cache file of `owner` off the runtime, with an owned copy
    /// of `owner`.
    async fn with_resource_file<T: Send + 'static>(
        &self,
        owner: Owner<'_>,
        work: impl FnOnce(&Path, Owner<'_>) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let path = shared_tokens::cache_file(&self.dir, owner.provider, owner.key, owner.resource);
        let file = path.clone();
        let (provider, key) = (owner.provider.clone(), owner.key.clone());
        let (resource, person_server) = (owner.resource.clone(), owner.person_server.clone());
        private_file::off_runtime(Purpose::TokenCache, &path, move || {
            work(&file, Owner { provider: &provider, key: &key, resource: &resource, person_server: &person_server })
        })
        .await
    }
}

#[async_trait]
impl SharedState for Files {
    fn folder(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn describe(&self) -> String {
        format!("files in {}", self.dir.display())
    }

    async fn agent_token(&self, provider: &ServerId, key: &AgentKey) -> Result<Option<AgentToken>, Error> {
        let path = enroll::cache_file(&self.dir, provider, key);
        let (file, provider, key) = (path.clone(), provider.clone(), key.clone());
        private_file::off_runtime(Purpose::TokenCache, &path, move || enroll::load_cached(&file, &provider, &key)).await
    }

    async fn keep_agent_token(&self, provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Result<(), Error> {
        let path = enroll::cache_file(&self.dir, provider, key);
        let (file, provider, key, token) = (path.clone(), provider.clone(), key.clone(), token.clone());
        private_file::off_runtime(Purpose::TokenCache, &path, move || {
            enroll::store_cached(&file, &provider, &key, &token)
        })
        .await
    }

    async fn resource_tokens(&self, owner: Owner<'_>, now: u64) -> Result<ResourceTokens, Error> {
        self.with_resource_file(owner, move |path, owner| shared_tokens::load(path, owner, now)).await
    }

    async fn keep_resource_tokens(&self, owner: Owner<'_>, held: ResourceTokens, now: u64) -> Result<(), Error> {
        self.with_resource_file(owner, move |path, owner| {
            let merged = if held.person.is_some() && held.auth.is_some() {
                held
            } else {
                shared_tokens::merged(held, shared_tokens::load(path, owner, now)?)
            };
            shared_tokens::store(path, owner, &merged)
        })
        .await
    }

    async fn claim(&self, tuple: &Tuple, second: u64) -> Result<bool, Error> {
        Ok(created::claim_shared_off_runtime(&self.dir, tuple, second).await)
    }
}
