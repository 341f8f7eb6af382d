//! Person and auth tokens shared between processes through the token cache folder, so
//! that a later process (one `omniagent` command after another) presents the tokens an
//! earlier one obtained instead of asking the person server, and the person, again.
//!
//! Beside the agent token's file (see `enroll`), the folder holds one file per agent
//! provider, key and resource, `resource-tokens-<16 hex digits>.json` (the start of the
//! SHA-256 of the provider's identifier, the key's thumbprint and the resource's
//! identifier), with the person token and the auth token the agent holds for that
//! resource:
//!
//! ```json
//! {
//!   "agent_provider": "https://agents.example",
//!   "thumbprint": "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs",
//!   "resource": "https://api.example",
//!   "person_server": "https://ps.example",
//!   "person_token": {"token": "eyJ…", "expires_at": 1800003600},
//!   "auth_token": {"token": "eyJ…", "expires_at": 1800003600}
//! }
//! ```
//!
//! Either token may be absent. `expires_at` is when the token stops being usable (Unix
//! seconds): its `exp`, or sooner when the person server's `expires_in` said so.
//!
//! A file is a private file (0600 in a 0700 folder, written in full and renamed into
//! place: see `private_file`): concurrent writers never leave a partial file, the last
//! one wins. What is read back passes the checks a new token passes before it is used:
//! the file must name this provider, key, resource and person server; each token its
//! `typ`, its `cnf.jwk` this key, its `aud` the resource, the person token's `iss` the
//! person server, and it must still be fresh (until 5 minutes before it expires). The auth
//! token's `iss` and `sub`, compared with the resource token it was exchanged for when it
//! arrived, cannot be compared again: that resource token is not kept. A file or a token
//! that fails (not JSON, another agent's, expired, not bound to this key, readable by
//! others) counts as none, and is replaced when the next token for the resource is
//! stored; only a folder others can write is an error ([`Error::FolderPermissions`]).
//!
//! A Redis server holds the same text under `omniagent:aauth:resource-tokens-<16 hex
//! digits>` instead (`redis_state`), read back with the same checks ([`from_cache_text`]).

use std::fmt::Display;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use skill_core::{ExposeSecret as _, SecretString};
use zeroize::Zeroizing;

use crate::metadata::ServerId;
use crate::private_file::{self, Contents, Placement, Purpose};
use crate::tokens::{self, CachedToken};
use crate::{AgentKey, Error};

/// Whose tokens a file holds: the agent (provider and key), the resource they are for, and
/// the person server that issued them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Owner<'a> {
    pub(crate) provider: &'a ServerId,
    pub(crate) key: &'a AgentKey,
    pub(crate) resource: &'a ServerId,
    pub(crate) person_server: &'a ServerId,
}

/// The person and auth tokens of one resource.
#[derive(Debug, Default, Clone)]
pub(crate) struct ResourceTokens {
    pub(crate) person: Option<CachedToken>,
    pub(crate) auth: Option<CachedToken>,
}

/// The file, read.
#[derive(Deserialize)]
struct CacheFile {
    agent_provider: String,
    thumbprint: String,
    resource: String,
    person_server: String,
    #[serde(default)]
    person_token: Option<Entry>,
    #[serde(default)]
    auth_token: Option<Entry>,
}

#[derive(Deserialize)]
struct Entry {
    token: String,
    expires_at: u64,
}

/// The file, written: the tokens borrowed, so that no copy of them is left behind.
#[derive(Serialize)]
struct CacheFileRef<'a> {
    agent_provider: &'a str,
    thumbprint: &'a str,
    resource: &'a str,
    person_server: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    person_token: Option<EntryRef<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auth_token: Option<EntryRef<'a>>,
}

#[derive(Serialize)]
struct EntryRef<'a> {
    token: &'a str,
    expires_at: u64,
}

impl<'a> EntryRef<'a> {
    fn of(cached: &'a CachedToken) -> Self {
        EntryRef { token: cached.token.expose_secret(), expires_at: cached.expires_at }
    }
}

/// The name of the cache entry of `provider`, `key` and `resource`:
/// `resource-tokens-<16 hex digits>`, the file's name without `.json` in a cache folder,
/// or the Redis key's end.
pub(crate) fn cache_name(provider: &ServerId, key: &AgentKey, resource: &ServerId) -> String {
    let digest = Sha256::digest(format!("{}\n{}\n{}", provider.as_str(), key.thumbprint(), resource.as_str()));
    let short: String = digest[..8].iter().map(|byte| format!("{byte:02x}")).collect();
    format!("resource-tokens-{short}")
}

/// The file of `provider`, `key` and `resource` in the cache folder `dir`.
pub(crate) fn cache_file(dir: &Path, provider: &ServerId, key: &AgentKey, resource: &ServerId) -> PathBuf {
    dir.join(format!("{}.json", cache_name(provider, key, resource)))
}

/// The tokens cached at `path` for `owner` that are still fresh at `now` and pass the
/// checks; none when there is no usable file.
pub(crate) fn load(path: &Path, owner: Owner<'_>, now: u64) -> Result<ResourceTokens, Error> {
    let unusable = |why: &str| {
        tracing::warn!(path = %path.display(), "resource token cache {why}; it will be replaced");
        Ok(ResourceTokens::default())
    };
    let text = match private_file::read(Purpose::TokenCache, path) {
        Ok(Contents::Private(text)) => text,
        Ok(Contents::Missing) => return Ok(ResourceTokens::default()),
        Ok(Contents::Exposed(mode)) => return unusable(&format!("is readable by group or others (mode {mode:o})")),
        Err(Error::TokenCacheIo { error, .. }) => return unusable(&format!("cannot be read ({error})")),
        Err(error) => return Err(error),
    };
    Ok(from_cache_text(&text, owner, now, &path.display()))
}

/// The tokens of a cache entry's `text` (a file's, or a Redis value's) for `owner` that are
/// still fresh at `now` and pass the checks; none, with a warning naming `place`, when the
/// entry cannot be used.
pub(crate) fn from_cache_text(text: &str, owner: Owner<'_>, now: u64, place: &dyn Display) -> ResourceTokens {
    let unusable = |why: &str| {
        tracing::warn!(%place, "resource token cache {why}; it will be replaced");
        ResourceTokens::default()
    };
    let Ok(cached) = serde_json::from_str::<CacheFile>(text) else {
        return unusable("is not a JSON resource token cache");
    };
    let thumbprint = owner.key.thumbprint();
    let expected = [
        (cached.agent_provider.as_str(), owner.provider.as_str()),
        (&cached.thumbprint, &thumbprint),
        (&cached.resource, owner.resource.as_str()),
        (&cached.person_server, owner.person_server.as_str()),
    ];
    if expected.iter().any(|(found, ours)| found != ours) {
        return unusable("holds the tokens of another agent provider, key, resource or person server");
    }
    let person = cached.person_token.and_then(|entry| {
        let checked = tokens::check_cached_person_token(
            SecretString::from(entry.token),
            entry.expires_at,
            owner.resource,
            owner.person_server,
            owner.key,
            now,
        );
        usable(place, checked, now)
    });
    let auth = cached.auth_token.and_then(|entry| {
        let checked = tokens::check_cached_auth_token(
            SecretString::from(entry.token),
            entry.expires_at,
            owner.resource,
            owner.key,
            now,
        );
        usable(place, checked, now)
    });
    ResourceTokens { person, auth }
}

/// A checked token from the cache if it is still fresh; a token that fails a check is
/// reported (the error names the token and the claim, never the token itself).
fn usable(place: &dyn Display, checked: Result<CachedToken, Error>, now: u64) -> Option<CachedToken> {
    match checked {
        Ok(cached) if tokens::fresh(cached.expires_at, now) => Some(cached),
        Ok(_) | Err(Error::TokenExpired { .. }) => None,
        Err(error) => {
            tracing::warn!(%place, %error, "a cached token is not usable; it will be replaced");
            None
        }
    }
}

/// `held`, with the token of the other kind that the cache holds (`stored`) where `held`
/// has none: what is written back, so that a process holding one kind does not drop the
/// other another process left.
pub(crate) fn merged(held: ResourceTokens, stored: ResourceTokens) -> ResourceTokens {
    ResourceTokens { person: held.person.or(stored.person), auth: held.auth.or(stored.auth) }
}

/// Writes `tokens` to `path` for `owner` (0600, folders 0700), replacing what was there.
pub(crate) fn store(path: &Path, owner: Owner<'_>, tokens: &ResourceTokens) -> Result<(), Error> {
    private_file::write(Purpose::TokenCache, path, &cache_text(owner, tokens), Placement::Replace).map(|_| ())
}

/// The text of the cache entry of `owner`'s `tokens`: what a file or a Redis value holds.
pub(crate) fn cache_text(owner: Owner<'_>, tokens: &ResourceTokens) -> Zeroizing<Vec<u8>> {
    let thumbprint = owner.key.thumbprint();
    let file = CacheFileRef {
        agent_provider: owner.provider.as_str(),
        thumbprint: &thumbprint,
        resource: owner.resource.as_str(),
        person_server: owner.person_server.as_str(),
        person_token: tokens.person.as_ref().map(EntryRef::of),
        auth_token: tokens.auth.as_ref().map(EntryRef::of),
    };
    Zeroizing::new(serde_json::to_vec_pretty(&file).expect("the cache file serializes"))
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use url::Url;

    use super::*;
    use crate::jwt::TokenKind;
    use crate::metadata::Role;

    const NOW: u64 = 1_800_000_000;

    fn id(role: Role, text: &str) -> ServerId {
        ServerId::parse(role, &Url::parse(text).unwrap(), false).unwrap()
    }

    struct World {
        provider: ServerId,
        key: AgentKey,
        resource: ServerId,
        person_server: ServerId,
    }

    impl World {
        fn new() -> Self {
            World {
                provider: id(Role::AgentProvider, "https://ap.example"),
                key: AgentKey::generate(),
                resource: id(Role::Resource, "https://r.example"),
                person_server: id(Role::PersonServer, "https://ps.example"),
            }
        }

        fn owner(&self) -> Owner<'_> {
            Owner {
                provider: &self.provider,
                key: &self.key,
                resource: &self.resource,
                person_server: &self.person_server,
            }
        }

        fn claims(&self, key: &AgentKey, exp: u64) -> Value {
            json!({"iss": "https://ps.example", "aud": "https://r.example", "sub": "p1", "ps": "https://ps.example",
                "cnf": {"jwk": key.public_jwk()}, "iat": NOW - 10, "exp": exp})
        }

        fn token(&self, kind: TokenKind, claims: &Value, expires_at: u64) -> CachedToken {
            CachedToken {
                token: SecretString::from(crate::jwt::test_token(kind, claims)),
                expires_at,
                sub: Some("p1".to_owned()),
            }
        }

        /// A person and an auth token for this world's key, valid for an hour.
        fn tokens(&self) -> ResourceTokens {
            let claims = self.claims(&self.key, NOW + 3600);
            ResourceTokens {
                person: Some(self.token(TokenKind::Person, &claims, NOW + 3600)),
                auth: Some(self.token(TokenKind::Auth, &claims, NOW + 1800)),
            }
        }

        fn path(&self, dir: &Path) -> PathBuf {
            cache_file(dir, &self.provider, &self.key, &self.resource)
        }
    }

    fn secret(token: Option<&CachedToken>) -> Option<&str> {
        token.map(|cached| cached.token.expose_secret())
    }

    #[test]
    fn tokens_round_trip_with_their_expiry_and_subject() {
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let path = world.path(&dir.path().join("aauth"));
        assert!(load(&path, world.owner(), NOW).unwrap().person.is_none());
        let stored = world.tokens();
        store(&path, world.owner(), &stored).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert_eq!(secret(loaded.person.as_ref()), secret(stored.person.as_ref()));
        assert_eq!(secret(loaded.auth.as_ref()), secret(stored.auth.as_ref()));
        // The stored expiry (here the `expires_in` of the answer) wins when it is sooner.
        assert_eq!(loaded.auth.as_ref().map(|cached| cached.expires_at), Some(NOW + 1800));
        assert_eq!(loaded.person.as_ref().and_then(|cached| cached.sub.as_deref()), Some("p1"));

        let text = std::fs::read_to_string(&path).unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(file["agent_provider"], "https://ap.example");
        assert_eq!(file["thumbprint"], world.key.thumbprint());
        assert_eq!(file["resource"], "https://r.example");
        assert_eq!(file["person_server"], "https://ps.example");
        assert_eq!(file["auth_token"]["expires_at"], NOW + 1800);
        assert_eq!(file["person_token"]["token"].as_str(), secret(stored.person.as_ref()));

        // One token alone is stored and read alone.
        store(&path, world.owner(), &ResourceTokens { person: None, ..world.tokens() }).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none() && loaded.auth.is_some());
        assert!(!std::fs::read_to_string(&path).unwrap().contains("person_token"));
    }

    #[test]
    fn each_provider_key_and_resource_has_its_own_file() {
        let world = World::new();
        let dir = Path::new("/cache");
        let file = world.path(dir);
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("resource-tokens-") && name.ends_with(".json") && name.len() == 37, "{name}");
        assert_eq!(file, cache_file(dir, &world.provider, &world.key.clone(), &world.resource));
        let other_resource = id(Role::Resource, "https://other.example");
        let other_provider = id(Role::AgentProvider, "https://other.example");
        assert_ne!(file, cache_file(dir, &world.provider, &world.key, &other_resource));
        assert_ne!(file, cache_file(dir, &other_provider, &world.key, &world.resource));
        assert_ne!(file, cache_file(dir, &world.provider, &AgentKey::generate(), &world.resource));
    }

    /// The 5-minute margin of tokens in memory applies to tokens read back, with the stored
    /// expiry or the token's `exp`, whichever comes first; expired tokens are skipped.
    #[test]
    fn only_fresh_tokens_are_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let path = world.path(dir.path());
        let claims = world.claims(&world.key, NOW + 3600);
        let tokens = ResourceTokens {
            // Fresh by its `exp`, but stored as usable for 5 minutes more only.
            person: Some(world.token(TokenKind::Person, &claims, NOW + 300)),
            auth: Some(world.token(TokenKind::Auth, &claims, NOW + 301)),
        };
        store(&path, world.owner(), &tokens).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none());
        assert!(loaded.auth.is_some());
        assert!(load(&path, world.owner(), NOW + 1).unwrap().auth.is_none());

        // A stored expiry later than the token's `exp` does not extend it.
        let claims = world.claims(&world.key, NOW + 30);
        let tokens = ResourceTokens {
            person: Some(world.token(TokenKind::Person, &claims, NOW + 3600)),
            auth: Some(world.token(TokenKind::Auth, &world.claims(&world.key, NOW - 1), NOW + 3600)),
        };
        store(&path, world.owner(), &tokens).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none() && loaded.auth.is_none());
    }

    /// A file written for another provider, key, resource or person server is not used;
    /// nor is a token that another key's file would hold, or one of the wrong kind.
    #[test]
    fn foreign_or_tampered_entries_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let path = world.path(dir.path());
        store(&path, world.owner(), &world.tokens()).unwrap();
        let other_key = AgentKey::generate();
        let other_ps = id(Role::PersonServer, "https://other-ps.example");
        let other_resource = id(Role::Resource, "https://other.example");
        for owner in [
            Owner { key: &other_key, ..world.owner() },
            Owner { person_server: &other_ps, ..world.owner() },
            Owner { resource: &other_resource, ..world.owner() },
            Owner { provider: &other_resource, ..world.owner() },
        ] {
            let loaded = load(&path, owner, NOW).unwrap();
            assert!(loaded.person.is_none() && loaded.auth.is_none(), "{owner:?}");
        }

        // Tokens bound to another key, written under this key's name.
        let foreign = world.claims(&other_key, NOW + 3600);
        let tampered = ResourceTokens {
            person: Some(world.token(TokenKind::Person, &foreign, NOW + 3600)),
            auth: Some(world.token(TokenKind::Auth, &foreign, NOW + 3600)),
        };
        store(&path, world.owner(), &tampered).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none() && loaded.auth.is_none());

        // Each token checked on its own: a wrong audience, issuer or kind drops that one.
        let mut wrong_aud = world.claims(&world.key, NOW + 3600);
        wrong_aud["aud"] = json!("https://other.example");
        let mut wrong_iss = world.claims(&world.key, NOW + 3600);
        wrong_iss["iss"] = json!("https://other-ps.example");
        let good = world.claims(&world.key, NOW + 3600);
        for tokens in [
            ResourceTokens {
                person: Some(world.token(TokenKind::Person, &wrong_iss, NOW + 3600)),
                auth: Some(world.token(TokenKind::Auth, &wrong_aud, NOW + 3600)),
            },
            ResourceTokens {
                person: Some(world.token(TokenKind::Auth, &good, NOW + 3600)),
                auth: Some(world.token(TokenKind::Person, &good, NOW + 3600)),
            },
        ] {
            store(&path, world.owner(), &tokens).unwrap();
            let loaded = load(&path, world.owner(), NOW).unwrap();
            assert!(loaded.person.is_none() && loaded.auth.is_none());
        }
        let mixed = ResourceTokens {
            person: Some(world.token(TokenKind::Person, &wrong_iss, NOW + 3600)),
            auth: Some(world.token(TokenKind::Auth, &good, NOW + 3600)),
        };
        store(&path, world.owner(), &mixed).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none() && loaded.auth.is_some());
    }

    #[test]
    fn corrupt_or_unreadable_files_count_as_none_and_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let path = world.path(dir.path());
        for contents in ["{not json", r#"{"auth_token": 1}"#, "[]", r#"{"person_token":{"token":"x","expires_at":1}}"#]
        {
            private_file::write(Purpose::TokenCache, &path, contents.as_bytes(), Placement::Replace).unwrap();
            let loaded = load(&path, world.owner(), NOW).unwrap();
            assert!(loaded.person.is_none() && loaded.auth.is_none(), "{contents}");
        }
        // The right owner, but tokens that are not JWTs.
        let mut file: Value = serde_json::from_slice(&{
            store(&path, world.owner(), &world.tokens()).unwrap();
            std::fs::read(&path).unwrap()
        })
        .unwrap();
        file["person_token"]["token"] = json!("not.a-jwt");
        file["auth_token"]["token"] = json!("");
        private_file::write(Purpose::TokenCache, &path, file.to_string().as_bytes(), Placement::Replace).unwrap();
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(loaded.person.is_none() && loaded.auth.is_none());
        // A folder where the file should be cannot be read.
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(load(&path, world.owner(), NOW).unwrap().auth.is_none());
        std::fs::remove_dir(&path).unwrap();
        store(&path, world.owner(), &world.tokens()).unwrap();
        assert!(load(&path, world.owner(), NOW).unwrap().auth.is_some());
    }

    /// A file its group or others can read is not used (its tokens may have leaked), and is
    /// replaced by a private one; a folder others can write is refused.
    #[cfg(unix)]
    #[test]
    fn exposed_files_are_not_used_and_open_folders_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let folder = dir.path().join("aauth");
        let path = world.path(&folder);
        store(&path, world.owner(), &world.tokens()).unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(&folder)), (0o600, 0o700));
        for exposed in [0o640, 0o604, 0o644] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(exposed)).unwrap();
            assert!(load(&path, world.owner(), NOW).unwrap().auth.is_none(), "{exposed:o}");
        }
        store(&path, world.owner(), &world.tokens()).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert!(load(&path, world.owner(), NOW).unwrap().auth.is_some());

        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o770)).unwrap();
        let error = load(&path, world.owner(), NOW).unwrap_err();
        assert!(matches!(error, Error::FolderPermissions { purpose: "token cache", mode: 0o770, .. }), "{error:?}");
        let error = store(&path, world.owner(), &world.tokens()).unwrap_err();
        assert!(matches!(error, Error::FolderPermissions { .. }), "{error:?}");
    }

    /// Writers racing on one file: every read sees one writer's whole file, never a mix or
    /// a partial one, and the file left is one of theirs.
    #[test]
    fn concurrent_writers_leave_a_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let world = World::new();
        let path = world.path(dir.path());
        let versions: Vec<ResourceTokens> = (0..4).map(|_| world.tokens()).collect();
        let auth_of = |tokens: &ResourceTokens| secret(tokens.auth.as_ref()).unwrap().to_owned();
        let written: Vec<String> = versions.iter().map(auth_of).collect();
        std::thread::scope(|scope| {
            for tokens in &versions {
                let (path, world) = (&path, &world);
                scope.spawn(move || {
                    for _ in 0..50 {
                        store(path, world.owner(), tokens).unwrap();
                    }
                });
            }
            let (path, world, written, versions) = (&path, &world, &written, &versions);
            scope.spawn(move || {
                for _ in 0..200 {
                    let loaded = load(path, world.owner(), NOW).unwrap();
                    if let Some(auth) = &loaded.auth {
                        let index = written.iter().position(|token| token == auth.token.expose_secret()).unwrap();
                        // The person token beside it is the same writer's.
                        assert_eq!(secret(loaded.person.as_ref()), secret(versions[index].person.as_ref()));
                    }
                }
            });
        });
        let loaded = load(&path, world.owner(), NOW).unwrap();
        assert!(written.contains(&auth_of(&loaded)));
        // No staging file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
