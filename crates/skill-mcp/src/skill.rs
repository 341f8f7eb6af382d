//! [`McpSkill`]: an MCP server as a skill; `tool` holds [`McpTool`], one of its tools,
//! and `pinned` the items offered from the trust lock before the server starts.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::ServiceError;
use rmcp::model::JsonObject;
use skill_core::trust::Recorded;
use skill_core::{
    BoxError, ExposeSecret, Prompt, PromptInfo, ResourceCatalog, Secrets, Skill, SkillHandle, SourceKind, Tool,
    ToolError, expand_home,
};
use tokio::sync::Notify;

use crate::Error;
use crate::config::{ServerConfig, Transport};
use crate::connection::{Connection, Endpoint, Handler, Person};
use crate::elicit::Elicitor;
use crate::environment::{CALLERS_HEADER, CALLERS_VAR, server_env};
use crate::oauth::TokenFile;
use crate::route::CallRoutes;

mod health;
mod input;
mod items;
mod pinned;
mod tool;

pub use self::health::{Health, UpstreamHealth, UpstreamState};
use self::items::{McpPrompt, McpResources};
pub use self::tool::McpTool;
use crate::wire::{icons_from_rmcp, wire_into};

/// The MCP Apps extension (SEP-1865): a client that declares it shows the `ui://`
/// resources that tools name in `_meta.ui.resourceUri`.
pub const APPS_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// An MCP server as a skill: its tools, offered under `{server}__{tool}` with source
/// kind `mcp`, and its prompts, resources and resource templates, each with what the
/// server says of it (titles, annotations, output schemas) unchanged.
///
/// The server is started by `init` with this agent's environment (see
/// [`crate::INHERITED_VARS`]), restarted by the next call after it crashed or a call timed
/// out, and ended by `close` (or when the skill is dropped).
pub struct McpSkill {
    name: String,
    config: ServerConfig,
    host_env: HashMap<String, String>,
    secrets: Secrets,
    /// The skill's handle on its agent, through which its lists change.
    handle: Option<SkillHandle>,
    shared: Option<Arc<Shared>>,
    items: Items,
    refresher: Option<tokio::task::JoinHandle<()>>,
    elicitor: Option<Arc<dyn Elicitor>>,
    tokens: Option<TokenFile>,
    apps: Option<JsonObject>,
    /// The definitions pinned in the trust lock, which `init` offers without starting
    /// the server.
    pinned: Option<Recorded>,
    health: Health,
}

impl McpSkill {
    /// The server `name` configured by `config`; it inherits from this process's
    /// environment only the allowlisted variables.
    pub fn new(name: impl Into<String>, config: ServerConfig) -> Self {
        Self::with_host_env(name, config, crate::environment::process_env())
    }

    /// Like [`McpSkill::new`], with `host_env` standing for this process's environment.
    pub fn with_host_env(name: impl Into<String>, config: ServerConfig, host_env: HashMap<String, String>) -> Self {
        Self {
            name: name.into(),
            config,
            host_env,
            secrets: Secrets::new(),
            handle: None,
            shared: None,
            items: Items::default(),
            refresher: None,
            elicitor: None,
            tokens: None,
            apps: None,
            pinned: None,
            health: Health::default(),
        }
    }

    /// A handle on the server's health (whether it runs, its restarts, its last error),
    /// which stays valid once the skill is in its agent: what a gateway's console shows.
    pub fn health(&self) -> Health {
        self.health.clone()
    }

    /// Offers `recorded`, the server's definitions as the trust lock holds them, from
    /// `init` on without starting the server: it starts at the first call or read of
    /// one of its items, and its live lists then replace these (the agent's trust
    /// compares them with the lock).
    #[must_use]
    pub fn with_pinned(mut self, recorded: Recorded) -> Self {
        self.pinned = Some(recorded);
        self
    }

    /// Tells the server that the host in front shows MCP Apps: the client declares the
    /// extension [`APPS_EXTENSION`] with the host's `settings` (its `mimeTypes`), so a
    /// server that offers its apps only to such hosts offers them.
    #[must_use]
    pub fn with_apps(mut self, settings: JsonObject) -> Self {
        self.apps = Some(settings);
        self
    }

    /// Keeps the OAuth tokens of a `url` server in `tokens`: a [`Login`](crate::Login)
    /// puts them there, and the connection sends them.
    #[must_use]
    pub fn with_token_file(mut self, tokens: TokenFile) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Has `elicitor` answer the server's elicitations outside gateway calls (where the
    /// calling client answers); without one they are declined.
    #[must_use]
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// The endpoint, with `${VAR}` expanded from the secrets, then the static `env`, then
    /// the host; and the names of `required_env` that end up without a value.
    fn endpoint(&self) -> Result<Endpoint, Error> {
        let lookup = |name: &str| {
            self.secrets
                .get(name)
                .map(|value| value.expose_secret().to_owned())
                .or_else(|| match &self.config.transport {
                    Transport::Stdio { env, .. } => env.get(name).cloned(),
                    Transport::Http { .. } => None,
                })
                .or_else(|| self.host_env.get(name).cloned())
        };
        // An error names where the text is, never the text: it may hold a credential.
        let expand_at = |text: &str, place: &dyn Fn() -> String| {
            skill_core::expand_vars(text, lookup).map_err(|problem| Error::Expansion(format!("{}: {problem}", place())))
        };
        let expand_all = |values: &[String]| -> Result<Vec<String>, Error> {
            values.iter().enumerate().map(|(index, value)| expand_at(value, &|| format!("args[{index}]"))).collect()
        };
        match &self.config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let env: BTreeMap<String, String> = env
                    .iter()
                    .map(|(name, value)| Ok((name.clone(), expand_at(value, &|| format!("env.{name}"))?)))
                    .collect::<Result<_, Error>>()?;
                let env = server_env(&self.host_env, &env, &self.secrets);
                let missing: Vec<String> = self
                    .config
                    .required_env
                    .iter()
                    .filter(|name| env.get(*name).is_none_or(|value| value.is_empty()))
                    .cloned()
                    .collect();
                if !missing.is_empty() {
                    return Err(Error::MissingEnv { names: missing });
                }
                Ok(Endpoint::Stdio {
                    command: expand_at(command, &|| "command".to_owned())?,
                    args: expand_all(args)?,
                    env,
                    cwd: cwd.as_deref().map(expand_home),
                    sandbox: self.config.sandbox.effective(),
                })
            }
            Transport::Http { url, headers } => {
                let missing: Vec<String> =
                    self.config.required_env.iter().filter(|name| lookup(name).is_none()).cloned().collect();
                if !missing.is_empty() {
                    return Err(Error::MissingEnv { names: missing });
                }
                let mut header_map = reqwest::header::HeaderMap::new();
                for (name, value) in headers {
                    let value = expand_at(value, &|| format!("headers.{name}"))?;
                    let invalid = || Error::Header { name: name.clone() };
                    let header_name =
                        reqwest::header::HeaderName::from_bytes(name.as_bytes()).map_err(|_| invalid())?;
                    let mut header_value = reqwest::header::HeaderValue::from_str(&value).map_err(|_| invalid())?;
                    header_value.set_sensitive(true);
                    header_map.insert(header_name, header_value);
                }
                if let Some(callers) = self.host_env.get(CALLERS_VAR)
                    && let Ok(value) = reqwest::header::HeaderValue::from_str(callers)
                {
                    header_map.insert(CALLERS_HEADER, value);
                }
                let url = expand_at(url, &|| "url".to_owned())?;
                Ok(Endpoint::Http { url, headers: header_map, tokens: self.tokens.clone() })
            }
        }
    }
}

impl std::fmt::Debug for McpSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSkill")
            .field("name", &self.name)
            .field("secrets", &self.secrets)
            .field("n_tools", &self.items.tools.len())
            .finish_non_exhaustive()
    }
}

#[async_trait]
impl Skill for McpSkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "The tools of an MCP server"
    }

    fn source_type(&self) -> SourceKind {
        SourceKind::Mcp
    }

    fn namespaced(&self) -> bool {
        self.config.prefix
    }

    fn set_agent(&mut self, handle: SkillHandle) {
        self.handle = Some(handle);
    }

    fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    /// The secrets named in `required_env`: without one, the server is not started.
    fn required_secrets(&self) -> Vec<String> {
        self.config.required_env.iter().filter(|name| self.config.secrets.contains_key(*name)).cloned().collect()
    }

    async fn init(&mut self) -> Result<(), BoxError> {
        let endpoint = self.endpoint()?;
        let shared = Arc::new(Shared {
            server: self.name.clone(),
            endpoint,
            config: self.config.clone(),
            lists_changed: Arc::new(Notify::new()),
            handle: self.handle.clone(),
            calls: CallRoutes::default(),
            person: Person { server: self.name.clone(), elicitor: self.elicitor.clone() },
            apps: self.apps.clone(),
            connection: std::sync::RwLock::new(None),
            starting: tokio::sync::Mutex::new(()),
            closing: std::sync::Mutex::new(Vec::new()),
            failed_methods: std::sync::Mutex::default(),
            from_lock: std::sync::atomic::AtomicBool::new(self.pinned.is_some()),
            health: self.health.clone(),
        });
        self.health.attach(&shared);
        self.items = match self.pinned.take() {
            Some(recorded) => shared.items_from_lock(recorded),
            None => {
                let connection = shared.connection().await?;
                shared.list_items(&connection).await.inspect_err(|error| error.log_stderr(&self.name))?
            }
        };
        self.refresher = Some(tokio::spawn(refresh_on_change(Arc::downgrade(&shared), self.handle.clone())));
        self.shared = Some(shared);
        Ok(())
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.items.tools.clone()
    }

    fn prompts(&self) -> Vec<Arc<dyn Prompt>> {
        self.items.prompts.clone()
    }

    fn resources(&self) -> ResourceCatalog {
        self.items.resources.clone()
    }

    async fn close(&mut self) -> Result<(), BoxError> {
        if let Some(refresher) = self.refresher.take() {
            refresher.abort();
        }
        if let Some(shared) = self.shared.take() {
            shared.close().await;
        }
        Ok(())
    }
}

impl Drop for McpSkill {
    fn drop(&mut self) {
        if let Some(refresher) = self.refresher.take() {
            refresher.abort();
        }
    }
}

/// What a server offers, as skill items.
#[derive(Default)]
struct Items {
    tools: Vec<Arc<dyn Tool>>,
    prompts: Vec<Arc<dyn Prompt>>,
    resources: ResourceCatalog,
}

/// Re-lists whenever the server says a list changed, and hands the new lists to the
/// agent through the skill's handle (which takes only this skill's lists), even when
/// they read the same: the server's announcement is news for the agent's clients. (The
/// first start after the lists were offered from the trust lock lists the server in
/// [`Shared::go_live`].) Ends when the skill is gone or its agent is closed, and at once
/// without an agent.
async fn refresh_on_change(shared: std::sync::Weak<Shared>, handle: Option<SkillHandle>) {
    let Some(handle) = handle else { return };
    let Some(lists_changed) = shared.upgrade().map(|shared| Arc::clone(&shared.lists_changed)) else { return };
    loop {
        lists_changed.notified().await;
        let Some(shared) = shared.upgrade() else { return };
        // A server that announces a change while it starts is listed once its start
        // ended: its connection is the current one only then.
        drop(shared.starting.lock().await);
        let Some(connection) = shared.current() else { continue };
        match shared.list_items(&connection).await {
            Ok(items) => {
                let taken = handle
                    .replace_tools(items.tools)
                    .and_then(|()| handle.replace_prompts(items.prompts))
                    .and_then(|()| handle.replace_resources(items.resources));
                shared.health.relisted();
                match taken {
                    Ok(()) => {}
                    Err(skill_core::Error::AgentClosed { .. }) => return,
                    Err(error) => tracing::warn!(server = %shared.server, "the new lists were not all taken: {error}"),
                }
            }
            Err(error) => {
                // Its reasons show the endpoint as messages may already.
                tracing::warn!(server = %shared.server, "listing again failed: {error}")
            }
        }
    }
}

/// What the skill's tools share: the endpoint and the current connection.
struct Shared {
    server: String,
    endpoint: Endpoint,
    config: ServerConfig,
    /// Told when the server says a list changed.
    lists_changed: Arc<Notify>,
    /// The skill's handle, through which the server's resource updates are announced.
    handle: Option<SkillHandle>,
    calls: CallRoutes,
    person: Person,
    /// The host's MCP Apps settings, declared to the server.
    apps: Option<JsonObject>,
    /// The current connection. Read by every call, so never held across an await.
    connection: std::sync::RwLock<Option<Arc<Connection>>>,
    /// Held while a connection starts, so that one caller starts it and the rest wait.
    starting: tokio::sync::Mutex<()>,
    /// Discarded connections still shutting down; `close` waits for them.
    closing: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The optional requests (listings, completions) whose failure has been logged.
    failed_methods: std::sync::Mutex<std::collections::BTreeSet<&'static str>>,
    /// Set while the skill offers what the trust lock recorded and the server has not
    /// started: its first start lists the server's own items in their place
    /// ([`Shared::go_live`]). Read and changed only under `starting`.
    from_lock: std::sync::atomic::AtomicBool,
    health: Health,
}

impl Shared {
    /// The live connection, started (again) when there is none or it died.
    async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, Error> {
        match self.live() {
            Some(connection) => Ok(connection),
            // Boxed: starting a server is a future of about 12 KB, which every call's own
            // future would otherwise hold, and copy each time it is boxed.
            None => Box::pin(self.start()).await,
        }
    }

    /// Starts the connection, unless another caller did while this one waited. It is
    /// the current one only once [`Shared::go_live`] had it.
    async fn start(self: &Arc<Self>) -> Result<Arc<Connection>, Error> {
        let _starting = self.starting.lock().await;
        // Another caller may have started it while this one waited.
        if let Some(connection) = self.live() {
            return Ok(connection);
        }
        let dead = self.slot().take();
        if let Some(dead) = dead {
            dead.close().await;
        }
        let handler = Handler {
            lists_changed: Arc::clone(&self.lists_changed),
            handle: self.handle.clone(),
            calls: self.calls.clone(),
            protocol: self.config.protocol.clone(),
            person: self.person.clone(),
            apps: self.apps.clone(),
        };
        self.health.starting();
        let started = match Connection::start(&self.server, &self.endpoint, handler, self.config.timeouts.startup).await
        {
            Ok(connection) => self.go_live(Arc::new(connection)).await,
            Err(error) => Err(error),
        };
        self.health.started(started.as_ref().err().map(ToString::to_string));
        let connection = started.inspect_err(|error| error.log_stderr(&self.server))?;
        tracing::debug!(server = %self.server, "server started");
        *self.slot() = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// The current connection, if it still carries messages.
    fn live(&self) -> Option<Arc<Connection>> {
        let slot = self.connection.read().unwrap_or_else(std::sync::PoisonError::into_inner);
        slot.as_ref().filter(|connection| connection.is_alive()).cloned()
    }

    fn slot(&self) -> std::sync::RwLockWriteGuard<'_, Option<Arc<Connection>>> {
        self.connection.write().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn current(&self) -> Option<Arc<Connection>> {
        self.connection.read().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Drops `connection` if it is still the current one: the next call starts afresh.
    ///
    /// The connection shuts down in the background: a hung server can take seconds to
    /// stop (stdin EOF, then SIGTERM, then SIGKILL), which must not stretch the call
    /// timeout of the call that gave up on it. `close` waits for it.
    async fn discard(&self, connection: &Arc<Connection>) {
        self.health.lost(if connection.is_alive() {
            "it stopped answering (a call timed out), so it was ended".to_owned()
        } else {
            "it exited".to_owned()
        });
        {
            let mut slot = self.slot();
            if slot.as_ref().is_some_and(|current| Arc::ptr_eq(current, connection)) {
                slot.take();
            }
        }
        let connection = Arc::clone(connection);
        let shutdown = tokio::spawn(async move { connection.close().await });
        let mut closing = self.closing.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        closing.retain(|shutdown| !shutdown.is_finished());
        closing.push(shutdown);
    }

    async fn close(&self) {
        let current = self.slot().take();
        if let Some(connection) = current {
            connection.close().await;
        }
        let closing = std::mem::take(&mut *self.closing.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        for shutdown in closing {
            // A shutdown task only fails by panicking; the connection's drop still kills
            // its process group then.
            let _ = shutdown.await;
        }
    }

    /// Every tool, prompt, resource and resource template the server lists (following
    /// pagination), as skill items; prompts and resources only when the server declares
    /// them. All within the start-up bound. Only `tools/list` must answer: an optional
    /// listing that fails counts as empty (see [`Shared::optional`]).
    async fn list_items(self: &Arc<Self>, connection: &Connection) -> Result<Items, Error> {
        let startup = self.config.timeouts.startup;
        let deadline = tokio::time::Instant::now() + startup;
        let peer = &connection.peer;
        let tools = match tokio::time::timeout_at(deadline, peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(error)) if error.is_authorization_required() => {
                return Err(Error::LoginRequired { server: self.server.clone() });
            }
            Ok(Err(error)) => {
                let reason = format!("tools/list: {}", self.endpoint.shown(&error));
                return Err(Error::Startup { reason, stderr: connection.stderr().await });
            }
            Err(_elapsed) => return Err(Error::StartupTimeout { after: startup, stderr: connection.stderr().await }),
        };
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        let server_icons = icons_from_rmcp(peer.peer_info().and_then(|info| info.server_info.as_ref()?.icons.clone()));
        let mut items = Items {
            tools: tools
                .into_iter()
                .map(|tool| Arc::new(McpTool::new(tool, &server_icons, Arc::clone(self))) as Arc<dyn Tool>)
                .collect(),
            ..Items::default()
        };
        if capabilities.prompts.is_some() {
            let prompts = self.optional("prompts/list", deadline, peer.list_all_prompts()).await;
            items.prompts = prompts
                .into_iter()
                .filter_map(|prompt| {
                    let info = wire_into::<PromptInfo>(&prompt).ok()?;
                    Some(Arc::new(McpPrompt { info, shared: Arc::clone(self), stand_in: false }) as Arc<dyn Prompt>)
                })
                .collect();
        }
        if capabilities.resources.is_some() {
            let resources = self.optional("resources/list", deadline, peer.list_all_resources()).await;
            let templates =
                self.optional("resources/templates/list", deadline, peer.list_all_resource_templates()).await;
            items.resources = ResourceCatalog {
                resources: resources.iter().filter_map(|resource| wire_into(resource).ok()).collect(),
                templates: templates.iter().filter_map(|template| wire_into(template).ok()).collect(),
                reader: Some(Arc::new(McpResources { shared: Arc::clone(self), stand_in: false })),
            };
        }
        Ok(items)
    }

    /// What the optional listing `method` gives by `deadline`. One that fails or does not
    /// answer counts as empty: a server that declares resources but has no handler for
    /// `resources/templates/list` (the Python SDK 1.x's low-level server answers `-32601`,
    /// as PyPI `mcp-server-sqlite` does) still offers its tools and the rest.
    async fn optional<T>(
        &self,
        method: &'static str,
        deadline: tokio::time::Instant,
        listing: impl Future<Output = Result<Vec<T>, ServiceError>>,
    ) -> Vec<T> {
        let failure = match tokio::time::timeout_at(deadline, listing).await {
            Ok(Ok(items)) => return items,
            Ok(Err(error)) => self.endpoint.shown(&error),
            Err(_elapsed) => format!("no answer within the start-up bound of {:?}", self.config.timeouts.startup),
        };
        self.failed(method, &failure);
        Vec::new()
    }

    /// Logs that the optional request `method` failed with `failure`: at warn level the
    /// first time for this server, as it will likely fail the same way on every listing
    /// after a `list_changed`; at debug level after that.
    fn failed(&self, method: &'static str, failure: &str) {
        let first = self.failed_methods.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(method);
        if first {
            tracing::warn!(server = %self.server, method, "{method} failed, so it counts as empty: {failure}");
        } else {
            tracing::debug!(server = %self.server, method, "{method} failed again: {failure}");
        }
    }

    /// The live connection for a request other than a tool call, started when there is
    /// none.
    async fn connected(self: &Arc<Self>) -> Result<Arc<Connection>, ToolError> {
        let server = &self.server;
        self.connection()
            .await
            .map_err(|error| ToolError::failed(format!("MCP server `{server}` is not available: {error}")))
    }

    /// Sends one request other than a tool call (prompts/get, resources/read) within the
    /// call bound; a dead server is restarted by the next call.
    async fn request<T>(
        self: &Arc<Self>,
        send: impl AsyncFnOnce(&Connection) -> Result<T, ServiceError>,
    ) -> Result<T, ToolError> {
        let server = &self.server;
        let connection = self.connected().await?;
        let bound = self.config.timeouts.call;
        match tokio::time::timeout(bound, send(&connection)).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(ServiceError::McpError(error))) => {
                Err(ToolError::failed(format!("MCP server `{server}`: {}", error.message)))
            }
            Ok(Err(error)) => {
                if !connection.is_alive() {
                    self.discard(&connection).await;
                }
                Err(ToolError::failed(format!("MCP server `{server}`: {}", self.endpoint.shown(&error))))
            }
            Err(_elapsed) => Err(ToolError::Timeout { after: bound }),
        }
    }
}
