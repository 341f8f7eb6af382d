//! The agent's AAuth client: made from the `aauth:` section (or `omniagent aauth
//! enroll`'s flags), its key created on first use unless only checked, its tokens and
//! signature times shared in the home's `aauth/` folder, or in Redis with
//! `storage.backend: redis`.

use skill_core::SecretResolver;

use super::OnInteraction;
use crate::HostError;
use crate::config::{AgentConfig, Home, StorageBackend};

/// What the caller says instead of the `aauth:` section (`omniagent aauth enroll`'s
/// flags).
#[derive(Debug, Default)]
pub struct AAuthOverrides {
    /// Where to enroll, instead of `aauth.agent_provider`.
    pub agent_provider: Option<String>,
    /// The person server, instead of `aauth.person_server`.
    pub person_server: Option<String>,
}

/// The agent's AAuth client, from the `aauth:` section and `overrides`: its key (created
/// on first use), its tokens and signature times kept under the home's `aauth/` folder
/// (in Redis with `storage.backend: redis`), and `on_interaction` told while a request
/// waits for a person.
pub async fn aauth_client(
    config: &AgentConfig,
    home: &Home,
    overrides: AAuthOverrides,
    on_interaction: Option<OnInteraction>,
) -> Result<aauth_client::AAuthClient, HostError> {
    let state = aauth_state(config, &SecretResolver::default()).await?;
    build_aauth_client(config, home, overrides, on_interaction, KeyUse::Sign, &state)
}

/// Where a signing AAuth client keeps what the agent's other processes share with it:
/// the agent token, the person and auth tokens, and the seconds claimed for `created`.
#[derive(Debug)]
pub(super) enum AAuthState {
    /// Files in the home's `aauth/` folder: the processes of one machine.
    Files,
    /// The Redis server of `storage.url` (its URL): replicas on several machines.
    #[cfg(feature = "redis")]
    Redis(skill_core::SecretString),
}

/// Where `config`'s AAuth client keeps its state: Redis when `storage.backend` is
/// `redis`, else the files.
pub(super) async fn aauth_state(config: &AgentConfig, resolver: &SecretResolver) -> Result<AAuthState, HostError> {
    match config.sections.storage.backend {
        #[cfg(feature = "redis")]
        StorageBackend::Redis => {
            Ok(AAuthState::Redis(super::storage::redis_url(config.sections.storage.url.as_ref(), resolver).await?))
        }
        #[cfg(not(feature = "redis"))]
        StorageBackend::Redis => {
            let _ = resolver;
            Err(HostError::RedisUnavailable)
        }
        StorageBackend::Sqlite | StorageBackend::Memory => Ok(AAuthState::Files),
    }
}

/// What an AAuth client made by the host may do with the agent's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KeyUse {
    /// Sign calls: the key is created on first use, and tokens are cached in the home's
    /// `aauth/` folder.
    Sign,
    /// Load skills to check them, calling nothing: nothing is written. The key is read if
    /// it exists; if not, the client holds a key of its own in memory (the real one is
    /// created by the first command that signs), and it caches no token on disk.
    #[cfg(feature = "openapi")]
    Check,
}

/// Where the agent's key is: `aauth.key`, else `aauth/agent.jwk` in the home.
fn aauth_key_path(config: &AgentConfig, home: &Home) -> std::path::PathBuf {
    let key = config.sections.aauth.as_ref().and_then(|aauth| aauth.key.as_deref());
    key.map_or_else(|| home.aauth_dir().join("agent.jwk"), |key| config.resolve_path(key))
}

/// [`aauth_client`], with the agent's files used as `key_use` says, its state kept in
/// `state` when it signs.
pub(super) fn build_aauth_client(
    config: &AgentConfig,
    home: &Home,
    overrides: AAuthOverrides,
    on_interaction: Option<OnInteraction>,
    key_use: KeyUse,
    state: &AAuthState,
) -> Result<aauth_client::AAuthClient, HostError> {
    let settings = config.sections.aauth.clone().unwrap_or_default();
    let url = |key: &'static str, text: &str| {
        url::Url::parse(text).map_err(|error| HostError::NotAUrl { key, text: text.to_owned(), error })
    };
    let Some(provider) = overrides.agent_provider.or(settings.agent_provider) else {
        return Err(HostError::NoAgentProvider);
    };
    let key_path = aauth_key_path(config, home);
    let key = match key_use {
        KeyUse::Sign => aauth_client::AgentKey::load_or_generate_as(&key_path, settings.key_type.unwrap_or_default()),
        #[cfg(feature = "openapi")]
        KeyUse::Check => {
            aauth_client::AgentKey::load(&key_path).map(|key| key.unwrap_or_else(aauth_client::AgentKey::generate))
        }
    };
    let key = key.map_err(|error| HostError::AAuthKey { error })?;
    let mut builder = aauth_client::AAuthClient::builder(key, url("agent_provider", &provider)?)
        .allow_http_loopback(settings.allow_http_loopback);
    if key_use == KeyUse::Sign {
        builder = match state {
            AAuthState::Files => builder.agent_token_cache_dir(home.aauth_dir()),
            #[cfg(feature = "redis")]
            AAuthState::Redis(url) => builder.state_in_redis(url.clone()),
        };
    }
    if let Some(on_interaction) = on_interaction {
        builder = builder.on_interaction(move |url, code| on_interaction(url.as_str(), code));
    }
    if let Some(person_server) = overrides.person_server.or(settings.person_server) {
        builder = builder.person_server(url("person_server", &person_server)?);
    }
    if let Some(ca_file) = &settings.ca_file {
        builder = builder.ca_file(&config.resolve_path(ca_file));
    }
    if let Some(enroll_url) = &settings.enroll_url {
        builder = builder.enroll_url(url("enroll_url", enroll_url)?);
    }
    if let Some(refresh_url) = &settings.refresh_url {
        builder = builder.refresh_url(url("refresh_url", refresh_url)?);
    }
    if let Some(local) = &settings.self_hosted {
        builder = builder.self_hosted(local.clone());
    }
    for (value, set) in [
        (&settings.login_hint, aauth_client::AAuthClientBuilder::login_hint as fn(_, _) -> _),
        (&settings.tenant, aauth_client::AAuthClientBuilder::tenant),
        (&settings.justification, aauth_client::AAuthClientBuilder::justification),
    ] {
        if let Some(value) = value {
            builder = set(builder, value.clone());
        }
    }
    // The configured mission, else the current one (`aauth mission propose`).
    let mission = settings.mission.or_else(|| current_mission(home).map(|mission| mission.s256));
    if let Some(mission) = mission {
        builder = builder.mission(mission);
    }
    builder.build().map_err(|error| HostError::AAuthClient { error })
}

/// Where the current mission is kept: `aauth/mission.json` in the home.
fn mission_file(home: &Home) -> std::path::PathBuf {
    home.aauth_dir().join("mission.json")
}

/// The current mission: the one `aauth mission propose` got approved, until `aauth
/// mission complete`; none when there is none, or the file cannot be read (with a
/// warning).
pub fn current_mission(home: &Home) -> Option<aauth_client::Mission> {
    let path = mission_file(home);
    let text = match std::fs::read(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "the current mission cannot be read");
            return None;
        }
    };
    serde_json::from_slice(&text)
        .inspect_err(|error| tracing::warn!(path = %path.display(), %error, "the current mission is not readable"))
        .ok()
}

/// Makes `mission` the current mission (`None`: no current mission).
pub fn keep_mission(home: &Home, mission: Option<&aauth_client::Mission>) -> Result<(), HostError> {
    let path = mission_file(home);
    let written = match mission {
        Some(mission) => std::fs::create_dir_all(home.aauth_dir())
            .and_then(|()| std::fs::write(&path, serde_json::to_vec_pretty(mission).expect("a mission serializes"))),
        None => std::fs::remove_file(&path).or_else(|error| match error.kind() {
            std::io::ErrorKind::NotFound => Ok(()),
            _ => Err(error),
        }),
    };
    written.map_err(|error| HostError::MissionFile { path, error })
}

/// The agent's AAuth key as `omniagent config check` finds it, reading only.
#[derive(Debug)]
pub struct AAuthKeyCheck {
    /// Where the key file is.
    pub path: std::path::PathBuf,
    /// Its thumbprint, or none when there is no key yet (the first command that signs
    /// creates it), or why the file cannot be used.
    pub thumbprint: Result<Option<String>, aauth_client::Error>,
}

/// The AAuth key of `config`'s agent, read and never created; none when the agent has no
/// `aauth:` section and no skill that signs.
pub fn check_aauth_key(config: &AgentConfig, home: &Home) -> Option<AAuthKeyCheck> {
    #[cfg(feature = "openapi")]
    let signs = config.sections.openapi.values().any(|settings| settings.aauth);
    #[cfg(not(feature = "openapi"))]
    let signs = false;
    if config.sections.aauth.is_none() && !signs {
        return None;
    }
    let path = aauth_key_path(config, home);
    let thumbprint = aauth_client::AgentKey::load(&path).map(|key| key.map(|key| key.thumbprint()));
    Some(AAuthKeyCheck { path, thumbprint })
}
