//! Calls: a tool call (an [`OperationTool`] and its JSON arguments) becomes the HTTP
//! request the document describes, sent through any
//! [`reqwest_middleware::ClientWithMiddleware`], and its response becomes a [`ToolOutput`].
//!
//! An [`Endpoint`] holds what every call of one document's tools shares: the server URL,
//! the credentials matched to the document's security schemes, the per-call timeout, the
//! response size limit and the upload folder. What each operation says beyond its input
//! (its security, its own servers, its multipart part headers) is read with its tool and
//! carried on the [`OperationTool`] (module `operations`).
//!
//! - Server ([`Endpoint::new`]): the base URL given, else `servers[0]` of the document
//!   with its variables' defaults (checked against their `enum`), a relative URL resolved
//!   against the URL the document was fetched from. An operation (or path item) with its
//!   own `servers` is called there, unless a base URL was given. A document without
//!   `servers` is served from `/` (the spec's default), which for a file needs a base URL.
//!   A document whose server cannot be used that way (none, or relative, in a file) still
//!   gives its tools: listing them needs no server, and each call fails, sending nothing,
//!   with an error naming the base URL setting ([`Endpoint::with_settings`]).
//! - Origins ([`Endpoint::with_credential_origins`]): credentials, and the signatures of a
//!   signing client ([`Endpoint::with_signing_client`]), go only to the server's origin and
//!   to the origins listed. A call to another origin that would carry either is refused,
//!   before anything is sent: a document, possibly fetched from a host an attacker
//!   controls, decides where calls go, but not who receives the credentials.
//! - Request: see the modules `request` (parameters) and `body` (request bodies), and
//!   [`BINARY_ARGUMENT_HELP`] and [`FILE_ARGUMENT_HELP`] for how binary fields are given.
//! - Auth: an `apiKey` scheme gives its name and `in` to an [`Credential::ApiKey`]
//!   without them; `http` `bearer` (and `oauth2`, `openIdConnect`) schemes take a
//!   [`Credential::Bearer`]; `http` `basic` a [`Credential::Basic`]. A request carries the
//!   credentials of the first alternative of its effective `security` (the operation's,
//!   else the document's) that they satisfy; `security: []` means none. A document
//!   without security schemes gets every credential on every request (but those with
//!   `security: []`).
//! - Response: see the module `response`. Transport failures are [`ToolError::Failed`]
//!   naming the tool, the method and the URL (user info left out, and `REDACTED` for
//!   every query value, as any may be a credential); a call over the timeout is
//!   [`ToolError::Timeout`].

mod auth;
mod binary;
mod body;
pub(crate) mod operations;
mod request;
mod response;
mod schema;
mod server;

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use reqwest_middleware::ClientWithMiddleware;
use serde_json::Value;
use skill_core::{ToolError, ToolOutput};
use url::Url;

pub use self::auth::{ApiKeyLocation, Credential};
pub use self::binary::{BINARY_ARGUMENT_HELP, DEFAULT_MAX_UPLOAD_BYTES, FILE_ARGUMENT_HELP};

pub(crate) use self::auth::{DeclaredSchemes, Requirements, read_requirements};

use self::auth::PlacedCredential;
use self::binary::Uploads;
use crate::Error;
use crate::document::{Document, DocumentOrigin};
use crate::http::{USER_AGENT, install_crypto_provider, reqwest_reason};
use crate::operation::OperationTool;
use crate::reference::Resolver;
use crate::serialize::ValueKind;
use skill_core::redact::url as redacted;

/// The default bound on one call: request, response and body.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);

/// The default limit on a response body kept in a tool result: 1 MiB, a lot of text for a
/// model's context, and past which a body is cut with a note.
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 1024 * 1024;

/// Everything the calls of one document's tools share: server URL, credentials, limits.
/// Cheap to clone; its `Debug` output shows no secret.
#[derive(Clone)]
pub struct Endpoint {
    document: DocumentOrigin,
    /// The server URL, or why there is none to call.
    base_url: Result<Url, String>,
    credentials: Arc<[PlacedCredential]>,
    schemes_defined: bool,
    /// Whether the base URL was given, so that it wins over operations' own servers.
    base_url_given: bool,
    /// The origins besides the base URL's that credentials and signatures may go to.
    credential_origins: Vec<url::Origin>,
    /// How errors name the settings (`openapi.github`, so `openapi.github.origins`), if
    /// they have a place in a config.
    settings: Option<String>,
    /// Whether the client signs every request, so that each carries a credential.
    signing_client: bool,
    timeout: Duration,
    max_response_bytes: usize,
    upload_folder: Option<PathBuf>,
    max_upload_bytes: u64,
    private_paths: Vec<PathBuf>,
}

impl Endpoint {
    /// The endpoint of `document`'s tools.
    ///
    /// The server URL is `base_url` if given, else the document's first server (see the
    /// module doc); a document without a usable one gives an endpoint whose calls fail,
    /// naming the base URL setting. Credentials are matched to the document's `securitySchemes` here, so
    /// an API key whose name and location the document does not settle, or a credential
    /// that fits none of its schemes (and so would never be sent), is an error naming
    /// what to set.
    ///
    /// ```
    /// use serde_json::json;
    /// use skill_openapi::{Credential, Document, Endpoint, Error};
    ///
    /// let document = Document::from_value(
    ///     "/specs/api.json",
    ///     json!({
    ///         "openapi": "3.1.0",
    ///         "servers": [{
    ///             "url": "https://{region}.example.com/v2",
    ///             "variables": {"region": {"default": "eu", "enum": ["eu", "us"]}}
    ///         }],
    ///         "components": {"securitySchemes": {
    ///             "header": {"type": "apiKey", "name": "X-Key", "in": "header"},
    ///             "query": {"type": "apiKey", "name": "key", "in": "query"}
    ///         }}
    ///     }),
    /// )?;
    /// let endpoint = Endpoint::new(&document, None, Vec::new())?;
    /// assert_eq!(endpoint.base_url().map(|url| url.as_str()), Ok("https://eu.example.com/v2"));
    ///
    /// // Two apiKey schemes: a key without a location fits both.
    /// let key = Credential::ApiKey { value: "k3y".into(), name: None, location: None };
    /// let error = Endpoint::new(&document, Some("http://127.0.0.1:8080"), vec![key]).unwrap_err();
    /// assert!(matches!(error, Error::ApiKeyPlacement { .. }));
    /// # Ok::<(), Error>(())
    /// ```
    pub fn new(document: &Document, base_url: Option<&str>, credentials: Vec<Credential>) -> Result<Endpoint, Error> {
        let origin = document.origin();
        let url = match base_url {
            Some(text) => Ok(server::given_base_url(origin, text)?),
            None => server::first_server(origin, document.url(), document.root().get("servers"))
                .and_then(|first| first.map_or_else(|| server::default_server(origin, document.url()), Ok))
                .map_err(|error| error.to_string()),
        };
        let mut resolver = Resolver::new(document);
        let (credentials, schemes_defined) = auth::place_credentials(document, &mut resolver, credentials)?;
        Ok(Endpoint {
            document: origin.clone(),
            base_url: url,
            credentials: credentials.into(),
            schemes_defined,
            base_url_given: base_url.is_some(),
            credential_origins: Vec::new(),
            settings: None,
            signing_client: false,
            timeout: DEFAULT_CALL_TIMEOUT,
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
            upload_folder: None,
            max_upload_bytes: DEFAULT_MAX_UPLOAD_BYTES,
            private_paths: Vec::new(),
        })
    }

    /// Names the settings in errors: `prefix` is where the endpoint's settings are written
    /// (`openapi.github`), so that a refused call names `openapi.github.origins` and a
    /// call without a server `openapi.github.base_url`.
    pub fn with_settings(mut self, prefix: impl Into<String>) -> Self {
        self.settings = Some(prefix.into());
        self
    }

    /// Lets credentials and signatures go to `origins` too, besides the base URL's origin,
    /// for operations whose own `servers` are there (see the module doc).
    pub fn with_credential_origins(mut self, origins: Vec<url::Origin>) -> Self {
        self.credential_origins = origins;
        self
    }

    /// The setting `key` as errors name it: `openapi.github.key`, or `key` alone.
    fn setting(&self, key: &str) -> String {
        self.settings.as_ref().map_or_else(|| key.to_owned(), |prefix| format!("{prefix}.{key}"))
    }

    /// Says that the client given to [`Endpoint::call`] signs every request (AAuth), so
    /// that each request carries a credential, and goes only where credentials may.
    pub fn with_signing_client(mut self) -> Self {
        self.signing_client = true;
        self
    }

    /// Bounds each call (sending, waiting, reading the body) to `timeout` (default 60 s).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Keeps at most `limit` bytes of a response body (default 1 MiB); the rest is not
    /// read, and the result says how much was dropped.
    pub fn with_max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// Lets binary fields be given as `file:` and a path: files in `folder` (relative paths
    /// are relative to it) may be read and sent. Without it, binary data comes as base64
    /// only, so that no call can send a file the model picked anywhere on the machine.
    pub fn with_upload_folder(mut self, folder: impl Into<PathBuf>) -> Self {
        self.upload_folder = Some(folder.into());
        self
    }

    /// Sends a file from the upload folder only up to `limit` bytes (default 100 MiB,
    /// [`DEFAULT_MAX_UPLOAD_BYTES`]); a larger one is refused, naming the argument.
    pub fn with_max_upload_bytes(mut self, limit: u64) -> Self {
        self.max_upload_bytes = limit;
        self
    }

    /// Never sends `paths` (files or folders), nor anything under them, as `file:`
    /// arguments, even from within the upload folder, whatever symbolic links lead there:
    /// the agent's configuration, keys and tokens. Adds to those given before; the
    /// [`LoadOptions::with_private_path`](crate::LoadOptions::with_private_path) paths of
    /// an [`OpenApiSkill`](crate::OpenApiSkill) are passed here.
    pub fn with_private_paths<P: Into<PathBuf>>(mut self, paths: impl IntoIterator<Item = P>) -> Self {
        self.private_paths.extend(paths.into_iter().map(Into::into));
        self
    }

    /// The server URL calls go to (operations with their own `servers` aside), or why
    /// the document gives none that can be called.
    pub fn base_url(&self) -> Result<&Url, &str> {
        self.base_url.as_ref().map_err(String::as_str)
    }

    /// Why calls cannot be made, as every call says it: the document gives no usable
    /// server, so the base URL must be set. `None` when there is a server.
    pub fn no_server(&self) -> Option<String> {
        let problem = self.base_url.as_ref().err()?;
        Some(format!("calls need `{}`: {problem}", self.setting("base_url")))
    }

    /// The document the endpoint was made from.
    pub fn document(&self) -> &DocumentOrigin {
        &self.document
    }

    /// Calls `tool` with `arguments` through `client`: one request, its response as the
    /// result (a status other than 2xx is a result with `is_error`).
    ///
    /// Arguments that cannot be sent are [`ToolError::InvalidArguments`], each problem
    /// naming its argument; a failure to send or to read the response is
    /// [`ToolError::Failed`]; a call longer than the timeout is [`ToolError::Timeout`].
    pub async fn call(
        &self,
        client: &ClientWithMiddleware,
        tool: &OperationTool,
        arguments: &Value,
    ) -> Result<ToolOutput, ToolError> {
        match tokio::time::timeout(self.timeout, self.send(client, tool, arguments)).await {
            Ok(result) => result,
            Err(_elapsed) => {
                tracing::warn!(
                    tool = %tool.name,
                    method = %tool.method,
                    path = %tool.path,
                    "call timed out after {:?}",
                    self.timeout
                );
                Err(ToolError::Timeout { after: self.timeout })
            }
        }
    }

    async fn send(
        &self,
        client: &ClientWithMiddleware,
        tool: &OperationTool,
        arguments: &Value,
    ) -> Result<ToolOutput, ToolError> {
        let empty = serde_json::Map::new();
        let arguments = match arguments {
            Value::Object(arguments) => arguments,
            Value::Null => &empty,
            other => {
                return Err(ToolError::InvalidArguments {
                    tool: tool.name.clone(),
                    problems: vec![format!("the arguments must be a JSON object, not {}", ValueKind::of(other))],
                });
            }
        };
        let details = &tool.details;
        let home = match &self.base_url {
            Ok(url) => url,
            Err(_) => {
                let reason = self.no_server().unwrap_or_default();
                return Err(ToolError::failed(format!("`{}`: {reason}", tool.name)));
            }
        };
        let base = match details.server.as_ref().filter(|_| !self.base_url_given) {
            Some(Ok(url)) => url,
            Some(Err(message)) => return Err(ToolError::failed(format!("`{}`: {message}", tool.name))),
            None => home,
        };
        let credentials = auth::select(&self.credentials, self.schemes_defined, details.security.as_ref());
        if (self.signing_client || !credentials.is_empty()) && !self.may_receive_credentials(home, base) {
            return Err(ToolError::failed(format!(
                "`{}`: refused to send its credentials to {}, the server the document names for it: they go \
                 only to {}; to trust that origin too, list it in `{}`",
                tool.name,
                base.origin().ascii_serialization(),
                home.origin().ascii_serialization(),
                self.setting("origins"),
            )));
        }
        let target = request::build_target(tool, arguments, base, &credentials)?;
        let uploads = Uploads {
            folder: self.upload_folder.as_deref(),
            max_bytes: self.max_upload_bytes,
            private_paths: &self.private_paths,
        };
        let body = body::build_body(tool, arguments, uploads).await?;

        let method = reqwest::Method::from_bytes(tool.method.as_str().as_bytes())
            .map_err(|_| ToolError::failed(format!("`{}`: {} is not an HTTP method", tool.name, tool.method)))?;
        let shown = redacted(&target.url);
        let mut headers = target.headers;
        // The call's trace context, so that the API's spans join the caller's trace.
        if let Some(parent) = skill_core::trace::current()
            && let Ok(value) = reqwest::header::HeaderValue::from_str(&parent.to_string())
        {
            headers.insert("traceparent", value);
        }
        let mut builder = client.request(method, target.url);
        if let Some(body) = body {
            headers.insert(reqwest::header::CONTENT_TYPE, body.content_type);
            builder = builder.body(body.bytes);
        }
        tracing::debug!(tool = %tool.name, method = %tool.method, url = %shown, "calling");
        let failed = |reason: String| ToolError::failed(format!("`{}`: {} {shown}: {reason}", tool.name, tool.method));
        let response = builder.headers(headers).send().await.map_err(|error| failed(transport_reason(error)))?;
        tracing::debug!(tool = %tool.name, status = response.status().as_u16(), "response");
        let mut resource = shown.clone();
        resource.set_query(None);
        response::read_response(response, self.max_response_bytes, resource.as_str())
            .await
            .map_err(|error| failed(format!("reading the response: {}", reqwest_reason(error))))
    }

    /// Whether a request to `url` may carry the credentials of a skill served from `home`
    /// (see the module doc).
    fn may_receive_credentials(&self, home: &Url, url: &Url) -> bool {
        let origin = url.origin();
        origin == home.origin() || self.credential_origins.contains(&origin)
    }
}

impl fmt::Debug for Endpoint {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter
            .debug_struct("Endpoint")
            .field("document", &self.document)
            .field("base_url", &self.base_url.as_ref().map(|url| redacted(url).to_string()))
            .field("credentials", &self.credentials)
            .field("credential_origins", &self.credential_origins)
            .field("signing_client", &self.signing_client)
            .field("timeout", &self.timeout)
            .field("max_response_bytes", &self.max_response_bytes)
            .field("upload_folder", &self.upload_folder)
            .field("max_upload_bytes", &self.max_upload_bytes)
            .field("private_paths", &self.private_paths)
            .finish()
    }
}

/// A plain client for OpenAPI calls: rustls with the `ring` provider (installed for the
/// process unless one already is), redirects not followed (a 3xx comes back as the
/// result), a `User-Agent` naming this crate.
///
/// # Panics
///
/// When the TLS backend cannot be initialised, as `reqwest::Client::new` does.
pub fn default_client() -> ClientWithMiddleware {
    install_crypto_provider();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(USER_AGENT)
        .build()
        .expect("the TLS backend initialises");
    ClientWithMiddleware::from(client)
}

/// Why a request failed, without the URL (whose query may hold a credential).
fn transport_reason(error: reqwest_middleware::Error) -> String {
    match error {
        reqwest_middleware::Error::Reqwest(error) => reqwest_reason(error),
        reqwest_middleware::Error::Middleware(error) => format!("{error:#}"),
    }
}
