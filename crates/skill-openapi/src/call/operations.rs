//! What the document says about an operation beyond its tool's input: the security it
//! requires, the server it names instead of the document's, and the fixed headers of its
//! multipart parts. Read with the tool ([`Document::tools`](crate::Document::tools)) and
//! carried on it, so that a call needs nothing else from the document.

use std::collections::BTreeMap;
use std::fmt;

use reqwest::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use url::Url;

use super::auth::Requirements;
use super::server::first_server;
use crate::document::DocumentOrigin;
use crate::media_type::content_text;
use crate::reference::{DocId, Resolver};
use crate::serialize::{Location, ParameterSpec, SerializedParameter};
use skill_core::redact::url as redacted;

/// Headers for the parts of one property of a multipart body.
pub(crate) type PartHeaders = Vec<(HeaderName, HeaderValue)>;

/// One operation's details.
#[derive(Clone)]
pub(crate) struct OperationDetails {
    /// Its effective `security`: the operation's, else the document's.
    pub(crate) security: Option<Requirements>,
    /// The first of its own (or its path item's) `servers`, when it has some; the error's
    /// message when that server cannot be used. A base URL given for the calls wins over it.
    pub(crate) server: Option<Result<Url, String>>,
    /// For a multipart request body, the headers of each property's parts whose value the
    /// document fixes.
    pub(crate) part_headers: BTreeMap<String, PartHeaders>,
}

/// The server redacted: a relative server URL takes the user info of the spec's URL.
impl fmt::Debug for OperationDetails {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let server = self.server.as_ref().map(|server| server.as_ref().map(|url| redacted(url).to_string()));
        formatter
            .debug_struct("OperationDetails")
            .field("security", &self.security)
            .field("server", &server)
            .field("part_headers", &self.part_headers)
            .finish()
    }
}

/// The server an operation names: the first of its `servers`, else of its path item's.
pub(crate) fn operation_server(
    document: &DocumentOrigin,
    document_url: Option<&Url>,
    path_item: &Value,
    operation: &Value,
) -> Option<Result<Url, String>> {
    let servers = operation.get("servers").or_else(|| path_item.get("servers"));
    first_server(document, document_url, servers).map_or_else(|error| Some(Err(error.to_string())), |url| url.map(Ok))
}

/// The Encoding Object's `headers` of a multipart Media Object (`media`, in document `doc`).
///
/// A tool's input has no place for part headers, so a header is sent when the document
/// fixes its value: its schema's `const`, a one-value `enum`, or its `default`. Headers
/// whose value is left open are not sent; `Content-Type` is ignored, as the spec says.
pub(crate) fn read_part_headers(resolver: &mut Resolver, doc: DocId, media: &Value) -> BTreeMap<String, PartHeaders> {
    let mut by_property = BTreeMap::new();
    let empty = Map::new();
    let encodings = media.get("encoding").and_then(Value::as_object).unwrap_or(&empty);
    for (property, raw_encoding) in encodings {
        let Ok((encoding_doc, encoding)) = resolver.resolve_object(doc, raw_encoding) else { continue };
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
    by_property
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

    use super::OperationDetails;
    use crate::{Document, Method, OperationFilter, OperationTool};

    fn tools_of(root: serde_json::Value) -> Vec<OperationTool> {
        let document = Document::from_value("/specs/api.json", root).unwrap();
        let set = document.tools(&OperationFilter::default()).unwrap();
        assert!(set.skipped.is_empty(), "{:?}", set.skipped);
        set.tools
    }

    fn details<'t>(tools: &'t [OperationTool], method: Method, path: &str) -> &'t OperationDetails {
        &tools.iter().find(|tool| tool.method == method && tool.path == path).unwrap().details
    }

    #[test]
    fn security_servers_and_part_headers_per_operation() {
        let tools = tools_of(json!({
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
        }));
        let root = Some(vec![vec!["key".to_owned()]]);
        assert_eq!(details(&tools, Method::Get, "/open").security, Some(vec![]));
        assert_eq!(details(&tools, Method::Put, "/open").security, root);
        assert!(details(&tools, Method::Put, "/open").server.is_none());
        let upload = details(&tools, Method::Post, "/upload");
        assert_eq!(upload.security, root);
        assert_eq!(upload.server.as_ref().unwrap().as_ref().unwrap().as_str(), "https://uploads.example.com/");
        let mut headers: Vec<(String, String)> = upload.part_headers["file"]
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
        let relative = details(&tools, Method::Get, "/relative");
        assert!(
            relative.server.as_ref().unwrap().as_ref().unwrap_err().contains("`/v2` in /specs/api.json is relative")
        );
    }
}
