//! Everything the CLI prints: JSON on stdout with `--json`, text for people otherwise
//! (fitted to 80 columns, coloured only on a terminal and never with `NO_COLOR`), and
//! diagnostics on stderr.

use std::collections::BTreeMap;
use std::io::Write;

use anstyle::{AnsiColor, Style};
use clap::CommandFactory;
use serde::Serialize;
use serde_json::{Value, json};
use skill_core::{
    Agent, Content, FilterReport, LeftOutKeyword, RegisteredTool, ResourceContents, SkillFailure, ToolError,
    ToolFailure, ToolOutput, ToolSource,
};

#[cfg(feature = "markdown")]
pub(crate) mod install;
#[cfg(feature = "markdown")]
pub(crate) mod prompt;
#[cfg(feature = "markdown")]
pub(crate) mod skills;
mod trust;
#[cfg(feature = "markdown")]
pub(crate) mod validate;

#[cfg(feature = "mcp")]
pub(crate) use trust::{Change, changes, shown};
pub(crate) use trust::{approved, review};

use omniagent_host::{AgentConfig, ConfigLocation, Home, Origin};

use crate::args::Cli;
use crate::commands::CheckReport;

const WIDTH: usize = 80;
const BOLD: Style = Style::new().bold();
const DIM: Style = Style::new().dimmed();
const RED: Style = Style::new().bold().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const GREEN: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const YELLOW: Style = Style::new().fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));

/// Prints an error and its causes on stderr, with a hint where one helps.
pub(crate) fn error(error: &anyhow::Error) {
    let mut stderr = anstream::stderr().lock();
    let _ = writeln!(stderr, "{RED}error:{RED:#} {error:#}");
    let unknown_tool =
        error.chain().any(|cause| matches!(cause.downcast_ref::<ToolError>(), Some(ToolError::NotFound { .. })));
    if unknown_tool {
        let _ = writeln!(stderr, "{DIM}hint: `omniagent tools list` shows every tool{DIM:#}");
    }
}

pub(crate) fn print_json(value: &impl Serialize) -> anyhow::Result<()> {
    // Buffered: stdout alone flushes at every newline, and a tool list is megabytes of lines.
    let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
    serde_json::to_writer_pretty(&mut stdout, value)?;
    writeln!(stdout)?;
    stdout.flush()?;
    Ok(())
}

/// `tools list`.
pub(crate) fn tools(agent: &Agent, json: bool) -> anyhow::Result<()> {
    let (tools, skipped, skipped_tools) = (agent.tools(), agent.skipped(), agent.skipped_tools());
    let (left_out_keywords, tool_filter) = (agent.left_out_keywords(), agent.tool_filter_report());
    let withheld = agent.withheld();
    if json {
        #[derive(Serialize)]
        struct Listing<'a> {
            tools: Vec<ToolEntry<'a>>,
            withheld: Vec<trust::Listed<'a>>,
            skipped: &'a [SkillFailure],
            skipped_tools: &'a [ToolFailure],
            left_out_keywords: &'a [LeftOutKeyword],
            tool_filter: &'a FilterReport,
        }
        let tools = tools.iter().map(ToolEntry::of).collect();
        return print_json(&Listing {
            tools,
            withheld: withheld.iter().map(trust::Listed::of).collect(),
            skipped: &skipped,
            skipped_tools: &skipped_tools,
            left_out_keywords: &left_out_keywords,
            tool_filter: &tool_filter,
        });
    }
    let mut out = anstream::stdout().lock();
    let mut by_skill: BTreeMap<(&str, &str), Vec<&RegisteredTool>> = BTreeMap::new();
    for tool in &tools {
        by_skill.entry((&tool.source().skill, tool.source().kind.as_str())).or_default().push(tool);
    }
    let name_width = name_width(tools.iter());
    for ((skill, kind), skill_tools) in &by_skill {
        writeln!(out, "{BOLD}{skill}{BOLD:#} {DIM}({kind}){DIM:#}")?;
        for tool in skill_tools {
            writeln!(out, "{}", tool_line(tool, "  ", name_width))?;
        }
    }
    if !by_skill.is_empty() {
        writeln!(out)?;
    }
    write!(out, "{} from {}", count(tools.len(), "tool"), count(by_skill.len(), "skill"))?;
    match tool_filter.left_out {
        0 => writeln!(out)?,
        n => writeln!(out, " {DIM}({n} more left out by the config's `tools:` section){DIM:#}")?,
    }
    for line in tool_filter.unmatched_lines() {
        writeln!(out, "{YELLOW}`tools:` {line}{YELLOW:#}")?;
    }
    if !withheld.is_empty() {
        let names: Vec<&str> = withheld.iter().map(|item| item.name.as_str()).collect();
        let line = format!(
            "withheld {} ({}): `omniagent tools review` shows why",
            count(withheld.len(), "item"),
            names.join(", ")
        );
        writeln!(out, "{YELLOW}{}{YELLOW:#}", truncate(&line, WIDTH))?;
    }
    for failure in &skipped {
        let line = format!("skipped {}: {}", failure.skill, failure.reason);
        writeln!(out, "{YELLOW}{}{YELLOW:#}", truncate(&line, WIDTH))?;
    }
    for failure in &skipped_tools {
        let line = format!("left out {} tool {}: {}", failure.skill, failure.tool, failure.reason);
        writeln!(out, "{YELLOW}{}{YELLOW:#}", truncate(&line, WIDTH))?;
    }
    for part in &left_out_keywords {
        writeln!(out, "{YELLOW}{}{YELLOW:#}", truncate(&left_out_line(part), WIDTH))?;
    }
    Ok(())
}

/// The column the names of `tools` take in their lines: the longest, at most 40.
fn name_width<'a>(tools: impl Iterator<Item = &'a RegisteredTool>) -> usize {
    tools.map(|tool| tool.name().len()).max().unwrap_or(0).min(40)
}

/// A tool's line for people: after `indent`, its name in `name_width` columns, and the
/// first line of its description, cut to fit 80 columns.
fn tool_line(tool: &RegisteredTool, indent: &str, name_width: usize) -> String {
    let description_width = WIDTH.saturating_sub(indent.len() + name_width + 2).max(20);
    let summary = truncate(tool.description().lines().next().unwrap_or_default(), description_width);
    format!("{indent}{:<name_width$}  {summary}", tool.name())
}

/// A tool as `tools list --json` and `tools search --json` show it.
#[derive(Serialize)]
struct ToolEntry<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    source: &'a ToolSource,
}

impl<'a> ToolEntry<'a> {
    fn of(tool: &'a RegisteredTool) -> Self {
        Self {
            name: tool.name(),
            description: tool.description(),
            input_schema: tool.input_schema(),
            source: tool.source(),
        }
    }
}

/// `tools search`: the first `limit` of the tools `found` for `query` (best first), and
/// how many matched.
pub(crate) fn found_tools(query: &str, found: &[&RegisteredTool], limit: usize, json: bool) -> anyhow::Result<()> {
    let shown = &found[..limit.min(found.len())];
    if json {
        let tools: Vec<ToolEntry<'_>> = shown.iter().map(|tool| ToolEntry::of(tool)).collect();
        return print_json(&json!({"query": query, "tools": tools, "matched": found.len()}));
    }
    let mut out = anstream::stdout().lock();
    if found.is_empty() {
        writeln!(out, "no tool matches `{query}`")?;
        return Ok(());
    }
    let name_width = name_width(shown.iter().copied());
    for tool in shown {
        writeln!(out, "{}", tool_line(tool, "", name_width))?;
    }
    writeln!(out)?;
    match found.len() - shown.len() {
        0 => writeln!(out, "{} matching", count(found.len(), "tool")),
        more => writeln!(out, "{} of {} matching {DIM}(--limit for the other {more}){DIM:#}", shown.len(), found.len()),
    }?;
    Ok(())
}

/// A part of a tool's input schema left out, for people: where, and why.
fn left_out_line(part: &LeftOutKeyword) -> String {
    let location = if part.location.is_empty() { "the top" } else { part.location.as_str() };
    format!(
        "{} tool {}: `{}` at {location} left out of its input schema: {}",
        part.skill, part.tool, part.keyword, part.reason
    )
}

fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// Cuts `text` to `width` characters, ending with `…` when cut.
fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let kept: String = text.chars().take(width.saturating_sub(1)).collect();
    format!("{}…", kept.trim_end())
}

/// `tools call`: the MCP `CallToolResult` JSON, or the content for people (on stderr
/// when the tool reports an error).
pub(crate) fn tool_output(output: &ToolOutput, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(output);
    }
    let mut text = String::new();
    for block in &output.content {
        let shown = match block {
            Content::Text { text, .. } => text.clone(),
            Content::Image { data, mime_type, .. } => format!("[image {mime_type}, {} base64 bytes]", data.len()),
            Content::Audio { data, mime_type, .. } => format!("[audio {mime_type}, {} base64 bytes]", data.len()),
            Content::ResourceLink { uri, .. } => format!("[resource link {uri}]"),
            Content::Resource { resource: ResourceContents::Text { text, .. }, .. } => text.clone(),
            Content::Resource { resource: ResourceContents::Blob { uri, blob, .. }, .. } => {
                format!("[resource {uri}, {} base64 bytes]", blob.len())
            }
        };
        text.push_str(&shown);
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    if let (true, Some(structured)) = (output.content.is_empty(), &output.structured_content) {
        text = serde_json::to_string_pretty(structured)? + "\n";
    }
    if output.is_error {
        write!(anstream::stderr().lock(), "{RED}tool error:{RED:#} {text}")?;
    } else {
        write!(std::io::stdout().lock(), "{text}")?;
    }
    Ok(())
}

/// `config path`.
pub(crate) fn config_path(location: &ConfigLocation, home: &Home, json: bool) -> anyhow::Result<()> {
    let exists = location.path().is_some_and(|path| path.is_file());
    if json {
        return print_json(&json!({
            "path": location.path(),
            "origin": location.origin(),
            "exists": exists,
            "home": home.root(),
        }));
    }
    let mut out = anstream::stdout().lock();
    let Some(path) = location.path() else {
        writeln!(out, "no config file: built-in defaults")?;
        writeln!(out, "{DIM}create {} to configure{DIM:#}", home.root().join("config.yaml").display())?;
        return Ok(());
    };
    let why = match location.origin() {
        Origin::Flag => "from -c/--config",
        Origin::Env => "from $OMNIAGENT_CONFIG",
        Origin::Home => "in $OMNIAGENT_HOME",
        Origin::Defaults => "built-in defaults",
    };
    let missing = if exists { "" } else { ", missing" };
    writeln!(out, "{} {DIM}({why}{missing}){DIM:#}", path.display())?;
    Ok(())
}

/// `mcp install`: what the host's file now says, and how the host starts using it.
#[cfg(feature = "mcp")]
pub(crate) fn mcp_installed(
    host: crate::args::McpHost,
    file: &std::path::Path,
    name: &str,
    entry: &Value,
    change: crate::commands::EntryChange,
    json: bool,
) -> anyhow::Result<()> {
    use crate::args::McpHost;
    use crate::commands::EntryChange;

    if json {
        return print_json(
            &json!({"host": host.value_name(), "file": file, "name": name, "change": change, "entry": entry}),
        );
    }
    let title = host.title();
    let mut out = anstream::stdout().lock();
    let file = file.display();
    match change {
        EntryChange::Added => writeln!(out, "Added `{name}` to {title}'s config {file}")?,
        EntryChange::Replaced => writeln!(out, "Replaced `{name}` in {title}'s config {file}")?,
        EntryChange::Unchanged => writeln!(out, "`{name}` is in {title}'s config {file} already")?,
    }
    if let Some(url) = crate::commands::entry_url(entry) {
        writeln!(out, "  {DIM}reaches{DIM:#} {url}")?;
    } else {
        let line: Vec<String> = crate::commands::entry_command_line(entry).map(shell_word).collect();
        writeln!(out, "  {DIM}runs{DIM:#} {}", line.join(" "))?;
    }
    if let Some(env) = entry["env"].as_object() {
        for (variable, value) in env {
            writeln!(out, "  {DIM}with{DIM:#} {variable}={}", value.as_str().map(shell_word).unwrap_or_default())?;
        }
    }
    if change != EntryChange::Unchanged {
        let next = match host {
            McpHost::ClaudeDesktop => "Restart Claude Desktop to use it.",
            McpHost::ClaudeCode => "Claude Code asks whether to use it the next time it starts in this folder.",
            McpHost::Cursor => "Restart Cursor, or turn it on in Cursor's MCP settings, to use it.",
            McpHost::Vscode => "Start it from VS Code's `MCP: List Servers` command.",
            McpHost::Codex => "Codex starts it in its next session.",
            McpHost::Gemini => "Gemini CLI starts it in its next session, in folders you trust.",
        };
        writeln!(out, "{next}")?;
    }
    Ok(())
}

/// `mcp install`'s note, on stderr, of the secrets the config reads from environment
/// variables (each key with its variable), which the host may not give the server.
#[cfg(feature = "mcp")]
pub(crate) fn env_secrets_note(host: crate::args::McpHost, secrets: &[(String, String)]) -> std::io::Result<()> {
    if secrets.is_empty() {
        return Ok(());
    }
    let mut stderr = anstream::stderr().lock();
    writeln!(stderr, "{YELLOW}note:{YELLOW:#} {} starts its servers with an environment of its own,", host.title())?;
    writeln!(stderr, "which may lack your shell's variables, and this config reads secrets from these:")?;
    for (key, variable) in secrets {
        writeln!(stderr, "  {variable} {DIM}({key}){DIM:#}")?;
    }
    writeln!(stderr, "Give them as `file:` or `op://` references, or add them to the entry's `env`.")
}

/// `word` as a POSIX shell reads it: as it is when it holds nothing the shell treats
/// specially, else in single quotes.
#[cfg(feature = "mcp")]
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-=:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        return word.to_owned();
    }
    format!("'{}'", word.replace('\'', "'\\''"))
}

/// `config show`: YAML for people, JSON with `--json`; secrets show as references.
pub(crate) fn config(config: &AgentConfig, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(config);
    }
    write!(std::io::stdout().lock(), "{}", serde_yaml_ng::to_string(config)?)?;
    Ok(())
}

/// `config check`.
pub(crate) fn config_check(report: &CheckReport, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(report);
    }
    let mut out = anstream::stdout().lock();
    let path = report.path.as_deref().unwrap_or("built-in defaults");
    writeln!(out, "{GREEN}ok{GREEN:#}     config {path}")?;
    for agent in &report.agents {
        writeln!(out, "{GREEN}ok{GREEN:#}     agent {agent}")?;
    }
    for secret in &report.secrets {
        let place = match &secret.agent {
            Some(agent) => format!("agents.{agent}: {}", secret.key),
            None => secret.key.clone(),
        };
        match &secret.error {
            None => writeln!(out, "{GREEN}ok{GREEN:#}     {place} ({})", secret.reference)?,
            Some(error) => writeln!(out, "{RED}error{RED:#}  {place}: {error}")?,
        }
    }
    for sandbox in &report.sandboxes {
        let place = match &sandbox.agent {
            Some(agent) => format!("agents.{agent}: mcp.{}", sandbox.server),
            None => format!("mcp.{}", sandbox.server),
        };
        let state = if sandbox.sandbox == "off" {
            format!("{YELLOW}warn{YELLOW:#} ")
        } else {
            format!("{GREEN}ok{GREEN:#}   ")
        };
        writeln!(out, "{state}  {place} sandbox: {}", sandbox.sandbox)?;
    }
    for document in &report.documents {
        let place = match &document.agent {
            Some(agent) => format!("agents.{agent}: openapi.{}", document.skill),
            None => format!("openapi.{}", document.skill),
        };
        match &document.error {
            None => {
                let plural = if document.tools == 1 { "" } else { "s" };
                writeln!(out, "{GREEN}ok{GREEN:#}     {place} ({} tool{plural})", document.tools)?;
            }
            Some(error) => writeln!(out, "{RED}error{RED:#}  {place}: {error}")?,
        }
        for left_out in &document.skipped_tools {
            writeln!(out, "{YELLOW}warn{YELLOW:#}   {place}: tool {} left out: {}", left_out.tool, left_out.reason)?;
        }
        for part in &document.left_out_keywords {
            let location = if part.location.is_empty() { "the top" } else { part.location.as_str() };
            writeln!(
                out,
                "{YELLOW}warn{YELLOW:#}   {place}: tool {}: `{}` at {location} left out of its input schema: {}",
                part.tool, part.keyword, part.reason
            )?;
        }
    }
    Ok(())
}

/// `aauth enroll` and `aauth whoami`: who the agent is, never a key or a token.
#[cfg(feature = "aauth")]
pub(crate) fn aauth_identity(identity: &aauth_client::AgentIdentity, json: bool) -> anyhow::Result<()> {
    let expires_in = identity.expires_at.duration_since(std::time::SystemTime::now()).unwrap_or_default().as_secs();
    let expires_at = identity.expires_at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_secs();
    let person_server = identity.person_server.as_ref().map(|url| url.as_str().trim_end_matches('/').to_owned());
    if json {
        return print_json(&json!({
            "agent_id": identity.agent_id,
            "thumbprint": identity.thumbprint,
            "expires_at": expires_at,
            "expires_in": expires_in,
            "person_server": person_server,
        }));
    }
    let mut out = anstream::stdout().lock();
    writeln!(out, "{BOLD}agent{BOLD:#}          {}", identity.agent_id)?;
    writeln!(out, "{BOLD}key thumbprint{BOLD:#} {}", identity.thumbprint)?;
    writeln!(out, "{BOLD}token expires{BOLD:#}  in {expires_in}s (at {expires_at}, Unix time)")?;
    if let Some(person_server) = person_server {
        writeln!(out, "{BOLD}person server{BOLD:#}  {person_server}")?;
    }
    Ok(())
}

/// `aauth fetch`: the response body as is on stdout, the status on stderr when it is not
/// a success.
#[cfg(feature = "aauth")]
pub(crate) fn fetched(status: reqwest::StatusCode, body: &[u8]) -> anyhow::Result<()> {
    std::io::stdout().lock().write_all(body)?;
    if !status.is_success() {
        let mut stderr = anstream::stderr().lock();
        writeln!(stderr, "{RED}error{RED:#}: HTTP {status}")?;
    }
    Ok(())
}

/// `aauth mission propose|status`: the mission's `s256`, person server, resources and
/// text.
#[cfg(feature = "aauth")]
pub(crate) fn aauth_mission(mission: &aauth_client::Mission, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(mission);
    }
    let mut out = anstream::stdout().lock();
    writeln!(out, "{BOLD}mission{BOLD:#}        {}", mission.s256)?;
    writeln!(out, "{BOLD}person server{BOLD:#}  {}", mission.person_server)?;
    for resource in &mission.resources {
        writeln!(out, "{BOLD}resource{BOLD:#}       {resource}")?;
    }
    writeln!(out, "{}", mission.mission)?;
    Ok(())
}

/// A line about an `aauth mission` command's progress, on stderr (stdout holds its result).
#[cfg(feature = "aauth")]
pub(crate) fn aauth_note(text: &str) {
    let _ = writeln!(anstream::stderr().lock(), "{text}");
}

/// While a request waits for a person: where they go, and the code they enter.
pub(crate) fn interaction(url: &str, code: &str) {
    let mut stderr = anstream::stderr().lock();
    let _ = writeln!(stderr, "{YELLOW}action needed{YELLOW:#}: open {url}?code={code} (code {BOLD}{code}{BOLD:#})");
}

/// `completions SHELL`.
pub(crate) fn completions(shell: clap_complete::Shell) {
    clap_complete::generate(shell, &mut Cli::command(), "omniagent", &mut std::io::stdout());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_short_text_and_marks_cuts() {
        assert_eq!(truncate("short", 10), "short");
        assert_eq!(truncate("exactly 10", 10), "exactly 10");
        assert_eq!(truncate("a longer description", 10), "a longer…");
        assert_eq!(truncate("héllo wörld", 6), "héllo…");
    }
}
