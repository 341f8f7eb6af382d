//! Tool search ([`super::Gateway::with_tool_search`]): for hosts whose model cannot hold
//! every tool in its context (GitHub's API alone gives 1,223), the gateway lists two
//! tools in place of the agent's. `search_tools` finds tools by the words of their names,
//! titles and descriptions and gives their input schemas; `call_tool` calls one by name.
//!
//! The model calls these two itself, so each mistake in calling them (no words to search
//! for, a name that is no tool's, arguments a tool does not take) comes back as a result
//! with `isError` that says what was wrong, which a host gives its model to correct,
//! where a host's own call of an unknown tool is an invalid-params error.

use std::sync::Arc;

use rmcp::model::{CallToolResult, JsonObject, Tool, ToolAnnotations};
use serde_json::{Value, json};
use skill_core::{ToolError, ToolIndex};

use super::answer::failed_call;
use super::convert;

/// The tool that finds tools.
pub(super) const SEARCH_TOOLS: &str = "search_tools";
/// The tool that calls a tool by name.
pub(super) const CALL_TOOL: &str = "call_tool";
/// How many tools a search gives unless it asks for another number.
const DEFAULT_LIMIT: usize = 10;
/// The most tools one search gives.
const MAX_LIMIT: usize = 50;

/// The two tools listed in place of the agent's.
pub(super) fn tools() -> [Tool; 2] {
    let search = Tool::new(
        SEARCH_TOOLS,
        "Finds the tools that can do something, by words of their names and descriptions \
         (most matching first), with the arguments each takes. Call one with `call_tool`.",
        Arc::new(convert::object(&json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words for what the tool should do, e.g. `list issues`."},
                "limit": {
                    "type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                    "description": format!("How many tools to give at most (default {DEFAULT_LIMIT})."),
                },
            },
            "required": ["query"],
        }))),
    )
    .with_title("Search tools")
    .with_raw_output_schema(Arc::new(convert::object(&json!({
        "type": "object",
        "properties": {
            "tools": {"type": "array", "items": {"type": "object"}},
            "matched": {"type": "integer", "description": "How many tools matched, given or not."},
        },
        "required": ["tools", "matched"],
    }))))
    .with_annotations(ToolAnnotations::new().read_only(true).idempotent(true).open_world(false));
    let call = Tool::new(
        CALL_TOOL,
        "Calls a tool that `search_tools` found, by its name, with its arguments.",
        Arc::new(convert::object(&json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as `search_tools` gave it."},
                "arguments": {"type": "object", "description": "The tool's arguments, as its `inputSchema` says."},
            },
            "required": ["name"],
        }))),
    )
    .with_title("Call a tool");
    [search, call]
}

/// What a `search_tools` call with `arguments` finds in `index`, for a host that shows
/// MCP Apps (`shows_apps`) or not.
pub(super) fn search(index: &ToolIndex, shows_apps: bool, arguments: &JsonObject) -> CallToolResult {
    found(index, shows_apps, arguments).unwrap_or_else(failed_call)
}

fn found(index: &ToolIndex, shows_apps: bool, arguments: &JsonObject) -> Result<CallToolResult, String> {
    let query = arguments.get("query").and_then(Value::as_str).filter(|query| !query.trim().is_empty());
    let query = query.ok_or("`query` must be a string with words in it")?;
    let limit = match arguments.get("limit") {
        None | Some(Value::Null) => DEFAULT_LIMIT,
        Some(limit) => limit
            .as_u64()
            .filter(|limit| (1..=MAX_LIMIT as u64).contains(limit))
            .and_then(|limit| usize::try_from(limit).ok())
            .ok_or_else(|| format!("`limit` must be from 1 to {MAX_LIMIT}"))?,
    };
    let mut for_the_host = index.search(query);
    for_the_host.retain(|tool| convert::for_the_host(tool, shows_apps));
    let found: Vec<Value> = for_the_host
        .iter()
        .take(limit)
        .map(|tool| {
            let listed = convert::tool(tool);
            let mut found =
                json!({"name": listed.name, "description": listed.description, "inputSchema": listed.input_schema});
            if let Some(title) = listed.title {
                found["title"] = Value::String(title);
            }
            found
        })
        .collect();
    Ok(CallToolResult::structured(json!({"tools": found, "matched": for_the_host.len()})))
}

/// The name and arguments a `call_tool` call with `arguments` names, else what is wrong
/// with them.
pub(super) fn called(arguments: Option<JsonObject>) -> Result<(String, Value), &'static str> {
    let mut arguments = arguments.unwrap_or_default();
    let Some(Value::String(name)) = arguments.remove("name") else {
        return Err("`name` must be the name of a tool, as a string");
    };
    match arguments.remove("arguments") {
        None | Some(Value::Null) => Ok((name, Value::Object(JsonObject::new()))),
        Some(object @ Value::Object(_)) => Ok((name, object)),
        Some(_) => Err("`arguments` must be an object"),
    }
}

/// How the call a `call_tool` call made failed, as its result: the tool's own failure
/// as a direct call gives it, and a name that is no tool's with where to find one.
pub(super) fn call_failed(error: ToolError) -> CallToolResult {
    match error {
        ToolError::NotFound { .. } => failed_call(format!("{error}; `{SEARCH_TOOLS}` finds tools by what they do")),
        other => failed_call(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_tool_takes_a_name_and_an_object() {
        let args = |value: Value| Some(convert::object(&value));
        assert_eq!(called(args(json!({"name": "a__b"}))).unwrap(), ("a__b".to_owned(), json!({})));
        assert_eq!(called(args(json!({"name": "a__b", "arguments": {"x": 1}}))).unwrap().1, json!({"x": 1}));
        assert!(called(args(json!({"arguments": {}}))).is_err());
        assert!(called(args(json!({"name": "a__b", "arguments": [1]}))).is_err());
        assert!(called(None).is_err());
    }
}
