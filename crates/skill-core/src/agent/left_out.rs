//! Input schemas the validator cannot use whole: each part it cannot use is left out, and
//! costs only itself, not its tool.
//!
//! Two kinds of part go:
//! - a keyword the validator refuses when it compiles the schema: a `pattern` that is no
//!   ECMA-262 regex it can translate (Java's `\p{XDigit}`, a look-behind), a `type` that
//!   names no type, a `required` that is no list of names. The validator says where, and
//!   that keyword goes (or, where a schema itself is not one, that schema becomes `true`);
//!   then the schema is compiled again.
//! - a value that contradicts its schema's own `type`: a `const`, or an `enum` none of
//!   whose values has the type (no argument could pass either: the keyword goes), and a
//!   `default`, `examples` or OpenAPI's `example` that has not the type (they check
//!   nothing, but mislead a model that copies them).
//!
//! Every other keyword stays. The tool's description says what goes unchecked where it
//! matters to a caller (not for `default` and examples, which check nothing anyway).

use serde::Serialize;
use serde_json::{Map, Value};

/// A part of a tool's input schema that the agent left out, because its validator cannot
/// use it or it contradicts its own `type`; the tool is registered without it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LeftOutKeyword {
    /// The skill.
    pub skill: String,
    /// The tool's name inside the skill.
    pub tool: String,
    /// The JSON Pointer, in the input schema as the skill gave it, of the schema that held
    /// the keyword (`""` for the top).
    pub location: String,
    /// The keyword (`pattern`), or `schema` when a whole schema was replaced by `true`.
    pub keyword: String,
    /// Why.
    pub reason: String,
}

/// One part left out, before the agent knows whose tool it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LeftOut {
    pub(super) location: String,
    pub(super) keyword: String,
    pub(super) reason: String,
}

impl LeftOut {
    /// Whether leaving it out changes what a call may send (not so for annotations).
    fn matters_to_callers(&self) -> bool {
        !matches!(self.keyword.as_str(), "default" | "examples" | "example")
    }
}

/// A schema compiled, with what was left out of it to compile.
pub(super) struct Compiled {
    pub(super) validator: jsonschema::Validator,
    /// The schema as compiled, when parts were left out; `None` when it compiled whole.
    pub(super) schema: Option<Value>,
    pub(super) left_out: Vec<LeftOut>,
}

/// At most this many parts are left out of one schema before the tool is given up.
const MAX_LEFT_OUT: usize = 200;

/// Compiles `schema` with `compile`, leaving out the parts it cannot use (see the module
/// doc). Fails with the validator's error when one cannot be found or left out.
pub(super) fn compile_leaving_out(
    schema: &Value,
    compile: impl Fn(&Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>>,
) -> Result<Compiled, jsonschema::ValidationError<'static>> {
    let mut left_out = Vec::new();
    let mut repaired = None;
    if has_contradictions(schema) {
        let mut copy = schema.clone();
        leave_out_contradictions(&mut copy, &mut String::new(), &mut left_out);
        repaired = Some(copy);
    }
    loop {
        match compile(repaired.as_ref().unwrap_or(schema)) {
            Ok(validator) => {
                // By place in the schema, whichever found them first.
                left_out.sort_by(|a, b| a.location.cmp(&b.location));
                return Ok(Compiled { validator, schema: repaired, left_out });
            }
            Err(error) => {
                let copy = repaired.get_or_insert_with(|| schema.clone());
                let location = error.instance_path().as_str().to_owned();
                let Some(part) = leave_out_at(copy, &location, &error.to_string()) else { return Err(error) };
                if left_out.len() == MAX_LEFT_OUT || left_out.contains(&part) {
                    return Err(error);
                }
                left_out.push(part);
            }
        }
    }
}

/// The note for a tool's description, when a part left out matters to its callers.
pub(super) fn description_note(left_out: &[LeftOut]) -> Option<String> {
    let parts: Vec<String> = left_out
        .iter()
        .filter(|part| part.matters_to_callers())
        .map(|part| match part.location.as_str() {
            "" => format!("{} at the top", part.keyword),
            location => format!("{} at {location}", part.keyword),
        })
        .collect();
    (!parts.is_empty()).then(|| format!("Not checked (left out of the input schema): {}.", parts.join("; ")))
}

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: [&str; 11] = [
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
];
/// Keywords whose value is a map of schemas.
const SCHEMA_MAP_KEYWORDS: [&str; 5] = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose value is a list of schemas (`items` may be one too, in older drafts).
const SCHEMA_LIST_KEYWORDS: [&str; 4] = ["allOf", "anyOf", "oneOf", "prefixItems"];

/// Leaves out of `schema` the part the validator refused at `location` (a JSON Pointer
/// into the schema): the first keyword on the way that holds no schema, else the schema
/// at the end, replaced by `true`. `None` when the pointer does not lead into the schema.
fn leave_out_at(schema: &mut Value, location: &str, reason: &str) -> Option<LeftOut> {
    if location.is_empty() {
        // The error is the whole schema's (a `$ref` to nothing): nothing less can go.
        return None;
    }
    let tokens: Vec<String> =
        location.split('/').skip(1).map(|token| token.replace("~1", "/").replace("~0", "~")).collect();
    let mut at = schema;
    let mut schema_location = String::new();
    let mut index = 0;
    loop {
        let Some(keyword) = tokens.get(index) else {
            // The pointer ends at a schema that is none (`properties: {a: 5}`).
            *at = Value::Bool(true);
            return Some(LeftOut { location: schema_location, keyword: "schema".into(), reason: reason.to_owned() });
        };
        let object = at.as_object_mut()?;
        let value = object.get(keyword)?;
        let is_list = SCHEMA_LIST_KEYWORDS.contains(&keyword.as_str()) || keyword == "items";
        // How many tokens lead from the keyword to a schema in it: one (its value is a
        // schema) or two (a member of a map or list of schemas).
        let step = if SCHEMA_KEYWORDS.contains(&keyword.as_str()) || (keyword == "items" && !value.is_array()) {
            1
        } else if (SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) && value.is_object())
            || (is_list && value.is_array())
        {
            2
        } else {
            0
        };
        if step == 0 || index + step > tokens.len() {
            object.remove(keyword);
            return Some(LeftOut { location: schema_location, keyword: keyword.clone(), reason: reason.to_owned() });
        }
        schema_location.push('/');
        schema_location.push_str(&escape(keyword));
        let value = object.get_mut(keyword)?;
        at = match (step, value) {
            (1, value) => value,
            (_, Value::Object(members)) => members.get_mut(&tokens[index + 1])?,
            (_, Value::Array(items)) => items.get_mut(tokens[index + 1].parse::<usize>().ok()?)?,
            _ => return None,
        };
        if step == 2 {
            schema_location.push('/');
            schema_location.push_str(&escape(&tokens[index + 1]));
        }
        index += step;
    }
}

fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// The schemas directly inside `schema`, with the pointer tokens that lead to each.
fn subschemas_mut(schema: &mut Map<String, Value>) -> Vec<(String, &mut Value)> {
    let mut found = Vec::new();
    for (keyword, value) in schema.iter_mut() {
        let keyword_token = escape(keyword);
        let is_map = SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str());
        let is_list = SCHEMA_LIST_KEYWORDS.contains(&keyword.as_str()) || keyword == "items";
        if value.is_object() && !is_map && (SCHEMA_KEYWORDS.contains(&keyword.as_str()) || keyword == "items") {
            found.push((format!("/{keyword_token}"), value));
            continue;
        }
        match value {
            Value::Object(members) if is_map => {
                for (name, member) in members.iter_mut() {
                    found.push((format!("/{keyword_token}/{}", escape(name)), member));
                }
            }
            Value::Array(items) if is_list => {
                for (index, item) in items.iter_mut().enumerate() {
                    found.push((format!("/{keyword_token}/{index}"), item));
                }
            }
            _ => {}
        }
    }
    found
}

/// Whether any schema in `schema` has a value that contradicts its `type` (a read-only
/// walk, so a schema without one is never copied).
fn has_contradictions(schema: &Value) -> bool {
    let Value::Object(object) = schema else { return false };
    if contradictions(object).next().is_some() {
        return true;
    }
    object.iter().any(|(keyword, value)| {
        if SCHEMA_KEYWORDS.contains(&keyword.as_str()) || (keyword == "items" && value.is_object()) {
            has_contradictions(value)
        } else if SCHEMA_MAP_KEYWORDS.contains(&keyword.as_str()) {
            value.as_object().is_some_and(|members| members.values().any(has_contradictions))
        } else if SCHEMA_LIST_KEYWORDS.contains(&keyword.as_str()) || keyword == "items" {
            value.as_array().is_some_and(|items| items.iter().any(has_contradictions))
        } else {
            false
        }
    })
}

/// Leaves the contradicting values out of `schema` (at `location`) and every schema in it.
fn leave_out_contradictions(schema: &mut Value, location: &mut String, left_out: &mut Vec<LeftOut>) {
    let Value::Object(object) = schema else { return };
    let found: Vec<(&'static str, String)> = contradictions(object).collect();
    for (keyword, reason) in found {
        object.remove(keyword);
        left_out.push(LeftOut { location: location.clone(), keyword: keyword.to_owned(), reason });
    }
    for (tokens, subschema) in subschemas_mut(object) {
        let length = location.len();
        location.push_str(&tokens);
        leave_out_contradictions(subschema, location, left_out);
        location.truncate(length);
    }
}

/// The keywords of one schema whose values contradict its `type`, with why.
fn contradictions(schema: &Map<String, Value>) -> impl Iterator<Item = (&'static str, String)> + '_ {
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(single)) => vec![single.as_str()],
        Some(Value::Array(several)) => several.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let has_type = move |value: &Value| types.iter().any(|kind| is_of_type(value, kind));
    let type_text = schema.get("type").map(Value::to_string).unwrap_or_default();
    ["const", "enum", "default", "examples", "example"].into_iter().filter_map(move |keyword| {
        if type_text.is_empty() {
            return None;
        }
        let value = schema.get(keyword)?;
        let contradicts = match (keyword, value) {
            ("enum", Value::Array(values)) => !values.is_empty() && !values.iter().any(&has_type),
            ("examples", Value::Array(values)) => values.iter().any(|value| !has_type(value)),
            ("enum" | "examples", _) => false,
            _ => !has_type(value),
        };
        if !contradicts {
            return None;
        }
        let shown = value.to_string();
        let shown = match shown.char_indices().nth(60) {
            Some((cut, _)) => format!("{}…", &shown[..cut]),
            None => shown,
        };
        Some((keyword, format!("{shown} contradicts `type: {type_text}`")))
    })
}

/// Whether `value` is of the JSON Schema type `kind` (an integer is a number with no
/// fraction, `1.0` too); an unknown type name contradicts nothing.
fn is_of_type(value: &Value, kind: &str) -> bool {
    match kind {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => value.as_f64().is_some_and(|number| number.fract() == 0.0),
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn compile(schema: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
        jsonschema::options().build(schema)
    }

    /// What is left out of `schema`, as (location, keyword), and the schema compiled.
    fn check(schema: Value, expect_left_out: &[(&str, &str)], expect_schema: Value) {
        let compiled = compile_leaving_out(&schema, compile).unwrap();
        let left_out: Vec<(&str, &str)> =
            compiled.left_out.iter().map(|part| (part.location.as_str(), part.keyword.as_str())).collect();
        assert_eq!(left_out, expect_left_out, "{:?}", compiled.left_out);
        assert_eq!(compiled.schema.unwrap_or(schema), expect_schema);
    }

    #[test]
    fn a_schema_that_compiles_whole_is_not_copied() {
        let schema =
            json!({"type": "object", "properties": {"id": {"type": "string", "pattern": "^[a-z]+$", "default": "a"}}});
        let compiled = compile_leaving_out(&schema, compile).unwrap();
        assert!(compiled.schema.is_none() && compiled.left_out.is_empty());
    }

    #[test]
    fn keywords_the_validator_refuses_cost_only_themselves() {
        // A Java character class, a pattern that is no string, a media type as `type`.
        check(
            json!({"type": "object", "properties": {
                "colour": {"type": "string", "pattern": "^\\p{XDigit}+$", "maxLength": 6},
                "time": {"type": "string", "pattern": 0},
                "file": {"type": "application/json", "description": "A file."}
            }}),
            &[("/properties/colour", "pattern"), ("/properties/file", "type"), ("/properties/time", "pattern")],
            json!({"type": "object", "properties": {
                "colour": {"type": "string", "maxLength": 6},
                "time": {"type": "string"},
                "file": {"description": "A file."}
            }}),
        );
        // Deep inside `$defs`, `allOf` and `items`; a property that is no schema at all.
        check(
            json!({
                "$defs": {"Tag": {"allOf": [{"items": {"pattern": "\\p{Lu}\\p{XDigit}"}}]}},
                "properties": {"odd": 5, "tags": {"$ref": "#/$defs/Tag"}}
            }),
            &[("/$defs/Tag/allOf/0/items", "pattern"), ("/properties/odd", "schema")],
            json!({
                "$defs": {"Tag": {"allOf": [{"items": {}}]}},
                "properties": {"odd": true, "tags": {"$ref": "#/$defs/Tag"}}
            }),
        );
    }

    #[test]
    fn values_that_contradict_their_type_are_left_out() {
        check(
            json!({"type": "object", "properties": {
                "size": {"type": "integer", "enum": ["1", "2"], "default": "1", "example": 3},
                "state": {"type": "string", "enum": ["open", 1], "default": 0, "examples": ["x", 2]},
                "flag": {"type": ["boolean", "null"], "const": "yes", "default": null},
                "free": {"enum": [1, "a"], "default": {}}
            }}),
            &[
                ("/properties/flag", "const"),
                ("/properties/size", "enum"),
                ("/properties/size", "default"),
                ("/properties/state", "default"),
                ("/properties/state", "examples"),
            ],
            json!({"type": "object", "properties": {
                "size": {"type": "integer", "example": 3},
                "state": {"type": "string", "enum": ["open", 1]},
                "flag": {"type": ["boolean", "null"], "default": null},
                "free": {"enum": [1, "a"], "default": {}}
            }}),
        );
    }

    #[test]
    fn the_note_names_what_callers_are_no_longer_checked_for() {
        let part = |location: &str, keyword: &str| LeftOut {
            location: location.into(),
            keyword: keyword.into(),
            reason: String::new(),
        };
        assert_eq!(
            description_note(&[part("/properties/id", "pattern"), part("/properties/id", "default"), part("", "type")]),
            Some("Not checked (left out of the input schema): pattern at /properties/id; type at the top.".into())
        );
        assert_eq!(description_note(&[part("/properties/id", "example")]), None);
    }

    #[test]
    fn an_error_that_leads_nowhere_keeps_its_tool_out() {
        // A `$ref` to nothing: the validator's error names no keyword that could go.
        let schema = json!({"properties": {"a": {"$ref": "#/$defs/missing"}}});
        let error = compile_leaving_out(&schema, compile).err().unwrap();
        assert_eq!(error.instance_path().as_str(), "", "{error}");
    }
}
