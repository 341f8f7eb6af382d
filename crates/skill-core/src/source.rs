//! Tool-source identity: which skill of which kind a registered tool comes from.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The kind of skill a tool comes from; a skill names its own with
/// [`crate::Skill::source_type`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum SourceKind {
    /// A compiled Rust skill (the default).
    #[default]
    Skill,
    /// A tool of an MCP server.
    Mcp,
    /// An operation of an OpenAPI document.
    Openapi,
}

impl SourceKind {
    /// The kind's name as it appears in JSON and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Skill => "skill",
            SourceKind::Mcp => "mcp",
            SourceKind::Openapi => "openapi",
        }
    }
}

impl fmt::Display for SourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a registered tool comes from: the agent attaches one to every tool it registers.
///
/// `tool` is the tool's own name inside its skill (an MCP server's tool name, an
/// operationId), which may differ from the agent-level name `{skill}__{tool}`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ToolSource {
    /// The kind of skill.
    pub kind: SourceKind,
    /// The skill's name.
    pub skill: String,
    /// The tool's name inside the skill.
    pub tool: String,
}

impl fmt::Display for ToolSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}/{}", self.kind, self.skill, self.tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serializes_as_the_design_shape() {
        let source = ToolSource { kind: SourceKind::default(), skill: "memory".into(), tool: "recall".into() };
        assert_eq!(serde_json::to_string(&source).unwrap(), r#"{"kind":"skill","skill":"memory","tool":"recall"}"#);
        assert_eq!(source.to_string(), "skill:memory/recall");
    }
}
