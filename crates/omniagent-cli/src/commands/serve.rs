//! `omniagent mcp serve`: the gateway, over stdio or streamable HTTP.

mod console;
mod oauth;
mod probes;
#[cfg(feature = "redis")]
mod sessions;
#[cfg(feature = "markdown")]
mod skill_sets;
mod watch;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use anyhow::Context as _;
use omniagent_host::{Config, Home, Person, ServeClient, Wanted, start_agent};
use skill_core::{Agent, SecretResolver, SkillHandle};
use skill_mcp::server::{
    AgentFactory, AgentFor, Gateway, HttpClient, HttpOptions, InstructionsFactory, OAuthOptions, serve_http,
};
use tokio_util::sync::CancellationToken;

#[cfg(feature = "markdown")]
use self::skill_sets::SkillSets;
use super::{Session, on_interaction};
use crate::UsageError;

/// Where `--http` listens without an address or `serve.http`.
const DEFAULT_HTTP_ADDRESS: SocketAddr = SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8765));

/// How long calls in flight may go on after SIGINT or SIGTERM before the gateway ends
/// the upstream servers anyway.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The config the gateway serves: replaced as a whole when the file changes and the new
/// one is valid.
pub(crate) type SharedConfig = Arc<RwLock<Arc<Config>>>;

/// What the gateway keeps of each client's markdown skills.
#[derive(Clone, Default)]
pub(crate) struct Markdown {
    /// The handles of the two markdown skills of each client's agent (its prompts, then
    /// its skill files), by client: the watch gives them what the skill folders hold now.
    /// An agent made again replaces its client's entry, so there is at most one per
    /// client.
    handles: Arc<Mutex<BTreeMap<String, [SkillHandle; 2]>>>,
    /// The skills as last read, for the instructions and the agents.
    sets: SkillSets,
}

/// Without markdown skills, there are none to share.
#[cfg(not(feature = "markdown"))]
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillSets;

/// Which `agents:` entry each client runs as: the client's `agent`, an OAuth identity's
/// that of `serve.oauth.agents`, and for the client `""` (stdio, or HTTP without clients)
/// the one of `--agent`.
#[derive(Debug, Clone)]
pub(crate) struct Sections {
    session_agent: Option<String>,
    clients: BTreeMap<String, ServeClient>,
    oauth: oauth::OAuthAgents,
}

impl Sections {
    fn of(&self, client: &str) -> Result<Option<&str>, String> {
        if let Some(settings) = self.clients.get(client) {
            return Ok(settings.agent.as_deref());
        }
        match self.oauth.agent(client) {
            Some(agent) => Ok(agent),
            None if client.is_empty() => Ok(self.session_agent.as_deref()),
            None => Err(format!("the client `{client}` runs as no agent of this config")),
        }
    }

    /// Every client named in the config: `""`, then the static clients, then the OAuth
    /// identities.
    #[cfg(feature = "markdown")]
    pub(crate) fn client_names(&self) -> impl Iterator<Item = &str> {
        std::iter::once("").chain(self.clients.keys().map(String::as_str)).chain(self.oauth.client_names())
    }

    /// The config `client` runs with in `config`; an HTTP client's agent is named after it.
    pub(crate) fn agent_config(&self, config: &Config, client: &str) -> Result<omniagent_host::AgentConfig, String> {
        let agent_config = config.for_agent(self.of(client)?).map_err(|error| error.to_string())?;
        Ok(if client.is_empty() { agent_config } else { agent_config.renamed(client) })
    }
}

/// The `serve:` section as [`check`] found it.
pub(crate) struct Checked {
    /// The resource server's options when `serve.oauth` is there.
    oauth: Option<OAuthOptions>,
    /// No clients and no OAuth: anyone who reaches the address may call, so only a
    /// loopback address is allowed.
    open: bool,
    /// `serve.http`, when given.
    http: Option<SocketAddr>,
}

/// What `mcp serve` refuses in the config's `serve:` section, found without starting
/// anything (`config check` runs it too): a client name with a `:`, a client or OAuth
/// identity whose agent the config lacks or cannot merge, an invalid `serve.oauth`, and a
/// `serve.http` that is no address, or a non-loopback one open to anyone. Each error
/// names its key.
pub(crate) fn check(config: &Config) -> anyhow::Result<Checked> {
    let serve = config.serve();
    for (name, client) in &serve.clients {
        if name.contains(':') {
            return Err(UsageError::new(format!("serve.clients.{name}: a client name may not have a `:`")).into());
        }
        config.for_agent(client.agent.as_deref()).with_context(|| format!("serve.clients.{name}.agent"))?;
    }
    let oauth = oauth::options(serve, config)?;
    if serve.console && oauth.is_none() && !serve.clients.values().any(|client| client.admin) {
        let message = "serve.console: no client of `serve.clients` has `admin: true`, and there is no \
                       `serve.oauth` (whose tokens with the scope `omniagent:admin` would be admins): no one \
                       could use the console";
        return Err(UsageError::new(message).into());
    }
    let open = serve.clients.is_empty() && oauth.is_none();
    let http = serve.http.as_deref().map(|address| listen_address("serve.http", address, open)).transpose()?;
    Ok(Checked { oauth, open, http })
}

/// `address` (given by `key`) as an address to listen on; `open` (no clients, no OAuth)
/// allows only a loopback one.
fn listen_address(key: &str, address: &str, open: bool) -> Result<SocketAddr, UsageError> {
    let address: SocketAddr = address
        .parse()
        .map_err(|_| UsageError::new(format!("{key}: `{address}` is not an address such as 127.0.0.1:8765")))?;
    if open && !address.ip().is_loopback() {
        return Err(UsageError::new(format!(
            "{key} {address}: serving a non-loopback address needs `serve.clients` (bearer tokens) \
             or `serve.oauth`, or anyone who can reach it could use every tool"
        )));
    }
    Ok(address)
}

/// The skills whose tools are still listed with tool search: the markdown
/// skills' own, which the skill catalog in the instructions tells the model to call.
fn listed_with_tool_search() -> Vec<String> {
    #[cfg(feature = "markdown")]
    return vec![skill_markdown::SKILL_TOOLS_NAME.to_owned()];
    #[cfg(not(feature = "markdown"))]
    Vec::new()
}

pub(crate) async fn run(
    session: &Session,
    http: Option<Option<String>>,
    eager: bool,
    tool_search: bool,
) -> anyhow::Result<ExitCode> {
    let loaded = session.location.load()?;
    let serve = loaded.serve().clone();
    let clients = serve.clients.clone();
    // Every agent a client may run as must exist before anything starts.
    loaded.for_agent(session.agent.as_deref())?;
    #[cfg(feature = "telemetry")]
    omniagent_host::telemetry::install(&loaded)?;
    let probes = match http {
        Some(_) => Some(probes::routes(omniagent_host::top_level_store(&loaded, &session.home).await?)),
        None => None,
    };
    let Checked { oauth, open, http: configured_address } = check(&loaded)?;
    #[cfg(feature = "redis")]
    let sessions = if http.is_some() { sessions::store(&loaded).await? } else { None };
    let config: SharedConfig = Arc::new(RwLock::new(Arc::new(loaded)));
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signal(stop.clone()));
    let sections = Sections {
        session_agent: session.agent.clone(),
        clients: clients.clone(),
        oauth: oauth::OAuthAgents::of(&serve),
    };
    let identities: Vec<String> = sections.oauth.client_names().map(str::to_owned).collect();
    let markdown = Markdown::default();
    let upstreams = serve.console.then(console::Upstreams::default);
    // Every client's agent counts in one: its buckets outlive an agent made afresh.
    let policy = omniagent_host::PolicyState::default();
    let factory = agent_factory(
        Arc::clone(&config),
        session.home.clone(),
        sections.clone(),
        markdown.clone(),
        eager,
        upstreams.clone(),
        policy.clone(),
    );
    let instructions =
        instructions_factory(Arc::clone(&config), session.home.clone(), sections.clone(), markdown.sets.clone());
    let mut gateway = Gateway::new(factory, instructions);
    if tool_search || serve.tool_search {
        gateway = gateway.with_tool_search(listed_with_tool_search());
    }
    #[cfg(feature = "telemetry")]
    if let Some(spans) = omniagent_host::telemetry::request_spans() {
        gateway = gateway.with_request_spans(spans);
    }
    let pages = upstreams.map(|upstreams| {
        let home = session.home.clone();
        console::routes(gateway.clone(), Arc::clone(&config), home, sections.clone(), upstreams, policy)
    });
    tokio::spawn(watch::watch(
        gateway.clone(),
        session.location.clone(),
        config,
        session.home.clone(),
        sections,
        markdown,
        stop.clone(),
    ));
    let Some(address) = http else {
        if serve.console {
            tracing::warn!("serve.console: the console is served over HTTP only (`--http`), not over stdio");
        }
        if eager {
            start_eagerly(&gateway, "").await;
        }
        let served = gateway.serve_stdio(stop).await;
        #[cfg(feature = "telemetry")]
        omniagent_host::telemetry::shutdown().await;
        served.context("serving MCP on stdio failed")?;
        return Ok(ExitCode::SUCCESS);
    };
    let address = match address {
        Some(address) => listen_address("--http", &address, open)?,
        None => configured_address.unwrap_or(DEFAULT_HTTP_ADDRESS),
    };
    let options = HttpOptions {
        allowed_hosts: serve.allowed_hosts,
        clients: resolve_tokens(&clients).await?,
        oauth,
        #[cfg(feature = "redis")]
        sessions,
        own_caller: Some(omniagent_host::process_mark().to_owned()),
        pages,
        open_routes: probes,
    };
    let listener =
        tokio::net::TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address}"))?;
    tracing::info!("serving MCP on http://{address}/mcp");
    if serve.console {
        tracing::info!("the console is at http://{address}/console");
    }
    if eager {
        let names: Vec<&str> = if open {
            vec![""]
        } else {
            clients.keys().map(String::as_str).chain(identities.iter().map(String::as_str)).collect()
        };
        for name in names {
            start_eagerly(&gateway, name).await;
        }
    }
    let served = serve_http(gateway.clone(), listener, options, stop.clone());
    tokio::select! {
        served = served => served.context("serving MCP over HTTP failed")?,
        () = async { stop.cancelled().await; tokio::time::sleep(STOP_GRACE).await } => {
            tracing::warn!("calls still running after {STOP_GRACE:?}; stopping anyway");
        }
    }
    gateway.close().await;
    #[cfg(feature = "telemetry")]
    omniagent_host::telemetry::shutdown().await;
    Ok(ExitCode::SUCCESS)
}

/// Makes each client's agent from the current config (see [`Sections`]), with its
/// markdown skills (of `markdown`'s sets) as prompts, whose handles go to `markdown`.
/// Unless `eager`, an MCP server whose definitions the trust lock holds is offered from
/// the lock and started at its first call (instant start). With the console, `upstreams`
/// gets each agent's MCP servers' health. Every agent's policy counts in `policy`.
fn agent_factory(
    config: SharedConfig,
    home: Home,
    sections: Sections,
    markdown: Markdown,
    eager: bool,
    upstreams: Option<console::Upstreams>,
    policy: omniagent_host::PolicyState,
) -> AgentFactory {
    Arc::new(move |wanted: AgentFor| {
        let current = Arc::clone(&config.read().unwrap_or_else(std::sync::PoisonError::into_inner));
        let agent_config = sections.agent_config(&current, &wanted.client);
        let home = home.clone();
        let markdown = markdown.clone();
        let on_upstream = upstreams.as_ref().map(|upstreams| upstreams.recorder(&wanted.client));
        let policy = policy.clone();
        Box::pin(async move {
            let agent_config = agent_config?;
            let person = Person {
                on_interaction: Some(tell_the_caller()),
                apps: wanted.apps,
                from_lock: !eager,
                on_upstream,
                policy,
                ..Person::default()
            };
            let agent = start_agent(&agent_config, &home, Wanted::AllButSkillTools, person)
                .await
                .map_err(|error| error.to_string())?;
            if let Some(handles) =
                add_markdown_prompts(&agent, &wanted.client, &agent_config, &home, &markdown.sets).await
            {
                markdown
                    .handles
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(wanted.client, handles);
            }
            for line in agent.tool_filter_report().unmatched_lines() {
                tracing::warn!("`tools:` {line}");
            }
            Ok(agent)
        })
    })
}

/// Each client's instructions, as it initializes the gateway: the catalog of its agent's
/// markdown skills (what `prompt --mode catalog` gives, within the same budget), which a
/// host that adds a server's instructions to its model's prompt gives the model, so that
/// the model knows when to load a skill. Nothing for an agent without skills.
#[cfg(feature = "markdown")]
fn instructions_factory(
    config: SharedConfig,
    home: Home,
    sections: Sections,
    skill_sets: SkillSets,
) -> Option<InstructionsFactory> {
    Some(Arc::new(move |client: String| {
        let current = Arc::clone(&config.read().unwrap_or_else(std::sync::PoisonError::into_inner));
        let agent_config = sections.agent_config(&current, &client);
        let home = home.clone();
        let skill_sets = skill_sets.clone();
        Box::pin(async move {
            let agent_config = agent_config.ok()?;
            let set = skill_sets.of(&client, &agent_config, &home).await;
            let catalog = skill_markdown::PromptConfig {
                mode: skill_markdown::PromptMode::Catalog,
                ..agent_config.prompt_config()
            };
            let prompt = skill_markdown::render_prompt("", &set.skills, &catalog);
            (!prompt.skills.is_empty()).then_some(prompt.text)
        })
    }))
}

#[cfg(not(feature = "markdown"))]
fn instructions_factory(
    _config: SharedConfig,
    _home: Home,
    _sections: Sections,
    _skill_sets: SkillSets,
) -> Option<InstructionsFactory> {
    None
}

/// What a signed request reports while it waits for a person: to the MCP client whose
/// call it is (a URL elicitation or a log message), else on stderr as other commands do.
fn tell_the_caller() -> omniagent_host::OnInteraction {
    let stderr = on_interaction();
    Arc::new(move |url: &str, code: &str| {
        let page = format!("{url}?code={code}");
        let message = format!("action needed: open {page} to approve this request (code {code})");
        if !skill_mcp::server::tell_caller(&message, &page) {
            stderr(url, code);
        }
    })
}

/// The agent's markdown skills: each a prompt (and the system prompt with them), the
/// tools that load them on demand (unless `skills.tools` is off), and their files as
/// `skill://` resources; returns the handles of those two skills.
#[cfg(feature = "markdown")]
async fn add_markdown_prompts(
    agent: &Agent,
    client: &str,
    config: &omniagent_host::AgentConfig,
    home: &Home,
    skill_sets: &SkillSets,
) -> Option<[SkillHandle; 2]> {
    let set = skill_sets.of(client, config, home).await;
    let (prompts, files) = markdown_skills(config, home, &set);
    let handles = [agent.register(Box::new(prompts)), agent.register(Box::new(files))];
    agent.init_compiled_skills().await;
    Some(handles)
}

/// The skills that give the markdown skills `set` (read for `config`) as prompts and as
/// resources.
#[cfg(feature = "markdown")]
fn markdown_skills(
    config: &omniagent_host::AgentConfig,
    home: &Home,
    set: &skill_markdown::SkillSet,
) -> (skill_markdown::SkillPrompts, skill_markdown::SkillFiles) {
    for skipped in &set.skipped {
        match skipped.line {
            Some(line) => tracing::warn!("{}:{line}: {}", skipped.path.display(), skipped.reason),
            None => tracing::warn!("{}: {}", skipped.path.display(), skipped.reason),
        }
    }
    let prompt_config = config.prompt_config();
    for cut in skill_markdown::render_prompt("", &set.skills, &prompt_config).cuts {
        tracing::warn!("skill {}: {}", cut.skill, cut.reason);
    }
    let files = skill_markdown::SkillFiles::new(&set.skills, &prompt_config);
    let tools = config.skills().tools.then(|| omniagent_host::markdown_skill_tools(config, home, &set.skills));
    let prompts = skill_markdown::SkillPrompts::new(set.skills.clone(), prompt_config);
    (tools.into_iter().fold(prompts, skill_markdown::SkillPrompts::with_tools), files)
}

#[cfg(not(feature = "markdown"))]
async fn add_markdown_prompts(
    _agent: &Agent,
    _client: &str,
    _config: &omniagent_host::AgentConfig,
    _home: &Home,
    _skill_sets: &SkillSets,
) -> Option<[SkillHandle; 2]> {
    None
}

async fn start_eagerly(gateway: &Gateway, client: &str) {
    if let Err(reason) = gateway.start(client).await {
        tracing::error!("the agent could not start: {reason}");
    }
}

/// The clients' tokens; a token that cannot be resolved is a config error naming its key.
async fn resolve_tokens(clients: &BTreeMap<String, ServeClient>) -> Result<Vec<HttpClient>, UsageError> {
    let resolver = SecretResolver::default();
    let mut resolved = Vec::new();
    for (name, client) in clients {
        let token = resolver
            .resolve(&client.token)
            .await
            .map_err(|error| UsageError::new(format!("serve.clients.{name}.token: {error}")))?;
        resolved.push(HttpClient { name: name.clone(), token });
    }
    Ok(resolved)
}

/// Cancels `stop` at the first SIGINT or SIGTERM.
async fn stop_on_signal(stop: CancellationToken) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::warn!("cannot watch for SIGTERM: {error}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
    }
    tracing::info!("stopping");
    stop.cancel();
}
