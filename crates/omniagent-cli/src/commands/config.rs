//! `omniagent config path|show|check`.

use std::process::ExitCode;

use omniagent_host::{AgentConfig, Config};
use serde::Serialize;
use skill_core::{LeftOutKeyword, SecretRef, SecretResolver, ToolFailure};

use super::Session;
use crate::args::ConfigCommand;
use crate::render;

pub(crate) async fn run(session: &Session, command: ConfigCommand) -> anyhow::Result<ExitCode> {
    match command {
        ConfigCommand::Path => {
            render::config_path(&session.location, &session.home, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Show => {
            let config = session.location.load()?.for_agent(session.agent.as_deref())?;
            #[cfg(feature = "mcp")]
            let config = config.with_effective_sandboxes();
            render::config(&config, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        ConfigCommand::Check => {
            let file = session.location.load()?;
            #[cfg(feature = "mcp")]
            super::serve::check(&file)?;
            let report = check(&file, session).await?;
            let all_good = report.secrets.iter().all(|secret| secret.error.is_none())
                && report.documents.iter().all(|document| document.error.is_none());
            render::config_check(&report, session.json)?;
            Ok(if all_good { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
    }
}

/// What `config check` found: the file is valid (else it failed before), how each secret
/// reference resolved, and whether each OpenAPI document loads.
#[derive(Debug, Serialize)]
pub(crate) struct CheckReport {
    pub(crate) path: Option<String>,
    pub(crate) valid: bool,
    pub(crate) agents: Vec<String>,
    pub(crate) secrets: Vec<SecretCheck>,
    pub(crate) documents: Vec<DocumentCheck>,
    /// Each `command` server's sandbox, as it runs.
    pub(crate) sandboxes: Vec<SandboxCheck>,
}

/// One `command` server's sandbox as it runs (`off`, or its network, limits and paths).
#[derive(Debug, Serialize)]
pub(crate) struct SandboxCheck {
    /// The agent whose config holds it (`null` for the top level).
    pub(crate) agent: Option<String>,
    pub(crate) server: String,
    /// One line, such as `network all, memory 2GiB, processes 256`.
    pub(crate) sandbox: String,
}

/// One OpenAPI skill's document: how many tools it gives, or why it cannot load.
#[derive(Debug, Serialize)]
pub(crate) struct DocumentCheck {
    /// The agent whose config holds it (`null` for the top level).
    pub(crate) agent: Option<String>,
    /// The skill's name (`openapi.<skill>`).
    pub(crate) skill: String,
    pub(crate) tools: usize,
    /// The operations that are no tool, each with why.
    pub(crate) skipped_tools: Vec<ToolFailure>,
    /// The parts of tools' input schemas left out (the tools load without them), each
    /// with why.
    pub(crate) left_out_keywords: Vec<LeftOutKeyword>,
    pub(crate) error: Option<String>,
}

/// One secret reference and whether it resolved; never the value. The agent's AAuth key
/// is one too (`aauth.key`, the key file), when the agent signs: found or not, it is
/// never created by a check.
#[derive(Debug, Serialize)]
pub(crate) struct SecretCheck {
    /// The agent whose config holds it (`null` for the top level).
    pub(crate) agent: Option<String>,
    /// Where it is written, e.g. `compiled.memory.secrets.TOKEN`.
    pub(crate) key: String,
    /// The reference (a literal shows as `[REDACTED]`).
    pub(crate) reference: String,
    pub(crate) error: Option<String>,
}

/// Checks the top level and every agent (or only `--agent`'s): their overrides merge
/// into a valid config, and every secret reference resolves.
async fn check(file: &Config, session: &Session) -> anyhow::Result<CheckReport> {
    let agents: Vec<Option<String>> = match &session.agent {
        Some(agent) => vec![Some(agent.clone())],
        None => std::iter::once(None).chain(file.agent_names().map(|name| Some(name.to_owned()))).collect(),
    };
    let resolver = SecretResolver::default();
    let mut secrets = Vec::new();
    let mut documents = Vec::new();
    #[cfg_attr(not(feature = "mcp"), allow(unused_mut))]
    let mut sandboxes: Vec<SandboxCheck> = Vec::new();
    // What an agent inherits unchanged from the top level is checked there, once.
    let mut top: Option<TopLevel> = None;
    for agent in &agents {
        let config = file.for_agent(agent.as_deref())?;
        let references = config.secret_references();
        for (key, reference) in &references {
            let inherited = |top: &TopLevel| top.references.iter().any(|(k, r)| k == key && r == reference);
            if top.as_ref().is_some_and(inherited) {
                continue;
            }
            let error = resolver.resolve(reference).await.err().map(|error| error.to_string());
            secrets.push(SecretCheck {
                agent: agent.clone(),
                key: key.clone(),
                reference: reference.to_string(),
                error,
            });
        }
        let aauth_key = aauth_key(&config, agent, session);
        let shown_key = aauth_key.as_ref().map(|key| key.reference.clone());
        if top.as_ref().is_none_or(|top| top.shown_key != shown_key) {
            secrets.extend(aauth_key);
        }
        documents.extend(openapi_documents(&config, agent, session, top.as_ref().map(|top| &top.config)).await);
        #[cfg(feature = "mcp")]
        for (server, sandbox) in config.sandboxes() {
            let sandbox = sandbox.to_string();
            // What an agent runs as the top level does is shown once, there.
            let inherited =
                |shown: &SandboxCheck| shown.agent.is_none() && shown.server == server && shown.sandbox == sandbox;
            if agent.is_none() || !sandboxes.iter().any(inherited) {
                sandboxes.push(SandboxCheck { agent: agent.clone(), server, sandbox });
            }
        }
        if agent.is_none() {
            top = Some(TopLevel { config, references, shown_key });
        }
    }
    Ok(CheckReport {
        path: session.location.path().map(|path| path.display().to_string()),
        valid: true,
        agents: agents.into_iter().flatten().collect(),
        secrets,
        documents,
        sandboxes,
    })
}

/// What `config check` found the top level to have, which an agent that has the same
/// needs no second check of.
struct TopLevel {
    config: AgentConfig,
    references: Vec<(String, SecretRef)>,
    /// Its AAuth key, as shown.
    shown_key: Option<String>,
}

/// The agent's AAuth key file, read if it exists, never created: one that does not exist
/// yet is fine, the first command that signs creates it.
#[cfg(feature = "aauth")]
fn aauth_key(config: &AgentConfig, agent: &Option<String>, session: &Session) -> Option<SecretCheck> {
    let check = omniagent_host::check_aauth_key(config, &session.home)?;
    let path = check.path.display();
    let (reference, error) = match check.thumbprint {
        Ok(Some(thumbprint)) => (format!("{path}, thumbprint {thumbprint}"), None),
        Ok(None) => (format!("{path}: does not exist yet, it will be created on first use"), None),
        Err(error) => (path.to_string(), Some(error.to_string())),
    };
    Some(SecretCheck { agent: agent.clone(), key: "aauth.key".to_owned(), reference, error })
}

#[cfg(not(feature = "aauth"))]
fn aauth_key(_config: &AgentConfig, _agent: &Option<String>, _session: &Session) -> Option<SecretCheck> {
    None
}

/// Loads each OpenAPI skill's document, as `tools list` would.
#[cfg(feature = "openapi")]
async fn openapi_documents(
    config: &AgentConfig,
    agent: &Option<String>,
    session: &Session,
    inherited: Option<&AgentConfig>,
) -> Vec<DocumentCheck> {
    let loaded = omniagent_host::load_openapi_tools(config, &session.home, inherited).await;
    loaded
        .into_iter()
        .map(|(skill, tools)| {
            let (check, error) = match tools {
                Ok(check) => (check, None),
                Err(error) => (omniagent_host::OpenApiToolsCheck::default(), Some(error)),
            };
            DocumentCheck {
                agent: agent.clone(),
                skill,
                tools: check.tools,
                skipped_tools: check.skipped_tools,
                left_out_keywords: check.left_out_keywords,
                error,
            }
        })
        .collect()
}

#[cfg(not(feature = "openapi"))]
async fn openapi_documents(
    _config: &AgentConfig,
    _agent: &Option<String>,
    _session: &Session,
    _inherited: Option<&AgentConfig>,
) -> Vec<DocumentCheck> {
    Vec::new()
}
