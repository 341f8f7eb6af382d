//! rmcp's model types and skill-core's share MCP's wire form: one converts into the
//! other through it. A tool call's result, on every call's path, is converted directly
//! where its blocks are plain text (nearly every result), and through the wire form for
//! the rest.

use rmcp::model::{CallToolResult, ContentBlock, MetaObject, TextContent};
use serde_json::Value;
use skill_core::{Content, Icon, IconTheme, ToolOutput};

/// `value` read as the type of the same MCP wire form on the other side (rmcp's model
/// or skill-core's).
pub(crate) fn wire_into<T: serde::de::DeserializeOwned>(value: &impl serde::Serialize) -> Result<T, serde_json::Error> {
    serde_json::to_value(value).and_then(T::deserialize)
}

/// An MCP server's `CallToolResult` as the tool's output; the same as [`wire_into`].
pub(crate) fn tool_output(result: CallToolResult) -> Result<ToolOutput, serde_json::Error> {
    let CallToolResult { content, structured_content, is_error, meta, .. } = result;
    Ok(ToolOutput {
        content: content.into_iter().map(content_from_rmcp).collect::<Result<_, _>>()?,
        // The wire form reads an explicit `null` as none.
        structured_content: structured_content.filter(|value| !value.is_null()),
        is_error: is_error.unwrap_or(false),
        meta: meta_from_rmcp(meta),
    })
}

/// A tool's output as MCP's `CallToolResult`: the same as [`wire_into`], but marked
/// complete (2026-07-28 requires the mark; rmcp takes it off for older clients).
#[cfg(feature = "server")]
pub(crate) fn call_tool_result(output: ToolOutput) -> Result<CallToolResult, serde_json::Error> {
    let ToolOutput { content, structured_content, is_error, meta } = output;
    let mut result = CallToolResult::success(content.into_iter().map(content_into_rmcp).collect::<Result<_, _>>()?);
    result.structured_content = structured_content;
    result.is_error = Some(is_error);
    result.meta = meta_into_rmcp(meta)?;
    Ok(result)
}

/// An MCP server's icons as skill-core's; an icon of a theme skill-core does not know
/// keeps its image, for any theme.
pub(crate) fn icons_from_rmcp(icons: Option<Vec<rmcp::model::Icon>>) -> Vec<Icon> {
    let theme = |theme| match theme {
        rmcp::model::IconTheme::Light => Some(IconTheme::Light),
        rmcp::model::IconTheme::Dark => Some(IconTheme::Dark),
        _ => None,
    };
    let icon = |icon: rmcp::model::Icon| Icon {
        src: icon.src,
        mime_type: icon.mime_type,
        sizes: icon.sizes.unwrap_or_default(),
        theme: icon.theme.and_then(theme),
    };
    icons.unwrap_or_default().into_iter().map(icon).collect()
}

/// Icons as MCP lists them; none when there are none.
#[cfg(feature = "server")]
pub(crate) fn icons_into_rmcp(icons: &[Icon]) -> Option<Vec<rmcp::model::Icon>> {
    let icon = |icon: &Icon| {
        let mut mcp = rmcp::model::Icon::new(icon.src.clone());
        mcp.mime_type.clone_from(&icon.mime_type);
        mcp.sizes = (!icon.sizes.is_empty()).then(|| icon.sizes.clone());
        mcp.theme = icon.theme.map(|theme| match theme {
            IconTheme::Light => rmcp::model::IconTheme::Light,
            IconTheme::Dark => rmcp::model::IconTheme::Dark,
        });
        mcp
    };
    (!icons.is_empty()).then(|| icons.iter().map(icon).collect())
}

fn content_from_rmcp(block: ContentBlock) -> Result<Content, serde_json::Error> {
    match block {
        ContentBlock::Text(TextContent { text, meta, annotations: None, .. }) => {
            Ok(Content::Text { text, annotations: None, meta: meta_from_rmcp(meta) })
        }
        other => wire_into(&other),
    }
}

#[cfg(feature = "server")]
fn content_into_rmcp(block: Content) -> Result<ContentBlock, serde_json::Error> {
    match block {
        Content::Text { text, annotations: None, meta } => {
            let mut content = TextContent::new(text);
            content.meta = meta_into_rmcp(meta)?;
            Ok(ContentBlock::Text(content))
        }
        other => wire_into(&other),
    }
}

/// `_meta` as rmcp holds it, as a JSON value.
pub(crate) fn meta_from_rmcp(meta: Option<MetaObject>) -> Option<Value> {
    meta.map(|meta| Value::Object(meta.0))
}

/// Puts the running call's trace context ([`skill_core::trace::current`]) into a
/// request's `_meta.traceparent` (MCP 2026-07-28, SEP-414), so that the upstream
/// server's spans join the caller's trace.
pub(crate) fn with_trace<P: rmcp::model::RequestParamsMeta>(params: &mut P) {
    if let Some(parent) = skill_core::trace::current() {
        params.set_traceparent(&parent.to_string());
    }
}

/// `_meta` as rmcp holds it; like the wire form, only an object is one.
#[cfg(feature = "server")]
fn meta_into_rmcp(meta: Option<Value>) -> Result<Option<MetaObject>, serde_json::Error> {
    match meta {
        Some(Value::Object(meta)) => Ok(Some(MetaObject(meta))),
        other => other.map(serde_json::from_value).transpose(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Results with every kind of block and field, as a server may send them.
    fn results() -> Vec<Value> {
        vec![
            json!({"content": []}),
            json!({"content": [{"type": "text", "text": "plain"}]}),
            json!({"content": [{"type": "text", "text": "t", "_meta": {"k": 1}}], "isError": true}),
            json!({"content": [{"type": "text", "text": "t", "annotations": {"audience": ["user"], "priority": 0.5}}]}),
            json!({
                "content": [
                    {"type": "image", "data": "aGk=", "mimeType": "image/png"},
                    {"type": "audio", "data": "aGk=", "mimeType": "audio/wav", "_meta": {"a": true}},
                    {"type": "resource_link", "uri": "file:///x", "name": "x", "size": 3},
                    {"type": "resource", "resource": {"uri": "file:///y", "text": "y", "mimeType": "text/plain"}},
                    {"type": "text", "text": "last"}
                ],
                "structuredContent": {"n": 1},
                "isError": false,
                "_meta": {"progressToken": 7}
            }),
            json!({"content": [{"type": "text", "text": "t"}], "structuredContent": null}),
            json!({"content": [{"type": "text", "text": "t"}], "structuredContent": [1, 2]}),
        ]
    }

    #[test]
    fn tool_output_is_what_the_wire_form_gives() {
        for value in results() {
            let result: CallToolResult = serde_json::from_value(value.clone()).expect("a CallToolResult");
            let through_wire: ToolOutput = wire_into(&result).expect("the wire form reads");
            assert_eq!(tool_output(result).expect("converts"), through_wire, "{value}");
        }
    }

    #[cfg(feature = "server")]
    #[test]
    fn call_tool_result_is_what_the_wire_form_gives() {
        for value in results() {
            let output: ToolOutput = serde_json::from_value(value.clone()).expect("a ToolOutput");
            let mut through_wire: CallToolResult = wire_into(&output).expect("the wire form reads");
            through_wire.result_type = Some(rmcp::model::ResultType::COMPLETE);
            assert_eq!(call_tool_result(output).expect("converts"), through_wire, "{value}");
        }
        let odd_meta = ToolOutput { meta: Some(json!([1])), ..ToolOutput::text("t") };
        assert_eq!(call_tool_result(odd_meta.clone()).is_err(), wire_into::<CallToolResult>(&odd_meta).is_err());
        let odd_block_meta = ToolOutput {
            content: vec![Content::Text { text: "t".into(), annotations: None, meta: Some(json!(1)) }],
            ..ToolOutput::default()
        };
        assert_eq!(
            call_tool_result(odd_block_meta.clone()).is_err(),
            wire_into::<CallToolResult>(&odd_block_meta).is_err()
        );
    }
}
