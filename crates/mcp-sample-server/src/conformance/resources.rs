//! The fixture resources and the resource template.

use rmcp::{
    ErrorData as McpError,
    model::{ReadResourceResult, Resource, ResourceContents, ResourceTemplate},
};
use serde_json::json;

/// A 1x1 red PNG, base64.
pub(super) const PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mP4z8AAAAMBAQD3A0FDAAAAAElFTkSuQmCC";

const STATIC_TEXT_URI: &str = "test://static-text";
const STATIC_BINARY_URI: &str = "test://static-binary";
pub(super) const WATCHED_URI: &str = "test://watched-resource";
/// `test://template/{id}/data`, split around `{id}`.
const TEMPLATE_PREFIX: &str = "test://template/";
const TEMPLATE_SUFFIX: &str = "/data";

pub(super) fn list() -> Vec<Resource> {
    vec![
        Resource::new(STATIC_TEXT_URI, "static-text")
            .with_title("Static Text Resource")
            .with_description("A static text resource for testing")
            .with_mime_type("text/plain")
            .with_icons(crate::icons::item()),
        Resource::new(STATIC_BINARY_URI, "static-binary")
            .with_title("Static Binary Resource")
            .with_description("A static binary resource (a PNG image) for testing")
            .with_mime_type("image/png"),
        Resource::new(WATCHED_URI, "watched-resource")
            .with_title("Watched Resource")
            .with_description("A resource that clients can subscribe to; it never changes")
            .with_mime_type("text/plain"),
    ]
}

pub(super) fn templates() -> Vec<ResourceTemplate> {
    vec![
        ResourceTemplate::new(format!("{TEMPLATE_PREFIX}{{id}}{TEMPLATE_SUFFIX}"), "template")
            .with_title("Resource Template")
            .with_description("A resource template with parameter substitution")
            .with_mime_type("application/json")
            .with_icons(crate::icons::item()),
    ]
}

/// The contents of `uri`, or a resource-not-found error naming it in `data.uri` (rmcp
/// sends code -32002 on 2025-11-25 and -32602 on 2026-07-28, as SEP-2164 asks).
pub(super) fn read(uri: &str) -> Result<ReadResourceResult, McpError> {
    let contents = match uri {
        STATIC_TEXT_URI => ResourceContents::text("This is the content of the static text resource.", uri),
        STATIC_BINARY_URI => ResourceContents::blob(PNG_BASE64, uri).with_mime_type("image/png"),
        WATCHED_URI => ResourceContents::text("Watched resource content", uri),
        _ => match template_id(uri) {
            Some(id) => {
                let text = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
                ResourceContents::text(text.to_string(), uri).with_mime_type("application/json")
            }
            None => {
                return Err(McpError::resource_not_found(
                    format!("resource not found: {uri}"),
                    Some(json!({ "uri": uri })),
                ));
            }
        },
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The `{id}` of a URI of the template: one non-empty path segment.
fn template_id(uri: &str) -> Option<&str> {
    let id = uri.strip_prefix(TEMPLATE_PREFIX)?.strip_suffix(TEMPLATE_SUFFIX)?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(uri: &str, expected: serde_json::Value) {
        let read = match read(uri) {
            Ok(result) => serde_json::to_value(result.contents).unwrap(),
            Err(error) => json!({ "code": error.code.0, "data": error.data }),
        };
        assert_eq!(read, expected, "{uri}");
    }

    #[test]
    fn reads() {
        check(
            "test://static-text",
            json!([{
                "uri": "test://static-text",
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource."
            }]),
        );
        check(
            "test://static-binary",
            json!([{ "uri": "test://static-binary", "mimeType": "image/png", "blob": PNG_BASE64 }]),
        );
        let templated = serde_json::to_value(read("test://template/123/data").unwrap().contents).unwrap();
        assert_eq!(
            (&templated[0]["uri"], &templated[0]["mimeType"]),
            (&json!("test://template/123/data"), &json!("application/json"))
        );
        let text: serde_json::Value = serde_json::from_str(templated[0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, json!({ "id": "123", "templateTest": true, "data": "Data for ID: 123" }));
        for missing in ["test://nope", "test://template//data", "test://template/1/2/data"] {
            check(missing, json!({ "code": -32002, "data": { "uri": missing } }));
        }
    }

    #[test]
    fn every_listed_resource_reads() {
        for resource in list() {
            assert!(read(&resource.uri).is_ok(), "{}", resource.uri);
        }
    }
}
