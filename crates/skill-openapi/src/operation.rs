//! Operations to tools: one [`OperationTool`] per operation of a [`Document`] (module
//! `method`: which operations a path item has), with its parameters merged and named
//! (module `parameters`), its request body's media type chosen (module `body`), and its
//! input schema.

mod body;
mod method;
mod parameters;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use url::Url;

use crate::Error;
use crate::call::operations::{OperationDetails, operation_server};
use crate::call::{BINARY_ARGUMENT_HELP, DeclaredSchemes, FILE_ARGUMENT_HELP, Requirements, read_requirements};
use crate::document::{Document, DocumentOrigin, SpecVersion};
use crate::filter::{OperationFilter, OperationInfo};
use crate::input_schema::SchemaCatalog;
use crate::naming::{MAX_TOOL_NAME_LEN, make_unique, operation_tool_name};
use crate::reference::{DocId, Resolver};
use crate::serialize::{ParameterSpec, PropertyEncoding};

pub use self::body::{BodyKind, RequestBody};

use self::body::MultipartStyles;
pub use self::method::Method;

use self::method::path_item_operations;
use self::parameters::argument_names;

/// One parameter of an operation, and the input-schema property that carries its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationParameter {
    /// Name, location and serialization, as the Parameter Object says.
    pub spec: ParameterSpec,
    /// The property of the tool's input that holds the value: the name with characters
    /// outside `[A-Za-z0-9_.-]` as `_`, and `__{in}` added when the name is used in more
    /// than one location (`id__query`) or by the request body (`body__query`).
    pub argument: String,
    /// Whether the value must be given (always for path parameters).
    pub required: bool,
    /// For a parameter given by `content` instead of `schema`: its one media type, which
    /// says how the value becomes text (no `style` applies). Always set for an
    /// `in: querystring` parameter (`application/x-www-form-urlencoded` when the document
    /// gives a `schema` alone).
    pub content_type: Option<String>,
    /// For a parameter given by `content` as `application/x-www-form-urlencoded` (an
    /// `in: querystring` parameter), the media type's Encoding Object per property.
    pub encodings: BTreeMap<String, PropertyEncoding>,
}

/// One operation as a tool: its name, description and input schema, and what is needed to
/// turn the input into a request.
#[derive(Debug)]
#[non_exhaustive]
pub struct OperationTool {
    /// `[A-Za-z0-9_-]`, at most 64 characters, unique within the document.
    pub name: String,
    /// The `operationId`, if any.
    pub operation_id: Option<String>,
    /// Summary and description; deprecated operations say so first.
    pub description: String,
    /// The HTTP method.
    pub method: Method,
    /// The path template, as written (`/users/{id}`).
    pub path: String,
    /// The operation's tags.
    pub tags: Vec<String>,
    /// Whether the operation is deprecated.
    pub deprecated: bool,
    /// Path-item and operation parameters, merged, unique by (name, in); header parameters
    /// named `Accept`, `Content-Type` and `Authorization` left out, as the spec says. At
    /// most one is `in: querystring`, and then none is `in: query`.
    pub parameters: Vec<OperationParameter>,
    /// The request body, if the operation has one.
    pub request_body: Option<RequestBody>,
    /// The tool's input: an object with one property per parameter and `body`, the
    /// `required` ones listed, and the schemas they refer to under `$defs`.
    pub input_schema: Value,
    /// What the tool will refuse at call time although the document loads, such as a style
    /// with an `explode` the spec leaves undefined.
    pub warnings: Vec<Error>,
    /// What a call needs beyond the input: security, the operation's own server, part headers.
    pub(crate) details: OperationDetails,
}

impl OperationTool {
    /// Says in the `body` description of a tool that takes binary data (a binary body, or
    /// a multipart body's binary parts), after [`BINARY_ARGUMENT_HELP`], that it may also
    /// be given as a file: [`FILE_ARGUMENT_HELP`]. For the tools of an endpoint with an
    /// upload folder ([`Endpoint::with_upload_folder`](crate::Endpoint::with_upload_folder)),
    /// and only those, since without one no file is read. Does nothing for other tools, and
    /// nothing the second time.
    pub fn add_file_argument_help(&mut self) {
        let Some(Value::String(description)) = self.input_schema.pointer_mut("/properties/body/description") else {
            return;
        };
        if description.ends_with(BINARY_ARGUMENT_HELP) {
            description.push(' ');
            description.push_str(FILE_ARGUMENT_HELP);
        }
    }
}

/// An operation that could not become a tool, and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct SkippedOperation {
    /// The HTTP method; `None` when the whole path item could not be read.
    pub method: Option<Method>,
    /// The path template.
    pub path: String,
    /// Why.
    pub error: Error,
}

/// The tools of a document, and the operations left out because they could not be read.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct ToolSet {
    /// One tool per operation the filter keeps, in document order.
    pub tools: Vec<OperationTool>,
    /// Operations whose parameters or body could not be read (a broken or refused
    /// `$ref`, a parameter without `name`): the other operations still become tools.
    pub skipped: Vec<SkippedOperation>,
}

impl Document {
    /// One tool per operation that `filter` keeps.
    ///
    /// Fails only when `paths` is not an object; an operation that cannot be read is left
    /// out and listed in [`ToolSet::skipped`].
    pub fn tools(&self, filter: &OperationFilter) -> Result<ToolSet, Error> {
        let mut builder = ToolBuilder::new(self);
        let paths = match self.root.get("paths") {
            None => return Ok(ToolSet::default()),
            Some(Value::Object(paths)) => paths,
            Some(_) => {
                return Err(Error::InvalidDocument {
                    document: self.origin.clone(),
                    reason: "`paths` is not an object".into(),
                });
            }
        };
        let mut set = ToolSet::default();
        for (path, path_item) in paths {
            // The Paths Object's extensions (`x-codegen-contextRoot: /apis`) are no paths.
            if path.starts_with("x-") {
                continue;
            }
            let (item_doc, path_item) = match builder.resolver.resolve_object(DocId::ROOT, path_item) {
                Ok(resolved) => resolved,
                Err(error) => {
                    // A path item that cannot be read loses every operation it might have.
                    set.skipped.push(SkippedOperation { method: None, path: path.clone(), error });
                    continue;
                }
            };
            let Some(item_object) = path_item.as_object() else { continue };
            let (operations, refused) = path_item_operations(item_object);
            for refused in refused {
                let error = builder.invalid(item_doc, format!("{}: {}", path, refused.reason));
                set.skipped.push(SkippedOperation { method: refused.method, path: path.clone(), error });
            }
            for (method, operation) in operations {
                let operation_id = operation.get("operationId").and_then(Value::as_str);
                let tags = string_list(operation.get("tags"));
                if !filter.matches(&OperationInfo { operation_id, tags: &tags, path }) {
                    continue;
                }
                match builder.build(item_doc, &path_item, &method, path, operation, tags) {
                    Ok(tool) => set.tools.push(tool),
                    Err(error) => {
                        set.skipped.push(SkippedOperation { method: Some(method), path: path.clone(), error })
                    }
                }
            }
        }
        let mut names: Vec<String> = set.tools.iter().map(|tool| tool.name.clone()).collect();
        make_unique(&mut names, MAX_TOOL_NAME_LEN);
        for (tool, name) in set.tools.iter_mut().zip(names) {
            tool.name = name;
        }
        Ok(set)
    }
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map_or_else(Vec::new, |items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect())
}

struct ToolBuilder {
    resolver: Resolver,
    catalog: SchemaCatalog,
    /// The document, and its URL, against which operations' relative server URLs resolve.
    origin: DocumentOrigin,
    url: Option<Url>,
    /// The document's security schemes, as requirements name them.
    declared_schemes: DeclaredSchemes,
    /// The document's `security`, for operations without their own.
    root_security: Option<Requirements>,
    /// Whether the Encoding Object's `style`, `explode` and `allowReserved` apply to
    /// multipart bodies (`RequestBody::encodings`).
    multipart_styles: MultipartStyles,
}

impl ToolBuilder {
    fn new(document: &Document) -> Self {
        let mut resolver = Resolver::new(document);
        let catalog = SchemaCatalog::new(document.version, &resolver);
        let declared_schemes = DeclaredSchemes::read(document, &mut resolver);
        let root_security = read_requirements(document.root.get("security"), &declared_schemes);
        let multipart_styles = match document.version {
            SpecVersion::V3_0 if !document.from_swagger_2 => MultipartStyles::DeepObjectOnly,
            _ => MultipartStyles::All,
        };
        ToolBuilder {
            resolver,
            catalog,
            origin: document.origin.clone(),
            url: document.url().cloned(),
            declared_schemes,
            root_security,
            multipart_styles,
        }
    }

    fn invalid(&self, doc: DocId, reason: String) -> Error {
        Error::InvalidDocument { document: self.resolver.origin(doc).clone(), reason }
    }

    fn build(
        &mut self,
        item_doc: DocId,
        path_item: &Value,
        method: &Method,
        path: &str,
        operation: &Value,
        tags: Vec<String>,
    ) -> Result<OperationTool, Error> {
        let operation_id = operation.get("operationId").and_then(Value::as_str).map(str::to_owned);
        let deprecated = operation.get("deprecated") == Some(&Value::Bool(true));
        let mut referenced = Vec::new();

        let (mut parameters, warnings) =
            self.read_parameters(item_doc, path_item, method, path, operation, &mut referenced)?;

        let request_body = match operation.get("requestBody") {
            Some(raw) => Some(self.read_request_body(item_doc, raw, &mut referenced)?),
            None => None,
        };
        let mut details = OperationDetails {
            security: read_requirements(operation.get("security"), &self.declared_schemes)
                .or_else(|| self.root_security.clone()),
            server: operation_server(&self.origin, self.url.as_ref(), path_item, operation),
            part_headers: BTreeMap::new(),
        };

        let arguments = argument_names(&parameters, request_body.is_some());

        let mut properties = Map::new();
        let mut required = Vec::new();
        for (parameter, argument) in parameters.iter_mut().zip(&arguments) {
            let mut schema = std::mem::take(&mut parameter.schema);
            if let (Some(description), Value::Object(object)) = (&parameter.description, &mut schema)
                && !object.contains_key("description")
            {
                object.insert("description".into(), Value::String(description.clone()));
            }
            if let (true, Value::Object(object)) = (parameter.deprecated, &mut schema) {
                object.insert("deprecated".into(), Value::Bool(true));
            }
            properties.insert(argument.clone(), schema);
            if parameter.required {
                required.push(Value::String(argument.clone()));
            }
        }
        let mut body_spec = None;
        if let Some((body, schema, part_headers)) = request_body {
            if body.required {
                required.push("body".into());
            }
            properties.insert("body".to_owned(), schema);
            body_spec = Some(body);
            details.part_headers = part_headers;
        }
        let mut input_schema = json!({"type": "object", "properties": properties});
        if !required.is_empty() {
            input_schema["required"] = Value::Array(required);
        }
        let definitions = self.catalog.definitions_for(&mut self.resolver, referenced)?;
        if !definitions.is_empty() {
            input_schema["$defs"] = Value::Object(definitions);
        }

        let parameters = parameters
            .into_iter()
            .zip(arguments)
            .map(|(parameter, argument)| OperationParameter {
                spec: parameter.spec,
                argument,
                required: parameter.required,
                content_type: parameter.content_type,
                encodings: parameter.encodings,
            })
            .collect();
        Ok(OperationTool {
            name: operation_tool_name(operation_id.as_deref(), method.path_item_key(), path),
            description: description(operation, method, path, deprecated),
            operation_id,
            method: method.clone(),
            path: path.to_owned(),
            tags,
            deprecated,
            parameters,
            request_body: body_spec,
            input_schema,
            warnings,
            details,
        })
    }
}

fn description(operation: &Value, method: &Method, path: &str, deprecated: bool) -> String {
    let text = |key: &str| operation.get(key).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty());
    let mut description = match (text("summary"), text("description")) {
        (Some(summary), Some(description)) if summary != description => format!("{summary}\n\n{description}"),
        (Some(text), _) | (None, Some(text)) => text.to_owned(),
        (None, None) => format!("{method} {path}"),
    };
    if deprecated {
        description.insert_str(0, "Deprecated. ");
    }
    description
}

#[cfg(test)]
mod tests {
    use skill_core::shorten_tool_name;

    use super::*;
    use crate::serialize::{Location, Style};

    pub(super) fn tools_of(root: Value) -> ToolSet {
        let folder = tempfile::tempdir().unwrap();
        Document::from_value(folder.path().join("spec.json"), root).unwrap().tools(&OperationFilter::default()).unwrap()
    }

    fn arguments(tool: &OperationTool) -> Vec<(&str, Location, &str)> {
        tool.parameters
            .iter()
            .map(|parameter| (parameter.spec.name.as_str(), parameter.spec.location, parameter.argument.as_str()))
            .collect()
    }

    #[test]
    fn long_argument_names_are_shortened_stably_and_stay_distinct() {
        let long = "x".repeat(100);
        let set = tools_of(json!({
            "openapi": "3.1.0",
            "paths": {"/a": {"get": {"parameters": [
                {"name": long, "in": "query", "schema": {"type": "string"}},
                {"name": long, "in": "header", "schema": {"type": "string"}}
            ]}}}
        }));
        let names: Vec<&str> = set.tools[0].parameters.iter().map(|parameter| parameter.argument.as_str()).collect();
        assert!(names.iter().all(|name| name.len() == MAX_TOOL_NAME_LEN), "{names:?}");
        assert_ne!(names[0], names[1]);
        assert_eq!(names[0], shorten_tool_name(&format!("query/{long}"), format!("{long}__query")));
        assert!(set.tools[0].input_schema["properties"].get(names[1]).is_some());
    }

    #[test]
    fn parameters_are_merged_by_name_and_location_and_disambiguated() {
        let set = tools_of(json!({
            "openapi": "3.0.3",
            "components": {"parameters": {"id": {"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}}},
            "paths": {"/items/{id}": {
                "parameters": [
                    {"$ref": "#/components/parameters/id"},
                    {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                    {"name": "X-Trace", "in": "header", "schema": {"type": "string"}}
                ],
                "post": {
                    "operationId": "updateItem",
                    "parameters": [
                        {"name": "id", "in": "query", "description": "another id", "schema": {"type": "string"}},
                        {"name": "verbose", "in": "query", "required": true, "schema": {"type": "integer"}},
                        {"name": "x-trace", "in": "header", "schema": {"type": "number"}},
                        {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                        {"name": "content-type", "in": "header", "schema": {"type": "string"}},
                        {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
                        {"name": "body", "in": "cookie", "schema": {"type": "string"}},
                        {"name": "filter[state]", "in": "query", "schema": {"type": "string"}}
                    ],
                    "requestBody": {"required": true, "content": {"application/json": {"schema": {"type": "object"}}}}
                }
            }}
        }));
        assert!(set.skipped.is_empty(), "{:?}", set.skipped);
        let tool = &set.tools[0];
        assert_eq!(
            arguments(tool),
            [
                ("id", Location::Path, "id__path"),
                ("verbose", Location::Query, "verbose"),
                ("x-trace", Location::Header, "x-trace"),
                ("id", Location::Query, "id__query"),
                ("body", Location::Cookie, "body__cookie"),
                ("filter[state]", Location::Query, "filter_state_"),
            ]
        );
        assert_eq!(
            tool.input_schema,
            json!({
                "type": "object",
                "properties": {
                    "id__path": {"type": "integer"},
                    "verbose": {"type": "integer"},
                    "x-trace": {"type": "number"},
                    "id__query": {"type": "string", "description": "another id"},
                    "body__cookie": {"type": "string"},
                    "filter_state_": {"type": "string"},
                    "body": {"type": "object"}
                },
                "required": ["id__path", "verbose", "body"]
            })
        );
        assert_eq!(tool.request_body.as_ref().unwrap().kind, BodyKind::Json);
    }

    #[test]
    fn names_are_deduplicated_and_broken_operations_skipped() {
        let long_id = format!("{}Operation", "very".repeat(20));
        let set = tools_of(json!({
            "openapi": "3.1.0",
            "paths": {
                "/a": {"get": {"operationId": "list"}, "post": {"operationId": "list"}, "put": {"operationId": long_id}},
                "/b/{id}": {"get": {"operationId": "list", "parameters": [{"$ref": "#/components/parameters/missing"}]}, "delete": {}},
                "/c": {"$ref": "#/nowhere"},
                "x-codegen-contextRoot": "/apis"
            }
        }));
        let names: Vec<&str> = set.tools.iter().map(|tool| tool.name.as_str()).collect();
        // Operations come in path order, then in the Path Item Object's method order.
        assert_eq!(names, ["list", &operation_tool_name(Some(&long_id), "put", "/a"), "list_2", "delete_b_id"]);
        assert_eq!(names[1].len(), 64);
        let skipped: Vec<(Option<Method>, &str)> =
            set.skipped.iter().map(|skipped| (skipped.method.clone(), skipped.path.as_str())).collect();
        assert_eq!(skipped, [(Some(Method::Get), "/b/{id}"), (None, "/c")]);
        assert!(
            matches!(&set.skipped[0].error, Error::RefNotFound { reference, .. } if reference == "#/components/parameters/missing")
        );
    }

    #[test]
    fn content_parameters_undefined_styles_and_filters() {
        let root = json!({
            "openapi": "3.1.0",
            "paths": {"/search": {"get": {
                "operationId": "search",
                "tags": ["find"],
                "parameters": [
                    {"name": "q", "in": "query", "content": {"application/json": {"schema": {"type": "object"}}}},
                    {"name": "f", "in": "query", "style": "deepObject", "explode": false, "schema": {"type": "object"}},
                    {"name": "t", "in": "query", "style": "tabDelimited", "schema": {"type": "array"}}
                ]
            }}, "/other": {"get": {"operationId": "other"}}}
        });
        let set = tools_of(root.clone());
        assert!(set.skipped.is_empty(), "{:?}", set.skipped);
        let tool = set.tools.iter().find(|tool| tool.name == "search").unwrap();
        assert_eq!(tool.parameters[0].content_type.as_deref(), Some("application/json"));
        assert_eq!(tool.input_schema["properties"]["q"], json!({"type": "object"}));
        let warnings: Vec<String> = tool.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(
            warnings,
            [
                "parameter `f`: style `deepObject` with explode false is undefined",
                "parameter `t`: unknown style `tabDelimited`"
            ]
        );

        let folder = tempfile::tempdir().unwrap();
        let document = Document::from_value(folder.path().join("spec.json"), root).unwrap();
        let filter = OperationFilter { include: vec![crate::OperationMatcher::Tag("find".into())], exclude: vec![] };
        let names: Vec<String> = document.tools(&filter).unwrap().tools.into_iter().map(|tool| tool.name).collect();
        assert_eq!(names, ["search"]);
    }

    #[test]
    fn path_items_and_schemas_from_files_under_the_spec_folder() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::write(
            folder.path().join("pets.yaml"),
            "get:\n  operationId: listPets\n  parameters:\n    - name: owner\n      in: query\n      schema:\n        $ref: '#/Owner'\nOwner:\n  type: object\n  properties:\n    friend:\n      $ref: '#/Owner'\n",
        )
        .unwrap();
        let root = json!({"openapi": "3.1.0", "paths": {"/pets": {"$ref": "pets.yaml"}, "/secret": {"$ref": "../secret.yaml"}}});
        let document = Document::from_value(folder.path().join("spec.json"), root).unwrap();
        let set = document.tools(&OperationFilter::default()).unwrap();
        let tool = &set.tools[0];
        assert_eq!(tool.input_schema["properties"]["owner"], json!({"$ref": "#/$defs/Owner"}));
        assert_eq!(tool.input_schema["$defs"]["Owner"]["properties"]["friend"], json!({"$ref": "#/$defs/Owner"}));
        jsonschema::validator_for(&tool.input_schema).unwrap();
        assert!(
            matches!(&set.skipped[0].error, Error::RefOutsideSpecFolder { reference, .. } if reference == "../secret.yaml")
        );
    }

    #[test]
    fn openapi_3_2_methods_querystring_and_media_type_refs() {
        let set = tools_of(json!({
            "openapi": "3.2.0",
            "$self": "https://example.com/openapi.json",
            "tags": [{"name": "items", "kind": "nav", "parent": "all"}],
            "components": {
                "mediaTypes": {"SearchForm": {
                    "schema": {"type": "object", "properties": {"term": {"type": "string"}, "filter": {"type": "object"}}},
                    "encoding": {"filter": {"style": "deepObject"}}
                }},
                "parameters": {"search": {"name": "search", "in": "querystring", "required": true,
                    "content": {"application/x-www-form-urlencoded": {"$ref": "#/components/mediaTypes/SearchForm"}}}}
            },
            "paths": {"/items": {
                "parameters": [{"$ref": "#/components/parameters/search"}],
                "query": {"operationId": "searchItems", "requestBody": {"content": {"application/json": {"schema": {"type": "object"}}}}},
                "additionalOperations": {
                    "COPY": {"operationId": "copyItems", "parameters": [{"name": "to", "in": "header", "schema": {"type": "string"}}]},
                    "PURGE": {}
                },
                "get": {"operationId": "listItems", "parameters": [{"name": "page", "in": "query", "schema": {"type": "integer"}}]}
            }}
        }));
        let names: Vec<(&str, &str)> =
            set.tools.iter().map(|tool| (tool.name.as_str(), tool.method.as_str())).collect();
        assert_eq!(names, [("searchItems", "QUERY"), ("copyItems", "COPY"), ("purge_items", "PURGE")]);
        let search = &set.tools[0];
        let parameter = &search.parameters[0];
        assert_eq!(
            (parameter.spec.location, parameter.argument.as_str(), parameter.content_type.as_deref()),
            (Location::QueryString, "search", Some("application/x-www-form-urlencoded"))
        );
        assert_eq!(parameter.encodings["filter"].style, Some(Style::DeepObject));
        assert_eq!(search.input_schema["properties"]["search"]["properties"]["term"], json!({"type": "string"}));
        assert_eq!(search.input_schema["required"], json!(["search"]));
        assert!(search.warnings.is_empty(), "{:?}", search.warnings);

        // `GET` adds an `in: query` parameter to the path item's querystring one: only it is
        // left out, naming its document, method, path and operationId.
        assert_eq!(set.skipped.len(), 1, "{:?}", set.skipped);
        assert_eq!(set.skipped[0].method, Some(Method::Get));
        let error = &set.skipped[0].error;
        assert!(
            matches!(error, Error::QueryStringParameters { operation, .. } if operation == "GET /items (`listItems`)"),
            "{error:?}"
        );
        assert!(
            error.to_string().ends_with(
                "spec.json: GET /items (`listItems`): its `in: querystring` parameter `search` is the whole query \
                 string, so it cannot go with `in: query` parameters (`page`)"
            ),
            "{error}"
        );
    }

    #[test]
    fn querystring_parameters_one_per_operation_any_media_type() {
        let set = tools_of(json!({
            "openapi": "3.2.0",
            "paths": {
                "/json": {"get": {"parameters": [
                    {"name": "q", "in": "querystring", "content": {"application/json": {"schema": {"type": "object"}}}}
                ]}},
                "/schema-only": {"get": {"parameters": [
                    {"name": "q", "in": "querystring", "style": "deepObject", "schema": {"type": "object"}}
                ]}},
                "/two": {"delete": {"parameters": [
                    {"name": "a", "in": "querystring", "content": {"text/plain": {}}},
                    {"name": "b", "in": "querystring", "content": {"text/plain": {}}}
                ]}}
            }
        }));
        let content: Vec<(&str, Option<&str>)> =
            set.tools.iter().map(|tool| (tool.name.as_str(), tool.parameters[0].content_type.as_deref())).collect();
        assert_eq!(
            content,
            [("get_json", Some("application/json")), ("get_schema-only", Some("application/x-www-form-urlencoded"))]
        );
        // The style fields do not apply to a querystring parameter: not read, no warning.
        assert_eq!(set.tools[1].parameters[0].spec.style, None);
        assert!(set.tools[1].warnings.is_empty(), "{:?}", set.tools[1].warnings);
        let error = &set.skipped[0].error;
        assert!(
            error.to_string().ends_with(
                "DELETE /two: it has 2 `in: querystring` parameters (`a`, `b`), and an operation may have one only, \
                 the whole query string"
            ),
            "{error}"
        );
    }
}
