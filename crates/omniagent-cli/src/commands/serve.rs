//! `omniagent mcp serve`: the gateway, over stdio or streamable HTTP.

use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use omniagent_host::{Config, Home, ServeClient, Wanted, start_agent};
use skill_core::{Agent, SecretResolver};
use skill_mcp::server::{AgentFactory, Gateway, HttpClient, HttpOptions, serve_http};
use tokio_util::sync::CancellationToken;

use super::{Session, on_interaction};
use crate::UsageError;

/// Where `--http` listens without an address or `serve.http`.
const DEFAULT_HTTP_ADDRESS: &str = "127.0.0.1:8765";

/// How long calls in flight may go on after SIGINT or SIGTERM before the gateway ends
/// the upstream servers anyway.
const STOP_GRACE: Duration = Duration::from_secs(5);

pub(crate) async fn run(session: &Session, http: Option<Option<String>>, eager: bool) -> anyhow::Result<ExitCode> {
    let config = Arc::new(session.location.load()?);
    // The agent of `--agent` (stdio, and HTTP without clients) must exist before anything starts.
    config.for_agent(session.agent.as_deref())?;
    let stop = CancellationToken::new();
    tokio::spawn(stop_on_signal(stop.clone()));
    let serve = config.serve().clone();
    let clients = serve.clients.clone();
    for client in clients.values() {
        config.for_agent(client.agent.as_deref())?;
    }
    let factory = agent_factory(Arc::clone(&config), session.home.clone(), session.agent.clone(), clients.clone());
    let gateway = Gateway::new(factory, None);
    let Some(address) = http else {
        if eager {
            start_eagerly(&gateway, "").await;
        }
        let served = gateway.serve_stdio(stop).await;
        served.context("serving MCP on stdio failed")?;
        return Ok(ExitCode::SUCCESS);
    };
    let address = address.or(serve.http).unwrap_or_else(|| DEFAULT_HTTP_ADDRESS.to_owned());
    let address: SocketAddr = address
        .parse()
        .map_err(|_| UsageError::new(format!("--http: `{address}` is not an address such as 127.0.0.1:8765")))?;
    if clients.is_empty() && !address.ip().is_loopback() {
        return Err(UsageError::new(format!(
            "--http {address}: serving a non-loopback address needs `serve.clients` (bearer tokens), \
             or anyone who can reach it could use every tool"
        ))
        .into());
    }
    let options = HttpOptions { allowed_hosts: serve.allowed_hosts, clients: resolve_tokens(&clients).await? };
    let listener =
        tokio::net::TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address}"))?;
    tracing::info!("serving MCP on http://{address}/mcp");
    if eager {
        let names: Vec<&str> = if clients.is_empty() { vec![""] } else { clients.keys().map(String::as_str).collect() };
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
    Ok(ExitCode::SUCCESS)
}

/// Makes each client's agent: the one of `--agent` for stdio and for an HTTP server
/// without clients (client `""`), else the client's `agent`, named after the client (its
/// store namespace), with its markdown skills as prompts.
fn agent_factory(
    config: Arc<Config>,
    home: Home,
    session_agent: Option<String>,
    clients: std::collections::BTreeMap<String, ServeClient>,
) -> AgentFactory {
    Arc::new(move |client: String| {
        let (config, home) = (Arc::clone(&config), home.clone());
        let section = match clients.get(&client) {
            Some(settings) => settings.agent.clone(),
            None => session_agent.clone(),
        };
        Box::pin(async move {
            let mut agent_config = config.for_agent(section.as_deref()).map_err(|error| error.to_string())?;
            if !client.is_empty() {
                agent_config = agent_config.renamed(client);
            }
            let agent = start_agent(&agent_config, &home, Wanted::All, Some(on_interaction()))
                .await
                .map_err(|error| error.to_string())?;
            add_markdown_prompts(&agent, &agent_config, &home).await;
            for skipped in agent.skipped() {
                tracing::warn!("skill {} skipped: {}", skipped.skill, skipped.reason);
            }
            Ok(agent)
        })
    })
}

/// The agent's markdown skills, each a prompt, and the system prompt with them.
#[cfg(feature = "markdown")]
async fn add_markdown_prompts(agent: &Agent, config: &omniagent_host::AgentConfig, home: &Home) {
    let set = omniagent_host::load_markdown_skills(config, home, &omniagent_host::SkillPaths::default()).await;
    for skipped in &set.skipped {
        tracing::warn!("{}: {}", skipped.path.display(), skipped.reason);
    }
    let prompt_config = skill_markdown::PromptConfig { max_injected: config.skills().max_injected };
    agent.register(Box::new(skill_markdown::SkillPrompts::new(set.skills, prompt_config)));
    agent.init_compiled_skills().await;
}

#[cfg(not(feature = "markdown"))]
async fn add_markdown_prompts(_agent: &Agent, _config: &omniagent_host::AgentConfig, _home: &Home) {}

async fn start_eagerly(gateway: &Gateway, client: &str) {
    if let Err(reason) = gateway.start(client).await {
        tracing::error!("the agent could not start: {reason}");
    }
}

/// The clients' tokens; a token that cannot be resolved is a config error naming its key.
async fn resolve_tokens(
    clients: &std::collections::BTreeMap<String, ServeClient>,
) -> Result<Vec<HttpClient>, UsageError> {
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
