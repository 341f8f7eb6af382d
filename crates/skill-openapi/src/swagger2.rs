//! Swagger 2.0 documents, converted to OpenAPI 3.0 before anything else reads them, as
//! the 2.0 specification defines each part:
//!
//! - `host`, `basePath` and `schemes` become `servers` (one per scheme; without `schemes`,
//!   the scheme of the document's URL, else `https`); without `host`, `basePath` alone is a
//!   relative server, resolved as any other.
//! - `in: body` becomes the `requestBody`, with one media type per `consumes`; `in:
//!   formData` parameters become the properties of a form body (`multipart/form-data`
//!   when `consumes` says so or a parameter is a `file`, else
//!   `application/x-www-form-urlencoded`), their `collectionFormat` as its `encoding`.
//! - `collectionFormat` becomes `style` and `explode`: `csv` `form` (query, cookie) or
//!   `simple` (path, header) unexploded, `ssv` `spaceDelimited`, `pipes` `pipeDelimited`,
//!   `multi` `form` exploded; `tsv` has no OpenAPI 3 style, and is kept as `tabDelimited`,
//!   which a call refuses, naming the parameter.
//! - a response's `schema` gets one media type per `produces`; `definitions`, `parameters`,
//!   `responses` and `securityDefinitions` move under `components` (`basic` as `http`
//!   basic, `oauth2` as its one flow), and every `$ref` into them follows. A schema's
//!   `type: file` becomes a binary string, `x-nullable` `nullable`.

use serde_json::{Map, Value, json};
use url::Url;

use crate::Error;
use crate::document::DocumentOrigin;

/// The path item keys that are operations in Swagger 2.0.
const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];

/// The OpenAPI 3.0 document that says what the Swagger 2.0 document `root` says.
pub(crate) fn convert(origin: &DocumentOrigin, root: Map<String, Value>) -> Result<Value, Error> {
    let invalid = |reason: String| Error::InvalidDocument { document: origin.clone(), reason };
    let consumes = media_types(root.get("consumes"));
    let produces = media_types(root.get("produces"));
    let shared_parameters = root.get("parameters").and_then(Value::as_object).cloned().unwrap_or_default();
    let converter = Converter { consumes, produces, shared_parameters };

    let mut out = Map::new();
    out.insert("openapi".into(), json!("3.0.3"));
    for (key, value) in &root {
        if matches!(key.as_str(), "info" | "tags" | "externalDocs" | "security") || key.starts_with("x-") {
            out.insert(key.clone(), rewrite_refs(value.clone()));
        }
    }
    let servers = servers(origin, &root);
    if !servers.is_empty() {
        out.insert("servers".into(), Value::Array(servers));
    }

    let mut components = Map::new();
    if let Some(Value::Object(definitions)) = root.get("definitions") {
        let schemas = definitions.iter().map(|(name, schema)| (name.clone(), convert_schema(schema))).collect();
        components.insert("schemas".into(), Value::Object(schemas));
    }
    let parameters: Map<String, Value> = converter
        .shared_parameters
        .iter()
        .filter(|(_, parameter)| !is_body_or_form(parameter))
        .map(|(name, parameter)| (name.clone(), convert_parameter(parameter)))
        .collect();
    if !parameters.is_empty() {
        components.insert("parameters".into(), Value::Object(parameters));
    }
    if let Some(Value::Object(responses)) = root.get("responses") {
        let responses = responses
            .iter()
            .map(|(name, response)| (name.clone(), converter.convert_response(response, &converter.produces)))
            .collect();
        components.insert("responses".into(), Value::Object(responses));
    }
    if let Some(Value::Object(schemes)) = root.get("securityDefinitions") {
        let schemes = schemes.iter().map(|(name, scheme)| (name.clone(), convert_security_scheme(scheme))).collect();
        components.insert("securitySchemes".into(), Value::Object(schemes));
    }
    if !components.is_empty() {
        out.insert("components".into(), Value::Object(components));
    }

    match root.get("paths") {
        None => {}
        Some(Value::Object(paths)) => {
            let mut converted = Map::with_capacity(paths.len());
            for (path, item) in paths {
                let item = match item {
                    Value::Object(item) => Value::Object(converter.convert_path_item(item)),
                    other => rewrite_refs(other.clone()),
                };
                converted.insert(path.clone(), item);
            }
            out.insert("paths".into(), Value::Object(converted));
        }
        Some(_) => return Err(invalid("`paths` is not an object".into())),
    }
    Ok(Value::Object(out))
}

/// `servers` from `host`, `basePath` and `schemes`.
fn servers(origin: &DocumentOrigin, root: &Map<String, Value>) -> Vec<Value> {
    let base_path = root.get("basePath").and_then(Value::as_str).unwrap_or("");
    let base_path = base_path.trim_end_matches('/');
    let Some(host) = root.get("host").and_then(Value::as_str).filter(|host| !host.is_empty()) else {
        return if base_path.is_empty() { Vec::new() } else { vec![json!({"url": base_path})] };
    };
    let mut schemes: Vec<&str> =
        media_types(root.get("schemes")).into_iter().filter(|scheme| !scheme.is_empty()).collect();
    if schemes.is_empty() {
        schemes.push(origin.url().map_or("https", Url::scheme));
    }
    schemes.into_iter().map(|scheme| json!({"url": format!("{scheme}://{host}{base_path}")})).collect()
}

/// The strings of a list (`consumes`, `produces`, `schemes`).
fn media_types(value: Option<&Value>) -> Vec<&str> {
    value.and_then(Value::as_array).map_or_else(Vec::new, |items| items.iter().filter_map(Value::as_str).collect())
}

fn is_body_or_form(parameter: &Value) -> bool {
    matches!(parameter.get("in").and_then(Value::as_str), Some("body" | "formData"))
}

struct Converter<'a> {
    consumes: Vec<&'a str>,
    produces: Vec<&'a str>,
    /// The document's `parameters`, which `$ref`s of operations may name.
    shared_parameters: Map<String, Value>,
}

impl Converter<'_> {
    /// The `parameters` that stay parameters in 3.0 (body and form ones become the
    /// request body), converted; `None` when none do.
    fn kept_parameters(&self, parameters: &[Value]) -> Option<Value> {
        let kept: Vec<Value> = parameters
            .iter()
            .filter(|parameter| !is_body_or_form(self.resolve(parameter)))
            .map(|parameter| self.convert_parameter_or_ref(parameter))
            .collect();
        (!kept.is_empty()).then_some(Value::Array(kept))
    }

    fn convert_path_item(&self, item: &Map<String, Value>) -> Map<String, Value> {
        let path_parameters = item.get("parameters").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        let mut out = Map::new();
        for (key, value) in item {
            match (key.as_str(), value) {
                ("parameters", _) => {
                    if let Some(kept) = self.kept_parameters(path_parameters) {
                        out.insert(key.clone(), kept);
                    }
                }
                (method, Value::Object(operation)) if METHODS.contains(&method) => {
                    out.insert(key.clone(), Value::Object(self.convert_operation(operation, path_parameters)));
                }
                _ => {
                    out.insert(key.clone(), rewrite_refs(value.clone()));
                }
            }
        }
        out
    }

    /// A parameter as written, or the shared one its `$ref` (`#/parameters/name`) names.
    fn resolve<'v>(&'v self, parameter: &'v Value) -> &'v Value {
        let name =
            parameter.get("$ref").and_then(Value::as_str).and_then(|reference| reference.strip_prefix("#/parameters/"));
        name.and_then(|name| self.shared_parameters.get(&unescape(name))).unwrap_or(parameter)
    }

    fn convert_parameter_or_ref(&self, parameter: &Value) -> Value {
        if parameter.get("$ref").is_some() { rewrite_refs(parameter.clone()) } else { convert_parameter(parameter) }
    }

    fn convert_operation(&self, operation: &Map<String, Value>, path_parameters: &[Value]) -> Map<String, Value> {
        let consumes = operation.get("consumes").map_or_else(|| self.consumes.clone(), |list| media_types(Some(list)));
        let produces = operation.get("produces").map_or_else(|| self.produces.clone(), |list| media_types(Some(list)));
        let own_parameters =
            operation.get("parameters").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
        // The body and form parameters of the path item and the operation (the operation's
        // replacing the path item's of the same name), which become the request body.
        let mut body = None;
        let mut form: Vec<&Value> = Vec::new();
        for parameter in path_parameters.iter().chain(own_parameters).map(|parameter| self.resolve(parameter)) {
            match parameter.get("in").and_then(Value::as_str) {
                Some("body") => body = Some(parameter),
                Some("formData") => {
                    let name = parameter.get("name");
                    form.retain(|earlier| earlier.get("name") != name);
                    form.push(parameter);
                }
                _ => {}
            }
        }

        let mut out = Map::new();
        for (key, value) in operation {
            match key.as_str() {
                "consumes" | "produces" | "schemes" => {}
                "parameters" => {
                    if let Some(kept) = self.kept_parameters(own_parameters) {
                        out.insert(key.clone(), kept);
                    }
                }
                "responses" => {
                    let responses = match value {
                        Value::Object(responses) => Value::Object(
                            responses
                                .iter()
                                .map(|(status, response)| (status.clone(), self.convert_response(response, &produces)))
                                .collect(),
                        ),
                        other => other.clone(),
                    };
                    out.insert(key.clone(), responses);
                }
                _ => {
                    out.insert(key.clone(), rewrite_refs(value.clone()));
                }
            }
        }
        if let Some(body) = body {
            out.insert("requestBody".into(), body_request(body, &consumes));
        } else if !form.is_empty() {
            out.insert("requestBody".into(), form_request(&form, &consumes));
        }
        out
    }

    fn convert_response(&self, response: &Value, produces: &[&str]) -> Value {
        let Value::Object(response) = response else { return response.clone() };
        if response.contains_key("$ref") {
            return rewrite_refs(Value::Object(response.clone()));
        }
        let mut out = Map::new();
        for (key, value) in response {
            match key.as_str() {
                "schema" => {
                    let schema = convert_schema(value);
                    let types = if produces.is_empty() { vec!["application/json"] } else { produces.to_vec() };
                    let content: Map<String, Value> = types
                        .into_iter()
                        .map(|media_type| (media_type.to_owned(), json!({"schema": schema})))
                        .collect();
                    out.insert("content".into(), Value::Object(content));
                }
                "headers" => {
                    let headers = value.as_object().map_or_else(Map::new, |headers| {
                        headers
                            .iter()
                            .map(|(name, header)| {
                                let mut header = convert_parameter(header);
                                if let Value::Object(header) = &mut header {
                                    header.remove("in");
                                    header.remove("name");
                                }
                                (name.clone(), header)
                            })
                            .collect()
                    });
                    out.insert(key.clone(), Value::Object(headers));
                }
                "examples" => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        if !out.contains_key("description") {
            out.insert("description".into(), json!(""));
        }
        Value::Object(out)
    }
}

/// An `in: body` parameter as a request body: its schema under each media type it consumes.
fn body_request(body: &Value, consumes: &[&str]) -> Value {
    let schema = body.get("schema").map_or_else(|| json!({}), convert_schema);
    let types = if consumes.is_empty() { vec!["application/json"] } else { consumes.to_vec() };
    let content: Map<String, Value> =
        types.into_iter().map(|media_type| (media_type.to_owned(), json!({"schema": schema}))).collect();
    let mut request = json!({"content": content, "required": body.get("required") == Some(&Value::Bool(true))});
    if let Some(description) = body.get("description") {
        request["description"] = description.clone();
    }
    extensions_into(body, &mut request);
    request
}

/// `in: formData` parameters as one form body, each a property, with their
/// `collectionFormat` as its encoding.
fn form_request(form: &[&Value], consumes: &[&str]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut encoding = Map::new();
    let mut has_file = false;
    for parameter in form {
        let Some(name) = parameter.get("name").and_then(Value::as_str) else { continue };
        has_file |= parameter.get("type").and_then(Value::as_str) == Some("file");
        let mut schema = parameter_schema(parameter);
        if let (Some(description), Value::Object(schema)) = (parameter.get("description"), &mut schema) {
            schema.insert("description".into(), description.clone());
        }
        properties.insert(name.to_owned(), schema);
        if parameter.get("required") == Some(&Value::Bool(true)) {
            required.push(json!(name));
        }
        if let Some((style, explode)) = collection_style(parameter, "query") {
            encoding.insert(name.to_owned(), json!({"style": style, "explode": explode}));
        }
    }
    let mut schema = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        schema["required"] = Value::Array(required.clone());
    }
    let multipart = has_file || consumes.iter().any(|media_type| media_type.starts_with("multipart/form-data"));
    let urlencoded = consumes.iter().any(|media_type| media_type.starts_with("application/x-www-form-urlencoded"));
    let mut content = Map::new();
    let mut media_type = json!({"schema": schema});
    if !encoding.is_empty() {
        media_type["encoding"] = Value::Object(encoding);
    }
    if multipart || !urlencoded {
        content.insert("multipart/form-data".into(), media_type.clone());
    }
    if urlencoded && !has_file {
        content.insert("application/x-www-form-urlencoded".into(), media_type);
    }
    json!({"content": content, "required": !required.is_empty()})
}

/// A query, path, header or cookie parameter: its type keywords as a `schema`, its
/// `collectionFormat` as `style` and `explode`.
fn convert_parameter(parameter: &Value) -> Value {
    let Value::Object(fields) = parameter else { return parameter.clone() };
    let location = fields.get("in").and_then(Value::as_str).unwrap_or("query");
    let mut out = Map::new();
    for key in ["name", "in", "description", "required", "allowEmptyValue", "deprecated"] {
        if let Some(value) = fields.get(key) {
            out.insert(key.into(), value.clone());
        }
    }
    out.insert("schema".into(), parameter_schema(parameter));
    if let Some((style, explode)) = collection_style(parameter, location) {
        out.insert("style".into(), json!(style));
        out.insert("explode".into(), json!(explode));
    }
    // `x-nullable` is the schema's (`nullable`); other extensions stay the parameter's.
    for (key, value) in fields.iter().filter(|(key, _)| key.starts_with("x-") && *key != "x-nullable") {
        out.insert(key.clone(), value.clone());
    }
    Value::Object(out)
}

/// The schema a non-body parameter's own fields describe.
fn parameter_schema(parameter: &Value) -> Value {
    let Value::Object(fields) = parameter else { return json!({}) };
    let mut schema = Map::new();
    for (key, value) in fields {
        match key.as_str() {
            "name" | "in" | "description" | "required" | "allowEmptyValue" | "collectionFormat" | "deprecated" => {}
            "items" => {
                schema.insert(key.clone(), parameter_schema(value));
            }
            _ if key.starts_with("x-") && key != "x-nullable" => {}
            _ => {
                schema.insert(key.clone(), value.clone());
            }
        }
    }
    convert_schema(&Value::Object(schema))
}

/// `collectionFormat` as (`style`, `explode`), for an array parameter in `location`.
fn collection_style(parameter: &Value, location: &str) -> Option<(&'static str, bool)> {
    if parameter.get("type").and_then(Value::as_str) != Some("array") {
        return None;
    }
    let simple = matches!(location, "path" | "header");
    Some(match parameter.get("collectionFormat").and_then(Value::as_str).unwrap_or("csv") {
        "multi" => ("form", true),
        "ssv" => ("spaceDelimited", false),
        "pipes" => ("pipeDelimited", false),
        // OpenAPI 3 has no tab-separated style: a call refuses the parameter, naming it.
        "tsv" => ("tabDelimited", false),
        _ if simple => ("simple", false),
        _ => ("form", false),
    })
}

fn extensions_into(from: &Value, into: &mut Value) {
    if let (Value::Object(from), Value::Object(into)) = (from, into) {
        for (key, value) in from.iter().filter(|(key, _)| key.starts_with("x-")) {
            into.insert(key.clone(), value.clone());
        }
    }
}

fn convert_security_scheme(scheme: &Value) -> Value {
    let Value::Object(fields) = scheme else { return scheme.clone() };
    let mut out: Map<String, Value> = fields
        .iter()
        .filter(|(key, _)| key.starts_with("x-") || *key == "description")
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    match fields.get("type").and_then(Value::as_str) {
        Some("basic") => {
            out.insert("type".into(), json!("http"));
            out.insert("scheme".into(), json!("basic"));
        }
        Some("oauth2") => {
            let flow = match fields.get("flow").and_then(Value::as_str) {
                Some("implicit") => "implicit",
                Some("password") => "password",
                Some("application") => "clientCredentials",
                _ => "authorizationCode",
            };
            let mut details = Map::new();
            for (from, to) in [("authorizationUrl", "authorizationUrl"), ("tokenUrl", "tokenUrl")] {
                if let Some(url) = fields.get(from) {
                    details.insert(to.into(), url.clone());
                }
            }
            details.insert("scopes".into(), fields.get("scopes").cloned().unwrap_or_else(|| json!({})));
            out.insert("type".into(), json!("oauth2"));
            out.insert("flows".into(), json!({flow: details}));
        }
        _ => {
            for (key, value) in fields.iter().filter(|(key, _)| matches!(key.as_str(), "type" | "name" | "in")) {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// A Swagger 2.0 schema in OpenAPI 3.0's words: `type: file` a binary string,
/// `x-nullable` `nullable`, a `discriminator` name an object, and its refs moved.
fn convert_schema(schema: &Value) -> Value {
    let mut schema = rewrite_refs(schema.clone());
    convert_schema_keywords(&mut schema);
    schema
}

fn convert_schema_keywords(schema: &mut Value) {
    match schema {
        Value::Object(fields) => {
            if fields.get("type").and_then(Value::as_str) == Some("file") {
                fields.insert("type".into(), json!("string"));
                fields.insert("format".into(), json!("binary"));
            }
            if let Some(nullable) = fields.remove("x-nullable") {
                fields.insert("nullable".into(), nullable);
            }
            if let Some(Value::String(property)) = fields.get("discriminator") {
                let discriminator = json!({"propertyName": property});
                fields.insert("discriminator".into(), discriminator);
            }
            fields.values_mut().for_each(convert_schema_keywords);
        }
        Value::Array(items) => items.iter_mut().for_each(convert_schema_keywords),
        _ => {}
    }
}

/// Every local `$ref` into `definitions`, `parameters` or `responses`, moved to its place
/// under `components` (refs to other files are left as they are: the files are read as
/// they are written).
fn rewrite_refs(mut value: Value) -> Value {
    rewrite_refs_in(&mut value);
    value
}

fn rewrite_refs_in(value: &mut Value) {
    match value {
        Value::Object(fields) => {
            for (key, member) in fields.iter_mut() {
                match (key.as_str(), member) {
                    ("$ref", Value::String(reference)) => {
                        for (from, to) in [
                            ("#/definitions/", "#/components/schemas/"),
                            ("#/parameters/", "#/components/parameters/"),
                            ("#/responses/", "#/components/responses/"),
                        ] {
                            if let Some(rest) = reference.strip_prefix(from) {
                                *reference = format!("{to}{rest}");
                                break;
                            }
                        }
                    }
                    (_, member) => rewrite_refs_in(member),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs_in),
        _ => {}
    }
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> DocumentOrigin {
        DocumentOrigin::File("/specs/api.json".into())
    }

    #[test]
    fn collection_formats_become_styles() {
        let check = |format: &str, location: &str, expect: Option<(&str, bool)>| {
            let parameter = json!({"name": "ids", "in": location, "type": "array", "collectionFormat": format});
            assert_eq!(collection_style(&parameter, location), expect, "{format} in {location}");
        };
        check("csv", "query", Some(("form", false)));
        check("csv", "path", Some(("simple", false)));
        check("csv", "header", Some(("simple", false)));
        check("ssv", "query", Some(("spaceDelimited", false)));
        check("pipes", "query", Some(("pipeDelimited", false)));
        check("multi", "query", Some(("form", true)));
        check("tsv", "query", Some(("tabDelimited", false)));
        assert_eq!(collection_style(&json!({"type": "string"}), "query"), None);
    }

    #[test]
    fn servers_come_from_host_base_path_and_schemes() {
        let check = |root: Value, expect: Value| {
            let Value::Object(root) = root else { unreachable!() };
            assert_eq!(Value::Array(servers(&origin(), &root)), expect);
        };
        check(
            json!({"host": "api.example", "basePath": "/v1/", "schemes": ["http", "https"]}),
            json!([{"url": "http://api.example/v1"}, {"url": "https://api.example/v1"}]),
        );
        check(json!({"host": "api.example"}), json!([{"url": "https://api.example"}]));
        check(json!({"basePath": "/v1"}), json!([{"url": "/v1"}]));
        check(json!({}), json!([]));
    }

    #[test]
    fn body_form_and_shared_parameters_move_where_3_0_has_them() {
        let root = json!({
            "swagger": "2.0",
            "consumes": ["application/json"],
            "parameters": {"limit": {"name": "limit", "in": "query", "type": "integer", "x-nullable": true}},
            "definitions": {"Pet": {"type": "object", "discriminator": "kind", "properties": {"owner": {"$ref": "#/definitions/Pet"}}}},
            "paths": {"/pets": {
                "get": {"parameters": [{"$ref": "#/parameters/limit"}]},
                "post": {"parameters": [{"in": "body", "name": "pet", "required": true, "schema": {"$ref": "#/definitions/Pet"}}]},
                "put": {"consumes": ["multipart/form-data"], "parameters": [
                    {"in": "formData", "name": "photo", "type": "file", "required": true},
                    {"in": "formData", "name": "tags", "type": "array", "items": {"type": "string"}, "collectionFormat": "multi"}
                ]}
            }}
        });
        let Value::Object(root) = root else { unreachable!() };
        let converted = convert(&origin(), root).unwrap();
        assert_eq!(
            converted["components"]["parameters"]["limit"],
            json!({"name": "limit", "in": "query", "schema": {"type": "integer", "nullable": true}})
        );
        assert_eq!(converted["components"]["schemas"]["Pet"]["discriminator"], json!({"propertyName": "kind"}));
        assert_eq!(
            converted["components"]["schemas"]["Pet"]["properties"]["owner"]["$ref"],
            "#/components/schemas/Pet"
        );
        assert_eq!(
            converted["paths"]["/pets"]["get"]["parameters"],
            json!([{"$ref": "#/components/parameters/limit"}])
        );
        assert_eq!(
            converted["paths"]["/pets"]["post"]["requestBody"],
            json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}, "required": true})
        );
        let put = &converted["paths"]["/pets"]["put"];
        assert!(put.get("parameters").is_none(), "{put}");
        let form = &put["requestBody"]["content"]["multipart/form-data"];
        assert_eq!(form["schema"]["properties"]["photo"], json!({"type": "string", "format": "binary"}));
        assert_eq!(form["schema"]["required"], json!(["photo"]));
        assert_eq!(form["encoding"], json!({"tags": {"style": "form", "explode": true}}));
    }
}
