//! OpenAPI skills: any OpenAPI 3.0, 3.1 or 3.2 document (or Swagger 2.0, converted)
//! becomes tools, one per operation.
//!
//! The skill ([`OpenApiSkill`], set up by an [`OpenApiConfig`], the `openapi.<name>`
//! section of the config file): `init` loads the document, makes one tool per operation
//! the config's `include`/`exclude` keep, and settles the server URL and credentials;
//! its tools carry the source kind `openapi`, and each call is one HTTP request. The
//! credentials' secrets come from the agent, under the names
//! [`OpenApiConfig::secret_refs`] gives, and are required: an agent without them skips
//! the skill. With `aauth: true` the skill needs a client given with
//! [`OpenApiSkill::with_client`] (the AAuth agent's) and refuses to load without one.
//! The parts below can be used on their own.
//!
//! # Parts
//!
//! Loading ([`Document::load`]): a file ([`Document::from_file`]) or an http(s) URL
//! ([`Document::from_url`]), JSON or YAML, read leniently into a `serde_json::Value` with
//! its version checked (3.0.x, 3.1.x and 3.2.x; Swagger 2.0 converted to 3.0 first, by the 2.0
//! specification's meaning of each part; others refused with a typed
//! [`Error`] naming the file or URL, a [`DocumentOrigin`]). Nothing else is checked up
//! front: the parts a tool needs are read when tools are built, so a document that is
//! sloppy where no tool looks still loads. [`LoadOptions`] hold the rules. URLs are fetched
//! with the loader's own client, under the fetch rules of `docs/config.md`: redirects are refused
//! (naming the `Location`), never followed; a non-2xx status is an error; a document has at
//! most 10 MiB, counted while the body streams in, so neither a chunked body nor a wrong
//! `Content-Length` gets past the limit; connecting may take 10 s and a whole fetch 30 s;
//! and one load, all its documents together, at most 50 MiB and 60 s. Every `$ref` of a
//! fetched spec is resolved against the URL of the document it is in, and must land on the
//! spec's origin (scheme, host and port) under the folder of the spec's URL: never a
//! `file:` URL, another host (a metadata address, a private network) or a path outside
//! the folder. Every document the refs reach (at most 200) is fetched, once, when the spec
//! is loaded, so that building tools does no network I/O. A document that cannot be fetched, or a
//! ref that breaks these rules, fails the whole load. URLs are shown redacted in errors,
//! descriptions and `Debug` output: no user info, each query value as `REDACTED`.
//!
//! Operations to tools ([`Document::tools`]): one [`OperationTool`] per operation that an
//! [`OperationFilter`] keeps (the fixed method fields, OpenAPI 3.2's `query` among them,
//! and 3.2's `additionalOperations`, any [`Method`]), named from its `operationId` (else
//! method and path) within `[A-Za-z0-9_-]` and 64 characters ([`operation_tool_name`]), duplicates numbered;
//! path-item and operation parameters merged by (name, in), a name used in two locations
//! disambiguated as `name__query`; the request body's media type chosen (JSON, then form,
//! multipart, text, binary); and an input schema with one property per parameter plus
//! `body`. `$ref`s are followed into the document, into files under the spec's folder
//! (never out of it, only `.json`, `.yaml` and `.yml` files, none hidden and none that is
//! or is under a path the host named private with [`LoadOptions::with_private_path`]), and
//! for a fetched spec into the documents fetched with it; schemas
//! keep their refs, rewritten to `#/$defs/...` with the schemas they reach carried along,
//! so recursive schemas stay finite. OpenAPI 3.0 schemas are
//! converted where JSON Schema 2020-12 reads them differently (`nullable`, boolean
//! `exclusiveMinimum`), and `readOnly` properties are left out, as requests never carry
//! them. An operation that cannot be read is skipped with its reason; the
//! others still become tools.
//!
//! Request serialization, exactly per the style tables of OpenAPI 3.1.1 (module
//! [`serialize`]): a [`ParameterSpec`] (a Parameter Object's `name`, `in`, `style`,
//! `explode` and `allowReserved`) serializes a JSON value into what goes on the wire for
//! its location ([`SerializedParameter`]), with every `style`/`explode` combination the
//! spec defines and a typed [`Error`] for those it leaves undefined (but `deepObject`
//! values beyond the table, which follow the npm `qs` bracket convention); and
//! [`encode_form_urlencoded`] encodes an `application/x-www-form-urlencoded` body with the
//! Encoding Object's per-property `style`, `explode`, `allowReserved` and `contentType`.
//!
//! Calls ([`Endpoint::call`]): a tool and its JSON arguments become the request the
//! document describes, sent through any `reqwest_middleware::ClientWithMiddleware` (so an
//! AAuth signing client plugs in; [`default_client`] follows no redirects). An
//! [`Endpoint`] settles, once per document, the server URL (a base URL, else `servers[0]`
//! with its variables' defaults checked against `enum`, relative URLs resolved against
//! the document's URL) and the [`Credential`]s (API key in a header, query or cookie,
//! bearer, basic), matched to `securitySchemes` and sent as each operation's `security`
//! asks. Parameters are serialized per the style tables, or by their media type when
//! given by `content` (an OpenAPI 3.2 `in: querystring` parameter is the whole query
//! string, [`serialize_query_string`]; a path key's own query is kept and its fragment
//! dropped); bodies go as JSON, JSON sequences, form-urlencoded
//! and multipart with the Encoding Object, text, or bytes (binary fields as base64, [`BINARY_ARGUMENT_HELP`], or with an
//! upload folder `file:` and a path in it, at most 100 MiB: [`FILE_ARGUMENT_HELP`]). A cookie
//! given by `content` is sent as written, so one with a `;` or another character a cookie
//! value cannot hold is refused. The response is a `ToolOutput`: status line,
//! content type and body as text, JSON also as structured content, binary as an embedded
//! resource, cut with a note past 1 MiB (configurable), `is_error` for non-2xx.
//!
//! # Examples
//!
//! A document's operations as tools:
//!
//! ```
//! use serde_json::json;
//! use skill_openapi::{Document, Location, OperationFilter};
//!
//! let document = Document::from_value(
//!     "/specs/items.json",
//!     json!({
//!         "openapi": "3.1.0",
//!         "paths": {"/items/{id}": {
//!             "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "integer"}}],
//!             "get": {
//!                 "operationId": "items/get",
//!                 "summary": "One item",
//!                 "parameters": [{"name": "id", "in": "query", "schema": {"type": "string"}}]
//!             }
//!         }}
//!     }),
//! )?;
//! let tools = document.tools(&OperationFilter::default())?.tools;
//! assert_eq!((tools[0].name.as_str(), tools[0].description.as_str()), ("items_get", "One item"));
//! // `id` is in the path and in the query: each gets its location added.
//! let arguments: Vec<(&str, Location)> =
//!     tools[0].parameters.iter().map(|parameter| (parameter.argument.as_str(), parameter.spec.location)).collect();
//! assert_eq!(arguments, [("id__path", Location::Path), ("id__query", Location::Query)]);
//! assert_eq!(tools[0].input_schema["required"], json!(["id__path"]));
//! # Ok::<(), skill_openapi::Error>(())
//! ```
//!
//! Serializing parameters and form bodies:
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! use serde_json::json;
//! use skill_openapi::{
//!     Error, Location, ParameterSpec, PropertyEncoding, SerializedParameter, Style, encode_form_urlencoded,
//! };
//!
//! // A path parameter in matrix style, exploded.
//! let color = ParameterSpec { style: Some(Style::Matrix), explode: Some(true), ..ParameterSpec::new("color", Location::Path) };
//! let path = color.serialize(&json!(["blue", "black"]))?;
//! assert_eq!(path, SerializedParameter::Path(";color=blue;color=black".into()));
//!
//! // A deepObject query parameter: one percent-encoded pair per property.
//! let filter = ParameterSpec { style: Some(Style::DeepObject), ..ParameterSpec::new("filter", Location::Query) };
//! let query = filter.serialize(&json!({"label": "good first issue", "state": "open"}))?;
//! assert_eq!(
//!     query,
//!     SerializedParameter::Query(vec![
//!         "filter%5Blabel%5D=good%20first%20issue".into(),
//!         "filter%5Bstate%5D=open".into(),
//!     ])
//! );
//!
//! // The spec leaves `deepObject` with `explode: false` undefined: a typed error naming the parameter.
//! let undefined = ParameterSpec { explode: Some(false), ..filter };
//! assert!(matches!(undefined.validate(), Err(Error::UndefinedCombination { parameter, .. }) if parameter == "filter"));
//!
//! // A form body: `card` style-based (deepObject), `note` content-based (RFC 1866, space as `+`).
//! let encodings = BTreeMap::from([(
//!     "card".to_string(),
//!     PropertyEncoding { style: Some(Style::DeepObject), ..PropertyEncoding::default() },
//! )]);
//! let body = encode_form_urlencoded(&json!({"card": {"cvc": "314"}, "note": "thank you"}), &encodings)?;
//! assert_eq!(body, "card%5Bcvc%5D=314&note=thank+you");
//! # Ok::<(), Error>(())
//! ```

#![deny(missing_docs)]

mod call;
mod config;
mod document;
mod error;
mod fetch;
mod filter;
mod http;
mod input_schema;
mod media_type;
mod naming;
mod operation;
mod reference;
pub mod serialize;
mod skill;
mod swagger2;

pub use call::{
    ApiKeyLocation, BINARY_ARGUMENT_HELP, Credential, DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_MAX_UPLOAD_BYTES, Endpoint, FILE_ARGUMENT_HELP, default_client,
};
pub use config::{ApiKeyAuth, AuthConfig, BasicAuth, BearerAuth, OpenApiConfig, SecretSetting};
pub use document::{Document, DocumentOrigin, SpecVersion};
pub use error::Error;
pub use fetch::LoadOptions;
pub use filter::{OperationFilter, OperationInfo, OperationMatcher};
pub use naming::{MAX_TOOL_NAME_LEN, operation_tool_name};
pub use operation::{BodyKind, Method, OperationParameter, OperationTool, RequestBody, SkippedOperation, ToolSet};
pub use serialize::{
    Location, ParameterSpec, PropertyEncoding, SerializedParameter, Style, ValueKind, encode_form_urlencoded,
    serialize_query_string,
};
pub use skill::OpenApiSkill;
