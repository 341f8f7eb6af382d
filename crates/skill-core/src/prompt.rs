//! Prompts a skill gives: [`Prompt`], described by a [`PromptInfo`] and rendered into a
//! [`PromptOutput`], each shaped like its MCP counterpart (`Prompt`, `GetPromptResult`).

use std::collections::BTreeMap;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Content, Icon, ToolError};

/// What a prompt is, in MCP's `Prompt` wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptInfo {
    /// The prompt's name inside its skill.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the prompt is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The arguments it takes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<PromptArgument>,
    /// Images a host may show beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// MCP's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl PromptInfo {
    /// A prompt called `name` that takes no arguments.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            title: None,
            description: Some(description.into()),
            arguments: Vec::new(),
            icons: Vec::new(),
            meta: None,
        }
    }
}

/// One argument of a prompt, in MCP's `PromptArgument` wire form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptArgument {
    /// The argument's name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the argument means.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Whether it must be given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
}

/// A rendered prompt, in MCP's `GetPromptResult` wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct PromptOutput {
    /// What the rendered prompt is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The messages, in order.
    pub messages: Vec<PromptMessage>,
    /// MCP's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl PromptOutput {
    /// One user message holding `text`.
    pub fn user_text(description: Option<String>, text: impl Into<String>) -> Self {
        Self {
            description,
            messages: vec![PromptMessage { role: Role::User, content: Content::text(text) }],
            meta: None,
        }
    }
}

/// One message of a rendered prompt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PromptMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: Content,
}

/// The speaker of a prompt message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person using the model.
    User,
    /// The model.
    Assistant,
}

/// Suggestions for an argument being typed, in MCP's `completion` wire form
/// (`completion/complete`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// The values, best first (MCP allows at most 100).
    pub values: Vec<String>,
    /// How many there are in all, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u32>,
    /// Whether there are more than `values`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// What to complete: the argument being typed, what it holds so far, and the values of
/// the arguments already given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionRequest {
    /// The argument's name.
    pub argument: String,
    /// Its value so far.
    pub value: String,
    /// The other arguments' values.
    pub context: BTreeMap<String, String>,
}

/// A prompt a skill offers: a template the host fills with arguments.
///
/// Object-safe, like [`crate::Tool`]: the agent holds prompts as `Arc<dyn Prompt>` and
/// offers them under agent-level names (see [`crate::Agent::prompts`]).
#[async_trait]
pub trait Prompt: Send + Sync {
    /// What the prompt is; `name` is its name inside the skill.
    fn info(&self) -> &PromptInfo;
    /// The prompt filled with `arguments`.
    async fn get(&self, arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError>;

    /// Suggestions for one of its arguments; none by default.
    async fn complete(&self, _request: &CompletionRequest) -> Result<Completion, ToolError> {
        Ok(Completion::default())
    }
}
