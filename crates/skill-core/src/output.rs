//! What a tool returns: [`ToolOutput`], shaped exactly like MCP's `CallToolResult`.
//!
//! The serde form of these types is the MCP wire form (`content`, `structuredContent`,
//! `isError`, content blocks tagged by `type`), so a result can be handed to an MCP
//! client unchanged, and a result from an MCP server can be read into them unchanged.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The result of one tool call, one-to-one with MCP's `CallToolResult`.
///
/// `is_error` marks a result the tool itself reports as failed (the call happened, the
/// operation did not succeed); failures of the call itself are a [`crate::ToolError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct ToolOutput {
    /// Unstructured content blocks, in order.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Structured content: a JSON value matching the tool's output schema, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool reports this result as an error.
    #[serde(default)]
    pub is_error: bool,
    /// MCP's `_meta`, passed through untouched.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

impl ToolOutput {
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::text(text)], ..Self::default() }
    }

    /// A result the tool reports as failed, holding one text block that says why.
    pub fn error(text: impl Into<String>) -> Self {
        Self { is_error: true, ..Self::text(text) }
    }

    /// Adds structured content to the result.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }
}

/// One content block of a tool result: MCP's `ContentBlock`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
        /// MCP annotations (`audience`, `priority`, `lastModified`), passed through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 data.
        data: String,
        /// The image's media type, e.g. `image/png`.
        mime_type: String,
        /// MCP annotations, passed through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// Audio, base64-encoded.
    Audio {
        /// Base64 data.
        data: String,
        /// The audio's media type, e.g. `audio/wav`.
        mime_type: String,
        /// MCP annotations, passed through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// The resource's name.
        name: String,
        /// A human-readable title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// What the resource is.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The resource's media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The resource's size in bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        size: Option<u64>,
        /// MCP annotations, passed through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource's contents.
        resource: ResourceContents,
        /// MCP annotations, passed through.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        annotations: Option<Value>,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

impl Content {
    /// A text block without annotations.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into(), annotations: None, meta: None }
    }

    /// The URI of the resource this block links to or embeds, if it is such a block.
    pub(crate) fn resource_uri_mut(&mut self) -> Option<&mut String> {
        match self {
            Content::ResourceLink { uri, .. } => Some(uri),
            Content::Resource { resource, .. } => Some(resource.uri_mut()),
            Content::Text { .. } | Content::Image { .. } | Content::Audio { .. } => None,
        }
    }
}

/// The contents of an embedded resource: text or a base64 blob.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ResourceContents {
    /// A text resource.
    #[serde(rename_all = "camelCase")]
    Text {
        /// The resource's URI.
        uri: String,
        /// The resource's media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// The text.
        text: String,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
    /// A binary resource.
    #[serde(rename_all = "camelCase")]
    Blob {
        /// The resource's URI.
        uri: String,
        /// The resource's media type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// Base64 data.
        blob: String,
        /// MCP's `_meta`, passed through.
        #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
        meta: Option<Value>,
    },
}

impl ResourceContents {
    /// The resource's URI.
    pub(crate) fn uri_mut(&mut self) -> &mut String {
        match self {
            ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `CallToolResult` as an MCP server sends it, with every kind of content block.
    fn mcp_result() -> Value {
        json!({
            "content": [
                {"type": "text", "text": "hello", "annotations": {"audience": ["user"], "priority": 0.5}},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "mimeType": "text/plain", "size": 3},
                {"type": "resource", "resource": {"uri": "test://t", "mimeType": "text/plain", "text": "embedded"}},
                {"type": "resource", "resource": {"uri": "test://b", "blob": "AAEC"}, "_meta": {"k": 1}}
            ],
            "structuredContent": {"sum": 3},
            "isError": false,
            "_meta": {"progressToken": 7}
        })
    }

    #[test]
    fn mcp_call_tool_result_round_trips_unchanged() {
        let wire = mcp_result();
        let output: ToolOutput = serde_json::from_value(wire.clone()).unwrap();
        assert_eq!(output.content.len(), 6);
        assert!(matches!(output.content[4], Content::Resource { resource: ResourceContents::Text { .. }, .. }));
        assert!(matches!(output.content[5], Content::Resource { resource: ResourceContents::Blob { .. }, .. }));
        assert_eq!(serde_json::to_value(&output).unwrap(), wire);
    }

    #[test]
    fn missing_fields_take_mcp_defaults() {
        let output: ToolOutput = serde_json::from_value(json!({"content": []})).unwrap();
        assert_eq!(output, ToolOutput::default());
        assert_eq!(
            serde_json::to_value(ToolOutput::error("no")).unwrap(),
            json!({"content": [{"type": "text", "text": "no"}], "isError": true})
        );
    }
}
