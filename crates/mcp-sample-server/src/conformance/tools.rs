//! The fixture tools: their definitions and what each call does.

use std::time::Duration;

#[allow(deprecated, reason = "log messages are still part of protocol 2025-11-25")]
use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam};
use rmcp::{
    ErrorData as McpError, RoleServer,
    model::{
        CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock,
        ProgressNotificationParam, ResourceContents, Tool,
    },
    service::RequestContext,
};
use serde_json::{Value, json};

use crate::{
    conformance::{
        ConformanceServer,
        client_requests::{self, Asked},
        input_required::{self, InputRequiredTool},
        is_2026,
        resources::PNG_BASE64,
    },
    server::{self, ChangedList},
};

/// A short silent WAV (8 kHz, mono, 16-bit), base64.
const WAV_BASE64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQgAAAAAAAAAAAAAAA==";
/// The pause between the log messages and between the progress notifications.
const STEP_PAUSE: Duration = Duration::from_millis(50);

/// A tool that a conformance scenario calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FixtureTool {
    SimpleText,
    ImageContent,
    AudioContent,
    EmbeddedResource,
    MultipleContentTypes,
    ToolWithLogging,
    ErrorHandling,
    ToolWithProgress,
    Sampling,
    Elicitation,
    ElicitationDefaults,
    ElicitationEnums,
    JsonSchema202012,
    MissingCapability,
    StreamingElicitation,
    LoggingTool,
    TriggerToolChange,
    TriggerPromptChange,
    TriggerResourceUpdate,
    CustomHeaders,
    InputRequired(InputRequiredTool),
}

impl FixtureTool {
    pub(super) const ALL: [Self; 28] = [
        Self::SimpleText,
        Self::ImageContent,
        Self::AudioContent,
        Self::EmbeddedResource,
        Self::MultipleContentTypes,
        Self::ToolWithLogging,
        Self::ErrorHandling,
        Self::ToolWithProgress,
        Self::Sampling,
        Self::Elicitation,
        Self::ElicitationDefaults,
        Self::ElicitationEnums,
        Self::JsonSchema202012,
        Self::MissingCapability,
        Self::StreamingElicitation,
        Self::LoggingTool,
        Self::TriggerToolChange,
        Self::TriggerPromptChange,
        Self::TriggerResourceUpdate,
        Self::CustomHeaders,
        Self::InputRequired(InputRequiredTool::Elicitation),
        Self::InputRequired(InputRequiredTool::Sampling),
        Self::InputRequired(InputRequiredTool::ListRoots),
        Self::InputRequired(InputRequiredTool::RequestState),
        Self::InputRequired(InputRequiredTool::MultipleInputs),
        Self::InputRequired(InputRequiredTool::MultiRound),
        Self::InputRequired(InputRequiredTool::TamperedState),
        Self::InputRequired(InputRequiredTool::Capabilities),
    ];

    pub(super) fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.name() == name)
    }

    fn name(self) -> &'static str {
        match self {
            Self::SimpleText => "test_simple_text",
            Self::ImageContent => "test_image_content",
            Self::AudioContent => "test_audio_content",
            Self::EmbeddedResource => "test_embedded_resource",
            Self::MultipleContentTypes => "test_multiple_content_types",
            Self::ToolWithLogging => "test_tool_with_logging",
            Self::ErrorHandling => "test_error_handling",
            Self::ToolWithProgress => "test_tool_with_progress",
            Self::Sampling => "test_sampling",
            Self::Elicitation => "test_elicitation",
            Self::ElicitationDefaults => "test_elicitation_sep1034_defaults",
            Self::ElicitationEnums => "test_elicitation_sep1330_enums",
            Self::JsonSchema202012 => "json_schema_2020_12_tool",
            Self::MissingCapability => "test_missing_capability",
            Self::StreamingElicitation => "test_streaming_elicitation",
            Self::LoggingTool => "test_logging_tool",
            Self::TriggerToolChange => "test_trigger_tool_change",
            Self::TriggerPromptChange => "test_trigger_prompt_change",
            Self::TriggerResourceUpdate => "test_trigger_resource_update",
            Self::CustomHeaders => "test_custom_headers",
            Self::InputRequired(tool) => tool.name(),
        }
    }

    fn description(self) -> &'static str {
        match self {
            Self::SimpleText => "Tests simple text content response",
            Self::ImageContent => "Tests image content response",
            Self::AudioContent => "Tests audio content response",
            Self::EmbeddedResource => "Tests embedded resource content response",
            Self::MultipleContentTypes => "Tests response with multiple content types (text, image, resource)",
            Self::ToolWithLogging => "Tests tool that emits log messages during execution",
            Self::ErrorHandling => "Tests error response handling",
            Self::ToolWithProgress => "Tests tool that reports progress notifications",
            Self::Sampling => "Tests server-initiated sampling (LLM completion request)",
            Self::Elicitation => "Tests server-initiated elicitation (user input request)",
            Self::ElicitationDefaults => "Tests elicitation with default values per SEP-1034",
            Self::ElicitationEnums => "Tests elicitation with enum schema improvements per SEP-1330",
            Self::JsonSchema202012 => {
                "Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)"
            }
            Self::MissingCapability => "Needs the client's sampling capability; without it answers error -32021",
            Self::StreamingElicitation => "Asks the client to confirm (an InputRequiredResult on protocol 2026-07-28)",
            Self::LoggingTool => "Logs one message, only when the client asked for a log level",
            Self::TriggerToolChange => "Announces that the tool list changed",
            Self::TriggerPromptChange => "Announces that the prompt list changed",
            Self::TriggerResourceUpdate => {
                "Announces (notifications/resources/updated, on sessions) that test://watched-resource changed"
            }
            Self::CustomHeaders => {
                "Answers its `region`, which HTTP clients also send as header Mcp-Param-Region (SEP-2243)"
            }
            Self::InputRequired(tool) => tool.description(),
        }
    }

    fn input_schema(self) -> Value {
        let one_string = |name: &str, description: &str| {
            json!({
                "type": "object",
                "properties": { name: { "type": "string", "description": description } },
                "required": [name]
            })
        };
        match self {
            Self::Sampling => one_string("prompt", "The prompt to send to the LLM"),
            Self::Elicitation => one_string("message", "The message to show the user"),
            Self::JsonSchema202012 => json_schema_2020_12(),
            // rmcp checks the Mcp-Param-Region header of 2026-07-28 HTTP requests against it.
            Self::CustomHeaders => json!({
                "type": "object",
                "properties": {
                    "region": { "type": "string", "description": "A region, mirrored in a header", "x-mcp-header": "Region" },
                    "query": { "type": "string", "description": "Any text, not mirrored" }
                },
                "required": ["region"]
            }),
            _ => json!({ "type": "object", "properties": {} }),
        }
    }

    pub(super) fn definition(self) -> Tool {
        Tool::new(self.name(), self.description(), rmcp::model::object(self.input_schema()))
    }
}

/// An input schema with the JSON Schema 2020-12 keywords (`$schema`, `$defs` with an
/// `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else`, `additionalProperties`) that the
/// `json-schema-2020-12` scenario expects verbatim in `tools/list`.
fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

pub(super) async fn call(
    server: &ConformanceServer,
    tool: FixtureTool,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
) -> Result<CallToolResponse, McpError> {
    let text = |text: &str| Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into());
    match tool {
        FixtureTool::SimpleText => text("This is a simple text response for testing."),
        FixtureTool::ImageContent => {
            Ok(CallToolResult::success(vec![ContentBlock::image(PNG_BASE64, "image/png")]).into())
        }
        FixtureTool::AudioContent => {
            Ok(CallToolResult::success(vec![ContentBlock::audio(WAV_BASE64, "audio/wav")]).into())
        }
        FixtureTool::EmbeddedResource => Ok(CallToolResult::success(vec![ContentBlock::resource(
            ResourceContents::text("This is an embedded resource content.", "test://embedded-resource"),
        )])
        .into()),
        FixtureTool::MultipleContentTypes => Ok(CallToolResult::success(vec![
            ContentBlock::text("Multiple content types test:"),
            ContentBlock::image(PNG_BASE64, "image/png"),
            ContentBlock::resource(
                ResourceContents::text(
                    json!({ "test": "data", "value": 123 }).to_string(),
                    "test://mixed-content-resource",
                )
                .with_mime_type("application/json"),
            ),
        ])
        .into()),
        FixtureTool::ToolWithLogging => {
            for (step_idx, message) in
                ["Tool execution started", "Tool processing data", "Tool execution completed"].into_iter().enumerate()
            {
                if step_idx > 0 {
                    tokio::time::sleep(STEP_PAUSE).await;
                }
                let _logged = log(server, &context, message).await;
            }
            text("Tool with logging executed successfully")
        }
        FixtureTool::ErrorHandling => {
            Ok(CallToolResult::error(vec![ContentBlock::text("This tool intentionally returns an error for testing")])
                .into())
        }
        FixtureTool::ToolWithProgress => {
            let Some(token) = context.meta.get_progress_token() else {
                return text("no progress token was given, so no progress was reported");
            };
            for (step_idx, progress) in [0_u8, 50, 100].into_iter().enumerate() {
                if step_idx > 0 {
                    tokio::time::sleep(STEP_PAUSE).await;
                }
                let notification = ProgressNotificationParam::new(token.clone(), f64::from(progress))
                    .with_total(100.0)
                    .with_message(format!("Completed step {progress} of 100"));
                // A client that went away misses the rest; the call still answers.
                let _not_sent = context.peer.notify_progress(notification).await;
            }
            match json!(token) {
                Value::String(token) => text(&token),
                token => text(&token.to_string()),
            }
        }
        FixtureTool::Sampling => {
            let prompt = string_argument(&request, "prompt")?;
            let asked = client_requests::sampling(&prompt, 100)?;
            answer(&context, &request, asked, |answer| {
                format!("LLM response: {}", client_requests::sampled_text(answer).unwrap_or("No response"))
            })
            .await
        }
        FixtureTool::Elicitation => {
            let message = string_argument(&request, "message")?;
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" }
                },
                "required": ["username", "email"]
            });
            let asked = elicitation_with_schema(&message, schema)?;
            answer(&context, &request, asked, |answer| {
                format!("User response: {}", client_requests::describe_elicitation(answer))
            })
            .await
        }
        FixtureTool::ElicitationDefaults => {
            let asked = elicitation_with_schema(
                "Please review and update the form fields with defaults",
                schema_with_defaults(),
            )?;
            answer(&context, &request, asked, |answer| {
                format!("Elicitation completed: {}", client_requests::describe_elicitation(answer))
            })
            .await
        }
        FixtureTool::ElicitationEnums => {
            let asked = elicitation_with_schema("Please select options from the enum fields", schema_with_enums())?;
            answer(&context, &request, asked, |answer| {
                format!("Elicitation completed: {}", client_requests::describe_elicitation(answer))
            })
            .await
        }
        FixtureTool::JsonSchema202012 => {
            let arguments = Value::Object(request.arguments.unwrap_or_default());
            text(&format!("JSON Schema 2020-12 tool called with: {arguments}"))
        }
        FixtureTool::MissingCapability => {
            if context.client_capabilities().is_none_or(|capabilities| capabilities.sampling.is_none()) {
                let required: ClientCapabilities = serde_json::from_value(json!({ "sampling": {} }))
                    .map_err(|error| McpError::internal_error(error.to_string(), None))?;
                return Err(McpError::missing_required_client_capability(required));
            }
            text("the client declared the sampling capability")
        }
        FixtureTool::StreamingElicitation => {
            let asked = client_requests::elicitation("Please confirm to continue", "confirmed", "boolean")?;
            answer(&context, &request, asked, |answer| {
                format!("Streaming elicitation completed: {}", client_requests::describe_elicitation(answer))
            })
            .await
        }
        FixtureTool::LoggingTool => {
            if log(server, &context, "test_logging_tool ran").await {
                text("logged one message at level info")
            } else {
                text("logged nothing: the client did not ask for level info")
            }
        }
        FixtureTool::TriggerToolChange => list_changed(server, &context, ChangedList::Tools).await,
        FixtureTool::TriggerPromptChange => list_changed(server, &context, ChangedList::Prompts).await,
        FixtureTool::TriggerResourceUpdate => {
            let updated = rmcp::model::ResourceUpdatedNotificationParam::new(super::resources::WATCHED_URI);
            match context.peer.notify_resource_updated(updated).await {
                Ok(()) => text("announced that test://watched-resource changed"),
                Err(error) => {
                    Ok(CallToolResult::error(vec![ContentBlock::text(format!("cannot announce: {error}"))]).into())
                }
            }
        }
        FixtureTool::CustomHeaders => text(&format!("region={}", string_argument(&request, "region")?)),
        FixtureTool::InputRequired(tool) => input_required::call(&server.request_states, tool, &request, &context),
    }
}

/// Asks the client `asked` and answers with `describe(answer)`, or with the
/// `InputRequiredResult` that asks for it on 2026-07-28.
async fn answer(
    context: &RequestContext<RoleServer>,
    request: &CallToolRequestParams,
    asked: rmcp::model::InputRequest,
    describe: impl FnOnce(&Value) -> String,
) -> Result<CallToolResponse, McpError> {
    Ok(match client_requests::ask(context, request.input_responses.as_ref(), "answer", asked).await {
        Ok(Asked::Answered(answer)) => CallToolResult::success(vec![ContentBlock::text(describe(&answer))]).into(),
        Ok(Asked::InputRequired(result)) => result.into(),
        Err(message) => CallToolResult::error(vec![ContentBlock::text(message)]).into(),
    })
}

fn elicitation_with_schema(message: &str, schema: Value) -> Result<rmcp::model::InputRequest, McpError> {
    client_requests::input_request(
        "elicitation/create",
        json!({ "mode": "form", "message": message, "requestedSchema": schema }),
    )
}

/// SEP-1034: a default for each primitive type.
fn schema_with_defaults() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "description": "User name", "default": "John Doe" },
            "age": { "type": "integer", "description": "User age", "default": 30 },
            "score": { "type": "number", "description": "User score", "default": 95.5 },
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": { "type": "boolean", "description": "Verification status", "default": true }
        },
        "required": []
    })
}

/// SEP-1330: the five forms of enum, single and multiple choice, with and without titles.
fn schema_with_enums() -> Value {
    let titled = |label: &str| {
        json!([
            { "const": "value1", "title": format!("First {label}") },
            { "const": "value2", "title": format!("Second {label}") },
            { "const": "value3", "title": format!("Third {label}") }
        ])
    };
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled("Option")
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": { "anyOf": titled("Choice") }
            }
        },
        "required": []
    })
}

/// Sends one info-level log message if the client wants that level (on 2026-07-28 only
/// when the request's `_meta` names a level, before that unless `logging/setLevel` chose
/// a higher one), and says whether it did.
#[allow(deprecated, reason = "log messages are still part of protocol 2025-11-25")]
async fn log(server: &ConformanceServer, context: &RequestContext<RoleServer>, message: &str) -> bool {
    let level = LoggingLevel::Info;
    let threshold = if is_2026(context) {
        let Some(requested) = context.meta.log_level() else { return false };
        Some(requested)
    } else {
        server.session_log_level()
    };
    // The levels are declared from the least to the most severe.
    if threshold.is_some_and(|threshold| (level as u8) < (threshold as u8)) {
        return false;
    }
    let message = LoggingMessageNotificationParam::new(level, json!(message)).with_logger(server::SERVER_NAME);
    // A client that went away misses the message; the call still answers.
    context.peer.notify_logging_message(message).await.is_ok()
}

async fn list_changed(
    server: &ConformanceServer,
    context: &RequestContext<RoleServer>,
    list: ChangedList,
) -> Result<CallToolResponse, McpError> {
    Ok(match server.sample.notify_list_changed(context, list).await {
        Ok(()) => {
            CallToolResult::success(vec![ContentBlock::text(format!("announced that the {list:?} list changed"))])
        }
        Err(error) => CallToolResult::error(vec![ContentBlock::text(format!("cannot announce the change: {error}"))]),
    }
    .into())
}

fn string_argument(request: &CallToolRequestParams, name: &str) -> Result<String, McpError> {
    request
        .arguments
        .as_ref()
        .and_then(|arguments| arguments.get(name))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| McpError::invalid_params(format!("{} needs the string argument `{name}`", request.name), None))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn names_are_unique_and_valid() {
        let names: BTreeSet<&str> = FixtureTool::ALL.iter().map(|tool| tool.name()).collect();
        assert_eq!(names.len(), FixtureTool::ALL.len());
        for name in names {
            assert!(
                name.len() <= 64 && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || b"_.-".contains(&byte))
            );
            assert_eq!(FixtureTool::from_name(name).map(FixtureTool::name), Some(name));
        }
    }

    #[test]
    fn elicitation_schemas_keep_their_wire_form() {
        for schema in [schema_with_defaults(), schema_with_enums()] {
            let request = elicitation_with_schema("m", schema.clone()).unwrap();
            let wire = serde_json::to_value(request).unwrap();
            assert_eq!(wire["params"]["requestedSchema"], schema);
        }
    }

    #[test]
    fn json_schema_2020_12_is_served_verbatim() {
        let definition = serde_json::to_value(FixtureTool::JsonSchema202012.definition()).unwrap();
        assert_eq!(definition["inputSchema"], json_schema_2020_12());
    }
}
