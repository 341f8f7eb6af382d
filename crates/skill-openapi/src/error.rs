//! The crate's error type.

use std::path::PathBuf;

use crate::serialize::{Location, Style, ValueKind};

/// Why a document could not be loaded, an operation could not become a tool, or a
/// parameter or a request body could not be serialized.
///
/// Every variant that concerns one file names it, every variant that concerns a `$ref`
/// names the ref, and every variant that concerns one parameter (or one form-body
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
    /// A document file could not be read.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A document is neither JSON nor YAML (or not the one its extension says).
    #[error("{} is not valid {format}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// `JSON`, `YAML`, or `JSON or YAML` when the extension did not tell.
        format: &'static str,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A Swagger 2.0 document: only OpenAPI 3.0 and 3.1 are supported.
    #[error("{} is Swagger 2.0, which is not supported: convert it to OpenAPI 3 first", path.display())]
    Swagger2 {
        /// The file.
        path: PathBuf,
    },
    /// A document whose `openapi` field is missing or not 3.0.x or 3.1.x.
    #[error("{} is not an OpenAPI 3.0 or 3.1 document ({})", path.display(), found.as_deref().map_or_else(|| "no `openapi` field".to_owned(), |found| format!("`openapi: {found}`")))]
    UnsupportedVersion {
        /// The file.
        path: PathBuf,
        /// The `openapi` field as written, if there is one.
        found: Option<String>,
    },
    /// A document (or a part of one that a tool needs) does not have the shape the spec
    /// gives it, such as a parameter without `name`.
    #[error("{}: {reason}", path.display())]
    InvalidDocument {
        /// The file.
        path: PathBuf,
        /// What is wrong, and where.
        reason: String,
    },
    /// A `$ref` to a file outside the spec's folder: an absolute path, a `file:` URL, or a
    /// relative path that climbs out with `..` (or through a symbolic link).
    #[error("$ref `{reference}` in {} points outside the spec's folder", document.display())]
    RefOutsideSpecFolder {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: PathBuf,
    },
    /// A `$ref` to an http(s) URL: fetching referenced documents is not supported yet.
    #[error("$ref `{reference}` in {} is a URL, and fetching referenced documents is not supported yet", document.display())]
    RemoteRefNotSupported {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: PathBuf,
    },
    /// A `$ref` whose target does not exist (or whose fragment is not a JSON Pointer).
    #[error("$ref `{reference}` in {} points to nothing", document.display())]
    RefNotFound {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: PathBuf,
    },
    /// A chain of `$ref`s (outside schemas) that comes back to where it started.
    #[error("$ref `{reference}` in {} is part of a cycle of refs", document.display())]
    RefCycle {
        /// The ref as written.
        reference: String,
        /// The document it is in.
        document: PathBuf,
    },
    /// A parameter's `style` is not one the spec defines.
    #[error("parameter `{parameter}`: unknown style `{style}`")]
    UnknownStyle {
        /// The parameter's name.
        parameter: String,
        /// The style as written.
        style: String,
    },
}
