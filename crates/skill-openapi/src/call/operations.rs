//! What the document says about each operation beyond its tool: the security it requires,
//! the server it names instead of the document's, and the fixed headers of its multipart
//! parts. Read once, when the [`Endpoint`](super::Endpoint) is made.

use std::collections::{BTreeMap, HashMap};

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use url::Url;

use super::auth::{Requirements, read_requirements};
use super::server::first_server;
use crate::document::Document;
use crate::media_type::{content_text, essence};
use crate::operation::Method;
use crate::reference::{DocId, Resolver};
use crate::serialize::{Location, ParameterSpec, SerializedParameter};

const METHODS: [Method; 8] = [
    Method::Get,
    Method::Put,
    Method::Post,
    Method::Delete,
    Method::Options,
    Method::Head,
    Method::Patch,
    Method::Trace,
];

/// Headers for the parts of one property of a multipart body.
pub(super) type PartHeaders = Vec<(HeaderName, HeaderValue)>;

/// One operation's details.
#[derive(Debug, Clone, Default)]
pub(super) struct OperationDetails {
    /// Its effective `security`: the operation's, else the document's.
    pub(super) security: Option<Requirements>,
    /// The first of its own (or its path item's) `servers`, when it has some and no base
    /// URL was given; the error's message when that server cannot be used.
    pub(super) server: Option<Result<Url, String>>,
    /// For each multipart media type of its request body, the headers of each property's
    /// parts whose value the document fixes.
    pub(super) part_headers: BTreeMap<String, BTreeMap<String, PartHeaders>>,
}

/// The details of every operation, by method and path template; the document's own
/// `security`, for operations not found (a tool from another document).
pub(super) fn read_operations(
    document: &Document,
    resolver: &mut Resolver,
    base_url_given: bool,
) -> (HashMap<(Method, String), OperationDetails>, Option<Requirements>) {
    let root = document.root();
    let root_security = read_requirements(root.get("security"));
    let mut operations = HashMap::new();
    let Some(paths) = root.get("paths").and_then(Value::as_object) else { return (operations, root_security) };
    for (path, raw_item) in paths {
        // A path item that cannot be read makes no tools, so it needs no details.
        let Ok((item_doc, item)) = resolver.resolve_object(DocId::ROOT, raw_item) else { continue };
        for method in METHODS {
            let Some(operation) = item.get(method.path_item_key()) else { continue };
            let server = if base_url_given {
                None
            } else {
                let servers = operation.get("servers").or_else(|| item.get("servers"));
                match first_server(document.origin(), document.url(), servers) {
                    Ok(url) => url.map(Ok),
                    Err(error) => Some(Err(error.to_string())),
                }
            };
            let details = OperationDetails {
                security: read_requirements(operation.get("security")).or_else(|| root_security.clone()),
                server,
                part_headers: read_part_headers(resolver, item_doc, operation),
            };
            operations.insert((method, path.clone()), details);
        }
    }
    (operations, root_security)
}

/// The Encoding Objects' `headers` of the multipart media types of the operation's body.
///
/// A tool's input has no place for part headers, so a header is sent when the document
/// fixes its value: its schema's `const`, a one-value `enum`, or its `default`. Headers
/// whose value is left open are not sent; `Content-Type` is ignored, as the spec says.
fn read_part_headers(
    resolver: &mut Resolver,
    item_doc: DocId,
    operation: &Value,
) -> BTreeMap<String, BTreeMap<String, PartHeaders>> {
    let mut by_media_type = BTreeMap::new();
    let Some(raw_body) = operation.get("requestBody") else { return by_media_type };
    let Ok((body_doc, body)) = resolver.resolve_object(item_doc, raw_body) else { return by_media_type };
    let empty = Map::new();
    let content = body.get("content").and_then(Value::as_object).unwrap_or(&empty);
    for (media_type, media) in content {
        if !essence(media_type).starts_with("multipart/") {
            continue;
        }
        let Some(encodings) = media.get("encoding").and_then(Value::as_object) else { continue };
        let mut by_property = BTreeMap::new();
        for (property, raw_encoding) in encodings {
            let Ok((encoding_doc, encoding)) = resolver.resolve_object(body_doc, raw_encoding) else { continue };
            let Some(headers) = encoding.get("headers").and_then(Value::as_object) else { continue };
            let mut fixed = Vec::new();
            for (name, raw_header) in headers {
                if name.eq_ignore_ascii_case("content-type") {
                    continue;
                }
                let Ok(header_name) = HeaderName::from_bytes(name.as_bytes()) else { continue };
                let Ok((header_doc, header)) = resolver.resolve_object(encoding_doc, raw_header) else { continue };
                if let Some(value) = fixed_header_value(resolver, header_doc, name, &header) {
                    fixed.push((header_name, value));
                }
            }
            if !fixed.is_empty() {
                by_property.insert(property.clone(), fixed);
            }
        }
        if !by_property.is_empty() {
            by_media_type.insert(media_type.clone(), by_property);
        }
    }
    by_media_type
}

/// A Header Object's value when the document fixes it, serialized as the header says:
/// `simple` style with `schema` (OAS 3.1.1 §4.8.21), its media type with `content`.
fn fixed_header_value(resolver: &mut Resolver, doc: DocId, name: &str, header: &Value) -> Option<HeaderValue> {
    let text = if let Some(raw_schema) = header.get("schema") {
        let (_, schema) = resolver.resolve_object(doc, raw_schema).ok()?;
        let value = fixed_value(&schema)?;
        let spec = ParameterSpec {
            explode: header.get("explode").and_then(Value::as_bool),
            ..ParameterSpec::new(name, Location::Header)
        };
        match spec.serialize(&value).ok()? {
            SerializedParameter::Header(text) => text,
            _ => return None,
        }
    } else {
        let (media_type, media) = header.get("content")?.as_object()?.iter().next()?;
        let (_, schema) = resolver.resolve_object(doc, media.get("schema")?).ok()?;
        content_text(&fixed_value(&schema)?, media_type)
    };
    HeaderValue::from_str(&text).ok()
}

fn fixed_value(schema: &Value) -> Option<Value> {
    if let Some(value) = schema.get("const") {
        return Some(value.clone());
    }
    if let Some([value]) = schema.get("enum").and_then(Value::as_array).map(Vec::as_slice) {
        return Some(value.clone());
    }
    schema.get("default").cloned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn security_servers_and_part_headers_per_operation() {
        let document = Document::from_value(
            "/specs/api.json",
            json!({
                "openapi": "3.1.0",
                "security": [{"key": []}],
                "components": {"headers": {"Limit": {"schema": {"type": "integer", "default": 10}}}},
                "paths": {
                    "/open": {"get": {"security": []}, "put": {}},
                    "/upload": {
                        "servers": [{"url": "https://uploads.example.com"}],
                        "post": {"requestBody": {"content": {"multipart/form-data": {
                            "encoding": {"file": {"headers": {
                                "X-Limit": {"$ref": "#/components/headers/Limit"},
                                "X-Kind": {"schema": {"enum": ["photo"]}},
                                "X-Tags": {"schema": {"const": ["a", "b"]}},
                                "X-Note": {"content": {"application/json": {"schema": {"default": {"k": 1}}}}},
                                "X-Open": {"schema": {"type": "string"}},
                                "Content-Type": {"schema": {"const": "text/plain"}}
                            }}}
                        }}}}
                    },
                    "/relative": {"get": {"servers": [{"url": "/v2"}]}}
                }
            }),
        )
        .unwrap();
        let mut resolver = Resolver::new(&document);
        let (operations, root) = read_operations(&document, &mut resolver, false);
        assert_eq!(root, Some(vec![vec!["key".to_owned()]]));
        assert_eq!(operations[&(Method::Get, "/open".to_owned())].security, Some(vec![]));
        assert_eq!(operations[&(Method::Put, "/open".to_owned())].security, root);
        let upload = &operations[&(Method::Post, "/upload".to_owned())];
        assert_eq!(upload.server.as_ref().unwrap().as_ref().unwrap().as_str(), "https://uploads.example.com/");
        let mut headers: Vec<(String, String)> = upload.part_headers["multipart/form-data"]["file"]
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_str().unwrap().to_owned()))
            .collect();
        headers.sort();
        assert_eq!(
            headers,
            [
                ("x-kind".to_owned(), "photo".to_owned()),
                ("x-limit".to_owned(), "10".to_owned()),
                ("x-note".to_owned(), "{\"k\":1}".to_owned()),
                ("x-tags".to_owned(), "a,b".to_owned()),
            ]
        );
        let relative = &operations[&(Method::Get, "/relative".to_owned())];
        assert!(
            relative.server.as_ref().unwrap().as_ref().unwrap_err().contains("`/v2` in /specs/api.json is relative")
        );

        let (operations, _) = read_operations(&document, &mut resolver, true);
        assert!(operations[&(Method::Post, "/upload".to_owned())].server.is_none());
    }
}
