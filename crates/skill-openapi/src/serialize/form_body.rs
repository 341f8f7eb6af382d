//! `application/x-www-form-urlencoded` request bodies, one field per property, each encoded
//! as its Encoding Object says (OAS 3.1.1 §4.8.15).

use std::collections::BTreeMap;

use serde_json::Value;

use super::percent::form_urlencode;
use super::{Location, ParameterSpec, Style, ValueKind};
use crate::Error;

/// The Encoding Object of one body property, the fields form-urlencoding uses (`headers`
/// apply to multipart bodies only).
///
/// OAS 3.1.1 §4.8.15.1.2: if any of `style`, `explode` or `allowReserved` is present, the
/// property is serialized like a query parameter with those fields (style-based) and
/// `content_type` is ignored; if all three are absent it is serialized by its content type
/// (content-based). So the three are `Option`s: present-but-default is not absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PropertyEncoding {
    /// `contentType`: for content-based serialization, how the value becomes text.
    pub content_type: Option<String>,
    /// `style`, with the query parameter styles and defaults.
    pub style: Option<Style>,
    /// `explode`.
    pub explode: Option<bool>,
    /// `allowReserved`.
    pub allow_reserved: Option<bool>,
}

impl PropertyEncoding {
    /// Whether the property is serialized style-based (RFC 6570), rather than by content.
    pub fn is_style_based(&self) -> bool {
        self.style.is_some() || self.explode.is_some() || self.allow_reserved.is_some()
    }
}

/// Encodes `body`, a JSON object, as an `application/x-www-form-urlencoded` body: its
/// properties in the map's order (the spec leaves the order to implementations), each
/// encoded per its entry in `encodings`, or content-based when it has none.
///
/// The two kinds of property differ in how they encode a space, and both follow the spec:
///
/// - Style-based properties follow the query rules, and RFC 6570 writes a space as `%20`
///   (OAS 3.1.1 Appendix E: RFC 6570 "does not use `+` for form-urlencoded"); only the
///   `?` is dropped (§4.8.12.4). A `+` in the data is encoded as `%2B` either way.
/// - Content-based properties are turned into text by their content type, then encoded per
///   RFC 1866 (§4.8.15.2), which writes a space as `+`. The content type defaults by the
///   value (§4.8.15.1.1): an object is `application/json` (compact JSON text), a primitive
///   `text/plain` (its text, unquoted). With a JSON content type (`application/json` or
///   `*+json`), primitives are JSON too (`"text"`, quoted). Any other content type takes
///   the text as given, which is how binary data arrives (already base64). An array gives
///   one field per member, like the parts of a multipart array (§4.8.15.3); a `null`
///   property or member is left out (Appendix B).
pub fn encode_form_urlencoded(body: &Value, encodings: &BTreeMap<String, PropertyEncoding>) -> Result<String, Error> {
    let Value::Object(properties) = body else {
        return Err(Error::FormBodyNotObject { kind: ValueKind::of(body) });
    };
    let mut fields = Vec::new();
    for (name, value) in properties {
        match encodings.get(name) {
            Some(encoding) if encoding.is_style_based() => {
                let spec = ParameterSpec {
                    name: name.clone(),
                    location: Location::Query,
                    style: encoding.style,
                    explode: encoding.explode,
                    allow_reserved: encoding.allow_reserved.unwrap_or(false),
                };
                fields.extend(spec.expand(value)?.members);
            }
            encoding => {
                let content_type = encoding.and_then(|encoding| encoding.content_type.as_deref());
                let members = match value {
                    Value::Array(items) => items.as_slice(),
                    single => std::slice::from_ref(single),
                };
                for member in members.iter().filter(|member| !member.is_null()) {
                    fields.push(format!(
                        "{}={}",
                        form_urlencode(name),
                        form_urlencode(&content_text(member, content_type))
                    ));
                }
            }
        }
    }
    Ok(fields.join("&"))
}

/// The text of one content-based value.
fn content_text(value: &Value, content_type: Option<&str>) -> String {
    match value {
        Value::String(text) if !content_type.is_some_and(is_json) => text.clone(),
        // Compact JSON text: for objects, arrays and JSON content types, and for numbers and
        // booleans, whose JSON text is also their plain text.
        other => other.to_string(),
    }
}

/// Whether `content_type` (a comma-separated list; the first entry is what is sent) is
/// JSON: `application/json` or a `+json` structured suffix, parameters ignored.
fn is_json(content_type: &str) -> bool {
    let first = content_type.split(',').next().unwrap_or_default();
    let essence = first.split(';').next().unwrap_or_default().trim().to_ascii_lowercase();
    essence == "application/json" || essence.ends_with("+json")
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::{Value, json};

    use super::{PropertyEncoding, encode_form_urlencoded};
    use crate::{Error, Style};

    fn check(body: Value, encodings: &[(&str, PropertyEncoding)], expect: &str) {
        let encodings: BTreeMap<String, PropertyEncoding> =
            encodings.iter().map(|(name, encoding)| (name.to_string(), encoding.clone())).collect();
        let actual = match encode_form_urlencoded(&body, &encodings) {
            Ok(text) => text,
            Err(error) => format!("error: {error}"),
        };
        assert_eq!(actual, expect, "body {body}");
    }

    fn styled(style: Style, explode: Option<bool>) -> PropertyEncoding {
        PropertyEncoding { style: Some(style), explode, ..PropertyEncoding::default() }
    }

    fn content(content_type: &str) -> PropertyEncoding {
        PropertyEncoding { content_type: Some(content_type.to_owned()), ..PropertyEncoding::default() }
    }

    #[test]
    fn content_based_follows_the_spec_examples() {
        // OAS 3.1.1 §4.8.15.2, "URL Encoded Form with JSON Values": the fields and the
        // address's members in the example's order, which is not their names' order.
        check(
            json!({
                "id": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6",
                "address": {"streetAddress": "123 Example Dr.", "city": "Somewhere", "state": "CA", "zip": "99999+1234"},
            }),
            &[],
            "id=f81d4fae-7dec-11d0-a765-00a0c91e6bf6&address=%7B%22streetAddress%22:%22123+Example+Dr.%22,\
             %22city%22:%22Somewhere%22,%22state%22:%22CA%22,%22zip%22:%2299999%2B1234%22%7D",
        );
        // The same example's `id` as `application/json`.
        check(
            json!({"id": "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"}),
            &[("id", content("application/json"))],
            "id=%22f81d4fae-7dec-11d0-a765-00a0c91e6bf6%22",
        );
        // "URL Encoded Form with Binary Values": base64url text, `=` padding encoded.
        let icon = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAABGdBTUEAALGPC_xhBQAAADhlWElmTU0AKgAAAAgAAYdpAAQAAA\
                    ABAAAAGgAAAAAAAqACAAQAAAABAAAAAqADAAQAAAABAAAAAgAAAADO0J6QAAAAEElEQVQIHWP8zwACTGCSAQANHQEDqtPptQAAAABJRU5ErkJggg==";
        check(
            json!({"icon": icon, "name": "example"}),
            &[("icon", content("image/png, image/jpeg"))],
            &format!("icon={}%3D%3D&name=example", icon.trim_end_matches('=')),
        );
    }

    #[test]
    fn content_based_primitives_arrays_and_nulls() {
        check(json!({"n": 1.5, "ok": true, "q": "a b&c=d+e%"}), &[], "n=1.5&ok=true&q=a+b%26c%3Dd%2Be%25");
        check(json!({"tag": ["a b", null, "c"]}), &[], "tag=a+b&tag=c");
        check(json!({"tag": [{"k": 1}, [2]]}), &[], "tag=%7B%22k%22:1%7D&tag=%5B2%5D");
        check(json!({"gone": null, "kept": ""}), &[], "kept=");
        check(json!({"n": 7}), &[("n", content("application/vnd.api+json; charset=utf-8"))], "n=7");
        check(json!({"s": "x"}), &[("s", content("application/vnd.api+json"))], "s=%22x%22");
        check(json!({"s": "x"}), &[("s", content("text/plain"))], "s=x");
        check(json!({"é ü": "ü"}), &[], "%C3%A9+%C3%BC=%C3%BC");
        check(json!({}), &[], "");
    }

    #[test]
    fn style_based_follows_the_query_rules_with_percent_twenty_for_space() {
        check(
            json!({"card": {"exp_month": 12, "number": "4242 4242"}}),
            &[("card", styled(Style::DeepObject, Some(true)))],
            "card%5Bexp_month%5D=12&card%5Bnumber%5D=4242%204242",
        );
        check(json!({"color": ["blue", "black"]}), &[("color", styled(Style::Form, None))], "color=blue&color=black");
        check(json!({"color": ["blue", "black"]}), &[("color", styled(Style::Form, Some(false)))], "color=blue,black");
        check(json!({"color": {"G": 200, "R": 100}}), &[("color", styled(Style::Form, None))], "G=200&R=100");
        check(
            json!({"color": ["a b", "c"]}),
            &[("color", styled(Style::PipeDelimited, Some(false)))],
            "color=a%20b%7Cc",
        );
        // `explode` alone makes it style-based, with the default style `form`.
        check(
            json!({"color": ["blue", "black"]}),
            &[("color", PropertyEncoding { explode: Some(false), ..content("application/json") })],
            "color=blue,black",
        );
        // So does `allowReserved` alone, even when false: present is not absent.
        check(
            json!({"path": "/a b+c"}),
            &[("path", PropertyEncoding { allow_reserved: Some(true), ..PropertyEncoding::default() })],
            "path=/a%20b%2Bc",
        );
        check(
            json!({"path": "/a b"}),
            &[("path", PropertyEncoding { allow_reserved: Some(false), ..PropertyEncoding::default() })],
            "path=%2Fa%20b",
        );
        // Beyond the table, `deepObject` follows the bracket convention (Stripe's bodies).
        check(
            json!({"billing": {"address": {"city": "Paris"}}, "expand": ["customer"], "metadata": {}}),
            &[
                ("billing", styled(Style::DeepObject, Some(true))),
                ("expand", styled(Style::DeepObject, Some(true))),
                ("metadata", styled(Style::DeepObject, Some(true))),
            ],
            "billing%5Baddress%5D%5Bcity%5D=Paris&expand%5B%5D=customer",
        );
        // Mixed: style-based and content-based fields side by side.
        check(
            json!({"meta": {"k": "v w"}, "note": "v w"}),
            &[("meta", styled(Style::DeepObject, None))],
            "meta%5Bk%5D=v%20w&note=v+w",
        );
    }

    #[test]
    fn errors_name_the_property() {
        check(json!(["a"]), &[], "error: a form-urlencoded body must be a JSON object, not an array value");
        check(
            json!(null),
            &[],
            "error: a form-urlencoded body must be a JSON object, not an undefined (null or empty) value",
        );
        check(
            json!({"color": ["a"]}),
            &[("color", styled(Style::Simple, None))],
            "error: parameter `color`: style `simple` is not allowed in query",
        );
        check(
            json!({"card": {"a": 1}}),
            &[("card", styled(Style::DeepObject, Some(false)))],
            "error: parameter `card`: style `deepObject` with explode false is undefined",
        );

        assert!(matches!(
            encode_form_urlencoded(&json!(1), &BTreeMap::new()),
            Err(Error::FormBodyNotObject { kind: crate::ValueKind::Primitive })
        ));
    }
}
