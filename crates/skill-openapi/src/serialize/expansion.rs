//! The expansion itself: a JSON value through one style becomes the members that go on
//! the wire (`;color=blue`, `color%5BR%5D=100`, ...).

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

use super::percent::Escape;
use super::{Error, Style};

/// What a value is, as the columns of the style table see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ValueKind {
    /// RFC 6570 §2.3's _undefined_: `null`, an empty array, an empty object, or an array or
    /// object whose members are all `null`. The style table's `undefined` column.
    Undefined,
    /// A string, number or boolean.
    Primitive,
    /// An array with at least one member that is not `null`.
    Array,
    /// An object with at least one property that is not `null`.
    Object,
}

impl ValueKind {
    /// The kind of `value`.
    pub fn of(value: &Value) -> Self {
        match value {
            Value::Null => ValueKind::Undefined,
            Value::Bool(_) | Value::Number(_) | Value::String(_) => ValueKind::Primitive,
            Value::Array(items) if items.iter().all(Value::is_null) => ValueKind::Undefined,
            Value::Array(_) => ValueKind::Array,
            Value::Object(members) if members.values().all(Value::is_null) => ValueKind::Undefined,
            Value::Object(_) => ValueKind::Object,
        }
    }
}

impl fmt::Display for ValueKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            ValueKind::Undefined => "an undefined (null or empty)",
            ValueKind::Primitive => "a primitive",
            ValueKind::Array => "an array",
            ValueKind::Object => "an object",
        })
    }
}

/// A value reduced to the one level RFC 6570 knows, as text; `null` members are dropped,
/// as RFC 6570 §2.3 drops undefined list members and pairs.
enum Shape<'v> {
    Undefined,
    Primitive(Cow<'v, str>),
    Array(Vec<Cow<'v, str>>),
    Object(Vec<(&'v str, Cow<'v, str>)>),
}

impl<'v> Shape<'v> {
    /// The shape of `value`, or the (outer, inner) kinds of a nested array or object.
    fn of(value: &'v Value) -> Result<Self, (ValueKind, ValueKind)> {
        let nested = |outer, member: &Value| match member {
            Value::Array(_) => (outer, ValueKind::Array),
            _ => (outer, ValueKind::Object),
        };
        Ok(match (ValueKind::of(value), value) {
            (ValueKind::Undefined, _) => Shape::Undefined,
            (_, Value::Array(items)) => Shape::Array(
                items
                    .iter()
                    .filter(|item| !item.is_null())
                    .map(|item| scalar_text(item).ok_or_else(|| nested(ValueKind::Array, item)))
                    .collect::<Result<_, _>>()?,
            ),
            (_, Value::Object(members)) => Shape::Object(
                members
                    .iter()
                    .filter(|(_, member)| !member.is_null())
                    .map(|(key, member)| {
                        scalar_text(member)
                            .map(|text| (key.as_str(), text))
                            .ok_or_else(|| nested(ValueKind::Object, member))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            (_, primitive) => Shape::Primitive(scalar_text(primitive).unwrap_or_default()),
        })
    }
}

/// The text of a string, number or boolean. How non-strings become text is left to
/// implementations (OAS 3.1.1 Appendix B); numbers print as JSON prints them (`100`,
/// `1.5`), booleans as `true` and `false`.
fn scalar_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Number(number) => Some(Cow::Owned(number.to_string())),
        Value::Bool(flag) => Some(Cow::Borrowed(if *flag { "true" } else { "false" })),
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// An RFC 6570 operator's expansion rules (RFC 6570 Appendix A), for the four styles that
/// are RFC 6570 expansions (OAS 3.1.1 Appendix C).
struct Operator {
    prefix: &'static str,
    separator: &'static str,
    named: bool,
    if_empty: &'static str,
}

const SIMPLE: Operator = Operator { prefix: "", separator: ",", named: false, if_empty: "" };
const LABEL: Operator = Operator { prefix: ".", separator: ".", named: false, if_empty: "" };
const MATRIX: Operator = Operator { prefix: ";", separator: ";", named: true, if_empty: "" };
/// Form's `?` prefix belongs to the whole query string, not to one parameter: several form
/// parameters are one RFC 6570 variable list, `{?foo*,bar}` (OAS 3.1.1 Appendix C), and a
/// form-urlencoded body has no `?` at all (§4.8.12.4). So members come without it.
const FORM: Operator = Operator { prefix: "", separator: "&", named: true, if_empty: "=" };

impl Operator {
    /// One string value (or one exploded list member) under `name`.
    fn scalar(&self, name: &str, text: String) -> String {
        match (self.named, text.is_empty()) {
            (false, _) => text,
            (true, true) => format!("{name}{}", self.if_empty),
            (true, false) => format!("{name}={text}"),
        }
    }

    /// A list or associative array that is not exploded, already joined with `,`.
    fn joined(&self, name: &str, joined: String) -> String {
        if self.named { format!("{name}={joined}") } else { joined }
    }

    /// One exploded (key, value) pair.
    fn pair(&self, key: String, text: String) -> String {
        if self.named && text.is_empty() { format!("{key}{}", self.if_empty) } else { format!("{key}={text}") }
    }

    fn members(&self, name: &str, shape: &Shape<'_>, explode: bool, escape: Escape) -> Vec<String> {
        match shape {
            Shape::Undefined => vec![self.scalar(name, String::new())],
            Shape::Primitive(text) => vec![self.scalar(name, escape.apply(text))],
            Shape::Array(items) if !explode => {
                let joined = items.iter().map(|item| escape.apply(item)).collect::<Vec<_>>().join(",");
                vec![self.joined(name, joined)]
            }
            Shape::Object(members) if !explode => {
                let joined = members
                    .iter()
                    .flat_map(|(key, text)| [escape.apply(key), escape.apply(text)])
                    .collect::<Vec<_>>()
                    .join(",");
                vec![self.joined(name, joined)]
            }
            Shape::Array(items) => items.iter().map(|item| self.scalar(name, escape.apply(item))).collect(),
            Shape::Object(members) => {
                members.iter().map(|(key, text)| self.pair(escape.apply(key), escape.apply(text))).collect()
            }
        }
    }
}

/// A parameter's serialization: `prefix` then `members` joined by `separator` is its text
/// (a path segment or header value); for query and cookie parameters each member is one
/// `name=value` pair.
pub(crate) struct Expansion {
    prefix: &'static str,
    separator: &'static str,
    pub(crate) members: Vec<String>,
}

impl Expansion {
    pub(crate) fn into_text(self) -> String {
        format!("{}{}", self.prefix, self.members.join(self.separator))
    }
}

/// Serializes `value` as the parameter `name` with an already validated style and explode.
pub(crate) fn expand(
    name: &str,
    style: Style,
    explode: bool,
    escape: Escape,
    value: &Value,
) -> Result<Expansion, Error> {
    let unsupported = |kind| Error::UnsupportedValue { parameter: name.to_owned(), style, kind };
    let kind = ValueKind::of(value);
    let supported = match style {
        Style::Simple | Style::Label | Style::Matrix | Style::Form => true,
        Style::SpaceDelimited | Style::PipeDelimited => matches!(kind, ValueKind::Array | ValueKind::Object),
        Style::DeepObject => true,
    };
    if !supported {
        return Err(unsupported(kind));
    }
    if style == Style::DeepObject && !is_flat_object(value) {
        // The table defines `deepObject` for an object of primitives only: anything else
        // follows the bracket convention (see `bracketed`).
        let mut members = Vec::new();
        bracketed(Escape::Unreserved.apply(name), value, escape, &mut members);
        return Ok(Expansion { prefix: "", separator: "&", members });
    }
    let shape = Shape::of(value).map_err(|(outer, inner)| Error::NestedValue {
        parameter: name.to_owned(),
        style,
        outer,
        inner,
    })?;
    // Names are never reserved-expanded: RFC 6570 variable names cannot hold reserved
    // characters, so a parameter name outside them is percent-encoded (Appendix C,
    // "Illegal Variable Names"). Unreserved characters such as `-` stay as they are, which
    // is the normalized form of the same URI (RFC 3986 §6.2.2.2).
    let escaped_name = Escape::Unreserved.apply(name);
    let rfc6570 = |operator: &Operator| Expansion {
        prefix: operator.prefix,
        separator: operator.separator,
        members: operator.members(&escaped_name, &shape, explode, escape),
    };
    // The delimiters of the non-RFC 6570 styles are percent-encoded (`%20`, `%7C`, `%5B`,
    // `%5D`), as the 3.1.1 table shows and RFC 3986 requires (OAS 3.1.1 Appendix E).
    let delimited = |delimiter: &str| -> Result<Expansion, Error> {
        let texts: Vec<String> = match &shape {
            Shape::Array(items) => items.iter().map(|item| escape.apply(item)).collect(),
            Shape::Object(members) => {
                members.iter().flat_map(|(key, text)| [escape.apply(key), escape.apply(text)]).collect()
            }
            Shape::Undefined | Shape::Primitive(_) => return Err(unsupported(kind)),
        };
        Ok(Expansion { prefix: "", separator: "&", members: vec![format!("{escaped_name}={}", texts.join(delimiter))] })
    };
    match style {
        Style::Simple => Ok(rfc6570(&SIMPLE)),
        Style::Label => Ok(rfc6570(&LABEL)),
        Style::Matrix => Ok(rfc6570(&MATRIX)),
        Style::Form => Ok(rfc6570(&FORM)),
        Style::SpaceDelimited => delimited("%20"),
        Style::PipeDelimited => delimited("%7C"),
        Style::DeepObject => match &shape {
            Shape::Object(members) => Ok(Expansion {
                prefix: "",
                separator: "&",
                members: members
                    .iter()
                    .map(|(key, text)| format!("{escaped_name}%5B{}%5D={}", escape.apply(key), escape.apply(text)))
                    .collect(),
            }),
            Shape::Undefined | Shape::Primitive(_) | Shape::Array(_) => Err(unsupported(kind)),
        },
    }
}

/// Whether `value` is what the style table's `deepObject` cell holds: an object with a
/// property that is not `null`, and none that is an array or an object.
fn is_flat_object(value: &Value) -> bool {
    ValueKind::of(value) == ValueKind::Object
        && value
            .as_object()
            .is_some_and(|members| members.values().all(|member| scalar_text(member).is_some() || member.is_null()))
}

/// `value` under the key `key` (already percent-encoded) by the bracket convention of
/// Rails/Rack, PHP and the npm `qs` parser (which Express uses), the one Stripe documents,
/// for the `deepObject` values the style table leaves undefined:
///
/// - an object's properties as `key[name]`, nested as deep as they go (`a[b][c]=v`);
/// - an array of primitives as `key[]`, once per item (`expand[]=a&expand[]=b`);
/// - any other array (of objects or arrays) by index, from 0 (`items[0][price]=p`);
/// - `null`, and an object or array with nothing in it, as nothing at all;
/// - a primitive as `key=value` (Stripe's documents give `style: deepObject` to fields that
///   may be a string or an object).
///
/// The brackets are percent-encoded (`%5B`, `%5D`), as the table writes them; every one of
/// those parsers decodes a name before it reads its brackets.
fn bracketed(key: String, value: &Value, escape: Escape, members: &mut Vec<String>) {
    match value {
        Value::Null => {}
        Value::Object(properties) => {
            for (name, property) in properties {
                bracketed(format!("{key}%5B{}%5D", escape.apply(name)), property, escape, members);
            }
        }
        Value::Array(items) if items.iter().all(|item| scalar_text(item).is_some() || item.is_null()) => {
            for text in items.iter().filter_map(scalar_text) {
                members.push(format!("{key}%5B%5D={}", escape.apply(&text)));
            }
        }
        Value::Array(items) => {
            // Indexes count the items sent, so that `null`s leave no gaps.
            for (index, item) in items.iter().filter(|item| !item.is_null()).enumerate() {
                bracketed(format!("{key}%5B{index}%5D"), item, escape, members);
            }
        }
        scalar => {
            let text = scalar_text(scalar).unwrap_or_default();
            members.push(format!("{key}={}", escape.apply(&text)));
        }
    }
}
