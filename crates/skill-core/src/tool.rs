//! The [`Tool`] trait and the context a call runs in.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Icon, ToolError, ToolOutput, ToolSource};

/// One callable tool, offered to the model.
///
/// Object-safe: the agent holds tools as `Arc<dyn Tool>`. The agent validates the
/// arguments against [`Tool::input_schema`] before [`Tool::call`] runs, so a tool may
/// rely on its schema's types and `required` list.
#[async_trait]
pub trait Tool: Send + Sync {
    /// The tool's name inside its skill, e.g. `remember`.
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// The JSON Schema of the arguments object.
    fn input_schema(&self) -> &Value;
    /// Runs the tool.
    async fn call(&self, context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError>;

    /// A short human-readable name for people choosing tools (MCP's `title`); none by
    /// default.
    fn title(&self) -> Option<&str> {
        None
    }

    /// What the tool does to the world, as hints for the host (MCP's `annotations`);
    /// none by default, which MCP reads as "may write, may destroy, not idempotent, open
    /// world".
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::default()
    }

    /// The JSON Schema of the tool's structured content, when it gives one (MCP's
    /// `outputSchema`).
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// What the host may read beside the tool (MCP's `_meta`), such as the MCP App that
    /// shows its results (`ui.resourceUri`, a `ui://` resource of the same skill); none by
    /// default.
    fn meta(&self) -> Option<&Value> {
        None
    }

    /// Images a host may show beside the tool (MCP's `icons`); none by default.
    fn icons(&self) -> &[Icon] {
        &[]
    }
}

/// Hints about how a tool behaves, in MCP's `ToolAnnotations` wire form. Each is a hint,
/// not a guarantee; `None` leaves it unsaid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// The tool does not change its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy or overwrite data (meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it again with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool reaches an open world (the internet), not only a closed domain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

impl ToolAnnotations {
    /// Whether no hint is set.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }
}

/// What a tool learns about the call it serves.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolContext {
    /// Where the called tool comes from.
    pub source: ToolSource,
    /// The agent-level name the tool was called by.
    pub name: String,
}

impl ToolContext {
    /// A context for calling the tool `name` from `source`: the agent builds one for
    /// every call; tests and benchmarks build their own to call a tool directly.
    pub fn new(name: impl Into<String>, source: ToolSource) -> Self {
        Self { source, name: name.into() }
    }
}
