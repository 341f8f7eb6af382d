//! An operation's parameters: each Parameter Object read (its serialization fields, its
//! schema, or its `content` media type), the path item's and the operation's merged by
//! (name, in), OpenAPI 3.2's `in: querystring` rules checked, and each given the name of
//! the input property that carries its value.

use std::collections::{BTreeMap, HashMap};

use serde_json::{Value, json};
use skill_core::shorten_tool_name;

use super::{Method, ToolBuilder};
use crate::Error;
use crate::naming::{MAX_TOOL_NAME_LEN, make_unique};
use crate::reference::DocId;
use crate::serialize::{Location, ParameterSpec, PropertyEncoding, Style};

/// The media type of an `in: querystring` parameter that gives a `schema` instead of the
/// `content` OpenAPI 3.2 requires: the one its text says a query string is.
const FORM_URLENCODED: &str = "application/x-www-form-urlencoded";

/// A parameter read from the document, before its argument name is chosen.
pub(super) struct ReadParameter {
    pub(super) spec: ParameterSpec,
    pub(super) required: bool,
    pub(super) content_type: Option<String>,
    pub(super) encodings: BTreeMap<String, PropertyEncoding>,
    pub(super) schema: Value,
    pub(super) description: Option<String>,
    pub(super) deprecated: bool,
}

impl ToolBuilder {
    /// The parameters of `operation`: the path item's first, then the operation's, which
    /// replace those with the same (name, in) in place; and what their tool will refuse at
    /// call time ([`OperationTool::warnings`](super::OperationTool::warnings)).
    ///
    /// OpenAPI 3.2 allows one `in: querystring` parameter, the whole query string, and then
    /// no `in: query` ones: an operation that has more is refused
    /// ([`Error::QueryStringParameters`]), since no request could carry them all.
    pub(super) fn read_parameters(
        &mut self,
        item_doc: DocId,
        path_item: &Value,
        method: &Method,
        path: &str,
        operation: &Value,
        referenced: &mut Vec<String>,
    ) -> Result<(Vec<ReadParameter>, Vec<Error>), Error> {
        let mut warnings = Vec::new();
        let mut parameters: Vec<ReadParameter> = Vec::new();
        let mut index_by_key: HashMap<(String, Location), usize> = HashMap::new();
        let declared = [path_item.get("parameters"), operation.get("parameters")];
        for list in declared.into_iter().flatten() {
            let Some(list) = list.as_array() else {
                return Err(self.invalid(item_doc, format!("{method} {path}: `parameters` is not an array")));
            };
            for raw in list {
                let Some(parameter) = self.read_parameter(item_doc, method, path, raw, referenced, &mut warnings)?
                else {
                    continue;
                };
                let key_name = match parameter.spec.location {
                    Location::Header => parameter.spec.name.to_ascii_lowercase(),
                    _ => parameter.spec.name.clone(),
                };
                match index_by_key.get(&(key_name.clone(), parameter.spec.location)) {
                    Some(&index) => parameters[index] = parameter,
                    None => {
                        index_by_key.insert((key_name, parameter.spec.location), parameters.len());
                        parameters.push(parameter);
                    }
                }
            }
        }
        if let Some(problem) = query_string_problem(&parameters) {
            let operation_id = operation.get("operationId").and_then(Value::as_str);
            return Err(Error::QueryStringParameters {
                document: self.resolver.origin(item_doc).clone(),
                operation: match operation_id {
                    Some(id) => format!("{method} {path} (`{id}`)"),
                    None => format!("{method} {path}"),
                },
                problem,
            });
        }
        Ok((parameters, warnings))
    }

    /// Reads one Parameter Object; `None` for the headers the spec says to ignore.
    fn read_parameter(
        &mut self,
        item_doc: DocId,
        method: &Method,
        path: &str,
        raw: &Value,
        referenced: &mut Vec<String>,
        warnings: &mut Vec<Error>,
    ) -> Result<Option<ReadParameter>, Error> {
        let (doc, parameter) = self.resolver.resolve_object(item_doc, raw)?;
        let name = parameter.get("name").and_then(Value::as_str);
        let location = parameter.get("in").and_then(Value::as_str);
        let (Some(name), Some(location_name)) = (name, location) else {
            return Err(self.invalid(doc, format!("{method} {path}: a parameter has no `name` or no `in`")));
        };
        let Some(location) = Location::from_name(location_name) else {
            return Err(
                self.invalid(doc, format!("{method} {path}: parameter `{name}` has unknown `in: {location_name}`"))
            );
        };
        if location == Location::Header
            && ["accept", "content-type", "authorization"].contains(&name.to_ascii_lowercase().as_str())
        {
            return Ok(None);
        }
        // A querystring parameter is serialized by its media type alone: the style fields
        // must not be used with it (OpenAPI 3.2), and are not read.
        let style = match parameter.get("style").and_then(Value::as_str).filter(|_| location != Location::QueryString) {
            None => None,
            Some(style_name) => match Style::from_name(style_name) {
                Some(style) => Some(style),
                None => {
                    warnings.push(Error::UnknownStyle { parameter: name.to_owned(), style: style_name.to_owned() });
                    None
                }
            },
        };
        let mut spec = ParameterSpec::new(name, location);
        if location != Location::QueryString {
            spec.style = style;
            spec.explode = parameter.get("explode").and_then(Value::as_bool);
            spec.allow_reserved = parameter.get("allowReserved") == Some(&Value::Bool(true));
        }
        let mut content_type = None;
        let mut encodings = BTreeMap::new();
        let any = json!({});
        let (schema_doc, raw_schema) =
            match (parameter.get("schema"), parameter.get("content").and_then(Value::as_object)) {
                (Some(schema), _) if location == Location::QueryString => {
                    content_type = Some(FORM_URLENCODED.to_owned());
                    (doc, schema.clone())
                }
                (Some(schema), _) => {
                    if let Err(error) = spec.validate() {
                        warnings.push(error);
                    }
                    (doc, schema.clone())
                }
                (None, Some(content)) => match content.iter().next() {
                    Some((media_type, raw_media)) => {
                        content_type = Some(media_type.clone());
                        // OpenAPI 3.2: a Media Type Object may be a `$ref` (to `components.mediaTypes`).
                        let (media_doc, media) = self.resolver.resolve_object(doc, raw_media)?;
                        encodings = self.read_encodings(media_doc, &media)?;
                        (media_doc, media.get("schema").cloned().unwrap_or_else(|| any.clone()))
                    }
                    None => (doc, any.clone()),
                },
                (None, None) => (doc, any.clone()),
            };
        if location == Location::QueryString && content_type.is_none() {
            content_type = Some(FORM_URLENCODED.to_owned());
        }
        let schema = self.catalog.rewrite(&mut self.resolver, schema_doc, &raw_schema, referenced)?;
        Ok(Some(ReadParameter {
            spec,
            required: location == Location::Path || parameter.get("required") == Some(&Value::Bool(true)),
            content_type,
            encodings,
            schema,
            description: parameter.get("description").and_then(Value::as_str).map(str::to_owned),
            deprecated: parameter.get("deprecated") == Some(&Value::Bool(true)),
        }))
    }

    /// The Encoding Objects of a Media Type Object (`media`, in document `doc`), per
    /// property: the fields form-urlencoded and multipart serialization use.
    pub(super) fn read_encodings(
        &mut self,
        doc: DocId,
        media: &Value,
    ) -> Result<BTreeMap<String, PropertyEncoding>, Error> {
        let mut encodings = BTreeMap::new();
        let Some(encoding) = media.get("encoding").and_then(Value::as_object) else { return Ok(encodings) };
        for (property, raw_encoding) in encoding {
            let (_, encoding) = self.resolver.resolve_object(doc, raw_encoding)?;
            encodings.insert(
                property.clone(),
                PropertyEncoding {
                    content_type: encoding.get("contentType").and_then(Value::as_str).map(str::to_owned),
                    style: encoding.get("style").and_then(Value::as_str).and_then(Style::from_name),
                    explode: encoding.get("explode").and_then(Value::as_bool),
                    allow_reserved: encoding.get("allowReserved").and_then(Value::as_bool),
                },
            );
        }
        Ok(encodings)
    }
}

/// What OpenAPI 3.2 does not allow among an operation's merged parameters: more than one
/// `in: querystring` parameter, or one beside `in: query` parameters.
fn query_string_problem(parameters: &[ReadParameter]) -> Option<String> {
    let named = |location: Location| -> Vec<String> {
        parameters
            .iter()
            .filter(|parameter| parameter.spec.location == location)
            .map(|parameter| format!("`{}`", parameter.spec.name))
            .collect()
    };
    let query_strings = named(Location::QueryString);
    match query_strings.as_slice() {
        [] => None,
        [_, _, ..] => Some(format!(
            "it has {} `in: querystring` parameters ({}), and an operation may have one only, the whole query string",
            query_strings.len(),
            query_strings.join(", ")
        )),
        [query_string] => {
            let queries = named(Location::Query);
            (!queries.is_empty()).then(|| {
                format!(
                    "its `in: querystring` parameter {query_string} is the whole query string, so it cannot go with \
                     `in: query` parameters ({})",
                    queries.join(", ")
                )
            })
        }
    }
}

/// The input property of each parameter, then `body` when the operation has a request
/// body: sanitized; a name used twice gets its location added; at most 64 characters, as
/// model APIs require of property names.
pub(super) fn argument_names(parameters: &[ReadParameter], has_body: bool) -> Vec<String> {
    let bases: Vec<String> = parameters.iter().map(|parameter| argument_base(&parameter.spec.name)).collect();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for base in &bases {
        *counts.entry(base).or_default() += 1;
    }
    if has_body {
        *counts.entry("body").or_default() += 1;
    }
    let mut arguments: Vec<String> = bases
        .iter()
        .zip(parameters)
        .map(|(base, parameter)| {
            let argument = match counts[base.as_str()] {
                1 => base.clone(),
                _ => format!("{base}__{}", parameter.spec.location),
            };
            shorten_tool_name(&format!("{}/{}", parameter.spec.location, parameter.spec.name), argument)
        })
        .collect();
    if has_body {
        arguments.push("body".to_owned());
    }
    make_unique(&mut arguments, MAX_TOOL_NAME_LEN);
    arguments
}

/// A parameter's name as an input property: `[A-Za-z0-9_.-]`, as model APIs require.
fn argument_base(name: &str) -> String {
    let sanitized: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if sanitized.is_empty() { "_".to_owned() } else { sanitized }
}
