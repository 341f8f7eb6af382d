//! What a body needs from the tool's input schema: the schema of the body and of each of
//! its properties, with `#/$defs/...` refs followed, and what each says about binary data.

use serde_json::Value;

use crate::media_type::to_send;

/// How many refs are followed in a row before giving up (a ref cycle with no schema in it).
const MAX_REF_HOPS: usize = 32;

/// `schema` with its refs into `root` (the input schema) followed; `None` for a ref that
/// points nowhere or a cycle.
pub(super) fn resolve<'s>(root: &'s Value, schema: &'s Value) -> Option<&'s Value> {
    let mut current = schema;
    for _ in 0..MAX_REF_HOPS {
        match current.get("$ref").and_then(Value::as_str) {
            Some(reference) => current = root.pointer(reference.strip_prefix('#')?)?,
            None => return Some(current),
        }
    }
    None
}

/// The input schema's `body` property.
pub(super) fn body_schema(root: &Value) -> Option<&Value> {
    resolve(root, root.pointer("/properties/body")?)
}

/// The schema of an object schema's property: in its `properties`, else in those of the
/// schemas it combines with `allOf`, `anyOf` or `oneOf`.
pub(super) fn property_schema<'s>(root: &'s Value, object: &'s Value, name: &str) -> Option<&'s Value> {
    if let Some(property) = object.get("properties").and_then(|properties| properties.get(name)) {
        return resolve(root, property);
    }
    ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|keyword| object.get(*keyword).and_then(Value::as_array))
        .flatten()
        .filter_map(|member| resolve(root, member))
        .find_map(|member| property_schema(root, member, name))
}

/// The schema of an array schema's items.
pub(super) fn items_schema<'s>(root: &'s Value, array: &'s Value) -> Option<&'s Value> {
    resolve(root, array.get("items")?)
}

/// The schema's `type`: the first one that is not `null` when it lists several.
pub(super) fn schema_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(name) => Some(name),
        Value::Array(names) => names.iter().filter_map(Value::as_str).find(|name| *name != "null"),
        _ => None,
    }
}

/// The schema's `contentEncoding` (OAS 3.1): the value is text in that encoding, sent as is.
pub(super) fn content_encoding(schema: &Value) -> Option<&str> {
    schema.get("contentEncoding").and_then(Value::as_str)
}

/// Raw binary data, as OAS 3.0 writes it (`format: binary`); 3.1 documents converted from
/// 3.0 keep it too.
pub(super) fn is_format_binary(schema: &Value) -> bool {
    schema.get("format").and_then(Value::as_str) == Some("binary")
}

/// The default `contentType` of a multipart part (OAS 3.1.1 §4.8.15.1, with 3.0's
/// `format: binary`): a schema's `contentMediaType` (3.1: the string's bytes are of that
/// type), sent as an explicit type is ([`to_send`]: a wildcard such as `image/*` names no
/// type to send), else strings `text/plain` (`application/octet-stream` when they are binary or
/// have a `contentEncoding`), numbers and booleans `text/plain`, objects and arrays
/// `application/json`. A schema without `type` is `application/octet-stream` in the spec;
/// here that holds for a string value, while an object or array value is sent as JSON and
/// a number or boolean as text, which are the only ways to send those.
pub(super) fn default_part_type(schema: Option<&Value>, value: &Value) -> String {
    const OCTETS: &str = "application/octet-stream";
    const TEXT: &str = "text/plain";
    const JSON: &str = "application/json";
    if let Some(media_type) = schema.and_then(|schema| schema.get("contentMediaType")).and_then(Value::as_str) {
        return to_send(media_type);
    }
    let media_type = match schema.and_then(schema_type) {
        Some("string") => {
            let binary = schema.is_some_and(|schema| is_format_binary(schema) || content_encoding(schema).is_some());
            if binary { OCTETS } else { TEXT }
        }
        Some("number" | "integer" | "boolean") => TEXT,
        Some("object" | "array") => JSON,
        _ => match value {
            Value::String(_) => OCTETS,
            Value::Object(_) | Value::Array(_) => JSON,
            _ => TEXT,
        },
    };
    media_type.to_owned()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn properties_are_found_through_refs_and_combinations() {
        let root = json!({
            "properties": {"body": {"$ref": "#/$defs/Upload"}},
            "$defs": {
                "Upload": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"file": {"type": "string", "format": "binary"}}}]},
                "Base": {"properties": {"name": {"type": ["string", "null"]}, "tags": {"type": "array", "items": {"$ref": "#/$defs/Tag"}}}},
                "Tag": {"type": "object"},
                "Loop": {"$ref": "#/$defs/Loop"}
            }
        });
        let body = body_schema(&root).unwrap();
        let file = property_schema(&root, body, "file").unwrap();
        assert!(is_format_binary(file));
        let name = property_schema(&root, body, "name").unwrap();
        assert_eq!(schema_type(name), Some("string"));
        let tags = property_schema(&root, body, "tags").unwrap();
        assert_eq!(items_schema(&root, tags), Some(&json!({"type": "object"})));
        assert_eq!(property_schema(&root, body, "missing"), None);
        assert_eq!(resolve(&root, &json!({"$ref": "#/$defs/Loop"})), None);
    }

    #[test]
    fn default_part_types_follow_the_spec_table() {
        let check = |schema: Option<Value>, value: Value, expect: &str| {
            assert_eq!(default_part_type(schema.as_ref(), &value), expect, "{schema:?} {value}");
        };
        check(Some(json!({"type": "string"})), json!("a"), "text/plain");
        check(Some(json!({"type": "string", "format": "binary"})), json!("AA=="), "application/octet-stream");
        check(Some(json!({"type": "string", "contentEncoding": "base64"})), json!("AA=="), "application/octet-stream");
        check(Some(json!({"type": "string", "contentMediaType": "image/png"})), json!("AA=="), "image/png");
        check(Some(json!({"contentMediaType": "text/csv"})), json!("a,b"), "text/csv");
        // A wildcard names no type to send, whether it is the default or given.
        check(
            Some(json!({"type": "string", "contentMediaType": "image/*"})),
            json!("AA=="),
            "application/octet-stream",
        );
        check(Some(json!({"contentMediaType": "image/png, image/jpeg"})), json!("AA=="), "image/png");
        check(Some(json!({"type": "integer"})), json!(1), "text/plain");
        check(Some(json!({"type": "object"})), json!({}), "application/json");
        check(Some(json!({"type": "array"})), json!([1]), "application/json");
        check(Some(json!({})), json!("AA=="), "application/octet-stream");
        check(None, json!({"k": 1}), "application/json");
        check(None, json!(true), "text/plain");
    }
}
