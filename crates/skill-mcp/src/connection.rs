//! One running connection to a server: a child process in its own process group (or an
//! HTTP session), its stderr, and the rmcp client.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use skill_core::AgentHandle;
use skill_core::progress::Progress;
use tokio::sync::Notify;

use crate::Error;
use crate::route::CallRoutes;
use crate::stderr::{self, StderrTail};

/// How long a closing server gets for each step (stdin EOF, SIGTERM) before the next.
const CLOSE_BOUND: Duration = Duration::from_secs(8);

/// The client side of a connection: identifies us and hears the servers' `list_changed`
/// notifications (tools, prompts, resources), each of which makes the skill list again.
#[derive(Debug, Clone)]
pub(crate) struct Handler {
    /// The server's name: the skill its resource updates are announced for.
    pub(crate) server: String,
    pub(crate) lists_changed: Arc<Notify>,
    /// The agent of the skill, which hears the server's resource updates.
    pub(crate) agent: Option<AgentHandle>,
    /// Who waits for each call in flight: its progress, and with the gateway its
    /// server's requests and log messages, go there.
    pub(crate) calls: CallRoutes,
}

impl ClientHandler for Handler {
    /// With the gateway, the server may ask for sampling and elicitation, which go to the
    /// gateway client whose call it serves.
    fn get_info(&self) -> ClientConfig {
        #[cfg(feature = "server")]
        let capabilities = crate::server::forwarded_capabilities();
        #[cfg(not(feature = "server"))]
        let capabilities = rmcp::model::ClientCapabilities::default();
        ClientConfig::new(capabilities, Implementation::new("omniagent", env!("CARGO_PKG_VERSION")))
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

    #[cfg(feature = "server")]
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        self.caller_of()?.create_elicitation(request).await
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
        if let Some(agent) = self.agent.as_ref().and_then(AgentHandle::upgrade) {
            agent.resource_updated(&self.server, &params.uri);
        }
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(sink) = self.calls.get(&params.progress_token).and_then(|route| route.progress) {
            sink(Progress { progress: params.progress, total: params.total, message: params.message });
        }
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

#[cfg(feature = "server")]
impl Handler {
    /// The gateway client whose call a server's request serves: nothing on the wire
    /// says which call that is, so it is the caller of the one call in flight.
    fn caller_of(&self) -> Result<crate::server::Caller, rmcp::ErrorData> {
        self.calls.only_caller().ok_or_else(|| {
            rmcp::ErrorData::invalid_request("no single client call is in flight that this request could serve", None)
        })
    }
}

/// Kills a server's whole process group when dropped: the server and anything it
/// started (`npx` starts `node`, which may start more), even without an async runtime.
#[derive(Debug)]
struct ProcessGroupGuard {
    pgid: nix::unistd::Pid,
}

impl Drop for ProcessGroupGuard {
    fn drop(&mut self) {
        // The group may be gone already (ESRCH); there is nothing else to do then.
        let _ = nix::sys::signal::killpg(self.pgid, nix::sys::signal::Signal::SIGKILL);
    }
}

/// What a connection is made from.
pub(crate) enum Endpoint {
    /// A subprocess.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    /// A streamable-HTTP URL.
    Http { url: String, headers: reqwest::header::HeaderMap },
}

/// A live connection.
pub(crate) struct Connection {
    pub(crate) peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, Handler>>>,
    stderr: Option<Arc<StderrTail>>,
    group: Option<ProcessGroupGuard>,
}

impl Connection {
    /// Starts the server and completes the MCP handshake within `startup`.
    pub(crate) async fn start(
        server: &str,
        endpoint: &Endpoint,
        handler: Handler,
        startup: Duration,
    ) -> Result<Self, Error> {
        match endpoint {
            Endpoint::Stdio { command, args, env, cwd } => {
                let mut process = tokio::process::Command::new(command);
                process.args(args).env_clear().envs(env);
                if let Some(cwd) = cwd {
                    process.current_dir(cwd);
                }
                let mut wrapped = CommandWrap::from(process);
                wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
                let (transport, stderr) = TokioChildProcess::builder(wrapped)
                    .stderr(Stdio::piped())
                    .spawn()
                    .map_err(|source| Error::Spawn { command: command.clone(), source })?;
                let group = transport
                    .id()
                    .and_then(|pid| i32::try_from(pid).ok())
                    .map(|pid| ProcessGroupGuard { pgid: nix::unistd::Pid::from_raw(pid) });
                let (stderr, drained) = match stderr {
                    Some(stderr) => {
                        let (tail, drained) = stderr::drain(server.to_owned(), stderr);
                        (Some(tail), Some(drained))
                    }
                    None => (None, None),
                };
                let stderr_text =
                    |tail: &Option<Arc<StderrTail>>| tail.as_ref().map(|tail| tail.text()).unwrap_or_default();
                match tokio::time::timeout(startup, handler.serve(transport)).await {
                    Ok(Ok(service)) => Ok(Self::new(service, stderr, group)),
                    Err(_elapsed) => Err(Error::StartupTimeout { after: startup, stderr: stderr_text(&stderr) }),
                    Ok(Err(error)) => {
                        // The server usually explains itself on stderr as it exits:
                        // give the drain a moment to read it.
                        if let Some(drained) = drained {
                            let _ = tokio::time::timeout(Duration::from_millis(500), drained).await;
                        }
                        Err(Error::Startup { reason: error.to_string(), stderr: stderr_text(&stderr) })
                    }
                }
            }
            Endpoint::Http { url, headers } => {
                install_crypto_provider();
                let client = reqwest::Client::builder()
                    .default_headers(headers.clone())
                    .build()
                    .map_err(|error| Error::HttpClient(error.to_string()))?;
                let transport = StreamableHttpClientTransport::with_client(
                    client,
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()),
                );
                let service = tokio::time::timeout(startup, handler.serve(transport))
                    .await
                    .map_err(|_elapsed| Error::StartupTimeout { after: startup, stderr: String::new() })?
                    .map_err(|error| Error::Startup { reason: error.to_string(), stderr: String::new() })?;
                Ok(Self::new(service, None, None))
            }
        }
    }

    fn new(
        service: RunningService<RoleClient, Handler>,
        stderr: Option<Arc<StderrTail>>,
        group: Option<ProcessGroupGuard>,
    ) -> Self {
        Self { peer: service.peer().clone(), service: tokio::sync::Mutex::new(Some(service)), stderr, group }
    }

    /// Whether the connection still carries messages (a crashed server's does not).
    pub(crate) fn is_alive(&self) -> bool {
        !self.peer.is_transport_closed()
    }

    /// The server's last stderr lines.
    pub(crate) fn stderr(&self) -> String {
        self.stderr.as_ref().map(|tail| tail.text()).unwrap_or_default()
    }

    /// Ends the server: stdin EOF, then SIGTERM, then SIGKILL (rmcp's sequence), then
    /// SIGKILL to whatever is left of its process group.
    pub(crate) async fn close(&self) {
        if let Some(mut service) = self.service.lock().await.take() {
            let _ = service.close_with_timeout(CLOSE_BOUND).await;
        }
        if let Some(group) = &self.group {
            let _ = nix::sys::signal::killpg(group.pgid, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// rustls needs one crypto provider per process; `ring` is the one this crate builds
/// with. A provider installed earlier (by the host) is kept.
fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
