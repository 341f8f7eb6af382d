//! Media types: what a `Content-Type` says about how a value becomes bytes and back.

use serde_json::Value;

/// The type without parameters, lowercase (`text/plain; charset=utf-8` → `text/plain`).
pub(crate) fn essence(media_type: &str) -> String {
    media_type.split(';').next().unwrap_or_default().trim().to_ascii_lowercase()
}

/// `application/json` or a `+json` structured suffix.
pub(crate) fn is_json(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence == "application/json" || essence.ends_with("+json")
}

/// Text a person or a model can read: `text/*`, JSON, XML, YAML, JavaScript and
/// form-urlencoded. Everything else is treated as binary.
pub(crate) fn is_textual(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence.starts_with("text/")
        || is_json(&essence)
        || essence.ends_with("+xml")
        || essence.ends_with("+yaml")
        || matches!(
            essence.as_str(),
            "application/xml"
                | "application/yaml"
                | "application/x-yaml"
                | "application/javascript"
                | "application/ecmascript"
                | "application/x-www-form-urlencoded"
                | "application/graphql"
                | "application/sql"
        )
}

/// The media type to send for an Encoding Object's `contentType`, a comma-separated list:
/// its first entry, or `application/octet-stream` when that is a wildcard (`image/*`,
/// `*/*`), which names no type to send.
pub(crate) fn to_send(content_type: &str) -> String {
    let first = content_type.split(',').next().unwrap_or_default().trim();
    if first.is_empty() || first.contains('*') { "application/octet-stream".to_owned() } else { first.to_owned() }
}

/// The text of a value sent by its media type (content-based serialization, OAS 3.1.1
/// Appendix B): JSON types take the value's JSON text; other types take a string as is,
/// and anything else as its JSON text (which, for numbers and booleans, is their text).
pub(crate) fn content_text(value: &Value, media_type: &str) -> String {
    match value {
        Value::String(text) if !is_json(media_type) => text.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn media_types_are_read_by_their_essence() {
        assert_eq!(essence(" Application/JSON ; charset=UTF-8"), "application/json");
        assert!(is_json("application/problem+json"));
        assert!(!is_json("application/jsonl"));
        for textual in ["text/csv", "application/xml", "image/svg+xml", "application/yaml", "application/vnd.api+json"]
        {
            assert!(is_textual(textual), "{textual}");
        }
        for binary in ["application/octet-stream", "image/png", "application/pdf", "audio/wav"] {
            assert!(!is_textual(binary), "{binary}");
        }
        assert_eq!(to_send("image/png, image/jpeg"), "image/png");
        assert_eq!(to_send("image/*"), "application/octet-stream");
        assert_eq!(content_text(&json!("a b"), "text/plain"), "a b");
        assert_eq!(content_text(&json!("a b"), "application/json"), "\"a b\"");
        assert_eq!(content_text(&json!({"k": [1, true]}), "text/plain"), "{\"k\":[1,true]}");
        assert_eq!(content_text(&json!(1.5), "text/plain"), "1.5");
    }
}
