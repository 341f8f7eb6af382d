//! The client that `conformance client --command mcp-conformance-client` drives: it
//! connects to the URL the suite appends as the last argument with `skill-mcp`, through
//! a `skill_core::Agent`, exactly as `omniagent` does, and does no MCP of its own.
//!
//! The suite names the scenario in `MCP_CONFORMANCE_SCENARIO`, the protocol version in
//! `MCP_CONFORMANCE_PROTOCOL_VERSION` (which the connection is pinned to, as a config's
//! `protocol_version` pins it: each era is tested as itself) and may pass tool calls in
//! `MCP_CONFORMANCE_CONTEXT` (`{"toolCalls": [{"name", "arguments"}]}`). Every scenario
//! is driven the same way, as a host would: list the tools, then make the context's
//! calls, or else call each tool once with placeholder values for its required
//! arguments. Elicitations are answered with the schema's defaults (playing the person).
//! Only `json-schema-2020-12-preservation` asks for more: the host sends one tool's
//! input schema, as it holds it, to the tool `json_schema_echo`.
//! The exit code is 0 unless the server could not be used at all.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use skill_core::Agent;
use skill_mcp::{AcceptDefaults, McpSkill, ServerConfig};

/// What the suite may pass in `MCP_CONFORMANCE_CONTEXT`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Context {
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Debug, Deserialize)]
struct ToolCall {
    name: String,
    #[serde(default)]
    arguments: Map<String, Value>,
}

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
    if let Ok(version) = std::env::var("MCP_CONFORMANCE_PROTOCOL_VERSION") {
        settings["protocol_version"] = json!(version);
    }
    let config: ServerConfig = serde_json::from_value(settings)?;
    let skill = McpSkill::new(SERVER, config).with_elicitor(Arc::new(AcceptDefaults));
    let agent = Agent::builder().with_compiled_skill(skill).build();
    let report = agent.init_compiled_skills().await;
    if let Some(skipped) = report.skipped.first() {
        agent.close().await;
        anyhow::bail!("the server could not be used: {}", skipped.reason);
    }
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
        // A failed call is the scenario's to judge, from what reached its server.
        match agent.call_tool(&call.name, Value::Object(call.arguments)).await {
            Ok(output) => say(&format!("{} answered (is_error: {})", call.name, output.is_error)),
            Err(error) => say(&format!("{} failed: {error}", call.name)),
        }
    }
    agent.close().await;
    Ok(())
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
