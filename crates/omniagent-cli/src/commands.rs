//! The work behind each subcommand.

#[cfg(feature = "aauth")]
mod aauth;
mod config;
#[cfg(feature = "mcp")]
mod elicitation;
#[cfg(feature = "markdown")]
mod install;
#[cfg(feature = "mcp")]
mod login;
#[cfg(feature = "mcp")]
mod mcp_install;
#[cfg(feature = "mcp")]
mod serve;
#[cfg(feature = "markdown")]
mod skills;
mod tools;
#[cfg(feature = "markdown")]
mod validate;

use std::process::ExitCode;
use std::sync::Arc;

use omniagent_host::{ConfigLocation, Home, OnInteraction, Person};

use crate::args::{Cli, Command};

pub(crate) use self::config::CheckReport;
#[cfg(feature = "mcp")]
pub(crate) use self::mcp_install::{EntryChange, command_line as entry_command_line, url_of as entry_url};

/// What every command starts from: the home folder, the config file and the options.
pub(crate) struct Session {
    pub(crate) home: Home,
    pub(crate) location: ConfigLocation,
    pub(crate) json: bool,
    pub(crate) agent: Option<String>,
    /// `--elicitation`, when given.
    #[cfg(feature = "mcp")]
    pub(crate) elicitation: Option<crate::args::Elicitation>,
}

impl Session {
    /// How this command's calls reach the person: approvals on stderr, and MCP servers'
    /// elicitations as `--elicitation` says.
    pub(crate) fn person(&self) -> Person {
        Person {
            on_interaction: Some(on_interaction()),
            #[cfg(feature = "mcp")]
            elicitor: elicitation::elicitor(self.elicitation),
            // A terminal shows no MCP Apps.
            #[cfg(feature = "mcp")]
            apps: None,
            // A command shows what the servers offer now.
            #[cfg(any(feature = "mcp", feature = "openapi"))]
            from_lock: false,
            #[cfg(feature = "mcp")]
            on_upstream: None,
            policy: omniagent_host::PolicyState::default(),
        }
    }
}

/// What signed requests report while they wait for a person: the URL and code, on stderr.
pub(crate) fn on_interaction() -> OnInteraction {
    Arc::new(crate::render::interaction)
}

pub(crate) async fn run(cli: Cli, config_from_env: bool) -> anyhow::Result<ExitCode> {
    if let Command::Completions { shell } = cli.command {
        crate::render::completions(shell);
        return Ok(ExitCode::SUCCESS);
    }
    let home = Home::from_env()?;
    let (flag, env) = if config_from_env { (None, cli.global.config) } else { (cli.global.config, None) };
    let location = ConfigLocation::find(flag, env, &home);
    let session = Session {
        home,
        location,
        json: cli.global.json,
        agent: cli.global.agent,
        #[cfg(feature = "mcp")]
        elicitation: cli.global.elicitation,
    };
    match cli.command {
        #[cfg(feature = "markdown")]
        Command::Skills(crate::args::SkillsCommand::Installed(command)) => install::run(&session, command),
        #[cfg(feature = "markdown")]
        Command::Skills(command) => skills::run(&session, command).await,
        #[cfg(feature = "markdown")]
        Command::Prompt { base, mode, paths } => skills::prompt(&session, &base, mode, paths).await,
        Command::Tools(command) => tools::run(&session, command).await,
        Command::Config(command) => config::run(&session, command).await,
        #[cfg(feature = "mcp")]
        Command::Mcp(crate::args::McpCommand::Serve { http, eager, tool_search, busy_poll: _ }) => {
            serve::run(&session, http, eager, tool_search).await
        }
        #[cfg(feature = "mcp")]
        Command::Mcp(crate::args::McpCommand::Install {
            host,
            name,
            project,
            force,
            print,
            tool_search,
            url,
            token_env,
        }) => {
            let options = mcp_install::Options { name, project, force, print, tool_search, url, token_env };
            mcp_install::run(&session, host, &options)
        }
        #[cfg(feature = "mcp")]
        Command::Mcp(crate::args::McpCommand::Login { server, no_browser }) => {
            login::login(&session, &server, no_browser).await
        }
        #[cfg(feature = "mcp")]
        Command::Mcp(crate::args::McpCommand::Logout { server }) => login::logout(&session, &server),
        #[cfg(feature = "aauth")]
        Command::Aauth(command) => aauth::run(&session, command).await,
        Command::Completions { .. } => unreachable!("handled above"),
    }
}
