//! The crate's error type.

use std::path::PathBuf;
use std::time::Duration;

use url::Url;

use crate::document::DocumentOrigin;
use crate::serialize::{Location, Style, ValueKind};

/// Why a document could not be loaded, an operation could not become a tool, or a
/// parameter or a request body could not be serialized.
///
/// Every variant that concerns one file or URL names it, every variant that concerns a
/// `$ref` names the ref, and every variant that concerns one parameter (or one form-body
/// property) names it, so the message can go back to the user or the model unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The style is not one the location allows (OAS 3.1.1 §4.8.12.3, Style Values): path
    /// takes `simple`, `label` and `matrix`; query takes `form`, `spaceDelimited`,
    /// `pipeDelimited` and `deepObject`; header takes `simple`; cookie takes `form`.
    #[error("parameter `{parameter}`: style `{style}` is not allowed in {location}")]
    StyleNotAllowed {
        /// The parameter's name.
        parameter: String,
        /// Where the parameter goes.
        location: Location,
        /// The style that was asked for.
        style: Style,
    },
    /// The style with this `explode` value is undefined for every value: a whole row of
    /// _n/a_ in the style table (`spaceDelimited` or `pipeDelimited` with explode true,
    /// `deepObject` with explode false).
    #[error("parameter `{parameter}`: style `{style}` with explode {explode} is undefined")]
    UndefinedCombination {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// The effective explode.
        explode: bool,
    },
    /// The style has no serialization for this kind of value: an _n/a_ cell of the style
    /// table, such as a primitive with `pipeDelimited` or an array with `deepObject`.
    #[error("parameter `{parameter}`: style `{style}` cannot serialize {kind} value")]
    UnsupportedValue {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// What the value was.
        kind: ValueKind,
    },
    /// An array or object inside an array or object: RFC 6570 defines one level only, and
    /// `deepObject` defines scalar properties only (OAS 3.1.1 Appendix C, §4.8.12.3).
    #[error("parameter `{parameter}`: style `{style}` does not define {inner} inside {outer}")]
    NestedValue {
        /// The parameter's name.
        parameter: String,
        /// The effective style.
        style: Style,
        /// The value's kind (array or object).
        outer: ValueKind,
        /// The kind of the member that is nested in it.
        inner: ValueKind,
    },
    /// An `application/x-www-form-urlencoded` body must be a JSON object, one property per
    /// form field.
    #[error("a form-urlencoded body must be a JSON object, not {kind} value")]
    FormBodyNotObject {
        /// What the body was.
        kind: ValueKind,
    },
    /// An `in: querystring` parameter (OpenAPI 3.2) sent as
    /// `application/x-www-form-urlencoded` whose value is not a JSON object, one property
    /// per field.
    #[error(
        "parameter `{parameter}`: a form-urlencoded query string must be a JSON object, one property per field, not {kind} value"
    )]
    QueryStringNotObject {
        /// The parameter's name.
        parameter: String,
        /// What the value was.
        kind: ValueKind,
    },
    /// A cookie parameter given by `content`, whose value is sent as its media type writes
    /// it, with a character that a cookie value cannot hold (RFC 6265 §4.1.1: whitespace,
    /// `"`, `,`, `;`, `\`, control and non-ASCII characters), which could end the cookie
    /// and add others.
    #[error(
        "parameter `{parameter}`: the value cannot be sent as a cookie: it holds {character:?}, and a cookie value given by `content` is sent as written, so it may hold only RFC 6265 cookie octets"
    )]
    CookieValueNotSafe {
        /// The parameter's name.
        parameter: String,
        /// The first character that cannot be sent.
        character: char,
    },
    /// A document file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A document is neither JSON nor YAML (or not the one its extension or its
    /// `Content-Type` says).
    #[error("{document} is not valid {format}: {message}")]
    Parse {
        /// The file or URL.
        document: DocumentOrigin,
        /// `JSON`, `YAML`, or `JSON or YAML` when neither the extension nor the
        /// `Content-Type` told.
        format: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A Swagger document of another version than 2.0 (which is read, converted to
    /// OpenAPI 3.0).
    #[error("{document} is Swagger {found}, which is not supported: only Swagger 2.0 is")]
    UnsupportedSwagger {
        /// The file or URL.
        document: DocumentOrigin,
        /// What its `swagger` field says.
        found: String,
    },
    /// A document whose `openapi` field is missing or not 3.0.x, 3.1.x or 3.2.x.
    #[error("{document} is not an OpenAPI 3.0, 3.1 or 3.2 document ({})", found.as_deref().map_or_else(|| "no `openapi` field".to_owned(), |found| format!("`openapi: {found}`")))]
    UnsupportedVersion {
        /// The file or URL.
        document: DocumentOrigin,
        /// The `openapi` field as written, if there is one.
        found: Option<String>,
    },
    /// A document (or a part of one that a tool needs) does not have the shape the spec
    /// gives it, such as a parameter without `name`.
    #[error("{document}: {reason}")]
    InvalidDocument {
        /// The file or URL.
        document: DocumentOrigin,
        /// What is wrong, and where.
        reason: String,
    },
    /// An operation whose parameters OpenAPI 3.2 does not allow together: more than one
    /// `in: querystring` parameter, or one beside `in: query` parameters (a querystring
    /// parameter is the whole query string). Only that operation is left out.
    #[error("{document}: {operation}: {problem}")]
    QueryStringParameters {
        /// The file or URL the operation's path item is in.
        document: DocumentOrigin,
        /// The operation: its method and path template, and its `operationId` if any
        /// (``GET /items (`listItems`)``).
        operation: String,
        /// What is wrong, naming the parameters.
        problem: String,
    },
    /// A `$ref` out of the spec's folder. In a file: an absolute path, a `file:` URL, or a
    /// relative path that climbs out with `..` (or through a symbolic link). In a fetched
    /// document: a ref (relative, root-relative or absolute) that, resolved against its
    /// document's URL, is not on the spec's origin (scheme, host, port) under the folder of
    /// the spec's URL; it is never requested.
    #[error("$ref `{reference}` in {document} points outside the spec's folder")]
    RefOutsideSpecFolder {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A `$ref` in a file to a file that is not a JSON or YAML document (its name, or its
    /// real name once symbolic links are resolved, does not end in `.json`, `.yaml` or
    /// `.yml`), such as a key file.
    #[error("$ref `{reference}` in {document} is refused: a spec may reference only .json, .yaml and .yml files")]
    RefNotADocument {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A `$ref` in a file whose path has a hidden file or folder (a name starting with
    /// `.`), as written or once symbolic links are resolved.
    #[error(
        "$ref `{reference}` in {document} is refused: it names a hidden file or folder (one whose name starts with `.`)"
    )]
    RefHidden {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A `$ref` in a file to a file the host named private, or to a file in a folder it
    /// named private ([`LoadOptions::with_private_path`](crate::LoadOptions::with_private_path)).
    #[error("$ref `{reference}` in {document} is refused: it reaches the private path {}", path.display())]
    RefInPrivatePath {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
        /// The private path (a file or a folder), symbolic links resolved.
        path: PathBuf,
    },
    /// A `$ref` to an http(s) URL in a spec read from a file, which may reference files
    /// under its folder only.
    #[error("$ref `{reference}` in {document} is a URL, and a spec read from a file may reference only files")]
    RemoteRefNotSupported {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A `$ref` in a fetched document that, resolved against its document's URL, is not an
    /// http(s) URL: a `file:` URL, or another scheme.
    #[error("$ref `{reference}` in {document} is refused: a fetched document may reference only http(s) URLs")]
    RefNotHttp {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A `$ref` whose target does not exist (or whose fragment is not a JSON Pointer).
    #[error("$ref `{reference}` in {document} points to nothing")]
    RefNotFound {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A chain of `$ref`s (outside schemas) that comes back to where it started.
    #[error("$ref `{reference}` in {document} is part of a cycle of refs")]
    RefCycle {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: DocumentOrigin,
    },
    /// A spec source that looks like a URL but does not parse as one, or a URL that is
    /// not http(s).
    #[error("`{url}` is not a URL that can be fetched: {reason}")]
    InvalidUrl {
        /// The source as given, redacted: no user info, query values as `REDACTED`.
        url: String,
        /// Why.
        reason: String,
    },
    /// A document could not be fetched: the connection failed or broke, or the HTTP
    /// client could not be built.
    #[error("cannot fetch {url}: {reason}")]
    Fetch {
        /// The document's URL, redacted: no user info, query values as `REDACTED`.
        url: Url,
        /// Why, down to the innermost cause (such as `Connection refused`).
        reason: String,
    },
    /// Fetching a document (connecting, the answer and the whole body) took longer than
    /// the load options allow.
    #[error("fetching {url} took longer than {} s", after.as_secs_f64())]
    FetchTimeout {
        /// The document's URL, redacted: no user info, query values as `REDACTED`.
        url: Url,
        /// The time allowed.
        after: Duration,
    },
    /// A document's URL answered with a redirect (3xx), which is never followed.
    #[error("{url} answered {} {}, and redirects are not followed", crate::http::status_text(*status), location.as_deref().map_or_else(|| "without a Location".to_owned(), |location| format!("to {location}")))]
    Redirect {
        /// The document's URL, redacted: no user info, query values as `REDACTED`.
        url: Url,
        /// The HTTP status.
        status: u16,
        /// The `Location` header, if there is one, redacted as the URL is.
        location: Option<String>,
    },
    /// A document's URL answered with a status other than 2xx and 3xx.
    #[error("{url} answered {}", crate::http::status_text(*status))]
    HttpStatus {
        /// The document's URL, redacted: no user info, query values as `REDACTED`.
        url: Url,
        /// The HTTP status.
        status: u16,
    },
    /// A document larger than the load options allow: refused as soon as its `Content-Length`
    /// says so, else as soon as the bytes received pass the limit.
    #[error("{url} is larger than the limit of {limit} bytes per document{}", declared.map_or_else(String::new, |declared| format!(" (Content-Length: {declared})")))]
    TooLarge {
        /// The document's URL, redacted: no user info, query values as `REDACTED`.
        url: Url,
        /// The limit, in bytes.
        limit: u64,
        /// The `Content-Length`, when it was over the limit.
        declared: Option<u64>,
    },
    /// A fetched spec whose refs reach more documents than the load options allow.
    #[error("{url} references more than {limit} documents (the spec included)")]
    TooManyDocuments {
        /// The spec's URL, redacted.
        url: Url,
        /// The limit.
        limit: usize,
    },
    /// A fetched spec whose documents together (the spec and every document its refs
    /// reach) are larger than the load options allow: refused as soon as a
    /// `Content-Length`, or the bytes received, pass what is left.
    #[error(
        "{url} and the documents it references are larger than the limit of {limit} bytes for one load (passed while fetching {document})"
    )]
    TotalTooLarge {
        /// The spec's URL, redacted.
        url: Url,
        /// The document being fetched when the limit was passed, redacted (boxed, as two
        /// URLs would make every error larger).
        document: Box<Url>,
        /// The limit, in bytes.
        limit: u64,
    },
    /// Loading a fetched spec (the spec and every document its refs reach) took longer
    /// than the load options allow.
    #[error("loading {url} and the documents it references took longer than {} s", after.as_secs_f64())]
    LoadTimeout {
        /// The spec's URL, redacted.
        url: Url,
        /// The time allowed.
        after: Duration,
    },
    /// A parameter's `style` is not one the spec defines.
    #[error("parameter `{parameter}`: unknown style `{style}`")]
    UnknownStyle {
        /// The parameter's name.
        parameter: String,
        /// The style as written.
        style: String,
    },
    /// No server URL to call: the document has no `servers`, was read from a file (so
    /// the spec's default `/` has nothing to resolve against), and no base URL was given.
    #[error("{document} has no `servers`")]
    NoServer {
        /// The document.
        document: DocumentOrigin,
    },
    /// A server URL (the document's `servers[0]`, an operation's, or the base URL given)
    /// that cannot be called.
    #[error("server URL `{url}` of {document} cannot be used: {reason}")]
    InvalidServerUrl {
        /// The document.
        document: DocumentOrigin,
        /// The URL as written (variables not yet substituted), redacted: no user info, query
        /// values as `REDACTED`.
        url: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A relative server URL in a document read from a file: there is no URL to resolve
    /// it against.
    #[error(
        "server URL `{url}` in {document} is relative, and a document read from a file has no URL to resolve it against"
    )]
    RelativeServerUrl {
        /// The document.
        document: DocumentOrigin,
        /// The URL as written, redacted.
        url: String,
    },
    /// A server variable that cannot be substituted: undeclared, without a `default`, or
    /// with a `default` that its `enum` does not list.
    #[error("server URL `{url}` of {document}: variable `{variable}` {problem}")]
    ServerVariable {
        /// The document.
        document: DocumentOrigin,
        /// The server URL as written, redacted.
        url: String,
        /// The variable's name.
        variable: String,
        /// What is wrong with it.
        problem: String,
    },
    /// An API key without a name or a location, which the document's security schemes
    /// do not settle.
    #[error("the API key for {document} needs its name and location set: {reason}")]
    ApiKeyPlacement {
        /// The document.
        document: DocumentOrigin,
        /// Why the document does not settle them: no schemes, or several that fit.
        reason: String,
    },
    /// A credential that matches none of the document's security schemes, so it would
    /// never be sent.
    #[error(
        "the {credential} matches no security scheme of {document} (it defines {}), so it would never be sent",
        schemes.join(", ")
    )]
    CredentialMatchesNoScheme {
        /// The document.
        document: DocumentOrigin,
        /// What the credential is: `API key`, `bearer token` or `basic credential`.
        credential: &'static str,
        /// The document's schemes, each as `name (type)`.
        schemes: Vec<String>,
    },
    /// A credential that cannot go into a request, such as a token with a line break or
    /// an API key name that is no header name. The message never holds the secret.
    #[error("the {credential} for {document} cannot be sent: {reason}")]
    InvalidCredential {
        /// The document.
        document: DocumentOrigin,
        /// What the credential is: `API key`, `bearer token` or `basic credential`.
        credential: &'static str,
        /// Why.
        reason: String,
    },
}
