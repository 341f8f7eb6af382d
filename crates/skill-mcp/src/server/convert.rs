//! Agent items to rmcp's model types and back. Both sides share MCP's wire form, so most
//! conversions go through it; tools are built directly, because `tools/list` is the hot
//! path (1,223 tools for GitHub's API).

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, CompleteResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult, ResultType, Tool,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use skill_core::{Completion, PromptOutput, RegisteredPrompt, RegisteredTool, ResourceOutput, ToolOutput};

use crate::wire::icons_into_rmcp;

/// `value` read as the rmcp type of the same wire form.
pub(super) fn wire<T: DeserializeOwned>(value: &impl Serialize) -> Result<T, ErrorData> {
    crate::wire::wire_into(value).map_err(unsendable)
}

fn unsendable(error: serde_json::Error) -> ErrorData {
    ErrorData::internal_error(format!("cannot send what the skill gave: {error}"), None)
}

/// Each of `values` read as the rmcp type of the same wire form.
pub(super) fn wire_all<T: DeserializeOwned>(values: &[impl Serialize]) -> Result<Vec<T>, ErrorData> {
    values.iter().map(wire).collect()
}

/// `value` if it is an object, else an empty one.
pub(super) fn object(value: &Value) -> JsonObject {
    match value {
        Value::Object(object) => object.clone(),
        _ => JsonObject::new(),
    }
}

/// Whether a host may show `tool` to its model, as it shows MCP Apps (`shows_apps`) or
/// not: a tool only an MCP App may call is for hosts with apps alone (MCP Apps has the
/// host keep such tools from the model, and a host without apps would not know to).
pub(super) fn for_the_host(tool: &RegisteredTool, shows_apps: bool) -> bool {
    shows_apps || !app_only(tool.meta())
}

/// Whether a tool with `meta` is for an MCP App only (`ui.visibility` names who may see
/// it, and not `"model"`); a tool that names no one is for both.
fn app_only(meta: Option<&Value>) -> bool {
    let audience = meta.and_then(|meta| meta.pointer("/ui/visibility")).and_then(Value::as_array);
    audience.is_some_and(|audience| !audience.is_empty() && !audience.iter().any(|who| who == "model"))
}

/// A registered tool as MCP lists it: agent-level name, title, description, schemas,
/// annotations, icons and `_meta`.
pub(super) fn tool(registered: &RegisteredTool) -> Tool {
    let mut tool = Tool::new(
        registered.name().to_owned(),
        registered.description().to_owned(),
        Arc::new(object(registered.input_schema())),
    );
    tool.title = registered.title().map(str::to_owned);
    tool.output_schema = registered.output_schema().map(|schema| Arc::new(object(schema)));
    tool.meta = registered.meta().map(|meta| rmcp::model::MetaObject(object(meta)));
    tool.icons = icons_into_rmcp(registered.icons());
    let hints = registered.annotations();
    if !hints.is_empty() {
        tool.annotations = Some(rmcp::model::ToolAnnotations::from_raw(
            None,
            hints.read_only_hint,
            hints.destructive_hint,
            hints.idempotent_hint,
            hints.open_world_hint,
        ));
    }
    tool
}

/// A tool's output as MCP's `CallToolResult`, marked complete.
pub(super) fn call_result(output: ToolOutput) -> Result<CallToolResult, ErrorData> {
    crate::wire::call_tool_result(output).map_err(unsendable)
}

/// A rendered prompt as MCP's `GetPromptResult`, marked complete.
pub(super) fn prompt_result(output: &PromptOutput) -> Result<GetPromptResult, ErrorData> {
    let mut result: GetPromptResult = wire(output)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// A read resource as MCP's `ReadResourceResult`, marked complete.
pub(super) fn read_result(output: &ResourceOutput) -> Result<ReadResourceResult, ErrorData> {
    let mut result: ReadResourceResult = wire(output)?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// Suggestions as MCP's `CompleteResult`, marked complete.
pub(super) fn complete_result(completion: &Completion) -> Result<CompleteResult, ErrorData> {
    let mut result: CompleteResult = wire(&serde_json::json!({"completion": completion}))?;
    result.result_type = Some(ResultType::COMPLETE);
    Ok(result)
}

/// A registered prompt as MCP lists it, under its agent-level name, with its icons and
/// `_meta`.
pub(super) fn prompt(registered: &RegisteredPrompt) -> Prompt {
    let info = registered.info();
    let arguments = (!info.arguments.is_empty()).then(|| {
        info.arguments
            .iter()
            .map(|argument| {
                let mut mcp = rmcp::model::PromptArgument::new(argument.name.clone());
                mcp.title = argument.title.clone();
                mcp.description = argument.description.clone();
                mcp.required = argument.required;
                mcp
            })
            .collect()
    });
    let mut prompt = Prompt::new(registered.name().to_owned(), info.description.clone(), arguments);
    prompt.title = info.title.clone();
    prompt.icons = icons_into_rmcp(&info.icons);
    prompt.meta = info.meta.as_ref().map(|meta| rmcp::model::MetaObject(object(meta)));
    prompt
}

/// `prompts/get` arguments: MCP says they are strings; other JSON values are taken as
/// their JSON text.
pub(super) fn prompt_arguments(arguments: Option<JsonObject>) -> BTreeMap<String, String> {
    arguments
        .unwrap_or_default()
        .into_iter()
        .map(|(name, value)| match value {
            Value::String(text) => (name, text),
            other => (name, other.to_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_a_visibility_without_the_model_makes_a_tool_app_only() {
        let visible = |visibility: Value| json!({"ui": {"resourceUri": "ui://a/b", "visibility": visibility}});
        assert!(app_only(Some(&visible(json!(["app"])))));
        assert!(!app_only(Some(&visible(json!(["app", "model"])))));
        assert!(!app_only(Some(&visible(json!(["model"])))));
        assert!(!app_only(Some(&visible(json!([])))));
        assert!(!app_only(Some(&json!({"ui": {"resourceUri": "ui://a/b"}}))));
        assert!(!app_only(None));
    }
}
