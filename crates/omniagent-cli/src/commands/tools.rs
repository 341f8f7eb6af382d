//! `omniagent tools list`, `omniagent tools search` and `omniagent tools call`.

use std::io::Read;
use std::process::ExitCode;

use anyhow::Context;
use serde_json::Value;
use skill_core::{ToolError, ToolIndex};

use omniagent_host::{Wanted, start_agent};

use super::Session;
use crate::UsageError;
use crate::args::ToolsCommand;
use crate::render;

pub(crate) async fn run(session: &Session, command: ToolsCommand) -> anyhow::Result<ExitCode> {
    let loaded = session.location.load()?;
    let config = loaded.for_agent(session.agent.as_deref())?;
    match command {
        ToolsCommand::List => {
            let agent = start_agent(&config, &session.home, Wanted::All, session.person()).await?;
            render::tools(&agent, session.json)?;
            agent.close().await;
            Ok(ExitCode::SUCCESS)
        }
        ToolsCommand::Search { query, limit } => {
            let agent = start_agent(&config, &session.home, Wanted::All, session.person()).await?;
            let index = ToolIndex::of(&agent);
            render::found_tools(&query, &index.search(&query), usize::from(limit), session.json)?;
            agent.close().await;
            Ok(ExitCode::SUCCESS)
        }
        ToolsCommand::Call { tool, args } => {
            let arguments = read_arguments(&args)?;
            if tool.contains("__") && !config.tool_filter().offers(&tool) {
                let message =
                    format!("`{tool}` is left out by the config's `tools:` section (its include and exclude)");
                return Err(UsageError::new(message).into());
            }
            let skill = tool.split_once("__").map_or(tool.as_str(), |(skill, _)| skill);
            #[cfg(feature = "telemetry")]
            omniagent_host::telemetry::install(&loaded)?;
            let agent = start_agent(&config, &session.home, Wanted::Only(skill), session.person()).await?;
            let outcome = agent.call_tool(&tool, arguments).await;
            let skipped = agent.skipped().into_iter().find(|failure| failure.skill == skill);
            agent.close().await;
            #[cfg(feature = "telemetry")]
            omniagent_host::telemetry::shutdown().await;
            if let (Err(ToolError::NotFound { .. }), Some(failure)) = (&outcome, skipped) {
                let message = format!("`{tool}`: the skill `{skill}` did not load: {}", failure.reason);
                return Err(UsageError::new(message).into());
            }
            let output = outcome?;
            render::tool_output(&output, session.json)?;
            Ok(if output.is_error { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        ToolsCommand::Review => {
            let agent = start_agent(&config, &session.home, Wanted::All, session.person()).await?;
            let withheld = agent.withheld();
            agent.close().await;
            render::review(&withheld, session.json)?;
            Ok(if withheld.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        ToolsCommand::Approve { names, skill, all } => {
            let agent = start_agent(&config, &session.home, Wanted::All, session.person()).await?;
            let approved = choose(&agent, &names, skill.as_deref(), all)
                .map_err(|message| anyhow::Error::from(UsageError::new(message)))
                .and_then(|chosen| Ok(agent.approve(&chosen).map(|()| chosen)?));
            agent.close().await;
            render::approved(&approved?, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The withheld items `tools approve` records: those named (flagged ones included), or
/// every one of `skill`, or every one, that no scan rule flagged. A name that is neither
/// withheld nor offered is a mistake; one that is offered already needs nothing.
pub(crate) fn choose(
    agent: &skill_core::Agent,
    names: &[String],
    skill: Option<&str>,
    all: bool,
) -> Result<Vec<skill_core::WithheldItem>, String> {
    let withheld = agent.withheld();
    if !names.is_empty() {
        let offered = |name: &str| {
            agent.tools().iter().any(|tool| tool.name() == name)
                || agent.prompts().iter().any(|prompt| prompt.name() == name)
                || agent.resources().iter().any(|resource| resource.uri == name)
                || agent.resource_templates().iter().any(|template| template.uri_template == name)
        };
        let unknown: Vec<&str> = names
            .iter()
            .map(String::as_str)
            .filter(|name| !withheld.iter().any(|item| item.name == *name) && !offered(name))
            .collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = withheld.iter().map(|item| item.name.as_str()).collect();
            let known = if known.is_empty() {
                "nothing is withheld".to_owned()
            } else {
                format!("withheld: {}", known.join(", "))
            };
            return Err(format!("no tool, prompt, resource or template named {} ({known})", unknown.join(", ")));
        }
        return Ok(withheld.into_iter().filter(|item| names.contains(&item.name)).collect());
    }
    let unflagged = withheld.into_iter().filter(|item| item.reason != skill_core::trust::WithheldReason::Flagged);
    match skill {
        Some(skill) if !all => Ok(unflagged.filter(|item| item.skill == skill).collect()),
        _ => Ok(unflagged.collect()),
    }
}

/// `--args`: JSON text, `@FILE`, or `-` for standard input; it must be an object.
fn read_arguments(given: &str) -> anyhow::Result<Value> {
    let (text, origin) = if given == "-" {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).context("cannot read --args from standard input")?;
        (text, "standard input".to_owned())
    } else if let Some(path) = given.strip_prefix('@') {
        let text = std::fs::read_to_string(path)
            .map_err(|error| UsageError::new(format!("cannot read --args file {path}: {error}")))?;
        (text, path.to_owned())
    } else {
        (given.to_owned(), "--args".to_owned())
    };
    let value: Value =
        serde_json::from_str(&text).map_err(|error| UsageError::new(format!("{origin} is not valid JSON: {error}")))?;
    match value {
        Value::Object(_) | Value::Null => Ok(value),
        other => {
            Err(UsageError::new(format!("{origin} must be a JSON object of arguments, not {}", json_type(&other)))
                .into())
        }
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
