//! The [`Tool`] trait and the context a call runs in.

use async_trait::async_trait;
use serde_json::Value;

use crate::{ToolError, ToolOutput, ToolSource};

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
