//! Loading an OpenAPI document, JSON or YAML, from a file or an http(s) URL, read
//! leniently into a `serde_json::Value`, with its version checked (3.0.x, 3.1.x, 3.2.x;
//! Swagger 2.0 converted to 3.0).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use url::Url;

use crate::Error;
use crate::fetch::{self, Budget, LoadOptions};
use crate::reference::FetchedDocument;
use crate::swagger2;
use skill_core::redact::{url as redacted, url_text as redacted_text};
use skill_core::{Icon, off_runtime};

/// The OpenAPI version line of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpecVersion {
    /// OpenAPI 3.0.x: schemas are an extended subset of JSON Schema draft 4 (`nullable`,
    /// boolean `exclusiveMinimum`), converted to JSON Schema 2020-12 for tool inputs.
    V3_0,
    /// OpenAPI 3.1.x: schemas are JSON Schema 2020-12.
    V3_1,
    /// OpenAPI 3.2.x: as 3.1, and besides the `query` method and `additionalOperations`
    /// (any method), `in: querystring` parameters, `itemSchema` for sequential media types,
    /// security requirements naming a scheme by URI and deprecated schemes. What else 3.2
    /// adds and tools do not use (`$self`, tag `kind` and `parent`, `oauth2MetadataUrl`,
    /// the device authorization flow) is left alone, as any unknown field is.
    V3_2,
}

impl fmt::Display for SpecVersion {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            SpecVersion::V3_0 => "3.0",
            SpecVersion::V3_1 => "3.1",
            SpecVersion::V3_2 => "3.2",
        })
    }
}

/// Where a document (the spec, or one its `$ref`s reach) came from: errors name it by this.
///
/// Its `Display` and `Debug` show a URL redacted (no user info, each query value as
/// `REDACTED`), since a URL may carry credentials; [`DocumentOrigin::url`] gives it whole.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum DocumentOrigin {
    /// Read from this file.
    File(PathBuf),
    /// Fetched from this URL (without its fragment). Boxed: a URL is several times the size
    /// of a path, and every error that names a document carries one.
    Url(Box<Url>),
}

impl From<PathBuf> for DocumentOrigin {
    fn from(path: PathBuf) -> Self {
        DocumentOrigin::File(path)
    }
}

impl From<Url> for DocumentOrigin {
    fn from(url: Url) -> Self {
        DocumentOrigin::Url(Box::new(url))
    }
}

impl DocumentOrigin {
    /// The file, for a document read from one.
    pub fn path(&self) -> Option<&Path> {
        match self {
            DocumentOrigin::File(path) => Some(path),
            DocumentOrigin::Url(_) => None,
        }
    }

    /// The URL, for a fetched document.
    pub fn url(&self) -> Option<&Url> {
        match self {
            DocumentOrigin::File(_) => None,
            DocumentOrigin::Url(url) => Some(url),
        }
    }
}

/// The file's path as the user gave it, or the URL redacted.
impl fmt::Display for DocumentOrigin {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentOrigin::File(path) => path.display().fmt(formatter),
            DocumentOrigin::Url(url) => formatter.write_str(redacted(url).as_str()),
        }
    }
}

/// As `Display`, in the variant: the URL redacted.
impl fmt::Debug for DocumentOrigin {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DocumentOrigin::File(path) => formatter.debug_tuple("File").field(path).finish(),
            DocumentOrigin::Url(url) => formatter.debug_tuple("Url").field(&redacted(url).as_str()).finish(),
        }
    }
}

/// An OpenAPI 3.0, 3.1 or 3.2 document, as read from its file or fetched from its URL.
///
/// Nothing beyond the version is checked when loading: the parts a tool needs are read
/// when tools are built ([`Document::tools`](crate::Document::tools)), so a document that
/// is sloppy where no tool looks still loads.
#[derive(Debug, Clone)]
pub struct Document {
    pub(crate) origin: DocumentOrigin,
    pub(crate) version: SpecVersion,
    pub(crate) root: Arc<Value>,
    /// For a fetched spec, every other document its `$ref`s reach, fetched when it was
    /// loaded; empty for a file, whose referenced files are read as refs are resolved.
    pub(crate) referenced: Arc<[FetchedDocument]>,
    /// The paths (files and folders) no file ref may name or enter, symbolic links
    /// resolved ([`LoadOptions::with_private_path`]).
    pub(crate) private_paths: Arc<[PathBuf]>,
    /// Whether the document was Swagger 2.0, converted to 3.0: 2.0 defines
    /// `collectionFormat` for multipart fields too, where 3.0 ignores `style`.
    pub(crate) from_swagger_2: bool,
}

impl Document {
    /// Loads the spec `source` names under `options`: an `http://` or `https://` URL is
    /// fetched ([`Document::from_url`]); anything else is a file path
    /// ([`Document::from_file`]), whose refs may not reach the options' private paths.
    ///
    /// ```no_run
    /// use skill_openapi::{Document, Error, LoadOptions, OperationFilter};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Error> {
    /// let options = LoadOptions::new();
    /// let document = Document::load("https://api.example.com/openapi.yaml", &options).await?;
    /// assert_eq!(document.url().map(|url| url.as_str()), Some("https://api.example.com/openapi.yaml"));
    /// let tools = document.tools(&OperationFilter::default())?.tools;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn load(source: &str, options: &LoadOptions) -> Result<Self, Error> {
        if is_http_url(source) {
            let url = Url::parse(source)
                .map_err(|error| Error::InvalidUrl { url: redacted_text(source), reason: error.to_string() })?;
            Self::from_url(&url, options).await
        } else {
            // Reading and parsing a file (GitHub's spec is 13 MB), and resolving the private
            // paths' links, block: they run off the runtime.
            let (path, options) = (PathBuf::from(source), options.clone());
            off_runtime(move || {
                let mut document = Self::from_file(path)?;
                document.private_paths = options.resolved_private_paths().into();
                Ok(document)
            })
            .await
            .unwrap_or_else(|cancelled| Err(Error::Read { path: PathBuf::from(source), source: cancelled.into() }))
        }
    }

    /// Fetches the spec at `url` (its fragment left out), then every document its `$ref`s
    /// reach, breadth-first, each once, so that tools can be built without further I/O.
    ///
    /// The body is parsed as its `Content-Type` says (JSON, or YAML), else as its URL's
    /// extension says, else as JSON then YAML. Every ref is resolved against the URL of the
    /// document it is in and must land on the spec's origin (scheme, host and port) under
    /// the folder of the spec's URL: one that resolves to a `file:` URL or another scheme is
    /// refused ([`Error::RefNotHttp`]), and one that lands anywhere else (another host, a
    /// `..` or a `/` out of the folder) is refused before anything is requested
    /// ([`Error::RefOutsideSpecFolder`]). A referenced document that is refused or cannot
    /// be fetched fails the whole load, as do more than [`LoadOptions::max_documents`]
    /// documents, more than [`LoadOptions::max_total_bytes`] bytes in all, or a load longer
    /// than [`LoadOptions::total_timeout`]. Every fetch follows the [`LoadOptions`]' rules.
    pub async fn from_url(url: &Url, options: &LoadOptions) -> Result<Self, Error> {
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Error::InvalidUrl {
                url: redacted(url).to_string(),
                reason: "only http and https are fetched".into(),
            });
        }
        let mut url = url.clone();
        url.set_fragment(None);
        tokio::time::timeout(options.total_timeout(), Self::fetch_all(url.clone(), options))
            .await
            .map_err(|_elapsed| Error::LoadTimeout { url: redacted(&url), after: options.total_timeout() })?
    }

    /// The spec at `url` and every document its refs reach, within one [`Budget`].
    async fn fetch_all(url: Url, options: &LoadOptions) -> Result<Self, Error> {
        let mut budget = Budget::new(&url, options);
        let root = options.get(&url, &mut budget).await?.parse(&url).await?;
        let mut document = Self::with_origin(url.into(), root)?;
        document.referenced = fetch::fetch_referenced(&document, options, &mut budget).await?.into();
        Ok(document)
    }

    /// Reads the document at `path`: JSON for `.json`, YAML for `.yaml` and `.yml`, else
    /// JSON then YAML. Converts Swagger 2.0 to OpenAPI 3.0; refuses other versions than
    /// 3.0.x, 3.1.x and 3.2.x.
    ///
    /// Its refs follow the file rules of [`Document::load`], with no private paths: load
    /// it with [`Document::load`] to name some.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let root = read_value(path, path)?;
        Self::from_value(path, root)
    }

    /// A document already parsed, as if read from `path`: its refs to other files are
    /// resolved against `path`'s folder.
    pub fn from_value(path: impl Into<PathBuf>, root: Value) -> Result<Self, Error> {
        Self::with_origin(DocumentOrigin::File(path.into()), root)
    }

    fn with_origin(origin: DocumentOrigin, root: Value) -> Result<Self, Error> {
        let from_swagger_2 = root.get("swagger").is_some();
        let root = match root {
            Value::Object(object) if object.contains_key("swagger") => {
                let found = version_text(&object["swagger"]);
                if found != "2.0" {
                    return Err(Error::UnsupportedSwagger { document: origin, found });
                }
                swagger2::convert(&origin, object)?
            }
            other => other,
        };
        let version = detect_version(&origin, &root)?;
        Ok(Document {
            origin,
            version,
            root: Arc::new(root),
            referenced: Arc::from([]),
            private_paths: Arc::from([]),
            from_swagger_2,
        })
    }

    /// Where the document came from.
    pub fn origin(&self) -> &DocumentOrigin {
        &self.origin
    }

    /// The file the document was read from; `None` for a fetched document.
    pub fn path(&self) -> Option<&Path> {
        self.origin.path()
    }

    /// The URL the document was fetched from, against which its relative server URLs
    /// and refs resolve; `None` for a document read from a file.
    pub fn url(&self) -> Option<&Url> {
        self.origin.url()
    }

    /// The document's OpenAPI version line.
    pub fn version(&self) -> SpecVersion {
        self.version
    }

    /// The whole document.
    pub fn root(&self) -> &Value {
        &self.root
    }

    /// The document's logo as an icon for its tools: `info.x-logo.url` (Redoc's
    /// extension, which APIs.guru adds to the documents it lists), when it is an
    /// `http(s):` or `data:` URI or a URL relative to the fetched document. The hosts
    /// that show it fetch it, so it never carries the user and password of the document's
    /// own URL.
    pub(crate) fn logo(&self) -> Option<Icon> {
        let given = self.root.pointer("/info/x-logo/url")?.as_str()?;
        let mut url = match self.url() {
            Some(base) => base.join(given),
            None => Url::parse(given),
        }
        .ok()
        .filter(|url| matches!(url.scheme(), "http" | "https" | "data"))?;
        if url.has_authority() {
            // Only fails for a URL that cannot have them, which then has none.
            let _ = (url.set_username(""), url.set_password(None));
        }
        Some(Icon::new(url))
    }
}

/// Whether `source` is an http(s) URL rather than a file path (scheme case-insensitive).
pub(crate) fn is_http_url(source: &str) -> bool {
    ["http://", "https://"]
        .iter()
        .any(|prefix| source.get(..prefix.len()).is_some_and(|start| start.eq_ignore_ascii_case(prefix)))
}

/// A version field's text; YAML may write it as a number (`openapi: 3.0`).
fn version_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.trim().to_owned(),
        Value::Number(number) => number.to_string(),
        other => other.to_string(),
    }
}

/// What `openapi` says, checked: 3.0.x, 3.1.x and 3.2.x pass. A YAML document may carry the
/// version as a number (`openapi: 3.0`), which is accepted too.
fn detect_version(origin: &DocumentOrigin, root: &Value) -> Result<SpecVersion, Error> {
    let Some(object) = root.as_object() else {
        return Err(Error::InvalidDocument {
            document: origin.clone(),
            reason: "the document is not an object".into(),
        });
    };
    let found = match object.get("openapi") {
        Some(value) => version_text(value),
        None => return Err(Error::UnsupportedVersion { document: origin.clone(), found: None }),
    };
    let mut parts = found.split('.');
    match (parts.next(), parts.next()) {
        (Some("3"), Some("0")) => Ok(SpecVersion::V3_0),
        (Some("3"), Some("1")) => Ok(SpecVersion::V3_1),
        (Some("3"), Some("2")) => Ok(SpecVersion::V3_2),
        _ => Err(Error::UnsupportedVersion { document: origin.clone(), found: Some(found) }),
    }
}

/// How a document's bytes are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    Json,
    Yaml,
}

impl Format {
    /// The format a file name's (or URL path's) extension says, if it says one.
    pub(crate) fn from_extension(name: &str) -> Option<Format> {
        let (_, extension) = name.rsplit_once('.')?;
        match extension.to_ascii_lowercase().as_str() {
            "json" => Some(Format::Json),
            "yaml" | "yml" => Some(Format::Yaml),
            _ => None,
        }
    }
}

/// Reads the JSON or YAML file at `real_path` into a value, choosing the parser by its
/// extension; errors name it `path` (as the user or the ref wrote it).
pub(crate) fn read_value(real_path: &Path, path: &Path) -> Result<Value, Error> {
    let bytes = std::fs::read(real_path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    let format = real_path.file_name().and_then(|name| name.to_str()).and_then(Format::from_extension);
    parse_value(&bytes, &DocumentOrigin::File(path.to_owned()), format)
}

/// Parses a document's bytes (a leading BOM skipped) as `format`, or when that is not
/// known, as JSON then YAML.
pub(crate) fn parse_value(bytes: &[u8], origin: &DocumentOrigin, format: Option<Format>) -> Result<Value, Error> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let parse_error = |format, message: String| Error::Parse { document: origin.clone(), format, message };
    match format {
        Some(Format::Json) => parse_json(bytes).map_err(|message| parse_error("JSON", message)),
        Some(Format::Yaml) => parse_yaml(bytes).map_err(|message| parse_error("YAML", message)),
        None => parse_json(bytes).or_else(|json_message| {
            parse_yaml(bytes).map_err(|yaml_message| {
                parse_error("JSON or YAML", format!("as JSON: {json_message}; as YAML: {yaml_message}"))
            })
        }),
    }
}

fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|error| error.to_string())
}

/// YAML goes through `serde_yaml_ng::Value` first: YAML mappings may have non-string keys
/// (`200:` in `responses`), which become strings here as JSON requires, and merge keys
/// (`<<: *defaults`) are applied.
fn parse_yaml(bytes: &[u8]) -> Result<Value, String> {
    let mut yaml: serde_yaml_ng::Value = serde_yaml_ng::from_slice(bytes).map_err(|error| error.to_string())?;
    yaml.apply_merge().map_err(|error| error.to_string())?;
    yaml_to_json(yaml)
}

fn yaml_to_json(yaml: serde_yaml_ng::Value) -> Result<Value, String> {
    use serde_yaml_ng::Value as Yaml;
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(flag) => Value::Bool(flag),
        Yaml::Number(number) => {
            if let Some(integer) = number.as_i64() {
                Value::from(integer)
            } else if let Some(integer) = number.as_u64() {
                Value::from(integer)
            } else {
                // NaN and infinities have no JSON form; they become null.
                number.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Yaml::String(text) => Value::String(text),
        Yaml::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(mapping) => {
            let mut object = serde_json::Map::with_capacity(mapping.len());
            for (key, value) in mapping {
                let key = match key {
                    Yaml::String(text) => text,
                    Yaml::Number(number) => number.to_string(),
                    Yaml::Bool(flag) => flag.to_string(),
                    Yaml::Null => "null".to_owned(),
                    other => return Err(format!("unsupported mapping key {other:?}")),
                };
                object.insert(key, yaml_to_json(value)?);
            }
            Value::Object(object)
        }
        Yaml::Tagged(tagged) => yaml_to_json(tagged.value)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> Result<Document, Error> {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(name);
        std::fs::write(&path, text).unwrap();
        Document::from_file(&path)
    }

    #[test]
    fn versions_are_detected_in_json_and_yaml() {
        let check =
            |name: &str, text: &str, expect: SpecVersion| assert_eq!(load(name, text).unwrap().version(), expect);
        check("a.json", r#"{"openapi": "3.0.3", "paths": {}}"#, SpecVersion::V3_0);
        check("a.yaml", "openapi: 3.1.0\npaths: {}\n", SpecVersion::V3_1);
        check("a.yml", "openapi: 3.0\n", SpecVersion::V3_0);
        // Without a telling extension: JSON first, then YAML; a BOM is skipped.
        check(
            "spec",
            "\u{feff}openapi: '3.1.1'\npaths:\n  /a:\n    get:\n      responses:\n        200: {}\n",
            SpecVersion::V3_1,
        );
        check("spec.txt", r#"{"openapi": "3.0.0"}"#, SpecVersion::V3_0);
        check("a.yaml", "openapi: 3.2.0\npaths: {}\n", SpecVersion::V3_2);
        check(
            "b.json",
            r#"{"openapi": "3.2.1", "$self": "https://example.com/api/openapi", "paths": {}}"#,
            SpecVersion::V3_2,
        );
    }

    #[test]
    fn yaml_numeric_keys_become_strings_and_merge_keys_apply() {
        let document =
            load("a.yaml", "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200: {}\n").unwrap();
        assert!(document.root().pointer("/paths/~1a/get/responses/200").is_some());
        let text = "openapi: 3.1.0\nx-base: &base {type: string}\ncomponents:\n  schemas:\n    Name:\n      <<: *base\n      maxLength: 9\n";
        let document = load("b.yaml", text).unwrap();
        assert_eq!(
            document.root()["components"]["schemas"]["Name"],
            serde_json::json!({"type": "string", "maxLength": 9})
        );
    }

    #[test]
    fn swagger_2_is_converted_and_versions_after_3_2_are_refused_naming_the_file() {
        let document = load("petstore.yaml", "swagger: 2.0\nhost: pets.example\npaths: {}\n").unwrap();
        assert_eq!(document.version(), SpecVersion::V3_0);
        assert_eq!(document.root()["servers"], serde_json::json!([{"url": "https://pets.example"}]));
        let error = load("petstore.json", r#"{"swagger": "1.2", "paths": {}}"#).unwrap_err();
        assert!(
            matches!(&error, Error::UnsupportedSwagger { document, found } if found == "1.2" && document.path().is_some_and(|path| path.ends_with("petstore.json"))),
            "{error:?}"
        );
        assert!(error.to_string().contains("petstore.json is Swagger 1.2, which is not supported"), "{error}");

        let error = load("next.yaml", "openapi: 3.3.0\n").unwrap_err();
        assert!(
            matches!(&error, Error::UnsupportedVersion { found: Some(found), .. } if found == "3.3.0"),
            "{error:?}"
        );
        assert!(
            error.to_string().ends_with("next.yaml is not an OpenAPI 3.0, 3.1 or 3.2 document (`openapi: 3.3.0`)"),
            "{error}"
        );
        let error = load("four.json", r#"{"openapi": "4.0.0"}"#).unwrap_err();
        assert!(
            matches!(&error, Error::UnsupportedVersion { found: Some(found), .. } if found == "4.0.0"),
            "{error:?}"
        );

        let error = load("empty.json", "{}").unwrap_err();
        assert!(matches!(error, Error::UnsupportedVersion { found: None, .. }), "{error:?}");
    }

    #[test]
    fn unparsable_files_name_the_file_and_the_format() {
        let error = load("bad.json", "openapi: 3.0.0").unwrap_err();
        assert!(matches!(error, Error::Parse { format: "JSON", .. }), "{error:?}");
        let error = load("bad", "{ [").unwrap_err();
        assert!(error.to_string().contains("bad is not valid JSON or YAML"), "{error}");
        let error = Document::from_file("/nonexistent/spec.yaml").unwrap_err();
        assert!(matches!(error, Error::Read { .. }), "{error:?}");
    }

    #[tokio::test]
    async fn a_file_spec_loaded_off_the_runtime_keeps_its_errors() {
        let error = Document::load("/nonexistent/spec.yaml", &LoadOptions::new()).await.unwrap_err();
        assert!(
            matches!(&error, Error::Read { path, source } if path == Path::new("/nonexistent/spec.yaml")
                && source.kind() == std::io::ErrorKind::NotFound),
            "{error:?}"
        );
    }

    #[test]
    fn outside_a_tokio_runtime_a_file_spec_loads_in_place() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("spec.json");
        std::fs::write(&path, r#"{"openapi": "3.1.0"}"#).unwrap();
        let options = LoadOptions::new();
        let load = std::pin::pin!(Document::load(path.to_str().unwrap(), &options));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(loaded) = load.poll(&mut context) else { panic!("the load waited") };
        assert_eq!(loaded.unwrap().version(), SpecVersion::V3_1);
    }

    #[test]
    fn the_logo_is_an_icon_when_it_is_a_web_or_data_uri() {
        let logo = |origin: DocumentOrigin, url: &str| {
            let root = serde_json::json!({"openapi": "3.1.0", "info": {"title": "t", "x-logo": {"url": url}}});
            Document::with_origin(origin, root).unwrap().logo().map(|icon| icon.src)
        };
        let file = || DocumentOrigin::File("spec.json".into());
        let stripe = "https://twitter.com/stripe/profile_image?size=original";
        assert_eq!(logo(file(), stripe).as_deref(), Some(stripe));
        let data = "data:image/png;base64,iVBORw0KGgo=";
        assert_eq!(logo(file(), data).as_deref(), Some(data));
        assert_eq!(logo(file(), "javascript:alert(1)"), None, "only web and data URIs");
        assert_eq!(logo(file(), "logo.png"), None, "relative to a file: nothing to fetch it from");
        let fetched = DocumentOrigin::from(Url::parse("https://api.example.com/v1/openapi.json").unwrap());
        assert_eq!(logo(fetched, "logo.png").as_deref(), Some("https://api.example.com/v1/logo.png"));
        let with_credentials = Url::parse("https://me:s3cret@api.example.com/v1/openapi.json?key=k3y").unwrap();
        let shown = logo(DocumentOrigin::from(with_credentials), "logo.png");
        assert_eq!(
            shown.as_deref(),
            Some("https://api.example.com/v1/logo.png"),
            "neither its user info nor its query"
        );
        let root = serde_json::json!({"openapi": "3.1.0", "info": {"title": "t"}});
        assert_eq!(Document::with_origin(file(), root).unwrap().logo(), None);
    }
}
