//! Arguments for a tool, made from its input schema alone, as a model would give them:
//! every optional property filled, strings holding reserved characters. What a schema's
//! `pattern` or a combination too subtle for this generator rules out is checked by the
//! schema itself (`jsonschema`), and then the optional properties are left out; a tool
//! whose required arguments cannot be made is reported as such, never called.

use serde_json::{Map, Value, json};

/// A string with characters that mean something in a URL, a form body and a bracketed
/// name, and a non-ASCII one.
pub(crate) const RESERVED_TEXT: &str = "a b&c=d+e/f?g#h[i]%j é";

/// How deep `$ref`s are followed before an optional property is left out.
const MAX_DEPTH: usize = 6;

/// Whether optional properties are filled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    Everything,
    RequiredOnly,
}

/// Arguments for a tool with `input_schema` that the schema accepts: every optional
/// property filled if that gives valid arguments, else the required ones only; `None` when
/// neither does.
pub(crate) fn arguments(input_schema: &Value) -> Option<Value> {
    let validator = jsonschema::validator_for(input_schema).ok()?;
    [Fill::Everything, Fill::RequiredOnly].into_iter().find_map(|fill| {
        let arguments = Generator { root: input_schema, fill }.value(input_schema, 0)?;
        validator.is_valid(&arguments).then_some(arguments)
    })
}

struct Generator<'s> {
    root: &'s Value,
    fill: Fill,
}

impl Generator<'_> {
    fn value(&self, schema: &Value, depth: usize) -> Option<Value> {
        let schema = match schema {
            Value::Bool(true) => return Some(json!(RESERVED_TEXT)),
            Value::Object(schema) => schema,
            _ => return None,
        };
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            if depth >= MAX_DEPTH {
                return None;
            }
            let key = reference.strip_prefix("#/$defs/")?;
            return self.value(self.root.get("$defs")?.get(key)?, depth + 1);
        }
        if let Some(constant) = schema.get("const") {
            return Some(constant.clone());
        }
        if let Some(Value::Array(values)) = schema.get("enum") {
            return values.iter().find(|value| !value.is_null()).or(values.first()).cloned();
        }
        if let Some(Value::Array(members)) = schema.get("allOf") {
            return self.all_of(schema, members, depth);
        }
        for keyword in ["oneOf", "anyOf"] {
            if let Some(Value::Array(members)) = schema.get(keyword) {
                return members.iter().find_map(|member| self.value(member, depth));
            }
        }
        let kind = match schema.get("type") {
            Some(Value::String(kind)) => kind.as_str(),
            Some(Value::Array(kinds)) => kinds.iter().filter_map(Value::as_str).find(|kind| *kind != "null")?,
            _ if schema.contains_key("properties") || schema.contains_key("additionalProperties") => "object",
            _ if schema.contains_key("items") => "array",
            _ => "string",
        };
        match kind {
            "object" => self.object(schema, depth),
            "array" => self.array(schema, depth),
            "integer" => Some(json!(number(schema, true))),
            "number" => Some(number(schema, false)),
            "boolean" => Some(json!(true)),
            "null" => Some(Value::Null),
            _ => Some(json!(string(schema))),
        }
    }

    fn all_of(&self, schema: &Map<String, Value>, members: &[Value], depth: usize) -> Option<Value> {
        let mut merged = Map::new();
        let mut own = schema.clone();
        own.remove("allOf");
        for member in members.iter().chain(std::iter::once(&Value::Object(own))) {
            match self.value(member, depth)? {
                Value::Object(properties) => merged.extend(properties),
                other if members.len() == 1 => return Some(other),
                _ => {}
            }
        }
        Some(Value::Object(merged))
    }

    fn object(&self, schema: &Map<String, Value>, depth: usize) -> Option<Value> {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut object = Map::new();
        if let Some(Value::Object(properties)) = schema.get("properties") {
            for (name, property) in properties {
                let needed = required.contains(&name.as_str());
                if !needed && self.fill == Fill::RequiredOnly {
                    continue;
                }
                match self.value(property, depth) {
                    Some(value) => {
                        object.insert(name.clone(), value);
                    }
                    None if needed => return None,
                    None => {}
                }
            }
        } else if let Some(additional @ (Value::Object(_) | Value::Bool(true))) = schema.get("additionalProperties")
            && self.fill == Fill::Everything
        {
            // A map, as Stripe's `metadata`: one entry.
            object.insert("key".into(), self.value(additional, depth)?);
        }
        Some(Value::Object(object))
    }

    fn array(&self, schema: &Map<String, Value>, depth: usize) -> Option<Value> {
        let items = schema.get("items").unwrap_or(&Value::Bool(true));
        let count = schema.get("minItems").and_then(Value::as_u64).unwrap_or(1).max(1);
        let item = self.value(items, depth)?;
        Some(Value::Array(vec![item; usize::try_from(count).ok()?]))
    }
}

fn number(schema: &Map<String, Value>, integer: bool) -> Value {
    let bound = |keyword| schema.get(keyword).and_then(Value::as_f64);
    let mut value = bound("minimum").or_else(|| bound("exclusiveMinimum").map(|low| low + 1.0)).unwrap_or(1.0);
    if let Some(high) = bound("maximum").or_else(|| bound("exclusiveMaximum").map(|high| high - 1.0))
        && value > high
    {
        value = high;
    }
    if let Some(step) = bound("multipleOf").filter(|step| *step > 0.0) {
        value = (value / step).ceil() * step;
    }
    if integer {
        json!(value.ceil() as i64)
    } else if value.fract() == 0.0 {
        json!(value + 0.5)
    } else {
        json!(value)
    }
}

fn string(schema: &Map<String, Value>) -> String {
    let format = schema.get("format").and_then(Value::as_str).unwrap_or_default();
    let mut text = match format {
        "date-time" => "2024-01-02T03:04:05Z".to_owned(),
        "date" => "2024-01-02".to_owned(),
        "time" => "03:04:05Z".to_owned(),
        "email" => "someone@example.com".to_owned(),
        "uri" | "url" | "uri-reference" | "iri" => "https://example.com/a?b=c&d=e".to_owned(),
        "uuid" => "123e4567-e89b-12d3-a456-426614174000".to_owned(),
        "ipv4" => "127.0.0.1".to_owned(),
        "ipv6" => "::1".to_owned(),
        "hostname" => "example.com".to_owned(),
        "binary" | "byte" => "aGVsbG8=".to_owned(),
        _ if schema.contains_key("contentEncoding") => "aGVsbG8=".to_owned(),
        _ => RESERVED_TEXT.to_owned(),
    };
    let length = |keyword| schema.get(keyword).and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    if let Some(max) = length("maxLength") {
        text = text.chars().take(max).collect();
    }
    if let Some(min) = length("minLength") {
        while text.chars().count() < min {
            text.push('x');
        }
    }
    text
}

/// `value` as a query-string parser that knows no types reads it back: `null`s and empty
/// objects and arrays gone (nothing is sent for them), numbers and booleans as their text.
pub(crate) fn as_parsed(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Bool(flag) => Some(json!(flag.to_string())),
        Value::Number(number) => Some(json!(number.to_string())),
        Value::String(_) => Some(value.clone()),
        Value::Array(items) => {
            let items: Vec<Value> = items.iter().filter_map(as_parsed).collect();
            (!items.is_empty()).then_some(Value::Array(items))
        }
        Value::Object(members) => {
            let members: Map<String, Value> =
                members.iter().filter_map(|(key, member)| Some((key.clone(), as_parsed(member)?))).collect();
            (!members.is_empty()).then_some(Value::Object(members))
        }
    }
}
