//! The client that `conformance client --command mcp-conformance-client` drives: it
//! connects to the URL the suite appends as the last argument with `skill-mcp`, through
//! a `skill_core::Agent`, exactly as `omniagent` does, and does no MCP of its own.
//!
//! The suite names the scenario in `MCP_CONFORMANCE_SCENARIO`, the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (which the connection is pinned to, as a config's
//! `protocol_version` pins it: each era is tested as itself; unless
//! `MCP_CONFORMANCE_CLIENT_UNPINNED` is set, when the connection finds the server's era
//! itself, as with a config that names no version) and may pass tool calls in
//! `MCP_CONFORMANCE_CONTEXT` (`{"toolCalls": [{"name", "arguments"}]}`, or a pre-registered
//! OAuth `client_id` and `client_secret`, written into the config as a user would). Every scenario
//! is driven the same way, as a host would: list the tools, then make the context's
//! calls, or else call each tool once with placeholder values for its required
//! arguments. Elicitations are answered with the schema's defaults (playing the person).
//! Only `json-schema-2020-12-preservation` asks for more: the host sends one tool's
//! input schema, as it holds it, to the tool `json_schema_echo`.
//!
//! A server that requires OAuth is logged in to as a person would: `omniagent mcp login`
//! (the `omniagent` binary beside this one) with a home of this run's own, while this
//! program plays the browser: it opens the printed URL and follows the authorization
//! server's redirect to the login's loopback listener. The connection then uses the
//! tokens the login kept. A call refused with the same advice (more scopes, or tokens of
//! an authorization server the server left) is made once more after such a login. The exit code is 0 unless the server could not be used at all.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use skill_core::Agent;
use skill_mcp::{AcceptDefaults, McpSkill, ServerConfig, TokenFile};

/// What the suite may pass in `MCP_CONFORMANCE_CONTEXT`.
#[derive(Debug, Default, Deserialize)]
struct Context {
    #[serde(default, rename = "toolCalls")]
    tool_calls: Vec<ToolCall>,
    /// A pre-registered OAuth client, as a user would write it under `oauth:`.
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    client_secret: Option<String>,
}

#[derive(Debug, Deserialize)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

/// Where this client's OAuth metadata document is published, as the suite expects it.
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// The server's name in the agent; its tools keep their own names (`prefix: false`).
const SERVER: &str = "server";

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            say(&format!("{error:#}"));
            ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    let url = std::env::args()
        .next_back()
        .filter(|arg| arg.starts_with("http"))
        .ok_or_else(|| anyhow::anyhow!("usage: mcp-conformance-client URL (the suite appends the server's URL)"))?;
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Context = match std::env::var("MCP_CONFORMANCE_CONTEXT") {
        Ok(text) => serde_json::from_str(&text)?,
        Err(_) => Context::default(),
    };
    say(&format!("scenario `{scenario}` against {url}"));
    let mut settings = json!({"url": url, "prefix": false});
    // Left unpinned, the connection finds the server's era itself (`protocol_version:
    // auto`), as a user's config that names no version does.
    let unpinned = std::env::var_os(UNPINNED_VAR).is_some_and(|value| !value.is_empty());
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION")
        && !unpinned
    {
        settings["protocol_version"] = json!(version);
    }
    // The client's metadata document (CIMD) is where the suite expects a published one;
    // an authorization server that takes none gets a dynamic registration instead.
    settings["oauth"] = json!({"client_metadata_url": CLIENT_METADATA_URL});
    if let Some(client_id) = &context.client_id {
        settings["oauth"] = json!({"client_id": client_id});
        if let Some(secret) = &context.client_secret {
            settings["oauth"]["client_secret"] = json!(secret);
        }
    }
    let home = Home::new(&settings)?;
    let mut agent = match start(&settings, &home).await? {
        Ok(agent) => agent,
        Err(reason) if asks_for_login(&reason) => home.log_in_and_start(&settings).await?,
        Err(reason) => anyhow::bail!("the server could not be used: {reason}"),
    };
    let calls: Vec<ToolCall> = if scenario == "json-schema-2020-12-preservation" {
        echo_schemas(&agent)
    } else if context.tool_calls.is_empty() {
        agent
            .tools()
            .iter()
            .map(|tool| ToolCall { name: tool.name().to_owned(), arguments: placeholders(tool.input_schema()) })
            .collect()
    } else {
        context.tool_calls
    };
    for call in calls {
        let arguments = Value::Object(call.arguments);
        let mut outcome = agent.call_tool(&call.name, arguments.clone()).await;
        // A call refused for a login (the authorization server changed) or for more
        // scopes (step-up) is made once more after the login a person would run.
        if let Err(error) = &outcome
            && asks_for_login(&error.to_string())
        {
            say(&format!("{} asks for a login: {error}", call.name));
            agent.close().await;
            agent = home.log_in_and_start(&settings).await?;
            outcome = agent.call_tool(&call.name, arguments).await;
        }
        // A failed call is the scenario's to judge, from what reached its server.
        match outcome {
            Ok(output) => say(&format!("{} answered (is_error: {})", call.name, output.is_error)),
            Err(error) => say(&format!("{} failed: {error}", call.name)),
        }
    }
    agent.close().await;
    Ok(())
}

/// Whether a failure's `reason` names `omniagent mcp login` as the way on: a server
/// that requires a login, or a call that needs scopes the tokens lack.
fn asks_for_login(reason: &str) -> bool {
    reason.contains(&format!("omniagent mcp login {SERVER}"))
}

/// An agent with the server, started; the reason when it could not start.
async fn start(settings: &Value, home: &Home) -> anyhow::Result<Result<Agent, String>> {
    let config: ServerConfig = serde_json::from_value(settings.clone())?;
    let skill =
        McpSkill::new(SERVER, config).with_elicitor(Arc::new(AcceptDefaults)).with_token_file(home.tokens.clone());
    let agent = Agent::builder().with_compiled_skill(skill).build();
    let report = agent.init_compiled_skills().await;
    match report.skipped.first() {
        None => Ok(Ok(agent)),
        Some(skipped) => {
            let reason = skipped.reason.clone();
            agent.close().await;
            Ok(Err(reason))
        }
    }
}

/// Set (to anything but empty), the connection is not pinned to the suite's version.
const UNPINNED_VAR: &str = "MCP_CONFORMANCE_CLIENT_UNPINNED";

/// This run's `OMNIAGENT_HOME`: its config names the server, and the tokens of a login
/// are where `omniagent` keeps them for the agent `default`.
struct Home {
    root: std::path::PathBuf,
    tokens: TokenFile,
}

impl Home {
    fn new(settings: &Value) -> anyhow::Result<Self> {
        let root = std::env::temp_dir().join(format!("mcp-conformance-client-{}", std::process::id()));
        std::fs::create_dir_all(&root)?;
        let config = json!({"storage": {"backend": "memory"}, "mcp": {"servers": {SERVER: settings}}});
        std::fs::write(root.join("config.yaml"), serde_json::to_string(&config)?)?;
        let tokens = TokenFile::new(root.join("oauth").join("default").join(format!("{SERVER}.json")));
        Ok(Self { root, tokens })
    }

    /// Logs in, then starts an agent with the server; logs in once more when the tokens
    /// stop working while it starts (the server moved to another authorization server).
    async fn log_in_and_start(&self, settings: &Value) -> anyhow::Result<Agent> {
        self.log_in().await?;
        let started = match start(settings, self).await? {
            Err(reason) if asks_for_login(&reason) => {
                say(&format!("the server asks for a login again: {reason}"));
                self.log_in().await?;
                start(settings, self).await?
            }
            started => started,
        };
        started.map_err(|reason| anyhow::anyhow!("the server could not be used: {reason}"))
    }

    /// Runs `omniagent mcp login`, playing the browser: opens the URL it prints and
    /// follows the authorization server's redirect to the login's listener.
    async fn log_in(&self) -> anyhow::Result<()> {
        use tokio::io::AsyncBufReadExt as _;
        let omniagent = std::env::current_exe()?.with_file_name("omniagent");
        let mut login = tokio::process::Command::new(&omniagent)
            .args(["-c", &self.root.join("config.yaml").to_string_lossy(), "mcp", "login", SERVER, "--no-browser"])
            .env("OMNIAGENT_HOME", &self.root)
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| anyhow::anyhow!("cannot run {}: {error}", omniagent.display()))?;
        let stdout = login.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout from the login"))?;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let mut url = None;
        while let Some(line) = lines.next_line().await? {
            if line.starts_with("http") {
                url = Some(line);
                break;
            }
        }
        let url = url.ok_or_else(|| anyhow::anyhow!("the login printed no URL"))?;
        let browser = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build()?;
        let mut next = url;
        // The authorization server answers with a redirect, possibly through pages of
        // its own; the last one lands on the login's listener.
        for _ in 0..5 {
            let response = browser.get(&next).send().await?;
            match response.headers().get(reqwest::header::LOCATION).and_then(|location| location.to_str().ok()) {
                Some(location) => next = reqwest::Url::parse(&next)?.join(location)?.to_string(),
                None => break,
            }
        }
        while lines.next_line().await?.is_some() {}
        let status = login.wait().await?;
        anyhow::ensure!(status.success(), "the login failed ({status})");
        Ok(())
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// Tells the suite's log (stderr) what happened.
fn say(what: &str) {
    // A closed stderr loses only the log.
    let _ = writeln!(std::io::stderr(), "mcp-conformance-client: {what}");
}

/// A call of `json_schema_echo` with the input schema of each other tool.
fn echo_schemas(agent: &Agent) -> Vec<ToolCall> {
    let tools = agent.tools();
    tools
        .iter()
        .filter(|tool| tool.name() != ECHO)
        .map(|tool| {
            let arguments = Map::from_iter([("schema".to_owned(), tool.input_schema().clone())]);
            ToolCall { name: ECHO.to_owned(), arguments }
        })
        .collect()
}

/// The tool `json-schema-2020-12-preservation` has the schemas sent back to.
const ECHO: &str = "json_schema_echo";

/// A value of the right type for each required property of `schema`.
fn placeholders(schema: &Value) -> Map<String, Value> {
    let properties = schema.get("properties").and_then(Value::as_object);
    let required = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str);
    required
        .map(|name| {
            let property = properties.and_then(|properties| properties.get(name));
            let value = match property.and_then(|property| property.get("type")).and_then(Value::as_str) {
                Some("number") => json!(1.5),
                Some("integer") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("test"),
            };
            (name.to_owned(), value)
        })
        .collect()
}
