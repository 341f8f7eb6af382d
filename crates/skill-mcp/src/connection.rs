//! One running connection to a server: a child process in its own process group (or an
//! HTTP session), its stderr, and the rmcp client.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::transport::streamable_http_client::{StreamableHttpClientTransport, StreamableHttpClientTransportConfig};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use skill_core::progress::{Progress, ProgressSink};
use tokio::sync::Notify;

use crate::Error;
use crate::stderr::{self, StderrTail};

/// How long a closing server gets for each step (stdin EOF, SIGTERM) before the next.
const CLOSE_BOUND: Duration = Duration::from_secs(8);

/// The client side of a connection: identifies us and hears the servers' `list_changed`
/// notifications (tools, prompts, resources), each of which makes the skill list again.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) lists_changed: Arc<Notify>,
    /// Where the progress of each call in flight goes, by the progress token it was sent with.
    pub(crate) progress: ProgressRoutes,
}

/// The progress sinks of the calls in flight, by progress token.
pub(crate) type ProgressRoutes = Arc<std::sync::Mutex<HashMap<ProgressToken, ProgressSink>>>;

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler").finish_non_exhaustive()
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("omniagent", env!("CARGO_PKG_VERSION")))
    }

    fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) -> impl Future<Output = ()> + Send + '_ {
        self.lists_changed.notify_one();
        std::future::ready(())
    }

    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let sink = self
            .progress
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&params.progress_token)
            .cloned();
        if let Some(sink) = sink {
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
