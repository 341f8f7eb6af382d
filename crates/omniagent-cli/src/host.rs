//! Builds what a command works with from the effective config: the agent and its
//! tools, or the markdown skills.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use skill_core::{Agent, KvStore, MemoryStore, SecretRef, SecretResolver, Secrets, Skill};
#[cfg(feature = "markdown")]
use skill_markdown::{Environment, SkillSet, Sources};

use crate::UsageError;
#[cfg(feature = "markdown")]
use crate::args::SkillPaths;
use crate::config::{Config, Home, StorageBackend};

/// Which skills a command needs.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Wanted<'a> {
    /// Every enabled skill.
    All,
    /// Only the skill of this name, if there is one: `tools call skill__tool` starts
    /// nothing else.
    Only(&'a str),
}

/// A tool-giving skill of the config: its name, its secret references, and how to make it.
type Candidate<'a> = (&'a str, Cow<'a, BTreeMap<String, SecretRef>>, Box<dyn FnOnce() -> Box<dyn Skill> + 'a>);

/// The agent `agent_name` with the skills `wanted` loaded; those that could not load are
/// in its `skipped()`.
pub(crate) async fn start_agent(
    config: &Config,
    agent_name: &str,
    home: &Home,
    wanted: Wanted<'_>,
) -> Result<Agent, UsageError> {
    // Before the candidates, which borrow it.
    #[cfg(feature = "openapi")]
    let signer = Signer::new(config, home);
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for skill in config.compiled.skills().into_iter().filter(|skill| skill.settings.enabled) {
        candidates.push((skill.name, Cow::Borrowed(&skill.settings.secrets), Box::new(skill.build)));
    }
    #[cfg(feature = "mcp")]
    for (name, server) in config.mcp_servers() {
        let make = move || Box::new(skill_mcp::McpSkill::new(name.clone(), server.clone())) as Box<dyn Skill>;
        candidates.push((name.as_str(), Cow::Borrowed(&server.secrets), Box::new(make)));
    }
    #[cfg(feature = "openapi")]
    for (name, settings) in &config.openapi {
        let signer = &signer;
        let make = move || openapi_skill(config, home, name, settings, signer);
        candidates.push((name.as_str(), Cow::Owned(settings.secret_refs()), Box::new(make)));
    }
    let wanted_name = match wanted {
        Wanted::Only(name) if candidates.iter().any(|(candidate, _, _)| *candidate == name) => Some(name),
        _ => None,
    };
    let mut builder = Agent::builder().name(agent_name).storage(store(config, home)?);
    let resolver = SecretResolver::default();
    let mut skills = Vec::new();
    for (name, secrets, make) in candidates {
        if wanted_name.is_some_and(|wanted| wanted != name) {
            continue;
        }
        builder = builder.skill_secrets(name, resolve_secrets(&resolver, name, &secrets).await);
        skills.push(make());
    }
    let agent = builder.build();
    for skill in skills {
        agent.register(skill);
    }
    agent.init_compiled_skills().await;
    Ok(agent)
}

/// How long a call of an `aauth: true` OpenAPI skill may take unless its `timeout` says:
/// it may wait for a person to approve (interaction), which a minute rarely allows.
#[cfg(feature = "openapi")]
const SIGNED_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The OpenAPI skill `name`, its `spec` (unless a URL) and `upload_folder` taken from the
/// config file's folder, and the agent's private files out of reach of its document's
/// `$ref`s and of uploads; with `aauth: true`, its calls go through the agent's
/// AAuth client, and without one it loads as skipped, with the reason.
#[cfg(feature = "openapi")]
fn openapi_skill(
    config: &Config,
    home: &Home,
    name: &str,
    settings: &skill_openapi::OpenApiConfig,
    signer: &Signer<'_>,
) -> Box<dyn Skill> {
    let mut settings = settings.clone();
    if !settings.spec_is_url() {
        settings.spec = config.resolve_path(&settings.spec).display().to_string();
    }
    if let Some(folder) = &settings.upload_folder {
        settings.upload_folder = Some(config.resolve_path(folder).display().to_string());
    }
    // No document may copy, and no upload send, what only the agent may read: its keys
    // and tokens, and the config file (which may hold secrets).
    let mut private = skill_openapi::LoadOptions::new().with_private_path(home.aauth_dir());
    if let Some(file) = &config.file {
        private = private.with_private_path(file);
    }
    #[cfg(feature = "aauth")]
    if let Some(key) = config.aauth.as_ref().and_then(|aauth| aauth.key.as_deref()) {
        private = private.with_private_path(config.resolve_path(key));
    }
    let signed = settings.aauth;
    if signed {
        settings.timeout.get_or_insert(SIGNED_CALL_TIMEOUT);
    }
    let skill = skill_openapi::OpenApiSkill::new(name, settings).with_load_options(private);
    if !signed {
        return Box::new(skill);
    }
    match signer.sign(skill) {
        Ok(skill) => Box::new(skill),
        Err(reason) => Box::new(Unavailable { name: name.to_owned(), reason: format!("`aauth: true`, but {reason}") }),
    }
}

/// The agent's AAuth client, made once, when the first skill that signs needs it.
#[cfg(feature = "openapi")]
pub(crate) struct Signer<'a> {
    #[cfg(feature = "aauth")]
    config: &'a Config,
    #[cfg(feature = "aauth")]
    home: &'a Home,
    #[cfg(feature = "aauth")]
    client: std::cell::OnceCell<Result<aauth_client::AAuthClient, String>>,
    #[cfg(not(feature = "aauth"))]
    config: std::marker::PhantomData<&'a Config>,
}

#[cfg(feature = "openapi")]
impl<'a> Signer<'a> {
    #[cfg(feature = "aauth")]
    pub(crate) fn new(config: &'a Config, home: &'a Home) -> Self {
        Signer { config, home, client: std::cell::OnceCell::new() }
    }

    #[cfg(not(feature = "aauth"))]
    pub(crate) fn new(_config: &'a Config, _home: &'a Home) -> Self {
        Signer { config: std::marker::PhantomData }
    }

    /// `skill`, its calls sent through the AAuth client; why not, when there is none.
    #[cfg(feature = "aauth")]
    fn sign(&self, skill: skill_openapi::OpenApiSkill) -> Result<skill_openapi::OpenApiSkill, String> {
        let client = self.client.get_or_init(|| {
            aauth_client(self.config, self.home, AAuthOverrides::default()).map_err(|error| error.to_string())
        });
        client.as_ref().map(|client| skill.with_client(client.http_client())).map_err(Clone::clone)
    }

    #[cfg(not(feature = "aauth"))]
    fn sign(&self, _skill: skill_openapi::OpenApiSkill) -> Result<skill_openapi::OpenApiSkill, String> {
        Err("this omniagent was built without the `aauth` feature".to_owned())
    }
}

/// A configured OpenAPI skill the host could not make: it loads as skipped, with the reason.
#[cfg(feature = "openapi")]
struct Unavailable {
    name: String,
    reason: String,
}

#[cfg(feature = "openapi")]
#[async_trait::async_trait]
impl Skill for Unavailable {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.reason
    }

    fn source_type(&self) -> skill_core::SourceKind {
        skill_core::SourceKind::Openapi
    }

    async fn init(&mut self) -> Result<(), skill_core::BoxError> {
        Err(self.reason.clone().into())
    }

    fn tools(&self) -> Vec<Arc<dyn skill_core::Tool>> {
        Vec::new()
    }
}

/// What `aauth enroll` may say instead of the config.
#[cfg(feature = "aauth")]
#[derive(Debug, Default)]
pub(crate) struct AAuthOverrides {
    pub(crate) agent_provider: Option<String>,
    pub(crate) person_server: Option<String>,
}

/// The agent's AAuth client, from the `aauth:` section: its key (created on first use),
/// its agent token cached under `$OMNIAGENT_HOME/aauth/`, and interaction URLs and codes
/// reported on stderr while a request waits.
#[cfg(feature = "aauth")]
pub(crate) fn aauth_client(
    config: &Config,
    home: &Home,
    overrides: AAuthOverrides,
) -> Result<aauth_client::AAuthClient, UsageError> {
    let settings = config.aauth.clone().unwrap_or_default();
    let url = |key: &str, text: &str| {
        url::Url::parse(text).map_err(|error| UsageError::new(format!("aauth.{key}: `{text}` is not a URL: {error}")))
    };
    let Some(provider) = overrides.agent_provider.or(settings.agent_provider) else {
        return Err(UsageError::new(
            "no AAuth agent provider: set `aauth.agent_provider` in the config (or pass --agent-provider)",
        ));
    };
    let key_path = settings.key.map_or_else(|| home.aauth_dir().join("agent.jwk"), |key| config.resolve_path(&key));
    let key = aauth_client::AgentKey::load_or_generate(&key_path)
        .map_err(|error| UsageError::new(format!("aauth.key: {error}")))?;
    let mut builder = aauth_client::AAuthClient::builder(key, url("agent_provider", &provider)?)
        .allow_http_loopback(settings.allow_http_loopback)
        .agent_token_cache_dir(home.aauth_dir())
        .on_interaction(crate::render::interaction);
    if let Some(person_server) = overrides.person_server.or(settings.person_server) {
        builder = builder.person_server(url("person_server", &person_server)?);
    }
    if let Some(ca_file) = &settings.ca_file {
        builder = builder.ca_file(&config.resolve_path(ca_file));
    }
    builder.build().map_err(|error| UsageError::new(format!("aauth: {error}")))
}

/// Loads the OpenAPI skill `name` alone, as `config check` does: the number of tools its
/// document gives, or why it cannot load.
#[cfg(feature = "openapi")]
pub(crate) async fn load_openapi_tools(
    config: &Config,
    home: &Home,
    name: &str,
    settings: &skill_openapi::OpenApiConfig,
) -> Result<usize, skill_core::BoxError> {
    let mut skill = openapi_skill(config, home, name, settings, &Signer::new(config, home));
    skill.init().await?;
    Ok(skill.tools().len())
}

fn store(config: &Config, home: &Home) -> Result<Arc<dyn KvStore>, UsageError> {
    match config.storage.backend {
        StorageBackend::Memory => Ok(Arc::new(MemoryStore::new())),
        #[cfg(feature = "sqlite")]
        StorageBackend::Sqlite => Ok(Arc::new(skill_core::SqliteStore::new(home.state_db()))),
        #[cfg(not(feature = "sqlite"))]
        StorageBackend::Sqlite => {
            let _ = home;
            Err(UsageError::new(
                "storage.backend is sqlite, but this omniagent was built without the `sqlite` feature; \
                 set `storage: {backend: memory}`",
            ))
        }
    }
}

/// Resolves a skill's secret references; one that cannot be resolved is left out with a
/// warning naming the reference, and the skill is skipped later if it requires it.
async fn resolve_secrets(resolver: &SecretResolver, skill: &str, references: &BTreeMap<String, SecretRef>) -> Secrets {
    let mut secrets = Secrets::new();
    for (name, reference) in references {
        match resolver.resolve(reference).await {
            Ok(value) => secrets.insert(name.clone(), value),
            Err(error) => tracing::warn!("skill {skill}: secret {name}: {error}"),
        }
    }
    secrets
}

/// The markdown skills of the effective config: packs, the default folders (unless
/// `--no-default-paths`), `skills.paths`, then `--path`; filtered, checked, and with the
/// secrets this agent binds for each.
#[cfg(feature = "markdown")]
pub(crate) async fn load_markdown_skills(config: &Config, home: &Home, paths: &SkillPaths) -> SkillSet {
    let skills = &config.skills;
    if !skills.enabled {
        return SkillSet::default();
    }
    if !skills.disabled.is_empty() {
        tracing::warn!("skills.disabled is deprecated; use skills.excludes");
    }
    let mut dirs = Vec::new();
    if !paths.no_default_paths {
        dirs.extend([home.skills_dir(), "skills".into(), ".skills".into()]);
        dirs.extend(skills.paths.iter().map(|path| skill_core::expand_home(path)));
    }
    let sources = Sources { packs: skills.packs.clone(), dirs, explicit_dirs: paths.paths.clone() };
    let resolver = SecretResolver::default();
    let mut secrets = BTreeMap::new();
    for (name, settings) in &skills.config {
        secrets.insert(name.clone(), resolve_secrets(&resolver, name, &settings.secrets).await);
    }
    skill_markdown::load(&sources, skills, &Environment::current(), &secrets)
}
