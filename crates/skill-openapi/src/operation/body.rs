//! Request bodies: which of an operation's media types its tool sends (JSON first), how
//! that type is sent, and the `body` property's schema, with the help a model needs to give
//! binary data.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::ToolBuilder;
use crate::Error;
use crate::call::BINARY_ARGUMENT_HELP;
use crate::call::operations::{PartHeaders, read_part_headers};
use crate::media_type::{essence, is_json_sequence, is_textual};
use crate::reference::DocId;
use crate::serialize::{PropertyEncoding, Style};

/// How a request body is sent, from its media type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BodyKind {
    /// `application/json` and other `+json` types.
    Json,
    /// A sequence of JSON texts, one per item of an array (OpenAPI 3.2's sequential media
    /// types): `application/jsonl`, `application/x-ndjson` and `application/x-jsonlines`,
    /// one per line; `application/json-seq` (RFC 7464), each after a record separator.
    JsonSequence,
    /// `application/x-www-form-urlencoded`, with the Encoding Object.
    FormUrlEncoded,
    /// `multipart/form-data` (and other `multipart/*`), with the Encoding Object.
    Multipart,
    /// `text/*`: the body is a string, sent as is.
    Text,
    /// Anything else (`application/octet-stream`, `image/png`, `*/*`): raw bytes.
    Binary,
}

/// The request body an operation's tool sends, from the `body` property of its input.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestBody {
    /// The media type chosen, as the document writes it: `application/json` first, then
    /// other JSON types and JSON sequences, `application/x-www-form-urlencoded`, `multipart/form-data`,
    /// `text/plain`, `application/octet-stream`, then the first one listed.
    pub media_type: String,
    /// How it is sent.
    pub kind: BodyKind,
    /// Whether the body must be given.
    pub required: bool,
    /// The Encoding Object's fields per property, for form and multipart bodies.
    pub encodings: BTreeMap<String, PropertyEncoding>,
}

/// Which Encoding Object `style`s a document's multipart bodies follow.
///
/// OpenAPI 3.0.4 says `style`, `explode` and `allowReserved` "SHALL be ignored" unless the
/// body is `application/x-www-form-urlencoded`, so in a 3.0 document a multipart array is
/// one part per item and an object one `application/json` part; 3.1 extends them to
/// `multipart/form-data`. One style is kept in 3.0 all the same: `deepObject`. The 3.0
/// text gives it no meaning for multipart, so a document can only mean what 3.1 defines
/// (bracketed part names), and the servers that write it mean exactly that: Stripe's
/// document is 3.0 and marks `file_link_data` of `POST /v1/files` `deepObject`, and its
/// API reads the bracketed names its form bodies use (`file_link_data[create]`), never a
/// JSON part. A converted Swagger 2.0 document follows 2.0, whose `collectionFormat`
/// applies to every form field, multipart ones too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum MultipartStyles {
    /// OpenAPI 3.1 and 3.2, and Swagger 2.0: every style field applies.
    All,
    /// OpenAPI 3.0: only `style: deepObject` (with its `explode` and `allowReserved`).
    DeepObjectOnly,
}

impl ToolBuilder {
    /// Reads a Request Body Object: the media type chosen, the `body` property's schema, and
    /// for a multipart body, its parts' fixed headers.
    pub(super) fn read_request_body(
        &mut self,
        item_doc: DocId,
        raw: &Value,
        referenced: &mut Vec<String>,
    ) -> Result<(RequestBody, Value, BTreeMap<String, PartHeaders>), Error> {
        let (doc, body) = self.resolver.resolve_object(item_doc, raw)?;
        let empty = Map::new();
        let content = body.get("content").and_then(Value::as_object).unwrap_or(&empty);
        let chosen = content
            .iter()
            .min_by_key(|(media_type, _)| media_type_rank(media_type))
            .map(|(media_type, media)| (media_type.clone(), media));
        let no_media = json!({});
        let (media_type, raw_media) = match chosen {
            Some((media_type, media)) => (media_type, media),
            None => ("application/octet-stream".to_owned(), &no_media),
        };
        // OpenAPI 3.2: a Media Type Object may be a `$ref` (to `components.mediaTypes`).
        let (doc, media) = self.resolver.resolve_object(doc, raw_media)?;
        let kind = body_kind(&media_type);
        let mut encodings = self.read_encodings(doc, &media)?;
        if kind == BodyKind::Multipart && self.multipart_styles == MultipartStyles::DeepObjectOnly {
            for encoding in encodings.values_mut().filter(|encoding| encoding.style != Some(Style::DeepObject)) {
                (encoding.style, encoding.explode, encoding.allow_reserved) = (None, None, None);
            }
        }
        let default_schema = match kind {
            BodyKind::Text | BodyKind::Binary => json!({"type": "string"}),
            _ => json!({}),
        };
        // OpenAPI 3.2: a sequential media type (JSON Lines) may describe its items alone,
        // by `itemSchema`; the body is then the array of those items.
        let item_schema = match (kind, media.get("schema"), media.get("itemSchema")) {
            (BodyKind::JsonSequence, None, Some(item_schema)) => Some(json!({"type": "array", "items": item_schema})),
            _ => None,
        };
        let raw_schema = item_schema.as_ref().or(media.get("schema")).unwrap_or(&default_schema);
        let mut schema = self.catalog.rewrite(&mut self.resolver, doc, raw_schema, referenced)?;
        if let (Some(description), Value::Object(object)) =
            (body.get("description").and_then(Value::as_str), &mut schema)
            && !object.contains_key("description")
        {
            object.insert("description".into(), Value::String(description.to_owned()));
        }
        // The model must learn how binary data is given: base64 (a file in the upload folder
        // only where there is one: `OperationTool::add_file_argument_help`).
        let binary = match kind {
            BodyKind::Binary => Some(BINARY_ARGUMENT_HELP.to_owned()),
            BodyKind::Multipart => Some(format!("Binary parts: {BINARY_ARGUMENT_HELP}")),
            _ => None,
        };
        if let (Some(help), Value::Object(object)) = (binary.filter(|_| !is_textual(&media_type)), &mut schema) {
            let description = match object.get("description").and_then(Value::as_str) {
                Some(description) => format!("{description}\n\n{help}"),
                None => help,
            };
            object.insert("description".into(), Value::String(description));
        }
        let required = body.get("required") == Some(&Value::Bool(true));
        let part_headers = match kind {
            BodyKind::Multipart => read_part_headers(&mut self.resolver, doc, &media),
            _ => BTreeMap::new(),
        };
        Ok((RequestBody { media_type, kind, required, encodings }, schema, part_headers))
    }
}

/// Lower is preferred.
fn media_type_rank(media_type: &str) -> u8 {
    let essence = essence(media_type);
    match essence.as_str() {
        "application/json" => 0,
        _ if essence.ends_with("+json") || is_json_sequence(&essence) => 1,
        "application/x-www-form-urlencoded" => 2,
        "multipart/form-data" => 3,
        "text/plain" => 4,
        "application/octet-stream" => 5,
        _ => 6,
    }
}

fn body_kind(media_type: &str) -> BodyKind {
    let essence = essence(media_type);
    if essence == "application/json" || essence.ends_with("+json") {
        BodyKind::Json
    } else if is_json_sequence(&essence) {
        BodyKind::JsonSequence
    } else if essence == "application/x-www-form-urlencoded" {
        BodyKind::FormUrlEncoded
    } else if essence.starts_with("multipart/") {
        BodyKind::Multipart
    } else if essence.starts_with("text/") {
        BodyKind::Text
    } else {
        BodyKind::Binary
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::FILE_ARGUMENT_HELP;
    use crate::operation::tests::tools_of;

    #[test]
    fn body_media_types_are_chosen_by_preference() {
        let check = |types: &[&str], expect: &str, kind: BodyKind| {
            let content: Map<String, Value> = types.iter().map(|name| (name.to_string(), json!({}))).collect();
            let set = tools_of(json!({
                "openapi": "3.1.0",
                "paths": {"/a": {"post": {"requestBody": {"content": content}}}}
            }));
            let body = set.tools[0].request_body.as_ref().unwrap();
            assert_eq!((body.media_type.as_str(), body.kind), (expect, kind));
        };
        check(&["text/plain", "application/json", "multipart/form-data"], "application/json", BodyKind::Json);
        check(&["application/xml", "application/vnd.api+json"], "application/vnd.api+json", BodyKind::Json);
        check(
            &["multipart/form-data", "application/x-www-form-urlencoded"],
            "application/x-www-form-urlencoded",
            BodyKind::FormUrlEncoded,
        );
        check(&["application/octet-stream", "multipart/form-data"], "multipart/form-data", BodyKind::Multipart);
        check(&["application/octet-stream", "text/plain; charset=utf-8"], "text/plain; charset=utf-8", BodyKind::Text);
        check(&["image/png", "application/octet-stream"], "application/octet-stream", BodyKind::Binary);
        check(&["application/xml"], "application/xml", BodyKind::Binary);
    }

    #[test]
    fn binary_bodies_say_how_binary_data_is_given() {
        let description = |media_type: &str| {
            let set = tools_of(json!({
                "openapi": "3.1.0",
                "paths": {"/a": {"post": {"requestBody": {
                    "description": "The upload.",
                    "content": {media_type: {}}
                }}}}
            }));
            set.tools[0].input_schema["properties"]["body"]["description"].as_str().unwrap().to_owned()
        };
        assert_eq!(description("image/png"), format!("The upload.\n\n{BINARY_ARGUMENT_HELP}"));
        assert_eq!(description("multipart/form-data"), format!("The upload.\n\nBinary parts: {BINARY_ARGUMENT_HELP}"));
        assert_eq!(description("application/xml"), "The upload.");
        assert_eq!(description("application/json"), "The upload.");
        // Nothing about files: a tool learns of them only where there is an upload folder.
        assert!(!description("image/png").contains("file:"));
    }

    #[test]
    fn file_help_is_added_to_binary_bodies_only_once() {
        let set = tools_of(json!({
            "openapi": "3.1.0",
            "paths": {
                "/png": {"post": {"operationId": "png", "requestBody": {"content": {"image/png": {}}}}},
                "/parts": {"post": {"operationId": "parts", "requestBody": {"content": {"multipart/form-data": {}}}}},
                "/json": {"post": {"operationId": "json", "requestBody": {"description": "JSON.", "content": {"application/json": {}}}}},
                "/none": {"get": {"operationId": "none"}}
            }
        }));
        let mut tools = set.tools;
        for tool in &mut tools {
            tool.add_file_argument_help();
            tool.add_file_argument_help();
        }
        let body = |name: &str| {
            let tool = tools.iter().find(|tool| tool.name == name).unwrap();
            tool.input_schema.pointer("/properties/body/description").cloned()
        };
        assert_eq!(body("png"), Some(json!(format!("{BINARY_ARGUMENT_HELP} {FILE_ARGUMENT_HELP}"))));
        assert_eq!(body("parts"), Some(json!(format!("Binary parts: {BINARY_ARGUMENT_HELP} {FILE_ARGUMENT_HELP}"))));
        assert_eq!(body("json"), Some(json!("JSON.")));
        assert_eq!(body("none"), None);
    }

    #[test]
    fn form_bodies_keep_their_encoding_and_schemas_their_defs() {
        let set = tools_of(json!({
            "openapi": "3.0.0",
            "components": {"schemas": {
                "Card": {"type": "object", "properties": {"cvc": {"type": "string"}, "backup": {"$ref": "#/components/schemas/Card"}}}
            }},
            "paths": {"/charges": {"post": {
                "operationId": "PostCharges",
                "deprecated": true,
                "summary": "Create a charge",
                "requestBody": {"content": {"application/x-www-form-urlencoded": {
                    "schema": {"type": "object", "properties": {"card": {"$ref": "#/components/schemas/Card"}}},
                    "encoding": {"card": {"style": "deepObject", "explode": true}}
                }}}
            }}}
        }));
        let tool = &set.tools[0];
        assert_eq!(tool.description, "Deprecated. Create a charge");
        let body = tool.request_body.as_ref().unwrap();
        assert_eq!(
            body.encodings["card"],
            PropertyEncoding { style: Some(Style::DeepObject), explode: Some(true), ..PropertyEncoding::default() }
        );
        assert_eq!(tool.input_schema["properties"]["body"]["properties"]["card"], json!({"$ref": "#/$defs/Card"}));
        assert_eq!(tool.input_schema["$defs"]["Card"]["properties"]["backup"], json!({"$ref": "#/$defs/Card"}));
        jsonschema::validator_for(&tool.input_schema).unwrap();
    }

    #[test]
    fn openapi_3_0_multipart_bodies_keep_only_deep_object_styles() {
        let encodings = |version: &str| {
            let set = tools_of(json!({
                "openapi": version,
                "paths": {"/files": {"post": {"requestBody": {"content": {"multipart/form-data": {
                    "schema": {"type": "object"},
                    "encoding": {
                        "tags": {"style": "form", "explode": false},
                        "size": {"explode": true, "contentType": "application/json"},
                        "link": {"style": "deepObject", "explode": true}
                    }
                }}}}}}
            }));
            set.tools[0].request_body.as_ref().unwrap().encodings.clone()
        };
        let deep =
            PropertyEncoding { style: Some(Style::DeepObject), explode: Some(true), ..PropertyEncoding::default() };
        // 3.0: the style fields are ignored (content-based), but `deepObject`'s.
        let v3_0 = encodings("3.0.3");
        assert_eq!(v3_0["tags"], PropertyEncoding::default());
        assert_eq!(
            v3_0["size"],
            PropertyEncoding { content_type: Some("application/json".into()), ..PropertyEncoding::default() }
        );
        assert_eq!(v3_0["link"], deep);
        // 3.1 applies them all to multipart.
        let v3_1 = encodings("3.1.0");
        assert_eq!(
            v3_1["tags"],
            PropertyEncoding { style: Some(Style::Form), explode: Some(false), ..PropertyEncoding::default() }
        );
        assert_eq!(v3_1["link"], deep);
        // A form body in 3.0 keeps them too.
        let set = tools_of(json!({
            "openapi": "3.0.3",
            "paths": {"/form": {"post": {"requestBody": {"content": {"application/x-www-form-urlencoded": {
                "encoding": {"tags": {"style": "form", "explode": false}}
            }}}}}}
        }));
        assert_eq!(set.tools[0].request_body.as_ref().unwrap().encodings["tags"].explode, Some(false));
        // Swagger 2.0's `collectionFormat` applies to multipart fields: a converted document keeps it.
        let set = tools_of(json!({
            "swagger": "2.0",
            "paths": {"/files": {"post": {"consumes": ["multipart/form-data"], "parameters": [
                {"name": "tags", "in": "formData", "type": "array", "items": {"type": "string"}, "collectionFormat": "csv"}
            ]}}}
        }));
        assert_eq!(set.tools[0].request_body.as_ref().unwrap().encodings["tags"].explode, Some(false));
    }

    #[test]
    fn sequential_bodies_take_their_item_schema() {
        let body = |media: Value| {
            let set = tools_of(json!({
                "openapi": "3.2.0",
                "paths": {"/events": {"post": {"requestBody": {"content": media}}}}
            }));
            let tool = &set.tools[0];
            (tool.request_body.as_ref().unwrap().kind, tool.input_schema["properties"]["body"].clone())
        };
        let item = json!({"type": "object", "properties": {"id": {"type": "integer"}}});
        assert_eq!(
            body(json!({"application/jsonl": {"itemSchema": item}})),
            (BodyKind::JsonSequence, json!({"type": "array", "items": item}))
        );
        // `schema` describes the whole sequence, as an array, and wins.
        assert_eq!(
            body(json!({"application/json-seq": {"schema": {"type": "array", "maxItems": 3}, "itemSchema": item}})),
            (BodyKind::JsonSequence, json!({"type": "array", "maxItems": 3}))
        );
        assert_eq!(body(json!({"application/x-ndjson": {}, "application/octet-stream": {}})).0, BodyKind::JsonSequence);
    }
}
