//! One running connection to a server: a child process in its own process group (or an
//! HTTP session), its stderr, and the rmcp client.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitationCapability, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProtocolVersion, UrlElicitationCapability,
};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceError};
use skill_core::SkillHandle;
use skill_core::progress::Progress;
use tokio::sync::Notify;

mod legacy;
mod listen;
mod process_group;

use self::listen::Streams;
use self::process_group::ProcessGroupGuard;
use crate::Error;
use crate::config::Protocol;
use crate::described::Described;
use crate::elicit::{self, ElicitationAnswer, Elicitor};
use crate::lines::{Heard, Lines, UpstreamLane};
use crate::oauth::TokenFile;
use crate::route::CallRoutes;
use crate::stderr::{self, StderrTail};

/// How long a closing server gets for each step (stdin EOF, SIGTERM) before the next.
const CLOSE_BOUND: Duration = Duration::from_secs(8);

/// The client side of a connection: identifies us and hears the servers' `list_changed`
/// notifications (tools, prompts, resources), each of which makes the skill list again.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    pub(crate) lists_changed: Arc<Notify>,
    /// The skill's handle, through which its agent hears the server's resource updates.
    pub(crate) handle: Option<SkillHandle>,
    /// Who waits for each call in flight: its progress, and with the gateway its
    /// server's requests and log messages, go there.
    pub(crate) calls: CallRoutes,
    /// The version the connection speaks.
    pub(crate) protocol: Protocol,
    /// The server's name, and who answers its elicitations outside a gateway call.
    pub(crate) person: Person,
    /// The host's MCP Apps settings, if the host in front shows apps.
    pub(crate) apps: Option<rmcp::model::JsonObject>,
}

/// Who answers a server's elicitations when no gateway client does.
#[derive(Clone)]
pub(crate) struct Person {
    pub(crate) server: String,
    pub(crate) elicitor: Option<Arc<dyn Elicitor>>,
}

impl Person {
    /// The answer to the server's `request`: the elicitor's, else (or for a mode this
    /// client does not know) a decline.
    pub(crate) async fn elicit(&self, request: rmcp::model::ElicitRequestParams) -> rmcp::model::ElicitResult {
        let answer = match (&self.elicitor, elicit::from_wire(&self.server, request)) {
            (Some(elicitor), Some(elicitation)) => elicitor.elicit(elicitation).await,
            _ => ElicitationAnswer::Decline,
        };
        elicit::to_wire(answer)
    }
}

impl std::fmt::Debug for Person {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Person").field("server", &self.server).field("elicitor", &self.elicitor.is_some()).finish()
    }
}

/// What the client declares to every server: elicitation in both modes; with the
/// gateway, sampling, which it forwards to the client whose call is in flight; and MCP
/// Apps with the host's `apps` settings when the host shows them.
fn declared_capabilities(apps: Option<&rmcp::model::JsonObject>) -> ClientCapabilities {
    let mut declared = ClientCapabilities::default();
    if let Some(settings) = apps {
        declared.extensions = Some([(crate::APPS_EXTENSION.to_owned(), settings.clone())].into());
    }
    declared.elicitation = Some(
        ElicitationCapability::new()
            .with_form(FormElicitationCapability::default())
            .with_url(UrlElicitationCapability::default()),
    );
    #[cfg(feature = "server")]
    {
        declared.sampling = Some(rmcp::model::SamplingCapability::default());
    }
    declared
}

impl ClientHandler for Handler {
    /// The server may ask for elicitation (form and URL), which goes to the gateway
    /// client whose call it serves, else to the person's elicitor; with the gateway, for
    /// sampling too.
    fn get_info(&self) -> ClientConfig {
        let config = ClientConfig::new(
            declared_capabilities(self.apps.as_ref()),
            Implementation::new("omniagent", env!("CARGO_PKG_VERSION")),
        );
        match &self.protocol {
            Protocol::Pinned(version) => config.with_protocol_version(protocol_version(version)),
            Protocol::Auto => config,
        }
    }

    // Sampling is deprecated by 2026-07-28 (SEP-2577), but 2025-11-25 servers use it.
    #[cfg(feature = "server")]
    #[allow(deprecated)]
    async fn create_message(
        &self,
        request: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        self.caller_of()?.create_message(request).await
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        #[cfg(feature = "server")]
        if let Some(caller) = self.gateway_caller()? {
            return caller.create_elicitation(request).await;
        }
        Ok(self.person.elicit(request).await)
    }

    #[cfg(feature = "server")]
    #[allow(deprecated)]
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        if let Some(caller) = self.calls.only_caller() {
            caller.log(params).await;
        }
    }

    fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed.notify_one();
        std::future::ready(())
    }

    fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.resource_updated(&params.uri);
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let progress = Progress { progress: params.progress, total: params.total, message: params.message };
        self.calls.report(params.progress_token, progress);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed.notify_one();
        std::future::ready(())
    }

    fn on_resource_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed.notify_one();
        std::future::ready(())
    }
}

impl Handler {
    /// Tells the agent that the server's resource `uri` changed.
    fn resource_updated(&self, uri: &str) {
        if let Some(handle) = &self.handle {
            handle.resource_updated(uri);
        }
    }
}

#[cfg(feature = "server")]
impl Handler {
    /// The gateway client whose call a server's request serves: nothing on the wire
    /// says which call that is, so it is the caller of the one call in flight.
    fn caller_of(&self) -> Result<crate::server::Caller, rmcp::ErrorData> {
        self.gateway_caller()?.ok_or_else(|| {
            rmcp::ErrorData::invalid_request("no gateway client call is in flight that this request could serve", None)
        })
    }

    /// The gateway client whose call a server's request serves; `None` outside gateway
    /// calls, and an error while several are in flight.
    fn gateway_caller(&self) -> Result<Option<crate::server::Caller>, rmcp::ErrorData> {
        let mut callers = self.calls.callers();
        match callers.len() {
            0 | 1 => Ok(callers.pop()),
            _ => Err(rmcp::ErrorData::invalid_request(
                "several client calls are in flight; this request could serve any of them",
                None,
            )),
        }
    }
}

/// What a connection is made from.
pub(crate) enum Endpoint {
    /// A subprocess, confined by `sandbox`.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<PathBuf>,
        sandbox: crate::sandbox::Effective,
    },
    /// A streamable-HTTP URL.
    Http { url: String, headers: reqwest::header::HeaderMap, tokens: Option<TokenFile> },
}

/// A live connection.
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    stderr: Option<Arc<StderrTail>>,
    group: Option<tokio::sync::Mutex<ProcessGroupGuard>>,
    handler: Handler,
    streams: Streams,
    /// What the transport has read of the server's requests and notifications, where it
    /// counts them (stdio).
    heard: Option<Heard>,
    /// Where tool calls go past rmcp's service loop: stdio, in the `initialize` era.
    lane: Option<UpstreamLane>,
    /// Whether the server speaks 2026-07-28 or later, where each request carries what
    /// the server is to know of its client.
    stateless: bool,
}

impl Connection {
    /// Starts the server and completes the MCP handshake within `startup`, in the
    /// newest protocol era the server speaks; then, in the 2026-07-28 era, opens the
    /// stream its list changes come on.
    pub(crate) async fn start(
        server: &str,
        endpoint: &Endpoint,
        handler: Handler,
        startup: Duration,
    ) -> Result<Self, Error> {
        let connection = Self::connect(server, endpoint, handler, startup).await?;
        if connection.stateless {
            let opened =
                tokio::time::timeout(startup, connection.streams.open_lists(&connection.peer, &connection.handler));
            match opened.await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(server, "list changes will not be heard: {}", endpoint.shown(&error))
                }
                Err(_elapsed) => {
                    tracing::warn!(server, "list changes will not be heard: subscriptions/listen timed out")
                }
            }
        }
        Ok(connection)
    }

    /// Follows the updates of the resource `uri`: on a 2026-07-28 connection through a
    /// stream of its own, before that through `resources/subscribe`.
    #[allow(deprecated)]
    pub(crate) async fn subscribe(&self, uri: &str) -> Result<(), ServiceError> {
        if self.stateless {
            self.streams.subscribe(&self.peer, &self.handler, uri).await
        } else {
            self.peer.subscribe(rmcp::model::SubscribeRequestParams::new(uri)).await
        }
    }

    /// Stops following the updates of the resource `uri`.
    #[allow(deprecated)]
    pub(crate) async fn unsubscribe(&self, uri: &str) -> Result<(), ServiceError> {
        if self.stateless {
            self.streams.unsubscribe(uri);
            Ok(())
        } else {
            self.peer.unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri)).await
        }
    }

    /// Starts the connection within `startup`. One left to find the server's era
    /// (`protocol_version: auto`) whose `server/discover` is answered as only a server of
    /// the `initialize` era answers (see [`legacy`]) starts once more with `initialize`, on
    /// a new process or HTTP transport: rmcp gives back neither after a failed start.
    async fn connect(server: &str, endpoint: &Endpoint, handler: Handler, startup: Duration) -> Result<Self, Error> {
        let deadline = tokio::time::Instant::now() + startup;
        let lifecycle = lifecycle(&handler.protocol);
        let auto = matches!(lifecycle, ClientLifecycleMode::Auto { .. });
        match Self::connect_with(server, endpoint, handler.clone(), lifecycle, deadline, startup).await {
            Ok(connection) => Ok(connection),
            Err(Failed { error, legacy: true }) if auto => {
                tracing::debug!(
                    server,
                    "server/discover was answered as a server of the initialize era answers ({error}); \
                     starting it again with initialize"
                );
                let initialize = ClientLifecycleMode::Initialize;
                Self::connect_with(server, endpoint, handler, initialize, deadline, startup)
                    .await
                    .map_err(|failed| failed.error)
            }
            Err(failed) => Err(failed.error),
        }
    }

    /// Starts the connection in `lifecycle` by `deadline` (`startup` after the start).
    async fn connect_with(
        server: &str,
        endpoint: &Endpoint,
        handler: Handler,
        lifecycle: ClientLifecycleMode,
        deadline: tokio::time::Instant,
        startup: Duration,
    ) -> Result<Self, Failed> {
        match endpoint {
            Endpoint::Stdio { command, args, env, cwd, sandbox } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).env_clear().envs(env);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let launch = (command.as_str(), args.as_slice(), env, cwd.as_deref());
                let confinement = crate::sandbox::confine(server, &mut process, launch, sandbox)?;
                let (mut group, pipes) = ProcessGroupGuard::spawn(&mut process)
                    .map_err(|error| Failed::from(Error::Spawn { command: command.clone(), error }))?;
                group.keep(confinement);
                let (tail, drained) = stderr::drain(server.to_owned(), group.pid(), pipes.stderr);
                let lines = Lines::new(pipes.stdout, pipes.stdin);
                let stdio = (lines.heard(), lines.lane());
                match tokio::time::timeout_at(deadline, handler.clone().serve_with_lifecycle(lines, lifecycle)).await {
                    Ok(Ok(service)) => Ok(Self::new(service, handler, Some(tail), Some(group), Some(stdio))),
                    Err(_elapsed) => {
                        group.kill(CLOSE_BOUND).await;
                        Err(Error::StartupTimeout { after: startup, stderr: tail.text() }.into())
                    }
                    Ok(Err(error)) if legacy::answered_as_legacy(&error) => {
                        group.kill(CLOSE_BOUND).await;
                        let reason = startup_reason(&handler.protocol, error.described());
                        Err(Failed { error: Error::Startup { reason, stderr: tail.text() }, legacy: true })
                    }
                    Ok(Err(error)) => {
                        // The server usually explains itself on stderr as it exits:
                        // give it a moment to, and the drain a moment to read it.
                        let exited = group.exits_within(Duration::from_millis(500)).await;
                        let _ = tokio::time::timeout(Duration::from_millis(100), drained).await;
                        // A server that exited says more by that than the pipe it left
                        // closed does.
                        let reason = match group.kill(CLOSE_BOUND).await.filter(|_| exited) {
                            Some(status) => crate::sandbox::explained(
                                format!("the server exited before it answered ({status})"),
                                sandbox,
                                &tail.text(),
                            ),
                            None => error.described(),
                        };
                        let reason = startup_reason(&handler.protocol, reason);
                        Err(Error::Startup { reason, stderr: tail.text() }.into())
                    }
                }
            }
            Endpoint::Http { url, headers, tokens } => {
                let client = http_client(headers)?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                let started = match authorized(url, &client, tokens.as_ref()).await? {
                    Some(manager) => {
                        let client = rmcp::transport::AuthClient::new(client, manager);
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        tokio::time::timeout_at(deadline, handler.clone().serve_with_lifecycle(transport, lifecycle))
                            .await
                    }
                    None => {
                        let transport = StreamableHttpClientTransport::with_client(client, config);
                        tokio::time::timeout_at(deadline, handler.clone().serve_with_lifecycle(transport, lifecycle))
                            .await
                    }
                };
                let service = started
                    .map_err(|_elapsed| Error::StartupTimeout { after: startup, stderr: String::new() })?
                    .map_err(|error| {
                        if error.is_authorization_required() {
                            return Failed::from(Error::LoginRequired { server: server.to_owned() });
                        }
                        let legacy = legacy::answered_as_legacy(&error);
                        let reason = startup_reason(&handler.protocol, endpoint.shown(&error));
                        Failed { error: Error::Startup { reason, stderr: String::new() }, legacy }
                    })?;
                Ok(Self::new(service, handler, None, None, None))
            }
        }
    }

    fn new(
        service: RunningService<RoleClient, Handler>,
        handler: Handler,
        stderr: Option<Arc<StderrTail>>,
        group: Option<ProcessGroupGuard>,
        stdio: Option<(Heard, UpstreamLane)>,
    ) -> Self {
        if let Some(tail) = &stderr {
            tail.running();
        }
        let peer = service.peer().clone();
        let stateless = listen::needs_streams(&peer);
        let (heard, lane) = stdio.unzip();
        Self {
            heard,
            lane: lane.filter(|_| !stateless),
            stateless,
            peer,
            service: tokio::sync::Mutex::new(Some(service)),
            stderr,
            group: group.map(tokio::sync::Mutex::new),
            handler,
            streams: Streams::default(),
        }
    }

    /// How many requests and notifications of the server's the connection has read so
    /// far; `None` when it does not count them (streamable HTTP).
    pub(crate) fn heard(&self) -> Option<u64> {
        self.heard.as_ref().map(Heard::count)
    }

    /// Whether the server speaks 2026-07-28 or later.
    pub(crate) fn is_stateless(&self) -> bool {
        self.stateless
    }

    /// The lane of a stdio connection in the `initialize` era, for its tool calls.
    pub(crate) fn lane(&self) -> Option<&UpstreamLane> {
        self.lane.as_ref()
    }

    /// Whether the connection still carries messages (a crashed server's does not).
    pub(crate) fn is_alive(&self) -> bool {
        !self.peer.is_transport_closed()
    }

    /// The server's last stderr lines; those of a server that stopped answering once it
    /// closed its stderr too (within a bound), as the two pipes are read apart.
    pub(crate) async fn stderr(&self) -> String {
        match &self.stderr {
            Some(tail) if self.is_alive() => tail.text(),
            Some(tail) => tail.text_when_closed().await,
            None => String::new(),
        }
    }

    /// Ends the server: stdin EOF, then SIGTERM to its process group, then SIGKILL to
    /// whatever is left of the group (a crashed server's grandchildren too), then the
    /// server is reaped.
    pub(crate) async fn close(&self) {
        if let Some(tail) = &self.stderr {
            tail.stopping();
        }
        self.streams.close();
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = service.close_with_timeout(CLOSE_BOUND).await;
        }
        if let Some(group) = &self.group {
            group.lock().await.end(CLOSE_BOUND).await;
        }
    }
}

/// A start that failed, and whether how it failed says the server is of the
/// `initialize` era (see [`legacy::answered_as_legacy`]).
struct Failed {
    error: Error,
    legacy: bool,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Self {
        Self { error, legacy: false }
    }
}

impl Endpoint {
    /// Where the OAuth tokens of a `url` server are kept, if a login keeps them.
    pub(crate) fn token_file(&self) -> Option<&TokenFile> {
        match self {
            Endpoint::Http { tokens, .. } => tokens.as_ref(),
            Endpoint::Stdio { .. } => None,
        }
    }

    /// `error` as a message may show it: [described](Described), and see [`without_url`].
    pub(crate) fn shown(&self, error: &impl Described) -> String {
        let text = error.described();
        match self {
            Endpoint::Stdio { .. } => text,
            Endpoint::Http { url, .. } => without_url(&text, url),
        }
    }
}

/// `text` (rmcp's and reqwest's errors, which quote the URL) with `url` shown redacted
/// (`skill_core::redact`): as written, as `url::Url` normalizes it, and as reqwest quotes
/// it (without user info).
fn without_url(text: &str, url: &str) -> String {
    let shown = skill_core::redact::url_text(url);
    let mut text = text.replace(url, &shown);
    if let Ok(mut parsed) = reqwest::Url::parse(url) {
        text = text.replace(parsed.as_str(), &shown);
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
        text = text.replace(parsed.as_str(), &shown);
    }
    text
}

/// The HTTP client of a `url` server: its `headers` on every request, and no redirect
/// followed (reqwest's policy would carry custom headers such as `X-Api-Key: ${KEY}` to
/// whatever host a redirect names).
pub(crate) fn http_client(headers: &reqwest::header::HeaderMap) -> Result<reqwest::Client, Error> {
    install_crypto_provider();
    reqwest::Client::builder()
        .default_headers(headers.clone())
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|error| Error::HttpClient(error.to_string()))
}

/// The scope a server's 403 `insufficient_scope` asks for, when that is why `error` came.
pub(crate) fn missing_scope(error: &ServiceError) -> Option<String> {
    use rmcp::transport::streamable_http_client::InsufficientScopeError;
    let source: &(dyn std::error::Error + 'static) = error;
    let refused = std::iter::successors(Some(source), |error| error.source())
        .find_map(|error| error.downcast_ref::<InsufficientScopeError>())?;
    refused.required_scope.clone().or_else(|| Some("(not named)".to_owned()))
}

/// The OAuth authorization of the server at `url` when its token file holds tokens
/// from a login; `None` without one.
async fn authorized(
    url: &str,
    client: &reqwest::Client,
    tokens: Option<&TokenFile>,
) -> Result<Option<rmcp::transport::AuthorizationManager>, Error> {
    let Some(tokens) = tokens.filter(|tokens| tokens.has_tokens()) else { return Ok(None) };
    let failed = |error: rmcp::transport::auth::AuthError| Error::Login(error.to_string());
    let mut manager = rmcp::transport::AuthorizationManager::new(url).await.map_err(failed)?;
    manager.with_client(client.clone()).map_err(failed)?;
    manager.set_credential_store(tokens.clone());
    Ok(manager.initialize_from_store().await.map_err(failed)?.then_some(manager))
}

/// How a connection speaking `protocol` starts: `server/discover` from 2026-07-28 on,
/// `initialize` before; `Auto` tries the first and falls back to the second.
fn lifecycle(protocol: &Protocol) -> ClientLifecycleMode {
    match protocol {
        Protocol::Auto => {
            ClientLifecycleMode::Auto { preferred_versions: vec![ProtocolVersion::V_2026_07_28], legacy_version: None }
        }
        Protocol::Pinned(version) => {
            let version = protocol_version(version);
            if version.has_initialize() {
                ClientLifecycleMode::Initialize
            } else {
                ClientLifecycleMode::Discover { preferred_versions: vec![version] }
            }
        }
    }
}

/// Why start-up failed: rmcp's `reason`, and for a connection pinned to a version
/// without `initialize`, what to do about a server that may not speak it.
fn startup_reason(protocol: &Protocol, reason: String) -> String {
    match protocol {
        Protocol::Pinned(version) if !protocol_version(version).has_initialize() => format!(
            "server/discover at protocol_version {version} failed ({reason}); a server of an older era needs \
             protocol_version: auto or 2025-11-25"
        ),
        _ => reason,
    }
}

/// rmcp's name for `version`, one of [`Protocol::KNOWN`].
fn protocol_version(version: &str) -> ProtocolVersion {
    ProtocolVersion::KNOWN_VERSIONS
        .iter()
        .find(|known| known.as_str() == version)
        .cloned()
        .unwrap_or(ProtocolVersion::LATEST)
}

/// rustls needs one crypto provider per process; `ring` is the one this crate builds
/// with. A provider installed earlier (by the host) is kept.
pub(crate) fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
