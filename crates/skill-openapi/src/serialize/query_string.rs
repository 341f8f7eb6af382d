//! OpenAPI 3.2's `in: querystring` parameter: one value that is the whole query string,
//! serialized by its `content` media type.

use std::collections::BTreeMap;

use serde_json::Value;

use super::form_body::encode_form_urlencoded;
use super::percent::Escape;
use super::{PropertyEncoding, ValueKind};
use crate::Error;
use crate::media_type::{content_text, essence};

/// The query string (without its `?`) that carries `value`, the value of the
/// `in: querystring` parameter `name` whose media type is `media_type`; the empty string
/// when there is nothing to send.
///
/// - `application/x-www-form-urlencoded`: the object's properties as form fields, each
///   encoded as its Encoding Object in `encodings` says, exactly as a form-urlencoded
///   request body is ([`encode_form_urlencoded`]): the media type is query-string-ready,
///   so nothing more is encoded (OpenAPI 3.2, Parameter Object Examples:
///   `foo=a+%2B+b&bar=true`).
/// - Any other type: the value's text for that type (JSON text for JSON types, a string as
///   is otherwise), percent-encoded whole, every character but the unreserved ones, as the
///   spec's examples show (`?%7B%22numbers%22%3A%5B1%2C2%5D%7D` for JSON,
///   `?%24.a.b%5B1%3A1%5D` for `application/jsonpath`).
///
/// `null` sends nothing, whatever the media type.
pub fn serialize_query_string(
    name: &str,
    value: &Value,
    media_type: &str,
    encodings: &BTreeMap<String, PropertyEncoding>,
) -> Result<String, Error> {
    if value.is_null() {
        return Ok(String::new());
    }
    if essence(media_type) == "application/x-www-form-urlencoded" {
        if !value.is_object() {
            return Err(Error::QueryStringNotObject { parameter: name.to_owned(), kind: ValueKind::of(value) });
        }
        return encode_form_urlencoded(value, encodings);
    }
    Ok(Escape::Unreserved.apply(&content_text(value, media_type)))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::Style;

    fn check(value: Value, media_type: &str, encodings: &[(&str, PropertyEncoding)], expect: &str) {
        let encodings = encodings.iter().map(|(name, encoding)| (name.to_string(), encoding.clone())).collect();
        assert_eq!(serialize_query_string("q", &value, media_type, &encodings).unwrap(), expect, "{value}");
    }

    #[test]
    fn the_spec_examples() {
        // OpenAPI 3.2.0's querystring examples (Parameter Object Examples), one per media type.
        check(json!({"foo": "a + b", "bar": true}), "application/x-www-form-urlencoded", &[], "foo=a+%2B+b&bar=true");
        check(
            json!({"numbers": [1, 2], "flag": null}),
            "application/json",
            &[],
            "%7B%22numbers%22%3A%5B1%2C2%5D%2C%22flag%22%3Anull%7D",
        );
        check(json!("$.a.b[1:1]"), "application/jsonpath", &[], "%24.a.b%5B1%3A1%5D");
    }

    #[test]
    fn form_fields_keep_the_callers_order_and_their_encoding() {
        let deep = PropertyEncoding { style: Some(Style::DeepObject), ..PropertyEncoding::default() };
        check(
            json!({"term": "red shoes", "filter": {"size": 9, "color": "red"}, "page": 2}),
            "application/x-www-form-urlencoded; charset=utf-8",
            &[("filter", deep)],
            "term=red+shoes&filter%5Bsize%5D=9&filter%5Bcolor%5D=red&page=2",
        );
        check(json!({"tags": ["a", "b"]}), "application/x-www-form-urlencoded", &[], "tags=a&tags=b");
        check(json!({}), "application/x-www-form-urlencoded", &[], "");
        check(Value::Null, "application/json", &[], "");
        check(json!("plain text"), "text/plain", &[], "plain%20text");
    }

    #[test]
    fn a_form_query_string_must_be_an_object() {
        let error =
            serialize_query_string("search", &json!("a=1"), "application/x-www-form-urlencoded", &BTreeMap::new())
                .unwrap_err();
        let kind = ValueKind::Primitive;
        assert!(
            matches!(&error, Error::QueryStringNotObject { parameter, kind: found } if parameter == "search" && *found == kind),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "parameter `search`: a form-urlencoded query string must be a JSON object, one property per field, not a \
             primitive value"
        );
    }
}
