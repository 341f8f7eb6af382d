//! Loading rules: fetching documents over http(s) with the loader's own client (no
//! redirects, a size limit enforced while the body streams in, timeouts, a budget for the
//! whole load), fetching up front every document a fetched spec's `$ref`s reach, and the
//! private paths (files and folders) a spec read from a file may never reference.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde_json::Value;
use url::Url;

use crate::Error;
use crate::document::{Document, DocumentOrigin, Format, parse_value};
use crate::http::{USER_AGENT, install_crypto_provider, reqwest_reason};
use crate::media_type::essence;
use crate::reference::{FetchedDocument, folder_of, url_ref_target};
use skill_core::off_runtime;
use skill_core::redact::{url as redacted, url_text as redacted_text};

/// How documents are loaded ([`Document::load`]): the rules for fetching them by URL, with
/// the loader's own HTTP client (never one given for calling the API, whose middleware
/// might sign or follow redirects), and the private paths (files and folders) a spec read
/// from a file may not reference.
///
/// - Redirects are never followed: any 3xx is [`Error::Redirect`], naming its `Location`.
/// - A status other than 2xx is [`Error::HttpStatus`], naming the URL and the status.
/// - A document has at most [`max_bytes`](LoadOptions::max_bytes) bytes (10 MiB by
///   default): a `Content-Length` over the limit is refused before the body is read, and the
///   body is counted as it streams in, so a chunked body without `Content-Length` is refused
///   as soon as it passes the limit too ([`Error::TooLarge`]). A body longer than its
///   `Content-Length` is read only up to the length it declares.
/// - Connecting may take 10 s, and a whole fetch (connecting, the answer and the body)
///   [`timeout`](LoadOptions::timeout), 30 s by default ([`Error::FetchTimeout`]).
/// - A fetched spec's refs may reach at most [`max_documents`](LoadOptions::max_documents)
///   documents, the spec included (200 by default, [`Error::TooManyDocuments`]).
/// - One load, the spec and every document its refs reach together, has a budget besides:
///   at most [`max_total_bytes`](LoadOptions::max_total_bytes) bytes (50 MiB by default,
///   [`Error::TotalTooLarge`]) and [`total_timeout`](LoadOptions::total_timeout) (60 s by
///   default, [`Error::LoadTimeout`]).
/// - A spec read from a file may not reference a [private path](LoadOptions::with_private_path),
///   a file or a folder, nor anything under it ([`Error::RefInPrivatePath`]).
///
/// Cloning is cheap: clones share the connection pool.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The client, made by the first fetch (a file spec never needs one, and making one
    /// reads the system's trust roots), or why it could not be made.
    client: Arc<OnceLock<Result<reqwest::Client, String>>>,
    max_bytes: u64,
    timeout: Duration,
    max_documents: usize,
    max_total_bytes: u64,
    total_timeout: Duration,
    private_paths: Vec<PathBuf>,
}

/// The `Accept` header of every fetch: OpenAPI documents are JSON or YAML.
const ACCEPT_DOCUMENTS: &str = "application/json, application/yaml;q=0.9, */*;q=0.8";

impl LoadOptions {
    /// The default size limit of one document: 10 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
    /// The default time one whole fetch may take: 30 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// The time connecting may take: 10 s.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default number of documents a fetched spec may reach, itself included: 200.
    pub const DEFAULT_MAX_DOCUMENTS: usize = 200;
    /// The default size limit of all the documents of one load together: 50 MiB.
    pub const DEFAULT_MAX_TOTAL_BYTES: u64 = 50 * 1024 * 1024;
    /// The default time one whole load (every fetch of it) may take: 60 s.
    pub const DEFAULT_TOTAL_TIMEOUT: Duration = Duration::from_secs(60);

    /// Options with the default limits and no private path.
    pub fn new() -> Self {
        LoadOptions {
            client: Arc::default(),
            max_bytes: Self::DEFAULT_MAX_BYTES,
            timeout: Self::DEFAULT_TIMEOUT,
            max_documents: Self::DEFAULT_MAX_DOCUMENTS,
            max_total_bytes: Self::DEFAULT_MAX_TOTAL_BYTES,
            total_timeout: Self::DEFAULT_TOTAL_TIMEOUT,
            private_paths: Vec::new(),
        }
    }

    /// The loader's own client: no redirects followed, a connect timeout.
    fn client(&self) -> Result<&reqwest::Client, &String> {
        let client = self.client.get_or_init(|| {
            install_crypto_provider();
            reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .connect_timeout(Self::CONNECT_TIMEOUT)
                .user_agent(USER_AGENT)
                .build()
                .map_err(|error| format!("cannot build the HTTP client: {}", reqwest_reason(error)))
        });
        client.as_ref()
    }

    /// [`LoadOptions::client`], made off the runtime the first time: reading the trust
    /// roots blocks.
    async fn client_off_runtime(&self) -> Result<reqwest::Client, String> {
        if let Some(made) = self.client.get() {
            return made.clone();
        }
        let options = self.clone();
        off_runtime(move || options.client().cloned().map_err(String::clone))
            .await
            .unwrap_or_else(|cancelled| Err(format!("cannot build the HTTP client: {cancelled}")))
    }

    /// The same options with another size limit per document, in bytes.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The same options with another time limit for one whole fetch.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same options with another limit on the documents a fetched spec may reach,
    /// itself included.
    pub fn with_max_documents(mut self, max_documents: usize) -> Self {
        self.max_documents = max_documents;
        self
    }

    /// The same options with another size limit for all the documents of one load
    /// together, in bytes.
    pub fn with_max_total_bytes(mut self, max_total_bytes: u64) -> Self {
        self.max_total_bytes = max_total_bytes;
        self
    }

    /// The same options with another time limit for one whole load.
    pub fn with_total_timeout(mut self, total_timeout: Duration) -> Self {
        self.total_timeout = total_timeout;
        self
    }

    /// The same options with `path` private, a file or a folder: no `$ref` of a spec read
    /// from a file may name it, or anything under it, whatever symbolic links lead there.
    /// For the agent's own configuration, keys and tokens (a config file, a key file, the
    /// folder of its tokens), which a spec placed beside them could otherwise copy into the
    /// tool schemas sent to a model. A relative path is relative to the current folder
    /// when the spec loads.
    pub fn with_private_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.private_paths.push(path.into());
        self
    }

    /// The size limit of one document, in bytes.
    pub fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// The time one whole fetch may take.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How many documents a fetched spec may reach, itself included.
    pub fn max_documents(&self) -> usize {
        self.max_documents
    }

    /// The size limit of all the documents of one load together, in bytes.
    pub fn max_total_bytes(&self) -> u64 {
        self.max_total_bytes
    }

    /// The time one whole load may take.
    pub fn total_timeout(&self) -> Duration {
        self.total_timeout
    }

    /// The private paths, as given, for the endpoint of a skill loaded with these options.
    pub(crate) fn private_paths(&self) -> &[PathBuf] {
        &self.private_paths
    }

    /// The private paths with symbolic links resolved ([`resolved_private_paths`]).
    pub(crate) fn resolved_private_paths(&self) -> Vec<PathBuf> {
        resolved_private_paths(&self.private_paths)
    }

    /// Fetches `url` under the rules above, within `budget`.
    pub(crate) async fn get(&self, url: &Url, budget: &mut Budget) -> Result<FetchedBody, Error> {
        tokio::time::timeout(self.timeout, self.get_untimed(url, budget))
            .await
            .map_err(|_elapsed| Error::FetchTimeout { url: redacted(url), after: self.timeout })?
    }

    async fn get_untimed(&self, url: &Url, budget: &mut Budget) -> Result<FetchedBody, Error> {
        let client = self.client_off_runtime().await.map_err(|reason| Error::Fetch { url: redacted(url), reason })?;
        let mut response = client
            .get(url.clone())
            .header(ACCEPT, ACCEPT_DOCUMENTS)
            .send()
            .await
            .map_err(|error| fetch_error(url, error))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response.headers().get(LOCATION).map(|location| {
                let location = String::from_utf8_lossy(location.as_bytes());
                url.join(&location).map_or_else(|_| redacted_text(&location), |target| redacted(&target).into())
            });
            return Err(Error::Redirect { url: redacted(url), status: status.as_u16(), location });
        }
        if !status.is_success() {
            return Err(Error::HttpStatus { url: redacted(url), status: status.as_u16() });
        }
        let too_large = |declared| Error::TooLarge { url: redacted(url), limit: self.max_bytes, declared };
        let declared = response.content_length();
        if let Some(declared) = declared.filter(|&declared| declared > self.max_bytes) {
            return Err(too_large(Some(declared)));
        }
        if declared.is_some_and(|declared| declared > budget.remaining) {
            return Err(budget.exceeded(url));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|content_type| String::from_utf8_lossy(content_type.as_bytes()).into_owned());
        // Room for what the server declares, within the limit, and never more than the
        // default limit up front, however high the limit was set: the rest grows as it comes.
        let reserve = declared.unwrap_or(0).min(Self::DEFAULT_MAX_BYTES);
        let mut bytes = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
        while let Some(chunk) = response.chunk().await.map_err(|error| fetch_error(url, error))? {
            let received = (bytes.len() + chunk.len()) as u64;
            if received > self.max_bytes {
                return Err(too_large(None));
            }
            if received > budget.remaining {
                return Err(budget.exceeded(url));
            }
            bytes.extend_from_slice(&chunk);
        }
        budget.remaining -= bytes.len() as u64;
        Ok(FetchedBody { bytes, content_type })
    }
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self::new()
    }
}

/// `paths` with symbolic links resolved, as the real paths of files are compared with
/// them; a path that does not exist (and so is no file and holds none) as given, made
/// absolute.
pub(crate) fn resolved_private_paths(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths.iter().map(|path| path.canonicalize().unwrap_or_else(|_| absolute(path))).collect()
}

/// `path` made absolute (against the current folder) without touching the filesystem,
/// `.` and `..` folded away lexically: `..` drops the name before it, whatever symbolic
/// link that name may be, and stays at the root at the root.
pub(crate) fn absolute(path: &Path) -> PathBuf {
    let path = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let mut normal = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if normal.parent().is_some() {
                    normal.pop();
                }
            }
            other => normal.push(other),
        }
    }
    normal
}

/// What is left of one load's byte budget ([`LoadOptions::max_total_bytes`]).
#[derive(Debug)]
pub(crate) struct Budget {
    /// The spec's URL, which the error names.
    spec: Url,
    limit: u64,
    remaining: u64,
}

impl Budget {
    /// The whole budget of a load of the spec at `spec`.
    pub(crate) fn new(spec: &Url, options: &LoadOptions) -> Self {
        Budget { spec: spec.clone(), limit: options.max_total_bytes, remaining: options.max_total_bytes }
    }

    /// The error for passing the budget while fetching `url`.
    fn exceeded(&self, url: &Url) -> Error {
        Error::TotalTooLarge { url: redacted(&self.spec), document: Box::new(redacted(url)), limit: self.limit }
    }
}

/// A fetched document's bytes and how its server says they are written.
#[derive(Debug)]
pub(crate) struct FetchedBody {
    pub(crate) bytes: Vec<u8>,
    pub(crate) content_type: Option<String>,
}

impl FetchedBody {
    /// The body, fetched from `url`, parsed as [`format_of`] says, off the runtime: a
    /// large document (GitHub's is 13 MB) takes a while.
    pub(crate) async fn parse(self, url: &Url) -> Result<Value, Error> {
        let format = format_of(self.content_type.as_deref(), url);
        let (bytes, origin) = (self.bytes, DocumentOrigin::from(url.clone()));
        off_runtime(move || parse_value(&bytes, &origin, format)).await.unwrap_or_else(|cancelled| {
            Err(Error::Fetch { url: redacted(url), reason: format!("it was not parsed: {cancelled}") })
        })
    }
}

/// How a fetched body is written: as its `Content-Type` says (JSON types and `+json`;
/// YAML types, `+yaml`, and `application/vnd.oai.openapi`, which is YAML), else as the
/// extension of its URL's last path segment says; `None` when neither tells.
pub(crate) fn format_of(content_type: Option<&str>, url: &Url) -> Option<Format> {
    let essence = content_type.map(essence).unwrap_or_default();
    match essence.as_str() {
        "application/json" | "text/json" => return Some(Format::Json),
        "application/yaml" | "application/x-yaml" | "text/yaml" | "text/x-yaml" | "application/vnd.oai.openapi" => {
            return Some(Format::Yaml);
        }
        essence if essence.ends_with("+json") => return Some(Format::Json),
        essence if essence.ends_with("+yaml") => return Some(Format::Yaml),
        _ => {}
    }
    url.path_segments().and_then(|mut segments| segments.next_back()).and_then(Format::from_extension)
}

/// Fetches every document that the refs of `spec` (a fetched spec) reach, breadth-first,
/// each URL once, within `budget`, checking each ref with [`url_ref_target`] before
/// anything is requested: every ref must land under the folder of the spec's URL.
pub(crate) async fn fetch_referenced(
    spec: &Document,
    options: &LoadOptions,
    budget: &mut Budget,
) -> Result<Vec<FetchedDocument>, Error> {
    let Some(spec_url) = spec.url() else { return Ok(Vec::new()) };
    let scope = folder_of(spec_url);
    let mut seen = HashSet::from([spec_url.clone()]);
    let mut fetched: Vec<FetchedDocument> = Vec::new();
    // The document whose refs are read next: the spec, then each fetched one in turn.
    let mut next = (spec_url.clone(), Arc::clone(&spec.root));
    let mut index = 0;
    loop {
        let (url, value) = next;
        let origin = DocumentOrigin::from(url.clone());
        // Walking a large document for its refs takes a while too: off the runtime.
        let references = off_runtime(move || ref_strings(&value).into_iter().map(str::to_owned).collect::<Vec<_>>())
            .await
            .map_err(|cancelled| Error::Fetch {
                url: redacted(&url),
                reason: format!("its refs were not read: {cancelled}"),
            })?;
        for reference in references.iter().map(String::as_str) {
            let document_part = reference.split_once('#').map_or(reference, |(document_part, _)| document_part);
            if document_part.is_empty() {
                continue;
            }
            let target = url_ref_target(document_part, &url, &scope)
                .map_err(|refusal| refusal.into_error(reference, &origin))?;
            if seen.contains(&target) {
                continue;
            }
            if seen.len() >= options.max_documents {
                return Err(Error::TooManyDocuments { url: redacted(spec_url), limit: options.max_documents });
            }
            seen.insert(target.clone());
            let value = options.get(&target, budget).await?.parse(&target).await?;
            fetched.push(FetchedDocument { url: target, value: Arc::new(value) });
        }
        let Some(document) = fetched.get(index) else { break };
        next = (document.url.clone(), Arc::clone(&document.value));
        index += 1;
    }
    Ok(fetched)
}

/// Every string value of a `$ref` key in `value`, in document order.
fn ref_strings(value: &Value) -> Vec<&str> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(object) => {
                if let Some(Value::String(reference)) = object.get("$ref") {
                    found.push(reference.as_str());
                }
                stack.extend(object.values().rev());
            }
            Value::Array(items) => stack.extend(items.iter().rev()),
            _ => {}
        }
    }
    found
}

/// A reqwest error as [`Error::Fetch`], naming the URL redacted.
fn fetch_error(url: &Url, error: reqwest::Error) -> Error {
    Error::Fetch { url: redacted(url), reason: reqwest_reason(error) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_content_type_decides_the_format_else_the_url_extension() {
        let check = |content_type: Option<&str>, url: &str, expect: Option<Format>| {
            assert_eq!(format_of(content_type, &Url::parse(url).unwrap()), expect, "{content_type:?} {url}");
        };
        check(Some("application/json; charset=utf-8"), "http://h/spec.yaml", Some(Format::Json));
        check(Some("application/vnd.oai.openapi+json;version=3.1"), "http://h/spec", Some(Format::Json));
        check(Some("Application/YAML"), "http://h/spec.json", Some(Format::Yaml));
        check(Some("application/vnd.oai.openapi"), "http://h/spec", Some(Format::Yaml));
        check(Some("text/x-yaml"), "http://h/spec", Some(Format::Yaml));
        check(Some("text/plain"), "http://h/specs/api.YML?raw=1", Some(Format::Yaml));
        check(Some("application/octet-stream"), "http://h/api.json", Some(Format::Json));
        check(None, "http://h/openapi", None);
        check(Some("text/plain"), "http://h/", None);
    }

    #[test]
    fn ref_strings_are_found_anywhere_in_document_order() {
        let value = serde_json::json!({
            "a": {"$ref": "one.yaml"},
            "b": [{"x": {"$ref": "two.yaml#/B"}}, {"$ref": 3}],
            "c": {"$ref": "#/local", "properties": {"d": {"$ref": "three.yaml"}}}
        });
        assert_eq!(ref_strings(&value), ["one.yaml", "two.yaml#/B", "#/local", "three.yaml"]);
    }
}
