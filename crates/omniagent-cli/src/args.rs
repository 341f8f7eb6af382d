//! The command line as clap sees it: flags and subcommands, checked as given. The work
//! they ask for lives in `commands`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Skills for AI agents: list and call the tools your agent gets from compiled skills, MCP servers
/// and OpenAPI documents, and call APIs as an AAuth agent
#[derive(Debug, Parser)]
#[command(name = "omniagent", version, propagate_version = true, max_term_width = 100)]
#[command(after_help = "Config: -c FILE, else $OMNIAGENT_CONFIG, else $OMNIAGENT_HOME/config.yaml \
(OMNIAGENT_HOME defaults to ~/.omniagent), else built-in defaults. `omniagent config path` tells which.")]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every command accepts.
#[derive(Debug, Args)]
pub(crate) struct GlobalArgs {
    /// The config file to read
    #[arg(short = 'c', long = "config", global = true, env = "OMNIAGENT_CONFIG", value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Use the overrides of this agent from the config's `agents` section
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) agent: Option<String>,
    /// Log more on stderr (-v info, -vv debug, -vvv trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count, conflicts_with = "quiet")]
    pub(crate) verbose: u8,
    /// Log errors only
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
    /// How an MCP server's request for input (elicitation) is answered: `ask` the person on
    /// the terminal, accept the schema's `defaults` (when every required field has one),
    /// or `decline`. Default: ask when stdin and stderr are a terminal, else decline
    #[cfg(feature = "mcp")]
    #[arg(long, global = true, value_enum, value_name = "HOW")]
    pub(crate) elicitation: Option<Elicitation>,
}

/// `--elicitation`.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Elicitation {
    /// Ask the person, field by field, on the terminal
    Ask,
    /// Accept the schema's defaults when every required field has one, else decline
    Defaults,
    /// Decline every request
    Decline,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List, inspect and check markdown skills (SKILL.md)
    #[cfg(feature = "markdown")]
    #[command(subcommand)]
    Skills(SkillsCommand),
    /// Print the system prompt the agent would get, with its skills
    #[cfg(feature = "markdown")]
    Prompt {
        /// The system prompt the skills are appended to
        #[arg(long, value_name = "TEXT", default_value = "")]
        base: String,
        /// How the skills go in (default: `skills.prompt`, else full)
        #[arg(long, value_enum, value_name = "MODE")]
        mode: Option<PromptMode>,
        #[command(flatten)]
        paths: SkillPaths,
    },
    /// List and call the tools of every tool-giving skill
    #[command(subcommand)]
    Tools(ToolsCommand),
    /// Show where the config is, what it says, and whether it is valid
    #[command(subcommand)]
    Config(ConfigCommand),
    /// Serve every tool, prompt and skill to MCP hosts (Claude Desktop, Claude Code, Cursor, ...)
    #[cfg(feature = "mcp")]
    #[command(subcommand)]
    Mcp(McpCommand),
    /// Act as an AAuth agent: enroll, show who the agent is, send signed requests
    #[cfg(feature = "aauth")]
    #[command(subcommand)]
    Aauth(AauthCommand),
    /// Print shell completions
    Completions {
        /// The shell to complete for
        shell: clap_complete::Shell,
    },
}

#[cfg(feature = "mcp")]
#[derive(Debug, Subcommand)]
pub(crate) enum McpCommand {
    /// Run one MCP server offering the agent's tools, prompts, resources and skills
    ///
    /// Over stdio by default: a host's config entry `{"command": "omniagent", "args":
    /// ["mcp", "serve"]}`. With `--http`, over streamable HTTP at `/mcp`; each client of
    /// `serve.clients` then needs `Authorization: Bearer <token>` and gets an agent of its
    /// own, as does each identity of `serve.oauth` with an OAuth access token of its
    /// issuer; without either, only a loopback address may be used. Both MCP protocol
    /// eras are answered (2025-11-25 and 2026-07-28). Upstream MCP servers start on first
    /// use. SIGINT or SIGTERM stops it cleanly: calls in flight get a few seconds, then
    /// every upstream process is ended.
    Serve {
        /// Serve streamable HTTP on ADDR (default: `serve.http`, else 127.0.0.1:8765)
        #[arg(long, value_name = "ADDR", num_args = 0..=1)]
        http: Option<Option<String>>,
        /// Start the agent and its upstream MCP servers now, not on the first request
        ///
        /// They start before any host has said whether it shows MCP Apps, so they are told
        /// it does not: servers that offer apps only to hosts that show them offer none.
        #[arg(long)]
        eager: bool,
        /// List two tools, `search_tools` and `call_tool`, in place of every tool
        ///
        /// For hosts whose model cannot hold every tool in its context (GitHub's API alone
        /// gives 1,223): the model finds tools by words of what they do and calls them by
        /// name. The skills' own tools stay listed. The same as `serve.tool_search: true`.
        #[arg(long)]
        tool_search: bool,
        /// Over stdio, keep polling for this many microseconds after each wake-up before
        /// sleeping again (default 0: sleep at once)
        ///
        /// For a client that calls back to back: a call through the gateway wakes it
        /// twice, and waking a sleeping thread costs tens of microseconds on many machines
        /// (most virtual machines). Polling meets the upstream's answer and the client's
        /// next request awake, for up to this much CPU time per wake-up. A host that calls
        /// as its model works gains nothing from it: the gateway has gone to sleep between
        /// calls anyway.
        #[arg(long, value_name = "MICROSECONDS", default_value_t = 0, conflicts_with = "http")]
        busy_poll: u64,
    },
    /// Add `omniagent mcp serve` to an MCP host's config (Claude Desktop, Cursor, Codex, ...)
    ///
    /// The entry starts this binary by its full path (a desktop application may not have
    /// your shell's PATH), with this command's `-c`, `--agent` and $OMNIAGENT_HOME, so the
    /// host is served the agent this command sees. The rest of the host's file is kept.
    /// Restart the host (or reload its MCP servers) to use it.
    Install {
        /// The host whose config gets the entry
        #[arg(value_enum)]
        host: McpHost,
        /// The entry's name in the host's config
        #[arg(long, value_name = "NAME", default_value = "omniagent")]
        name: String,
        /// Write the config of the project in this folder, not the user's (Cursor, VS Code,
        /// Gemini CLI)
        #[arg(long)]
        project: bool,
        /// Replace an entry of that name that says something else
        #[arg(long)]
        force: bool,
        /// Print the entry, in the shape of the host's file, and write nothing
        #[arg(long)]
        print: bool,
        /// Serve with `--tool-search`: two tools, `search_tools` and `call_tool`, in place
        /// of every tool
        #[arg(long)]
        tool_search: bool,
        /// Name a gateway already serving over HTTP (`omniagent mcp serve --http`) by its
        /// URL, rather than start one
        #[arg(long, value_name = "URL", conflicts_with = "tool_search")]
        url: Option<String>,
        /// With --url: the variable the host reads this client's bearer token from (one
        /// of `serve.clients`); the token itself is written nowhere
        #[arg(long, value_name = "VAR", requires = "url")]
        token_env: Option<String>,
    },
    /// Log in to an MCP server that requires OAuth (hosted GitHub, Linear, Notion, ...)
    ///
    /// Prints the URL to open (and opens a browser when there is one), then waits for the
    /// authorization server to send the browser back to a listener on 127.0.0.1. The
    /// tokens are kept in $OMNIAGENT_HOME/oauth/<agent>/<server>.json (0600), never
    /// printed, and refreshed before they expire.
    Login {
        /// The server, as named under `mcp.servers`
        server: String,
        /// Only print the URL; do not try to open a browser
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget this agent's OAuth tokens for an MCP server
    Logout {
        /// The server, as named under `mcp.servers`
        server: String,
    },
}

/// The hosts `mcp install` writes the config of.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum McpHost {
    /// Claude Desktop's `claude_desktop_config.json`
    ClaudeDesktop,
    /// Claude Code's `.mcp.json` in this folder (a project's; every project's: `claude mcp add --scope user`)
    ClaudeCode,
    /// Cursor's `~/.cursor/mcp.json` (`--project`: `.cursor/mcp.json`)
    Cursor,
    /// VS Code's user `mcp.json` (`--project`: `.vscode/mcp.json`)
    Vscode,
    /// Codex's `~/.codex/config.toml`, through `codex mcp add`
    Codex,
    /// Gemini CLI's `~/.gemini/settings.json` (`--project`: `.gemini/settings.json`)
    Gemini,
}

#[cfg(feature = "markdown")]
#[derive(Debug, Subcommand)]
pub(crate) enum SkillsCommand {
    /// List the available skills (`--all`: also the unavailable ones, with why)
    List {
        /// Also list skills whose requirements are not met
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        paths: SkillPaths,
    },
    /// Show one skill in full: where it is, what it needs, what it shadows
    Info {
        /// The skill's name
        name: String,
        #[command(flatten)]
        paths: SkillPaths,
    },
    /// Check every skill's requirements and print install hints (exit 1 if any is unmet)
    Check {
        #[command(flatten)]
        paths: SkillPaths,
    },
    /// Check SKILL.md files against the Agent Skills specification, strictly (exit 1 on any
    /// violation)
    ///
    /// Loading stays lenient (OpenClaw's extra keys, a `metadata` JSON string and an
    /// unquoted `: ` all load); this is what a skill should fix to be portable: `name` of
    /// 1-64 characters from a-z, 0-9 and `-` (no `-` first, last or doubled), equal to its
    /// folder's name; `description` of 1-1,024 characters; `compatibility` of 1-500;
    /// `license` a string; `metadata` a map of strings; `allowed-tools` one space-separated
    /// string; no other top-level key. Each violation is printed as `file:line: message`.
    Validate {
        /// A SKILL.md, a skill folder, or a folder of skills (repeatable). Default: the
        /// folders `skills list` reads (the home's `skills/`, `./skills`, `./.skills`,
        /// `skills.paths`)
        #[arg(value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    #[command(flatten)]
    Installed(InstalledCommand),
}

/// `skills install|verify|update|remove`: skills installed into `$OMNIAGENT_HOME/skills`
/// and recorded in `$OMNIAGENT_HOME/skills.lock`.
#[cfg(feature = "markdown")]
#[derive(Debug, Subcommand)]
pub(crate) enum InstalledCommand {
    /// Install a skill from a folder, a .tar.gz or .zip archive, or a git repository
    ///
    /// The skill goes to $OMNIAGENT_HOME/skills/<name>, and skills.lock beside it records
    /// the source, the git ref and commit, the time and the SHA-256 of every file. The
    /// source must hold a SKILL.md at its top or in its single top folder, or in the folder
    /// --path names (else the error lists the skill folders it holds). Archive entries
    /// must stay inside the skill (no `..`, no absolute paths); links of any kind are
    /// refused; at most 64 MiB in 10,000 files and folders. Nothing is left behind when an
    /// install fails.
    Install {
        /// A folder, a .tar.gz/.tgz or .zip file, or a git URL (https, ssh, git, file, or
        /// user@host:path) with an optional #REF (branch, tag or commit); PATH#REF for a
        /// local repository; a repository's web page for a folder (GitHub's
        /// …/tree/REF/PATH, GitLab's …/-/tree/REF/PATH) is that folder at REF
        #[arg(value_name = "SOURCE")]
        source: String,
        /// The skill's folder inside SOURCE, for a repository or archive of several skills
        /// (`skills/pdf`); recorded, so that `update` takes it from there again
        #[arg(long, value_name = "SUBFOLDER", conflicts_with = "all")]
        path: Option<String>,
        /// Install every skill SOURCE holds, each under its own name: the skill folders
        /// up to four levels down; one that cannot be installed is skipped with the reason
        #[arg(long, conflicts_with = "name")]
        all: bool,
        /// Install under this name (default: the SKILL.md's name, else the folder's)
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
    /// Report files changed, added or removed since install (exit 1 if any)
    Verify {
        /// Only this skill (default: every installed skill)
        name: Option<String>,
    },
    /// Reinstall from the recorded source; a skill with local edits is kept (exit 1) unless --force
    Update {
        /// Only this skill (default: every installed skill)
        name: Option<String>,
        /// Overwrite local edits
        #[arg(long)]
        force: bool,
    },
    /// Remove an installed skill: its folder and its skills.lock entry
    Remove {
        /// The skill
        name: String,
    },
}

/// `prompt --mode`.
#[cfg(feature = "markdown")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum PromptMode {
    /// Each skill's whole instructions
    Full,
    /// Each skill's name, description and folder; the model loads instructions with
    /// `skills__activate`
    Catalog,
}

#[cfg(feature = "markdown")]
impl From<PromptMode> for skill_markdown::PromptMode {
    fn from(given: PromptMode) -> Self {
        match given {
            PromptMode::Full => Self::Full,
            PromptMode::Catalog => Self::Catalog,
        }
    }
}

/// Where to look for skills besides the configured places.
#[cfg(feature = "markdown")]
#[derive(Debug, Clone, Args)]
pub(crate) struct SkillPaths {
    /// An extra skill folder (repeatable): a skill, or a folder of skills
    #[arg(long = "path", value_name = "DIR")]
    pub(crate) paths: Vec<PathBuf>,
    /// Leave out the default folders and `skills.paths` (packs stay)
    #[arg(long)]
    pub(crate) no_default_paths: bool,
}

#[cfg(feature = "markdown")]
impl From<SkillPaths> for omniagent_host::SkillPaths {
    fn from(given: SkillPaths) -> Self {
        Self { paths: given.paths, no_default_paths: given.no_default_paths }
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum ToolsCommand {
    /// List every tool with its source (kind, skill, tool) and what it does
    List,
    /// Find tools by words of what they do, best first, as the gateway's `search_tools` does
    Search {
        /// Words for what the tool should do, e.g. "list issues"
        query: String,
        /// How many tools to show at most
        #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..))]
        limit: u16,
    },
    /// Call one tool and print its result (exit 1 if the tool reports an error)
    Call {
        /// The tool: `skill__tool`, or a tool name only one skill has
        tool: String,
        /// The arguments: a JSON object, `@FILE` to read it from a file, or `-` for stdin
        #[arg(long, value_name = "JSON|@FILE|-", default_value = "{}")]
        args: String,
    },
    /// Show every withheld tool, prompt and template: what changed since it was approved (a
    /// diff per field), or the scan rule it tripped, invisible characters shown escaped (exit 1
    /// if anything is withheld)
    Review,
    /// Approve what is offered now (record it in the trust lock) so that it is offered; a running
    /// gateway offers it at once. An item a scan rule flagged is approved only by its name
    #[command(group(clap::ArgGroup::new("which").required(true).args(["names", "skill", "all"])))]
    Approve {
        /// Withheld items by name (`skill__tool`, a prompt's name, a template's URI template)
        names: Vec<String>,
        /// Every withheld item of this skill that no scan rule flagged
        #[arg(long, value_name = "SKILL")]
        skill: Option<String>,
        /// Every withheld item that no scan rule flagged
        #[arg(long)]
        all: bool,
    },
}

#[cfg(feature = "aauth")]
#[derive(Debug, Subcommand)]
pub(crate) enum AauthCommand {
    /// Get a new agent token from the agent provider (`aauth.agent_provider`)
    Enroll {
        /// The agent provider to enroll at, instead of `aauth.agent_provider`
        #[arg(long, value_name = "URL")]
        agent_provider: Option<String>,
        /// The person server to ask the agent provider for, instead of `aauth.person_server`
        #[arg(long, value_name = "URL")]
        ps: Option<String>,
    },
    /// Show the agent's id, key thumbprint and token expiry (enrolls first if needed; no secrets)
    Whoami,
    /// Send one signed request; the response body goes to stdout (exit 1 on an HTTP error)
    Fetch {
        /// The HTTP method (default: GET, or POST with -d)
        #[arg(short = 'X', long = "request", value_name = "METHOD")]
        method: Option<String>,
        /// A request header, `Name: value` (repeatable)
        #[arg(short = 'H', long = "header", value_name = "HEADER")]
        headers: Vec<String>,
        /// The request body (`@FILE` reads it from a file); its type is form-urlencoded unless -H says
        /// otherwise
        #[arg(short = 'd', long = "data", value_name = "BODY")]
        data: Option<String>,
        /// The URL to request
        url: String,
    },
    /// Missions: propose one for the person to approve, show the current one, complete it
    #[command(subcommand)]
    Mission(MissionCommand),
    /// Write a self-hosted agent's metadata and JWKS (`aauth.self_hosted`) into DIR, to be
    /// served at its domain (`aauth.agent_provider`)
    Publish {
        /// The folder served as the agent's domain: gets `.well-known/aauth-agent.json` and
        /// `jwks.json`
        dir: std::path::PathBuf,
    },
}

#[cfg(feature = "aauth")]
#[derive(Debug, Subcommand)]
pub(crate) enum MissionCommand {
    /// Propose a mission to the person server and wait for the person's approval; it becomes the
    /// current mission, under which `aauth fetch` and OpenAPI skills ask for person tokens
    Propose {
        /// What the agent sets out to do, for the person to read
        description: String,
        /// A resource the mission will use, `https://host` (repeatable): the approval brings a
        /// person token for each
        #[arg(long = "resource", value_name = "URL")]
        resources: Vec<String>,
    },
    /// Show the current mission (exit 1 when there is none)
    Status,
    /// Propose the current mission's completion and wait for the person to accept it; it is then
    /// no longer current
    Complete {
        /// What was done, for the person to read
        #[arg(long, default_value = "The agent has finished the mission.")]
        summary: String,
    },
}

#[derive(Debug, Subcommand)]
pub(crate) enum ConfigCommand {
    /// Print which config file is used, and why
    Path,
    /// Print the effective config (defaults filled in, secrets redacted)
    Show,
    /// Validate the config (the gateway's `serve:` section too), resolve every secret reference and
    /// load every OpenAPI document (values are never printed)
    Check,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_well_formed() {
        Cli::command().debug_assert();
    }
}
