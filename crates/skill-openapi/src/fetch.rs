//! Fetching documents over http(s) with the skill's own client and its rules: no
//! redirects, a size limit enforced while the body streams in, timeouts; and fetching, up
//! front, every document a fetched spec's `$ref`s reach.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde_json::Value;
use url::Url;

use crate::Error;
use crate::document::{Document, DocumentOrigin, Format, parse_value};
use crate::reference::{FetchedDocument, folder_of, url_ref_target};

/// Fetches OpenAPI documents by URL, with the skill's own HTTP client (never one given for
/// calling the API, whose middleware might sign or follow redirects) and these rules:
///
/// - Redirects are never followed: any 3xx is [`Error::Redirect`], naming its `Location`.
/// - A status other than 2xx is [`Error::HttpStatus`], naming the URL and the status.
/// - A document has at most [`max_bytes`](Fetcher::max_bytes) bytes (10 MiB by default):
///   a `Content-Length` over the limit is refused before the body is read, and the body is
///   counted as it streams in, so a chunked body without `Content-Length` is refused as
///   soon as it passes the limit too ([`Error::TooLarge`]). A body longer than its
///   `Content-Length` is read only up to the length it declares.
/// - Connecting may take 10 s, and a whole fetch (connecting, the answer and the body)
///   [`timeout`](Fetcher::timeout), 30 s by default ([`Error::FetchTimeout`]).
/// - A fetched spec's refs may reach at most [`max_documents`](Fetcher::max_documents)
///   documents, the spec included (200 by default, [`Error::TooManyDocuments`]).
///
/// Cloning is cheap: clones share the connection pool.
#[derive(Debug, Clone)]
pub struct Fetcher {
    /// The client, or why it could not be built (reported by the first fetch).
    client: Result<reqwest::Client, String>,
    max_bytes: u64,
    timeout: Duration,
    max_documents: usize,
}

/// The `Accept` header of every fetch: OpenAPI documents are JSON or YAML.
const ACCEPT_DOCUMENTS: &str = "application/json, application/yaml;q=0.9, */*;q=0.8";

impl Fetcher {
    /// The default size limit of one document: 10 MiB.
    pub const DEFAULT_MAX_BYTES: u64 = 10 * 1024 * 1024;
    /// The default time one whole fetch may take: 30 s.
    pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
    /// The time connecting may take: 10 s.
    pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
    /// The default number of documents a fetched spec may reach, itself included: 200.
    pub const DEFAULT_MAX_DOCUMENTS: usize = 200;

    /// A fetcher with the default limits.
    pub fn new() -> Self {
        install_crypto_provider();
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(Self::CONNECT_TIMEOUT)
            .user_agent(concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|error| format!("cannot build the HTTP client: {}", error_chain(&error)));
        Fetcher {
            client,
            max_bytes: Self::DEFAULT_MAX_BYTES,
            timeout: Self::DEFAULT_TIMEOUT,
            max_documents: Self::DEFAULT_MAX_DOCUMENTS,
        }
    }

    /// The same fetcher with another size limit per document, in bytes.
    pub fn with_max_bytes(mut self, max_bytes: u64) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The same fetcher with another time limit for one whole fetch.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The same fetcher with another limit on the documents a fetched spec may reach,
    /// itself included.
    pub fn with_max_documents(mut self, max_documents: usize) -> Self {
        self.max_documents = max_documents;
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

    /// Fetches `url` under the rules above.
    pub(crate) async fn get(&self, url: &Url) -> Result<FetchedBody, Error> {
        tokio::time::timeout(self.timeout, self.get_untimed(url))
            .await
            .map_err(|_elapsed| Error::FetchTimeout { url: url.clone(), after: self.timeout })?
    }

    async fn get_untimed(&self, url: &Url) -> Result<FetchedBody, Error> {
        let client =
            self.client.as_ref().map_err(|reason| Error::Fetch { url: url.clone(), reason: reason.clone() })?;
        let mut response = client
            .get(url.clone())
            .header(ACCEPT, ACCEPT_DOCUMENTS)
            .send()
            .await
            .map_err(|error| fetch_error(url, &error))?;
        let status = response.status();
        if status.is_redirection() {
            let location =
                response.headers().get(LOCATION).map(|location| String::from_utf8_lossy(location.as_bytes()).into());
            return Err(Error::Redirect { url: url.clone(), status: status.as_u16(), location });
        }
        if !status.is_success() {
            return Err(Error::HttpStatus { url: url.clone(), status: status.as_u16() });
        }
        let too_large = |declared| Error::TooLarge { url: url.clone(), limit: self.max_bytes, declared };
        let declared = response.content_length();
        if let Some(declared) = declared.filter(|&declared| declared > self.max_bytes) {
            return Err(too_large(Some(declared)));
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|content_type| String::from_utf8_lossy(content_type.as_bytes()).into_owned());
        // Room for what the server declares, within the limit, and never more than the
        // default limit up front, however high the limit was set: the rest grows as it comes.
        let reserve = declared.unwrap_or(0).min(Self::DEFAULT_MAX_BYTES);
        let mut bytes = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
        while let Some(chunk) = response.chunk().await.map_err(|error| fetch_error(url, &error))? {
            if (bytes.len() + chunk.len()) as u64 > self.max_bytes {
                return Err(too_large(None));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(FetchedBody { bytes, content_type })
    }
}

impl Default for Fetcher {
    fn default() -> Self {
        Self::new()
    }
}

/// A fetched document's bytes and how its server says they are written.
#[derive(Debug)]
pub(crate) struct FetchedBody {
    pub(crate) bytes: Vec<u8>,
    pub(crate) content_type: Option<String>,
}

impl FetchedBody {
    /// The body, fetched from `url`, parsed as [`format_of`] says.
    pub(crate) fn parse(&self, url: &Url) -> Result<Value, Error> {
        let format = format_of(self.content_type.as_deref(), url);
        parse_value(&self.bytes, &url.clone().into(), format)
    }
}

/// How a fetched body is written: as its `Content-Type` says (JSON types and `+json`;
/// YAML types, `+yaml`, and `application/vnd.oai.openapi`, which is YAML), else as the
/// extension of its URL's last path segment says; `None` when neither tells.
pub(crate) fn format_of(content_type: Option<&str>, url: &Url) -> Option<Format> {
    let essence = content_type
        .and_then(|content_type| content_type.split(';').next())
        .map(|essence| essence.trim().to_ascii_lowercase())
        .unwrap_or_default();
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
/// each URL once, checking each ref with [`url_ref_target`] before anything is requested.
pub(crate) async fn fetch_referenced(spec: &Document, fetcher: &Fetcher) -> Result<Vec<FetchedDocument>, Error> {
    let Some(spec_url) = spec.url() else { return Ok(Vec::new()) };
    let spec_scope = folder_of(spec_url);
    let mut seen = HashSet::from([spec_url.clone()]);
    let mut fetched: Vec<FetchedDocument> = Vec::new();
    // The document whose refs are read next: the spec, then each fetched one in turn.
    let mut next = (spec_url.clone(), spec_scope, Arc::clone(&spec.root));
    let mut index = 0;
    loop {
        let (url, scope, value) = next;
        let origin = DocumentOrigin::from(url.clone());
        for reference in ref_strings(&value) {
            let document_part = reference.split_once('#').map_or(reference, |(document_part, _)| document_part);
            if document_part.is_empty() {
                continue;
            }
            let (target, target_scope) = url_ref_target(document_part, &url, &scope)
                .map_err(|refusal| refusal.into_error(reference, &origin))?;
            if seen.contains(&target) {
                continue;
            }
            if seen.len() >= fetcher.max_documents {
                return Err(Error::TooManyDocuments { url: spec_url.clone(), limit: fetcher.max_documents });
            }
            seen.insert(target.clone());
            let value = fetcher.get(&target).await?.parse(&target)?;
            fetched.push(FetchedDocument { url: target, scope: target_scope, value: Arc::new(value) });
        }
        let Some(document) = fetched.get(index) else { break };
        next = (document.url.clone(), document.scope.clone(), Arc::clone(&document.value));
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

/// rustls needs one crypto provider per process; `ring` is the one this crate builds
/// with. A provider installed earlier (by the host) is kept.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A reqwest error as [`Error::Fetch`]: its causes say what went wrong (reqwest's own
/// message only repeats the URL).
fn fetch_error(url: &Url, error: &reqwest::Error) -> Error {
    Error::Fetch { url: url.clone(), reason: error_chain(error) }
}

/// The messages of `error`'s causes, outermost first, each once; `error`'s own message
/// (without its URL) when it has no cause.
fn error_chain(error: &reqwest::Error) -> String {
    let mut messages: Vec<String> = Vec::new();
    let mut cause = std::error::Error::source(error);
    while let Some(error) = cause {
        let message = error.to_string();
        if !messages.iter().any(|earlier| earlier.contains(&message)) {
            messages.push(message);
        }
        cause = error.source();
    }
    if messages.is_empty() {
        let mut error_text = error.to_string();
        if let Some(url) = error.url() {
            error_text = error_text.replace(&format!(" for url ({url})"), "");
        }
        messages.push(error_text);
    }
    messages.join(": ")
}

/// An HTTP status with its reason phrase, such as `404 Not Found`.
pub(crate) fn status_text(status: u16) -> String {
    match reqwest::StatusCode::from_u16(status).ok().and_then(|status| status.canonical_reason()) {
        Some(reason) => format!("{status} {reason}"),
        None => status.to_string(),
    }
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

    #[test]
    fn statuses_carry_their_reason_phrase() {
        assert_eq!(status_text(404), "404 Not Found");
        assert_eq!(status_text(308), "308 Permanent Redirect");
        assert_eq!(status_text(599), "599");
    }
}
