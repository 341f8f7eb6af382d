//! Builds what the config of one agent asks for: the agent and its tools, or the
//! markdown skills.

use std::borrow::Cow;
use std::collections::BTreeMap;
#[cfg(any(feature = "markdown", feature = "openapi"))]
use std::path::PathBuf;
use std::sync::Arc;

use skill_core::{Agent, ExposeSecret as _, SecretRef, SecretResolver, Secrets, Skill};

use crate::HostError;
use crate::config::{AgentConfig, Home};

#[cfg(feature = "aauth")]
mod aauth;
#[cfg(feature = "mcp")]
mod callers;
#[cfg(feature = "mcp")]
pub use callers::process_mark;
#[cfg(feature = "markdown")]
mod markdown;
pub(crate) mod storage;
mod trust;
#[cfg(feature = "aauth")]
pub use aauth::{AAuthKeyCheck, AAuthOverrides, aauth_client, check_aauth_key, current_mission, keep_mission};
#[cfg(all(feature = "openapi", feature = "aauth"))]
use aauth::{AAuthState, KeyUse, aauth_state, build_aauth_client};
#[cfg(feature = "markdown")]
pub use markdown::{SkillPaths, load_markdown_skills, markdown_skill_tools, markdown_sources};
pub use trust::{pinned_modes, reload_trusts};

/// The name of the markdown skills' `skills` skill, whose tools load them on demand.
#[cfg(feature = "markdown")]
const SKILL_TOOLS_NAME: &str = skill_markdown::SKILL_TOOLS_NAME;
#[cfg(not(feature = "markdown"))]
const SKILL_TOOLS_NAME: &str = "skills";

/// Which skills to start.
#[derive(Debug, Clone, Copy)]
pub enum Wanted<'a> {
    /// Every enabled skill.
    All,
    /// Only the skill of this name, if there is one: a call of `skill__tool` starts
    /// nothing else.
    Only(&'a str),
    /// Every enabled skill but the markdown skills' `skills` skill (`skills__activate`,
    /// `skills__read`), which the caller registers itself: the gateway, which serves the
    /// skills' prompts under that same skill and keeps it current.
    AllButSkillTools,
}

/// Told, while a request of an `aauth: true` skill waits for a person to act, where they
/// go and the code they enter: `(url, code)`, the person opening `{url}?code={code}`. It
/// must not block. The host reports nothing itself: the caller decides where this goes.
pub type OnInteraction = Arc<dyn Fn(&str, &str) + Send + Sync>;

/// Given each MCP server's name and a handle on its health as an agent starts it.
#[cfg(feature = "mcp")]
pub type OnUpstream = Arc<dyn Fn(&str, skill_mcp::Health) + Send + Sync>;

/// How an agent reaches the person it acts for while a call waits. Nothing by default:
/// signed requests then cannot ask for an approval, and MCP servers' elicitations are
/// declined.
#[derive(Clone, Default)]
pub struct Person {
    /// Where signed requests report what the person must approve.
    pub on_interaction: Option<OnInteraction>,
    /// Who answers an MCP server's elicitation outside a gateway call (where the calling
    /// client does).
    #[cfg(feature = "mcp")]
    pub elicitor: Option<Arc<dyn skill_mcp::Elicitor>>,
    /// The settings of the MCP Apps extension, when the person's MCP host shows apps: the
    /// MCP servers are told so ([`skill_mcp::McpSkill::with_apps`]).
    #[cfg(feature = "mcp")]
    pub apps: Option<serde_json::Map<String, serde_json::Value>>,
    /// Whether an MCP server (or an OpenAPI document given by URL) whose definitions the
    /// trust lock holds is offered from the lock and started (fetched) at the first call
    /// or read of one of its items (the gateway's instant start), rather than with the
    /// agent (a command that shows what the servers offer now).
    #[cfg(any(feature = "mcp", feature = "openapi"))]
    pub from_lock: bool,
    /// Given each MCP server's name and a handle on its health as the agent starts it:
    /// the gateway's console shows them.
    #[cfg(feature = "mcp")]
    pub on_upstream: Option<OnUpstream>,
    /// Where the agent's policy counts its rules' hits and keeps its rate limits' buckets:
    /// the gateway gives all its agents one, which its console reads (by default the
    /// agent's own).
    pub policy: crate::PolicyState,
}

impl std::fmt::Debug for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut person = f.debug_struct("Person");
        person.field("on_interaction", &self.on_interaction.is_some());
        #[cfg(feature = "mcp")]
        person
            .field("elicitor", &self.elicitor.is_some())
            .field("apps", &self.apps)
            .field("from_lock", &self.from_lock)
            .field("on_upstream", &self.on_upstream.is_some());
        person.field("policy", &self.policy);
        person.finish()
    }
}

/// How to make a skill: called once, and only for a skill that is started.
type MakeSkill<'a> = Box<dyn FnOnce() -> Box<dyn Skill> + Send + 'a>;

/// A tool-giving skill of the config: its name, its secret references, and how to make it.
type Candidate<'a> = (&'a str, Cow<'a, BTreeMap<String, SecretRef>>, MakeSkill<'a>);

/// The agent of `config` with the skills `wanted` started; those that could not start are
/// in its `skipped()`. Each skill gets the secrets this agent's config gives it, and a
/// store namespaced by the agent's name, so agents of one [`Config`](crate::Config)
/// started side by side share nothing but the store's file. `person` is how calls that
/// wait for a person reach them.
pub async fn start_agent(
    config: &AgentConfig,
    home: &Home,
    wanted: Wanted<'_>,
    person: Person,
) -> Result<Agent, HostError> {
    #[cfg(feature = "mcp")]
    let servers_env = callers::servers_host_env(config)?;
    let resolver = SecretResolver::default();
    // Before the candidates, which borrow it.
    #[cfg(feature = "openapi")]
    let signer = Signer::new(config, home, person.on_interaction.clone(), &resolver).await?;
    #[cfg(not(any(feature = "openapi", feature = "mcp")))]
    let _ = person;
    let sections = &config.sections;
    let trust = trust::trust(config, home)?;
    let pinned = trust::pinned(config);
    let mut candidates: Vec<Candidate<'_>> = Vec::new();
    for skill in sections.compiled.skills().into_iter().filter(|skill| skill.settings.enabled) {
        candidates.push((skill.name, Cow::Borrowed(&skill.settings.secrets), Box::new(skill.build)));
    }
    #[cfg(feature = "mcp")]
    for (name, server) in sections.mcp_servers() {
        hide_mcp_values(server);
        let (elicitor, apps, on_upstream) = (person.elicitor.clone(), person.apps.clone(), person.on_upstream.clone());
        let tokens = home.oauth_tokens(config.agent_name(), name);
        #[cfg(feature = "telemetry")]
        let agent_name = config.agent_name();
        let host_env = servers_env.clone();
        let recorded =
            pinned.get(name.as_str()).filter(|_| person.from_lock).and_then(|pinned| trust.recorded(&pinned.origin));
        let mut sandboxed = server.clone();
        sandboxed.sandbox = sections.sandbox_of(server);
        let make = move || {
            let mut skill =
                skill_mcp::McpSkill::with_host_env(name.clone(), sandboxed, host_env).with_token_file(tokens);
            if let Some(elicitor) = elicitor {
                skill = skill.with_elicitor(elicitor);
            }
            if let Some(apps) = apps {
                skill = skill.with_apps(apps);
            }
            if let Some(recorded) = recorded {
                skill = skill.with_pinned(recorded);
            }
            if let Some(on_upstream) = on_upstream {
                on_upstream(name, skill.health());
            }
            #[cfg(feature = "telemetry")]
            crate::telemetry::watch_upstream(agent_name, name, skill.health());
            Box::new(skill) as Box<dyn Skill>
        };
        candidates.push((name.as_str(), Cow::Borrowed(&server.secrets), Box::new(make)));
    }
    #[cfg(feature = "openapi")]
    for (name, settings) in &sections.openapi {
        let signer = &signer;
        let recorded =
            pinned.get(name.as_str()).filter(|_| person.from_lock).and_then(|pinned| trust.recorded(&pinned.origin));
        let make = move || openapi_skill(config, home, name, settings, signer, recorded);
        candidates.push((name.as_str(), Cow::Owned(settings.secret_refs()), Box::new(make)));
    }
    #[cfg(feature = "markdown")]
    let skill_tools = sections.skills.enabled && sections.skills.tools && !matches!(wanted, Wanted::AllButSkillTools);
    #[cfg(not(feature = "markdown"))]
    let skill_tools = false;
    let wanted_name = match wanted {
        Wanted::Only(name)
            if candidates.iter().any(|(candidate, _, _)| *candidate == name)
                || (skill_tools && name == SKILL_TOOLS_NAME) =>
        {
            Some(name)
        }
        _ => None,
    };
    // Resolved before the layers are built: the audit redacts their values.
    let mut skill_secrets = Vec::new();
    let mut made = Vec::new();
    for (name, secrets, make) in candidates {
        if wanted_name.is_some_and(|wanted| wanted != name) {
            continue;
        }
        skill_secrets.push((name.to_owned(), resolve_secrets(&resolver, name, &secrets).await));
        made.push(make);
    }
    // A markdown skill's secrets go to its scripts, never to a tool: the agent holds them
    // all the same, so the guard refuses them to every item and the audit redacts them.
    #[cfg_attr(not(feature = "markdown"), expect(unused_mut))]
    let mut held_secrets: Vec<(String, Secrets)> = Vec::new();
    #[cfg(feature = "markdown")]
    if sections.skills.enabled && wanted_name.is_none_or(|wanted| wanted == SKILL_TOOLS_NAME) {
        for (name, settings) in &sections.skills.config {
            held_secrets.push((name.clone(), resolve_secrets(&resolver, name, &settings.secrets).await));
        }
    }
    let audited: Vec<(String, Secrets)> = skill_secrets.iter().chain(&held_secrets).cloned().collect();
    let audit = crate::audit::AuditLayer::from_config(config, home, &audited)?;
    let mut builder = Agent::builder()
        .name(config.agent_name())
        .storage(storage::store(config, home, &resolver).await?)
        .tool_filter(config.tool_filter().clone())
        .trust(trust);
    // Telemetry is the outermost layer: its span and timing cover every other layer.
    #[cfg(feature = "telemetry")]
    {
        builder = builder.layer(crate::telemetry::layer());
    }
    // Then the audit, which records what every layer inside it decided.
    if let Some(audit) = audit {
        builder = builder.layer(audit);
    }
    // Then the policy: its rules, then its rate limits.
    let policy = crate::policy::layers(
        &config.sections.policy,
        &person.policy,
        #[cfg(feature = "redis")]
        storage::shared_redis(config, &resolver).await?,
    )?;
    for layer in policy {
        builder = builder.layer(layer);
    }
    builder = builder.secret_guard(config.sections.policy.secrets == crate::config::SecretsMode::Guard);
    for (name, pinned) in pinned {
        builder = builder.pinned(name, pinned);
    }
    for (name, secrets) in skill_secrets {
        builder = builder.skill_secrets(name, secrets);
    }
    let mut skills = Vec::new();
    skills.extend(made.into_iter().map(|make| make()));
    #[cfg(feature = "markdown")]
    if skill_tools && wanted_name.is_none_or(|wanted| wanted == SKILL_TOOLS_NAME) {
        let secrets = held_secrets.iter().cloned().collect();
        let set = markdown::load_with_secrets(config, home, &SkillPaths::default(), &secrets);
        skills.push(Box::new(markdown_skill_tools(config, home, &set.skills)));
    }
    for (owner, secrets) in held_secrets {
        builder = builder.held_secrets(owner, secrets);
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
/// AAuth client, and without one it loads as skipped, with the reason. With `recorded`
/// (its tools as the trust lock holds them), it offers those and fetches its document
/// at the first call.
#[cfg(feature = "openapi")]
fn openapi_skill(
    config: &AgentConfig,
    home: &Home,
    name: &str,
    settings: &skill_openapi::OpenApiConfig,
    signer: &Signer<'_>,
    recorded: Option<skill_core::trust::Recorded>,
) -> Box<dyn Skill> {
    let mut settings = settings.clone();
    if !settings.spec_is_url() {
        settings.spec = config.resolve_path(&settings.spec).display().to_string();
    }
    if let Some(folder) = &settings.upload_folder {
        settings.upload_folder = Some(config.resolve_path(folder).display().to_string());
    }
    let private = private_paths(config, home)
        .into_iter()
        .fold(skill_openapi::LoadOptions::new(), skill_openapi::LoadOptions::with_private_path);
    let signed = settings.aauth;
    if signed {
        settings.timeout.get_or_insert(SIGNED_CALL_TIMEOUT);
    }
    let mut skill = skill_openapi::OpenApiSkill::new(name, settings).with_load_options(private);
    if let Some(recorded) = recorded {
        skill = skill.with_pinned(recorded);
    }
    if !signed {
        return Box::new(skill);
    }
    match signer.sign(skill) {
        Ok(skill) => Box::new(skill),
        Err(reason) => Box::new(Unavailable { name: name.to_owned(), reason: format!("`aauth: true`, but {reason}") }),
    }
}

/// What no OpenAPI document may copy and no upload send, being the agent's alone: the
/// config file, every `file:` secret, the AAuth key, and everything in `$OMNIAGENT_HOME`
/// but its `skills/` folder (its keys, tokens and state): the home's entries as they are
/// now, and its `aauth/` and `state/` folders whether or not they exist yet.
#[cfg(any(feature = "openapi", feature = "markdown"))]
fn private_paths(config: &AgentConfig, home: &Home) -> Vec<PathBuf> {
    let mut private = vec![home.aauth_dir(), home.root().join("state")];
    if let Ok(entries) = std::fs::read_dir(home.root()) {
        private.extend(entries.flatten().filter(|entry| entry.file_name() != "skills").map(|entry| entry.path()));
    }
    private.extend(config.file().map(std::path::Path::to_owned));
    private.extend(config.secret_references().into_iter().filter_map(|(_key, reference)| match reference {
        SecretRef::File(path) => Some(skill_core::expand_home(&path)),
        _ => None,
    }));
    #[cfg(feature = "aauth")]
    private.extend(
        config.sections.aauth.as_ref().and_then(|aauth| aauth.key.as_deref()).map(|key| config.resolve_path(key)),
    );
    private
}

/// The agent's AAuth client, made once, when the first skill that signs needs it. It is
/// shared (`Sync`), so that starting an agent is a future that may move between threads.
#[cfg(feature = "openapi")]
struct Signer<'a> {
    #[cfg(feature = "aauth")]
    config: &'a AgentConfig,
    #[cfg(feature = "aauth")]
    home: &'a Home,
    #[cfg(feature = "aauth")]
    on_interaction: Option<OnInteraction>,
    #[cfg(feature = "aauth")]
    key_use: KeyUse,
    /// Where the client keeps its tokens and signature times.
    #[cfg(feature = "aauth")]
    state: AAuthState,
    #[cfg(feature = "aauth")]
    client: std::sync::OnceLock<Result<aauth_client::AAuthClient, String>>,
    #[cfg(not(feature = "aauth"))]
    config: std::marker::PhantomData<&'a AgentConfig>,
}

#[cfg(feature = "openapi")]
impl<'a> Signer<'a> {
    /// A signer for skills that call: its state where `config` says (Redis with
    /// `storage.backend: redis`, its URL resolved with `resolver` when a skill signs).
    #[cfg(feature = "aauth")]
    async fn new(
        config: &'a AgentConfig,
        home: &'a Home,
        on_interaction: Option<OnInteraction>,
        resolver: &SecretResolver,
    ) -> Result<Self, HostError> {
        let signs = config.sections.openapi.values().any(|settings| settings.aauth);
        let state = if signs { aauth_state(config, resolver).await? } else { AAuthState::Files };
        Ok(Signer { config, home, on_interaction, key_use: KeyUse::Sign, state, client: std::sync::OnceLock::new() })
    }

    #[cfg(not(feature = "aauth"))]
    async fn new(
        _config: &'a AgentConfig,
        _home: &'a Home,
        _on_interaction: Option<OnInteraction>,
        _resolver: &SecretResolver,
    ) -> Result<Self, HostError> {
        Ok(Signer { config: std::marker::PhantomData })
    }

    /// A signer for skills that are loaded, never called: see [`KeyUse::Check`].
    #[cfg(feature = "aauth")]
    fn for_check(config: &'a AgentConfig, home: &'a Home) -> Self {
        Signer {
            config,
            home,
            on_interaction: None,
            key_use: KeyUse::Check,
            state: AAuthState::Files,
            client: std::sync::OnceLock::new(),
        }
    }

    #[cfg(not(feature = "aauth"))]
    fn for_check(_config: &'a AgentConfig, _home: &'a Home) -> Self {
        Signer { config: std::marker::PhantomData }
    }

    /// `skill`, its calls sent through the AAuth client; why not, when there is none.
    #[cfg(feature = "aauth")]
    fn sign(&self, skill: skill_openapi::OpenApiSkill) -> Result<skill_openapi::OpenApiSkill, String> {
        let client = self.client.get_or_init(|| {
            let overrides = AAuthOverrides::default();
            build_aauth_client(
                self.config,
                self.home,
                overrides,
                self.on_interaction.clone(),
                self.key_use,
                &self.state,
            )
            .map_err(|error| error.to_string())
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

/// What one OpenAPI skill's tools came to when checked ([`load_openapi_tools`]).
#[cfg(feature = "openapi")]
#[derive(Debug, Default)]
pub struct OpenApiToolsCheck {
    /// How many tools were registered.
    pub tools: usize,
    /// The tools left out, with the reason.
    pub skipped_tools: Vec<skill_core::ToolFailure>,
    /// The parts of registered tools' input schemas left out, with the reason.
    pub left_out_keywords: Vec<skill_core::LeftOutKeyword>,
}

/// Loads each OpenAPI skill of `config` alone, as `omniagent config check` does, into an
/// agent of its own (so its tools are checked as `tools list` checks them): by skill
/// name, the number of tools registered, the tools and the parts of input schemas left
/// out with the reason, or why the skill cannot load. Nothing is called, so no request waits for a person, and
/// nothing is written: not even the AAuth key of skills that sign (`check_aauth_key`
/// reports on it). A skill that `inherited` (the top level, when `config` is an agent's)
/// has as `config` has it, with the same AAuth setup, is passed over: it would be found
/// the same.
#[cfg(feature = "openapi")]
pub async fn load_openapi_tools(
    config: &AgentConfig,
    home: &Home,
    inherited: Option<&AgentConfig>,
) -> Vec<(String, Result<OpenApiToolsCheck, String>)> {
    let signer = Signer::for_check(config, home);
    let mut loaded = Vec::new();
    #[cfg(feature = "aauth")]
    let inherited = inherited.filter(|top| top.sections.aauth == config.sections.aauth);
    for (name, settings) in &config.sections.openapi {
        if inherited.is_some_and(|top| top.sections.openapi.get(name) == Some(settings)) {
            continue;
        }
        let agent = Agent::builder().build();
        agent.register(openapi_skill(config, home, name, settings, &signer, None));
        let report = agent.init_compiled_skills().await;
        let tools = match report.skipped.into_iter().next() {
            Some(failure) => Err(failure.reason),
            None => Ok(OpenApiToolsCheck {
                tools: agent.tools().len(),
                skipped_tools: agent.skipped_tools(),
                left_out_keywords: agent.left_out_keywords(),
            }),
        };
        agent.close().await;
        loaded.push((name.clone(), tools));
    }
    loaded
}

/// Hides from the logs ([`crate::log`]) what an MCP server's config may carry as
/// credentials: its `env` and `headers` values, its URL's password and query values, and
/// the values of the host's variables that its `${VAR}`s name.
#[cfg(feature = "mcp")]
fn hide_mcp_values(server: &skill_mcp::ServerConfig) {
    match &server.transport {
        skill_mcp::Transport::Stdio { env, .. } => env.values().for_each(|value| crate::log::hide(value)),
        skill_mcp::Transport::Http { url, headers } => {
            if let Ok(url) = url::Url::parse(url) {
                url.password().into_iter().for_each(crate::log::hide);
                url.query_pairs().for_each(|(_, value)| crate::log::hide(&value));
            }
            headers.values().for_each(|value| crate::log::hide(value));
        }
    }
    for name in server.variables() {
        if let Ok(value) = std::env::var(&name) {
            crate::log::hide(&value);
        }
    }
}

/// Resolves a skill's secret references; one that cannot be resolved is left out with a
/// warning naming the reference, and the skill is skipped later if it requires it.
async fn resolve_secrets(resolver: &SecretResolver, skill: &str, references: &BTreeMap<String, SecretRef>) -> Secrets {
    let mut secrets = Secrets::new();
    for (name, reference) in references {
        match resolver.resolve(reference).await {
            Ok(value) => {
                crate::log::hide(value.expose_secret());
                secrets.insert_resolved(name.clone(), reference, value);
            }
            Err(error) => tracing::warn!("skill {skill}: secret {name}: {error}"),
        }
    }
    secrets
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::Config;

    fn assert_send<T: Send>(_: &T) {}

    /// A multi-threaded server awaits these futures on any of its threads: this test does
    /// not compile if one of them is not `Send`.
    #[test]
    fn the_futures_are_send() {
        let home = Home::new("/nonexistent/omniagent-home");
        let config = Config::parse(Path::new("config.yaml"), "").unwrap().for_agent(None).unwrap();
        assert_send(&start_agent(&config, &home, Wanted::All, Person::default()));
        #[cfg(feature = "markdown")]
        assert_send(&load_markdown_skills(&config, &home, &SkillPaths::default()));
        #[cfg(feature = "openapi")]
        assert_send(&load_openapi_tools(&config, &home, None));
    }
}

/// Agents of one config, started side by side on a multi-threaded runtime, as a server
/// starts one per client.
#[cfg(all(test, any(feature = "sqlite", feature = "mcp")))]
mod agents_side_by_side {
    use std::path::Path;

    use serde_json::json;
    use skill_core::{Content, ToolOutput};

    use super::*;

    fn text(output: &ToolOutput) -> String {
        let texts: Vec<&str> = output
            .content
            .iter()
            .map(|block| match block {
                Content::Text { text, .. } => text.as_str(),
                other => panic!("not text: {other:?}"),
            })
            .collect();
        texts.concat()
    }

    /// Starts `agent` of the config in `home` on a thread of the runtime, calls `tool`
    /// with `arguments`, and closes the agent.
    async fn call(home: &Path, agent: Option<&str>, tool: &str, arguments: serde_json::Value) -> ToolOutput {
        let home = Home::new(home);
        let config = crate::ConfigLocation::find(None, None, &home).load().unwrap();
        let config = config.for_agent(agent).unwrap();
        let tool = tool.to_owned();
        let task = tokio::spawn(async move {
            let agent = start_agent(&config, &home, Wanted::All, Person::default()).await.unwrap();
            let output = agent.call_tool(&tool, arguments).await.unwrap();
            agent.close().await;
            output
        });
        task.await.unwrap()
    }

    /// The agents of one config share the store's file, each in its own namespace.
    #[cfg(feature = "sqlite")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn agents_of_one_config_keep_their_own_notes() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(home.path().join("config.yaml"), "agents:\n  alice: {}\n  bob: {}\n").unwrap();
        let remember =
            |agent, value| call(home.path(), agent, "memory__remember", json!({"key": "city", "value": value}));
        let (alice, bob) = tokio::join!(remember(Some("alice"), "Lyon"), remember(Some("bob"), "Paris"));
        assert!(!alice.is_error && !bob.is_error);
        let recall = |agent| call(home.path(), agent, "memory__recall", json!({"key": "city"}));
        assert_eq!(text(&recall(Some("alice")).await), "Lyon");
        assert_eq!(text(&recall(Some("bob")).await), "Paris");
        let top_level = recall(None).await;
        assert!(top_level.is_error);
        assert_eq!(text(&top_level), "nothing is remembered under `city`");
    }

    /// Each agent's MCP server gets the secrets of that agent's merged config.
    #[cfg(feature = "mcp")]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn agents_of_one_config_get_their_own_secrets() {
        let home = tempfile::tempdir().unwrap();
        let server = test_peers::sample_server_or_panic();
        let server = server.display();
        let config = format!(
            "storage: {{backend: memory}}\n\
             compiled: {{memory: {{enabled: false}}}}\n\
             mcp: {{servers: {{sample: {{command: '{server}', secrets: {{TOKEN: top-level-token}}}}}}}}\n\
             agents:\n  \
               alice: {{mcp: {{servers: {{sample: {{command: '{server}', secrets: {{TOKEN: alice-token}}}}}}}}}}\n  \
               bob: {{}}\n",
        );
        std::fs::write(home.path().join("config.yaml"), config).unwrap();
        let token = |agent| call(home.path(), agent, "sample__env", json!({"name": "TOKEN"}));
        let (alice, bob, top_level) = tokio::join!(token(Some("alice")), token(Some("bob")), token(None));
        assert_eq!(text(&alice), "alice-token");
        assert_eq!(text(&bob), "top-level-token");
        assert_eq!(text(&top_level), "top-level-token");
    }
}
