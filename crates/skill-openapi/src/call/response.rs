//! Responses as tool results: one text block with the status line, the content type and
//! the body; a JSON body parsed into `structured_content` too; a binary body as an
//! embedded resource (base64) with its media type; a body over the limit cut there with a
//! note; any status but 2xx an error result (`is_error`).

use base64::Engine;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, LOCATION};
use serde_json::{Map, Value};
use skill_core::{Content, ResourceContents, ToolOutput};

use crate::media_type::{essence, is_json, is_textual};

/// The response as a tool result, its body read up to `limit` bytes: what is past the
/// limit is never read, however long the body (a `Content-Length` only tells how much
/// was dropped). `uri` names the resource a binary body becomes.
pub(super) async fn read_response(
    mut response: reqwest::Response,
    limit: usize,
    uri: &str,
) -> Result<ToolOutput, reqwest::Error> {
    let status = response.status();
    let header = |name| response.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_owned);
    let content_type = header(CONTENT_TYPE);
    let location = if status.is_redirection() { header(LOCATION) } else { None };
    let declared = response.content_length();
    let mut body = Vec::with_capacity(declared.map_or(0, |length| length.min(limit as u64) as usize));
    let mut truncated = false;
    while let Some(chunk) = response.chunk().await? {
        let room = limit - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    let truncation = truncated.then_some(Truncation { limit, declared });
    Ok(to_output(status, content_type.as_deref(), location.as_deref(), &body, truncation, uri))
}

/// A body cut at the limit, and its declared length when the response gave one.
#[derive(Debug, Clone, Copy)]
struct Truncation {
    limit: usize,
    declared: Option<u64>,
}

impl Truncation {
    fn note(self) -> String {
        match self.declared {
            Some(total) => format!(
                "[truncated: the body is {total} bytes; the first {} are shown and {} were dropped]",
                self.limit,
                total.saturating_sub(self.limit as u64)
            ),
            None => format!(
                "[truncated: only the first {} bytes were read; the rest, of unknown length, was dropped]",
                self.limit
            ),
        }
    }
}

#[derive(Debug, PartialEq)]
enum BodyKind {
    Json,
    Text,
    Binary,
}

fn to_output(
    status: StatusCode,
    content_type: Option<&str>,
    location: Option<&str>,
    body: &[u8],
    truncation: Option<Truncation>,
    uri: &str,
) -> ToolOutput {
    let text_body = decode_text(body, truncation.is_some());
    let kind = match content_type {
        Some(content_type) if is_json(content_type) => BodyKind::Json,
        Some(content_type) if is_textual(content_type) => BodyKind::Text,
        Some(_) => BodyKind::Binary,
        // Without a Content-Type, UTF-8 is text and anything else binary.
        None if text_body.is_some() => BodyKind::Text,
        None => BodyKind::Binary,
    };
    let mut text = match status.canonical_reason() {
        Some(reason) => format!("HTTP {} {reason}", status.as_u16()),
        None => format!("HTTP {}", status.as_u16()),
    };
    if let Some(content_type) = content_type {
        text.push_str(&format!("\nContent-Type: {content_type}"));
    }
    if let Some(location) = location {
        text.push_str(&format!("\nLocation: {location}"));
    }
    let mut content = Vec::new();
    let mut structured_content = None;
    if !body.is_empty() {
        match kind {
            BodyKind::Json | BodyKind::Text => {
                let body_text = text_body.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
                text.push_str("\n\n");
                text.push_str(&body_text);
                if kind == BodyKind::Json && truncation.is_none() {
                    structured_content = serde_json::from_slice::<Value>(body).ok().map(|value| match value {
                        Value::Object(_) => value,
                        // MCP's `structuredContent` is an object: anything else is wrapped.
                        other => Value::Object(Map::from_iter([("result".to_owned(), other)])),
                    });
                }
            }
            BodyKind::Binary => {
                let mime_type = content_type.map_or_else(|| "application/octet-stream".to_owned(), essence);
                text.push_str(&format!("\n\n({} bytes of {mime_type}, in the embedded resource)", body.len()));
                content.push(Content::Resource {
                    resource: ResourceContents::Blob {
                        uri: uri.to_owned(),
                        mime_type: Some(mime_type),
                        blob: base64::engine::general_purpose::STANDARD.encode(body),
                        meta: None,
                    },
                    annotations: None,
                    meta: None,
                });
            }
        }
    }
    if let Some(truncation) = truncation {
        text.push_str("\n\n");
        text.push_str(&truncation.note());
    }
    content.insert(0, Content::text(text));
    ToolOutput { content, structured_content, is_error: !status.is_success(), ..ToolOutput::default() }
}

/// The body as UTF-8 text, if it is; a truncated body may end inside a character, which
/// is then left out.
fn decode_text(body: &[u8], truncated: bool) -> Option<String> {
    match std::str::from_utf8(body) {
        Ok(text) => Some(text.to_owned()),
        Err(error) if truncated && error.error_len().is_none() => {
            Some(String::from_utf8_lossy(&body[..error.valid_up_to()]).into_owned())
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text_of(output: &ToolOutput) -> &str {
        match &output.content[0] {
            Content::Text { text, .. } => text,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn statuses_content_types_and_bodies() {
        let output = to_output(StatusCode::OK, Some("application/json"), None, br#"[1,2]"#, None, "u");
        assert_eq!(text_of(&output), "HTTP 200 OK\nContent-Type: application/json\n\n[1,2]");
        assert_eq!(output.structured_content, Some(json!({"result": [1, 2]})));
        assert!(!output.is_error);

        let output = to_output(StatusCode::from_u16(599).unwrap(), None, None, b"", None, "u");
        assert_eq!((text_of(&output), output.is_error), ("HTTP 599", true));

        let output = to_output(StatusCode::FOUND, Some("text/html"), Some("/elsewhere"), b"<a>", None, "u");
        assert_eq!(text_of(&output), "HTTP 302 Found\nContent-Type: text/html\nLocation: /elsewhere\n\n<a>");
        assert!(output.is_error);

        let output = to_output(StatusCode::OK, None, None, &[0xff, 0x00], None, "http://h/x");
        assert_eq!(text_of(&output), "HTTP 200 OK\n\n(2 bytes of application/octet-stream, in the embedded resource)");
        assert!(matches!(
            &output.content[1],
            Content::Resource { resource: ResourceContents::Blob { blob, uri, .. }, .. } if blob == "/wA=" && uri == "http://h/x"
        ));
    }

    #[test]
    fn truncated_text_never_ends_inside_a_character() {
        let truncation = Some(Truncation { limit: 4, declared: Some(10) });
        let output =
            to_output(StatusCode::OK, Some("text/plain"), None, "abc\u{e9}".as_bytes()[..4].as_ref(), truncation, "u");
        assert_eq!(
            text_of(&output),
            "HTTP 200 OK\nContent-Type: text/plain\n\nabc\n\n[truncated: the body is 10 bytes; the first 4 are shown and 6 were dropped]"
        );
        let truncation = Some(Truncation { limit: 3, declared: None });
        let output = to_output(StatusCode::OK, Some("application/json"), None, b"{\"a", truncation, "u");
        assert_eq!(output.structured_content, None);
        assert!(
            text_of(&output)
                .ends_with("[truncated: only the first 3 bytes were read; the rest, of unknown length, was dropped]")
        );
    }
}
