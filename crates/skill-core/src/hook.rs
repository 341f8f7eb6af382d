//! [`ToolHook`]: code that runs before and after every tool call of an agent.

use std::time::Duration;

use serde_json::Value;

use crate::{ToolError, ToolOutput, ToolSource};

/// Observes tool calls: auditing, metrics, approval logs.
///
/// Hooks run in registration order, on the calling task, so they should be quick; a hook
/// that needs to do I/O should hand the record to a task of its own.
pub trait ToolHook: Send + Sync {
    /// Runs just before the tool is called. The arguments are checked against its input
    /// schema after this, innermost: arguments it refuses end the call with
    /// `InvalidArguments`, which [`after_call`](Self::after_call) sees.
    fn before_call(&self, _source: &ToolSource, _arguments: &Value) {}

    /// Runs when the call has finished, with its outcome and how long the tool took.
    fn after_call(&self, _call: &ToolCall<'_>) {}
}

/// A finished tool call, as [`ToolHook::after_call`] sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct ToolCall<'a> {
    /// The agent-level tool name.
    pub name: &'a str,
    /// Where the tool comes from.
    pub source: &'a ToolSource,
    /// The arguments the tool was called with.
    pub arguments: &'a Value,
    /// What the call returned.
    pub outcome: &'a Result<ToolOutput, ToolError>,
    /// How long the tool took.
    pub duration: Duration,
}
