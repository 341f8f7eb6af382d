//! [`RedisState`]: the agent's shared state in a Redis server, so that replicas on several
//! machines (each its own token folder, the same agent key, the same Redis) share one
//! enrollment, one person approval, and never sign a replay.
//!
//! The keys are those of the files, under `omniagent:aauth:`:
//! - `omniagent:aauth:agent-token-<16 hex digits>` (per agent provider and key) and
//!   `omniagent:aauth:resource-tokens-<16 hex digits>` (per provider, key and resource):
//!   the text of the cache file, set with an expiry at the last token's, so that Redis
//!   drops what can no longer be used. What is read back passes the checks of a file's
//!   (this provider, key, resource and person server; each token its `typ`, bound to this
//!   key, its audience and issuer; fresh).
//! - `omniagent:aauth:created-<16 hex digits>-<second>`: a claimed `created`, set with
//!   `SET … NX EX 120` (see `created`), atomic and gone by itself.
//!
//! The connection is made on first use and shared by every request (a multiplexed
//! [`ConnectionManager`], which reconnects after the server goes away); a command whose
//! connection dropped is sent once more (each is safe to repeat: a claim whose answer was
//! lost counts as taken, and the request waits for the next second). A server that cannot
//! be reached is an [`Error::RedisState`]: the request fails rather than risk a replay.
//! The URL, which may hold a password, appears in no error, log or `Debug` output. Tokens
//! read from Redis are held as zeroized buffers once read; the redis client's own buffers
//! are not zeroized.

use std::future::Future;
use std::time::Duration;

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use skill_core::{ExposeSecret as _, RedisConnection, SecretString};
use zeroize::Zeroizing;

use crate::created::Tuple;
use crate::enroll::{self, AgentToken};
use crate::metadata::ServerId;
use crate::shared_state::SharedState;
use crate::shared_tokens::{self, Owner, ResourceTokens};
use crate::{AgentKey, Error};

/// What every key starts with.
const KEY_PREFIX: &str = "omniagent:aauth:";
/// How long a claimed `created` is kept (seconds): two replicas whose clocks are each
/// within a verifier's ±60 s window may be 120 s apart.
pub(crate) const CREATED_TTL: u64 = 120;
/// How long the server may take to answer one command.
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// The agent's state in a Redis server.
pub(crate) struct RedisState {
    server: RedisConnection,
    /// What may not appear in a message: the URL and its password.
    hidden: Vec<SecretString>,
}

impl RedisState {
    /// The state in the server at `url` (`redis://[user:password@]host[:port][/db]`);
    /// nothing is connected until first use.
    pub(crate) fn new(url: &SecretString) -> Result<Self, Error> {
        let server = RedisConnection::new(url, RESPONSE_TIMEOUT)
            .map_err(|failure| Error::RedisState { action: "use the server", reason: failure.to_string() })?;
        let mut hidden = vec![url.clone()];
        if let Ok(parsed) = url::Url::parse(url.expose_secret())
            && let Some(password) = parsed.password()
        {
            hidden.push(SecretString::from(password));
        }
        Ok(Self { server, hidden })
    }

    /// The error for `action`, its reason without the URL or its password.
    fn error(&self, action: &'static str, reason: impl std::fmt::Display) -> Error {
        let mut reason = reason.to_string();
        for hidden in &self.hidden {
            if !hidden.expose_secret().is_empty() {
                reason = reason.replace(hidden.expose_secret(), skill_core::redact::REDACTED);
            }
        }
        Error::RedisState { action, reason }
    }

    /// Runs `command` for `action` (see [`RedisConnection::run`]): each is safe to repeat.
    async fn run<T, F, Fut>(&self, action: &'static str, command: F) -> Result<T, Error>
    where
        F: Fn(ConnectionManager) -> Fut + Send,
        Fut: Future<Output = redis::RedisResult<T>> + Send,
    {
        self.server.run(command).await.map_err(|failure| self.error(action, failure))
    }

    /// The text kept at `key`, if any.
    async fn get(&self, action: &'static str, key: &str) -> Result<Option<Zeroizing<String>>, Error> {
        let value: Option<Vec<u8>> = self
            .run(action, |mut connection| async move { redis::cmd("GET").arg(key).query_async(&mut connection).await })
            .await?;
        // Not UTF-8: not an entry of ours, as good as none.
        Ok(value.and_then(|bytes| String::from_utf8(bytes).ok()).map(Zeroizing::new))
    }

    /// Sets `key` to `text` for `ttl` seconds (at least one).
    async fn set(&self, action: &'static str, key: &str, text: &[u8], ttl: u64) -> Result<(), Error> {
        self.run(action, |mut connection| async move {
            redis::cmd("SET").arg(key).arg(text).arg("EX").arg(ttl.max(1)).query_async::<()>(&mut connection).await
        })
        .await
    }

    async fn stored_resource_tokens(&self, key: &str, owner: Owner<'_>, now: u64) -> Result<ResourceTokens, Error> {
        let text = self.get("read the person and auth tokens", key).await?;
        Ok(text.map(|text| shared_tokens::from_cache_text(&text, owner, now, &key)).unwrap_or_default())
    }
}

fn agent_token_key(provider: &ServerId, key: &AgentKey) -> String {
    format!("{KEY_PREFIX}{}", enroll::cache_name(provider, key))
}

fn resource_tokens_key(owner: Owner<'_>) -> String {
    format!("{KEY_PREFIX}{}", shared_tokens::cache_name(owner.provider, owner.key, owner.resource))
}

fn created_key(tuple: &Tuple, second: u64) -> String {
    format!("{KEY_PREFIX}created-{}-{second}", tuple.name())
}

#[async_trait]
impl SharedState for RedisState {
    fn describe(&self) -> String {
        "redis".to_owned()
    }

    async fn agent_token(&self, provider: &ServerId, key: &AgentKey) -> Result<Option<AgentToken>, Error> {
        let name = agent_token_key(provider, key);
        let text = self.get("read the agent token", &name).await?;
        Ok(text.and_then(|text| enroll::from_cache_text(&text, provider, key, &name)))
    }

    async fn keep_agent_token(&self, provider: &ServerId, key: &AgentKey, token: &AgentToken) -> Result<(), Error> {
        let text = enroll::cache_text(provider, key, token);
        let ttl = token.expires_at.saturating_sub(now());
        self.set("keep the agent token", &agent_token_key(provider, key), &text, ttl).await
    }

    async fn resource_tokens(&self, owner: Owner<'_>, now: u64) -> Result<ResourceTokens, Error> {
        self.stored_resource_tokens(&resource_tokens_key(owner), owner, now).await
    }

    async fn keep_resource_tokens(&self, owner: Owner<'_>, held: ResourceTokens, now: u64) -> Result<(), Error> {
        let key = resource_tokens_key(owner);
        let merged = if held.person.is_some() && held.auth.is_some() {
            held
        } else {
            shared_tokens::merged(held, self.stored_resource_tokens(&key, owner, now).await?)
        };
        let last = [&merged.person, &merged.auth].into_iter().flatten().map(|cached| cached.expires_at).max();
        let Some(last) = last else { return Ok(()) };
        let text = shared_tokens::cache_text(owner, &merged);
        self.set("keep the person and auth tokens", &key, &text, last.saturating_sub(now)).await
    }

    async fn claim(&self, tuple: &Tuple, second: u64) -> Result<bool, Error> {
        let key = created_key(tuple, second);
        let set: Option<String> = self
            .run("claim a signature time", |mut connection| {
                let key = key.clone();
                async move {
                    redis::cmd("SET")
                        .arg(key)
                        .arg("")
                        .arg("NX")
                        .arg("EX")
                        .arg(CREATED_TTL)
                        .query_async(&mut connection)
                        .await
                }
            })
            .await?;
        Ok(set.is_some())
    }
}

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    use reqwest::{Method, Request};
    use serde_json::{Value, json};
    use url::Url;

    use super::*;
    use crate::created;
    use crate::jwt::TokenKind;
    use crate::metadata::Role;
    use crate::tokens::CachedToken;

    fn id(role: Role, text: &str) -> ServerId {
        ServerId::parse(role, &Url::parse(text).unwrap(), false).unwrap()
    }

    fn state(server: &test_peers::RedisServer) -> RedisState {
        RedisState::new(&SecretString::from(server.url())).unwrap()
    }

    fn agent_token(key: &AgentKey, expires_at: u64) -> AgentToken {
        let claims = json!({"iss": "https://ap.example", "sub": "aauth:a@ap.example", "exp": expires_at,
            "cnf": {"jwk": key.public_jwk()}, "ps": "https://ps.example"});
        AgentToken {
            token: SecretString::from(crate::jwt::test_token(TokenKind::Agent, &claims)),
            agent_id: "aauth:a@ap.example".into(),
            expires_at,
            person_server: Some("https://ps.example".into()),
        }
    }

    async fn ttl(server: &test_peers::RedisServer, key: &str) -> i64 {
        let client = redis::Client::open(server.url()).unwrap();
        let mut connection = client.get_multiplexed_async_connection().await.unwrap();
        redis::cmd("TTL").arg(key).query_async(&mut connection).await.unwrap()
    }

    /// Two replicas' states on one server: the agent token one keeps, the other reads, and
    /// only for the same provider and key; it expires with the token.
    #[tokio::test]
    async fn the_agent_token_is_shared_for_its_provider_and_key_only() {
        let server = test_peers::RedisServer::start();
        let (first, second) = (state(&server), state(&server));
        let provider = id(Role::AgentProvider, "https://ap.example");
        let key = AgentKey::generate();
        assert!(second.agent_token(&provider, &key).await.unwrap().is_none());
        let token = agent_token(&key, now() + 3600);
        first.keep_agent_token(&provider, &key, &token).await.unwrap();
        let read = second.agent_token(&provider, &key).await.unwrap().unwrap();
        assert_eq!(read.token.expose_secret(), token.token.expose_secret());
        assert_eq!((read.agent_id.as_str(), read.expires_at), ("aauth:a@ap.example", token.expires_at));
        let name = format!("omniagent:aauth:{}", enroll::cache_name(&provider, &key));
        assert!((3590..=3600).contains(&ttl(&server, &name).await), "expires with the token");

        // Another key or provider finds nothing; a token of another key kept under this
        // key's name is not used.
        assert!(second.agent_token(&provider, &AgentKey::generate()).await.unwrap().is_none());
        assert!(second.agent_token(&id(Role::AgentProvider, "https://other.example"), &key).await.unwrap().is_none());
        first.keep_agent_token(&provider, &key, &agent_token(&AgentKey::generate(), now() + 3600)).await.unwrap();
        assert!(second.agent_token(&provider, &key).await.unwrap().is_none());
    }

    /// The person and auth tokens read back pass the checks of a file's: this resource and
    /// person server, bound to this key, fresh; a replica holding one kind keeps the other.
    #[tokio::test]
    async fn resource_tokens_are_shared_checked_and_merged() {
        let server = test_peers::RedisServer::start();
        let (first, second) = (state(&server), state(&server));
        let provider = id(Role::AgentProvider, "https://ap.example");
        let (resource, person_server) =
            (id(Role::Resource, "https://r.example"), id(Role::PersonServer, "https://ps.example"));
        let key = AgentKey::generate();
        let owner = Owner { provider: &provider, key: &key, resource: &resource, person_server: &person_server };
        let now = now();
        let claims = |key: &AgentKey| -> Value {
            json!({"iss": "https://ps.example", "aud": "https://r.example", "sub": "p1", "ps": "https://ps.example",
                "cnf": {"jwk": key.public_jwk()}, "iat": now - 10, "exp": now + 3600})
        };
        let token = |kind, key: &AgentKey, expires_at| CachedToken {
            token: SecretString::from(crate::jwt::test_token(kind, &claims(key))),
            expires_at,
            sub: Some("p1".to_owned()),
        };
        let person = token(TokenKind::Person, &key, now + 3600);
        first
            .keep_resource_tokens(owner, ResourceTokens { person: Some(person.clone()), auth: None }, now)
            .await
            .unwrap();
        let auth = token(TokenKind::Auth, &key, now + 1800);
        second
            .keep_resource_tokens(owner, ResourceTokens { person: None, auth: Some(auth.clone()) }, now)
            .await
            .unwrap();
        let read = first.resource_tokens(owner, now).await.unwrap();
        let secret = |token: Option<&CachedToken>| token.map(|token| token.token.expose_secret().to_owned());
        assert_eq!(secret(read.person.as_ref()), secret(Some(&person)), "the person token was kept");
        assert_eq!(secret(read.auth.as_ref()), secret(Some(&auth)));
        let name = resource_tokens_key(owner);
        assert!((3590..=3600).contains(&ttl(&server, &name).await), "expires with the last token");

        // Another resource or person server finds nothing; tokens bound to another key are
        // not used; a token within 5 minutes of its expiry is not used.
        let other = id(Role::Resource, "https://other.example");
        assert!(second.resource_tokens(Owner { resource: &other, ..owner }, now).await.unwrap().auth.is_none());
        let other_ps = id(Role::PersonServer, "https://other-ps.example");
        assert!(second.resource_tokens(Owner { person_server: &other_ps, ..owner }, now).await.unwrap().auth.is_none());
        let stranger = AgentKey::generate();
        let foreign = ResourceTokens {
            person: Some(token(TokenKind::Person, &stranger, now + 3600)),
            auth: Some(token(TokenKind::Auth, &stranger, now + 3600)),
        };
        first.keep_resource_tokens(owner, foreign, now).await.unwrap();
        let read = second.resource_tokens(owner, now).await.unwrap();
        assert!(read.person.is_none() && read.auth.is_none());
        let stale = ResourceTokens { person: None, auth: Some(token(TokenKind::Auth, &key, now + 30)) };
        first.keep_resource_tokens(owner, stale, now).await.unwrap();
        assert!(second.resource_tokens(owner, now).await.unwrap().auth.is_none());
    }

    /// A second is claimed once, by one of any number of replicas, atomically; the claim
    /// removes itself after `CREATED_TTL`.
    #[tokio::test]
    async fn each_second_is_claimed_once_across_replicas() {
        let server = test_peers::RedisServer::start();
        let key = AgentKey::generate();
        let post = Request::new(Method::POST, "https://r.example/shared".parse().unwrap());
        let replicas: Vec<RedisState> = (0..4).map(|_| state(&server)).collect();
        // Another replica has claimed this second and the next.
        let taken = now();
        let tuple = created::tuple_of(&key, &post);
        assert!(replicas[0].claim(&tuple, taken).await.unwrap());
        assert!(replicas[0].claim(&tuple, taken + 1).await.unwrap());
        let created = created::created_for(&key, &post, Some(&replicas[1])).await.unwrap();
        assert!(created >= taken + 2, "{created} {taken}");
        assert!(!replicas[2].claim(&tuple, created).await.unwrap(), "the second it took is taken");
        let ttl = ttl(&server, &created_key(&tuple, created)).await;
        assert!((1..=CREATED_TTL as i64).contains(&ttl), "{ttl}");

        // Replicas racing for one second: exactly one wins.
        let second = taken + 1000;
        let claims = futures_util::future::join_all(replicas.iter().map(|replica| replica.claim(&tuple, second))).await;
        assert_eq!(claims.into_iter().filter(|claimed| *claimed.as_ref().unwrap()).count(), 1);
    }

    /// A server that is down is an error, for tokens and for `created` alike: nothing is
    /// signed on this process's clock alone. No message shows the URL or its password.
    #[tokio::test]
    async fn a_server_that_is_down_is_an_error_without_the_url() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let url = format!("redis://:hunter2@127.0.0.1:{port}/");
        let state = RedisState::new(&SecretString::from(url.clone())).unwrap();
        let key = AgentKey::generate();
        let post = Request::new(Method::POST, "https://r.example/down".parse().unwrap());
        let error = created::created_for(&key, &post, Some(&state)).await.unwrap_err();
        let shown = format!("{error} {error:?}");
        assert!(shown.starts_with("AAuth state in Redis: cannot claim a signature time: cannot connect"), "{shown}");
        let provider = id(Role::AgentProvider, "https://ap.example");
        let error = state.agent_token(&provider, &key).await.unwrap_err();
        let shown = format!("{shown} {error} {error:?} {}", state.describe());
        assert!(matches!(error, Error::RedisState { action: "read the agent token", .. }), "{error:?}");
        assert!(!shown.contains("hunter2") && !shown.contains(&url), "{shown}");
        // GETs are not state-changing: they need no claim.
        let get = Request::new(Method::GET, "https://r.example/down".parse().unwrap());
        assert!(created::created_for(&key, &get, Some(&state)).await.is_ok());

        let error = RedisState::new(&SecretString::from("redis://:hunter2@[::1")).err().unwrap();
        assert!(!format!("{error} {error:?}").contains("hunter2"), "{error:?}");
    }
}
