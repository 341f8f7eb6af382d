//! Resources a skill gives: a [`ResourceCatalog`] (resources, resource templates and the
//! [`ResourceReader`] that reads any of them), each item shaped like its MCP counterpart
//! (`Resource`, `ResourceTemplate`, `ReadResourceResult`).
//!
//! Unlike tools and prompts, resources are read through one reader per skill, not one
//! object per item: a template stands for resources nobody listed, so only the skill
//! knows how to read a URI it expands to.

use std::fmt;
use std::sync::Arc;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Completion, CompletionRequest, Icon, ResourceContents, ToolError};

/// The `_meta` key of a skill's `SKILL.md` resource that holds the file's frontmatter,
/// as written, as a JSON object: what the MCP skills extension (SEP-2640) lists as the
/// skill's `frontmatter` (its `_meta` prefix for skill resources).
pub const SKILL_FRONTMATTER_META_KEY: &str = "io.modelcontextprotocol.skills/frontmatter";

/// One resource, in MCP's `Resource` wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceInfo {
    /// Its URI.
    pub uri: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// MCP annotations, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Images a host may show beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// MCP's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// A family of resources, in MCP's `ResourceTemplate` wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateInfo {
    /// An RFC 6570 URI template.
    pub uri_template: String,
    /// Its name.
    pub name: String,
    /// A human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Their media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// MCP annotations, passed through.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
    /// Images a host may show beside it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub icons: Vec<Icon>,
    /// MCP's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// The contents of a read resource, in MCP's `ReadResourceResult` wire form.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ResourceOutput {
    /// The contents (one resource may have several parts).
    pub contents: Vec<ResourceContents>,
    /// MCP's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Reads the resources of one skill.
#[async_trait]
pub trait ResourceReader: Send + Sync {
    /// The contents of the resource at `uri`, a URI as the skill gave it (listed, or
    /// expanded from one of its templates).
    async fn read(&self, uri: &str) -> Result<ResourceOutput, ToolError>;

    /// Suggestions for a variable of the template `uri_template` (as the skill gave it);
    /// none by default.
    async fn complete(&self, _uri_template: &str, _request: &CompletionRequest) -> Result<Completion, ToolError> {
        Ok(Completion::default())
    }

    /// Starts announcing changes of the resource at `uri` (through
    /// [`crate::SkillHandle::resource_updated`]); by default it is accepted, and nothing is
    /// ever announced.
    async fn subscribe(&self, _uri: &str) -> Result<(), ToolError> {
        Ok(())
    }

    /// Stops announcing changes of the resource at `uri`.
    async fn unsubscribe(&self, _uri: &str) -> Result<(), ToolError> {
        Ok(())
    }
}

/// What a skill offers as resources: see [`crate::Skill::resources`].
#[derive(Clone, Default)]
pub struct ResourceCatalog {
    /// The resources it lists.
    pub resources: Vec<ResourceInfo>,
    /// The templates it lists.
    pub templates: Vec<ResourceTemplateInfo>,
    /// What reads them; `None` only when both lists are empty.
    pub reader: Option<Arc<dyn ResourceReader>>,
}

impl ResourceCatalog {
    /// Whether the skill offers no resource at all.
    pub fn is_empty(&self) -> bool {
        self.resources.is_empty() && self.templates.is_empty()
    }

    /// Whether `uri` (as the skill gives it) is one of the listed resources.
    pub(crate) fn lists(&self, uri: &str) -> bool {
        self.resources.iter().any(|resource| resource.uri == uri)
    }

    /// Whether `uri` starts with the fixed start of one of the templates (the part before
    /// its first variable), so a template may expand to it.
    pub(crate) fn may_expand_to(&self, uri: &str) -> bool {
        self.templates.iter().any(|template| {
            let fixed = template.uri_template.split('{').next().unwrap_or_default();
            !fixed.is_empty() && uri.starts_with(fixed)
        })
    }
}

impl fmt::Debug for ResourceCatalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ResourceCatalog")
            .field("n_resources", &self.resources.len())
            .field("n_templates", &self.templates.len())
            .finish()
    }
}
