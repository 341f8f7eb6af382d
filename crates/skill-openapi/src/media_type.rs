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

/// A sequential JSON media type (OpenAPI 3.2, Sequential Media Types): JSON Lines and its
/// aliases, one JSON text per line, or RFC 7464 JSON text sequences (`application/json-seq`,
/// and `+json-seq` types such as `application/geo+json-seq`).
pub(crate) fn is_json_sequence(media_type: &str) -> bool {
    let essence = essence(media_type);
    matches!(essence.as_str(), "application/jsonl" | "application/x-ndjson" | "application/x-jsonlines")
        || is_record_separated(&essence)
}

/// An RFC 7464 JSON text sequence: each item after a record separator (`0x1E`).
pub(crate) fn is_record_separated(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence == "application/json-seq" || essence.ends_with("+json-seq")
}

/// Text a person or a model can read: `text/*` (server-sent events included), JSON and JSON
/// sequences, XML, YAML, JavaScript and form-urlencoded. Everything else is treated as
/// binary.
pub(crate) fn is_textual(media_type: &str) -> bool {
    let essence = essence(media_type);
    essence.starts_with("text/")
        || is_json(&essence)
        || is_json_sequence(&essence)
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
        assert!(is_json_sequence("Application/JSON-seq") && is_json_sequence("application/x-jsonlines"));
        assert!(is_record_separated("application/geo+json-seq") && !is_record_separated("application/jsonl"));
        assert!(!is_json_sequence("application/json"));
        for textual in [
            "text/csv",
            "application/xml",
            "image/svg+xml",
            "application/yaml",
            "application/vnd.api+json",
            "application/jsonl",
            "application/x-ndjson; charset=utf-8",
            "text/event-stream",
        ] {
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
