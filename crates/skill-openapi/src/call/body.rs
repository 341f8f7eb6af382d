//! Request bodies: the tool's `body` argument sent as the operation's media type says.
//!
//! - JSON: the value's JSON text.
//! - JSON sequences (OpenAPI 3.2's sequential media types): an array's items, each as its
//!   JSON text and a line feed, after a record separator for `application/json-seq`
//!   (RFC 7464); any other value is sent as the one item.
//! - `application/x-www-form-urlencoded`: [`encode_form_urlencoded`] with the Encoding
//!   Object.
//! - `multipart/*`: one part per property, an array giving one part per item (RFC 7578
//!   §4.3). A property with `style`, `explode` or `allowReserved` in its Encoding Object
//!   (in an OpenAPI 3.0 document, `style: deepObject` only: the others were dropped when
//!   the tool was built) is serialized as a query parameter would be, each `name=value` pair becoming a part
//!   with that name and the value, percent-decoded, as its body (OAS 3.1.1 Appendix C).
//!   Any other property is sent by its content type: the Encoding Object's `contentType`
//!   (its first entry), else the default for its schema ([`default_part_type`]); text and
//!   JSON as text, binary types from [`read_binary`] with a file name (a string that is
//!   neither base64 nor a file, for a part whose schema does not declare binary data, as
//!   text). A schema with
//!   `contentEncoding` holds text already encoded, sent as is with that
//!   `Content-Transfer-Encoding` (§4.8.15.4). Headers of the Encoding Object whose value
//!   the document fixes go with every part of their property. The parts are built with
//!   `reqwest`'s multipart form and sent as one buffered body, so that middleware (an
//!   AAuth signer computing a `Content-Digest`, a retry) can read it.
//! - `text/*`: a string as is.
//! - Anything else: text when the media type is textual (`application/xml`), a string as
//!   is when the schema has a `contentEncoding`, an object or array as its JSON text, else
//!   bytes from [`read_binary`].
//!
//! [`default_part_type`]: super::schema::default_part_type

use futures_util::StreamExt;
use percent_encoding::percent_decode_str;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::multipart::{Form, Part};
use serde_json::{Map, Value};
use skill_core::ToolError;

use super::binary::{Uploads, read_binary};
use super::schema::{
    body_schema, content_encoding, default_part_type, is_format_binary, items_schema, property_schema,
};
use crate::media_type::{content_text, essence, is_record_separated, is_textual, to_send};
use crate::operation::{BodyKind, OperationTool, RequestBody};
use crate::serialize::{
    Location, ParameterSpec, PropertyEncoding, SerializedParameter, ValueKind, encode_form_urlencoded,
};

/// A request body ready to send.
#[derive(Debug)]
pub(super) struct Body {
    pub(super) content_type: HeaderValue,
    pub(super) bytes: Vec<u8>,
}

/// The body of a call, `None` when the operation has none or the optional `body`
/// argument is absent (or `null`).
pub(super) async fn build_body(
    tool: &OperationTool,
    arguments: &Map<String, Value>,
    uploads: Uploads<'_>,
) -> Result<Option<Body>, ToolError> {
    let Some(request_body) = &tool.request_body else { return Ok(None) };
    let value = match arguments.get("body") {
        None | Some(Value::Null) if request_body.required => {
            return Err(invalid(tool, vec!["/body: the request body is required".to_owned()]));
        }
        None | Some(Value::Null) => return Ok(None),
        Some(value) => value,
    };
    let media_type = request_body.media_type.as_str();
    let (content_type, bytes) = match request_body.kind {
        BodyKind::Json => (media_type.to_owned(), value.to_string().into_bytes()),
        BodyKind::JsonSequence => (media_type.to_owned(), json_sequence(value, is_record_separated(media_type))),
        BodyKind::FormUrlEncoded => {
            let text = encode_form_urlencoded(value, &request_body.encodings)
                .map_err(|error| invalid(tool, vec![format!("/body: {error}")]))?;
            (media_type.to_owned(), text.into_bytes())
        }
        BodyKind::Text => (media_type.to_owned(), content_text(value, media_type).into_bytes()),
        BodyKind::Multipart => {
            return multipart(tool, request_body, value, uploads).await.map(Some);
        }
        BodyKind::Binary => {
            let encoded = body_schema(&tool.input_schema).and_then(content_encoding).is_some();
            let bytes = if is_textual(media_type) || encoded {
                content_text(value, "text/plain").into_bytes()
            } else if !value.is_string() {
                // A schema that asks for an object (Azure HDInsight's `application/text`
                // bodies are `type: object`) gets its JSON text: no binary data is a JSON
                // object or array.
                value.to_string().into_bytes()
            } else {
                read_binary(value, uploads)
                    .await
                    .map_err(|problem| invalid(tool, vec![format!("/body: {problem}")]))?
                    .bytes
            };
            (to_send(media_type), bytes)
        }
    };
    Ok(Some(Body { content_type: header_value(tool, &content_type)?, bytes }))
}

/// A JSON sequence of an array's items (a value that is not an array is the one item):
/// each item's JSON text and a line feed, as JSON Lines writes them, and for RFC 7464
/// after a record separator (`0x1E`).
fn json_sequence(value: &Value, record_separated: bool) -> Vec<u8> {
    let mut bytes = Vec::new();
    for item in value.as_array().map_or_else(|| std::slice::from_ref(value), Vec::as_slice) {
        if record_separated {
            bytes.push(0x1E);
        }
        bytes.extend(item.to_string().into_bytes());
        bytes.push(b'\n');
    }
    bytes
}

async fn multipart(
    tool: &OperationTool,
    request_body: &RequestBody,
    value: &Value,
    uploads: Uploads<'_>,
) -> Result<Body, ToolError> {
    let Value::Object(properties) = value else {
        let problem = format!(
            "/body: a multipart body must be a JSON object, one property per part, not {}",
            ValueKind::of(value)
        );
        return Err(invalid(tool, vec![problem]));
    };
    let root = &tool.input_schema;
    let object_schema = body_schema(root);
    let mut form = Form::new();
    let mut problems = Vec::new();
    for (name, property) in properties {
        let encoding = request_body.encodings.get(name);
        let fixed_headers = tool.details.part_headers.get(name).map_or(&[][..], Vec::as_slice);
        if let Some(encoding) = encoding.filter(|encoding| encoding.is_style_based()) {
            match style_based_parts(name, encoding, property) {
                Ok(parts) => {
                    for (part_name, text) in parts {
                        form = form.part(part_name, with_headers(Part::text(text), fixed_headers, None));
                    }
                }
                Err(problem) => problems.push(format!("/body/{name}: {problem}")),
            }
            continue;
        }
        let schema = object_schema.and_then(|object| property_schema(root, object, name));
        let items: Vec<(&Value, Option<&Value>)> = match property {
            Value::Array(items) => {
                let item_schema = schema.and_then(|schema| items_schema(root, schema));
                items.iter().map(|item| (item, item_schema)).collect()
            }
            single => vec![(single, schema)],
        };
        for (item, item_schema) in items.into_iter().filter(|(item, _)| !item.is_null()) {
            let explicit = encoding.and_then(|encoding| encoding.content_type.as_deref());
            match content_part(name, item, item_schema, explicit, uploads).await {
                Ok(part) => {
                    let encoded = item_schema.and_then(content_encoding);
                    form = form.part(name.clone(), with_headers(part, fixed_headers, encoded));
                }
                Err(problem) => problems.push(format!("/body/{name}: {problem}")),
            }
        }
    }
    if !problems.is_empty() {
        return Err(invalid(tool, problems));
    }
    let content_type = format!("{}; boundary={}", essence(&request_body.media_type), form.boundary());
    let mut stream = std::pin::pin!(form.into_stream());
    let mut bytes = Vec::new();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|error| ToolError::failed(format!("`{}`: the multipart body: {error}", tool.name)))?;
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body { content_type: header_value(tool, &content_type)?, bytes })
}

/// The parts of a style-based property: its query-style `name=value` pairs, decoded.
fn style_based_parts(name: &str, encoding: &PropertyEncoding, value: &Value) -> Result<Vec<(String, String)>, String> {
    let spec = ParameterSpec {
        name: name.to_owned(),
        location: Location::Query,
        style: encoding.style,
        explode: encoding.explode,
        allow_reserved: encoding.allow_reserved.unwrap_or(false),
    };
    let members = match spec.serialize(value).map_err(|error| error.to_string())? {
        SerializedParameter::Query(members) => members,
        other => return Err(format!("unexpected serialization {other:?}")),
    };
    let decode = |text: &str| percent_decode_str(text).decode_utf8_lossy().into_owned();
    Ok(members
        .iter()
        .map(|member| {
            let (part_name, part_value) = member.split_once('=').unwrap_or((member, ""));
            (decode(part_name), decode(part_value))
        })
        .collect())
}

/// One content-based part.
async fn content_part(
    name: &str,
    value: &Value,
    schema: Option<&Value>,
    explicit_type: Option<&str>,
    uploads: Uploads<'_>,
) -> Result<Part, String> {
    let content_type = explicit_type.map_or_else(|| default_part_type(schema, value), to_send);
    let with_type =
        |part: Part| part.mime_str(&content_type).map_err(|_| format!("`{content_type}` is not a media type"));
    if schema.and_then(content_encoding).is_some() {
        // Already encoded text (`contentEncoding`): sent as is.
        return with_type(Part::text(content_text(value, "text/plain")));
    }
    if is_textual(&content_type) {
        let part = Part::text(content_text(value, &content_type));
        // `text/plain` is a part's default (RFC 7578 §4.4): sent without a header, as
        // browsers send text fields, unless the document names it.
        return if explicit_type.is_none() && content_type == "text/plain" { Ok(part) } else { with_type(part) };
    }
    let data = match read_binary(value, uploads).await {
        Ok(data) => data,
        // A part whose schema does not say it is binary (no type at all, or a choice between
        // a file and a string, as Telegram's `photo`) is binary only by the default of a
        // value without a type: text that is neither base64 nor a file is sent as text.
        Err(_) if explicit_type.is_none() && !schema.is_some_and(declares_binary) && value.is_string() => {
            return Ok(Part::text(content_text(value, "text/plain")));
        }
        Err(problem) => return Err(problem),
    };
    let file_name = data.file_name.unwrap_or_else(|| name.to_owned());
    with_type(Part::bytes(data.bytes).file_name(file_name))
}

/// Whether a part's schema says its string is binary data: `format: binary` or `byte`, a
/// `contentEncoding` or a `contentMediaType`.
fn declares_binary(schema: &Value) -> bool {
    is_format_binary(schema)
        || schema.get("format").and_then(Value::as_str) == Some("byte")
        || content_encoding(schema).is_some()
        || schema.get("contentMediaType").is_some()
}

/// `part` with the headers the document fixes, and the `Content-Transfer-Encoding` its
/// schema's `contentEncoding` stands for (unless the document gives one).
fn with_headers(part: Part, fixed: &[(HeaderName, HeaderValue)], content_encoding: Option<&str>) -> Part {
    let mut headers = HeaderMap::new();
    for (name, value) in fixed {
        headers.append(name.clone(), value.clone());
    }
    let transfer_encoding = HeaderName::from_static("content-transfer-encoding");
    if let Some(encoding) = content_encoding.and_then(|encoding| HeaderValue::from_str(encoding).ok())
        && !headers.contains_key(&transfer_encoding)
    {
        headers.insert(transfer_encoding, encoding);
    }
    if headers.is_empty() { part } else { part.headers(headers) }
}

fn header_value(tool: &OperationTool, content_type: &str) -> Result<HeaderValue, ToolError> {
    HeaderValue::from_str(content_type).map_err(|_| {
        ToolError::failed(format!("`{}`: the media type `{content_type}` cannot be a Content-Type header", tool.name))
    })
}

fn invalid(tool: &OperationTool, problems: Vec<String>) -> ToolError {
    ToolError::InvalidArguments { tool: tool.name.clone(), problems }
}
