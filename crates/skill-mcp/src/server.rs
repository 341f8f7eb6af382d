//! The gateway: one MCP server over [`Agent`]s, on rmcp's server side, answering both
//! protocol eras (2025-11-25 with `initialize` and sessions; 2026-07-28, stateless).
//!
//! Every request is served by the agent of the client that sent it (over stdio, the one
//! agent; over HTTP, the agent of the client its bearer token names: a static token's
//! client, or the identity an OAuth access token proves, see [`OAuthOptions`]), made by an
//! [`AgentFactory`] on that client's first need (so upstream servers start lazily) and
//! kept for the life of the gateway. Each agent's list changes reach that client's
//! sessions as `list_changed` notifications and its 2026-07-28 subscriptions.
//!
//! ```no_run
//! use std::sync::Arc;
//! use skill_core::{Agent, MemorySkill};
//! use skill_mcp::server::{AgentFactory, AgentFor, Gateway};
//!
//! # #[tokio::main] async fn main() -> std::io::Result<()> {
//! // Every client gets an agent of its own, with the memory skill.
//! let factory: AgentFactory = Arc::new(|wanted: AgentFor| {
//!     Box::pin(async move {
//!         let agent = Agent::builder().name(wanted.client).with_compiled_skill(MemorySkill::new()).build();
//!         agent.init_compiled_skills().await;
//!         Ok(agent)
//!     })
//! });
//! // An MCP host starts this program and speaks MCP on its stdin and stdout.
//! Gateway::new(factory, None).serve_stdio(tokio_util::sync::CancellationToken::new()).await
//! # }
//! ```

mod announce;
mod answer;
mod caller;
mod convert;
mod http;
mod page;
mod progress;
mod resource_server;
mod search;
#[cfg(feature = "redis")]
mod session_store;
mod skills;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult, DiscoverResult,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequestParams, GetSkillResult, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListSkillsResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResponse, Reference, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use skill_core::{Agent, CompletionRequest, RegisteredTool, ToolError};
use tokio_util::sync::CancellationToken;

use self::announce::{Lists, Subscribed, announce_changes, announce_updates, notify_client, session_of};
use self::answer::{call_error, item_error, passed_up};
pub use self::caller::tell_caller;
pub(crate) use self::caller::{Caller, PassedUp};
pub use self::http::{HttpClient, HttpOptions, serve_http};
use self::page::page;
use self::progress::progress_to;
pub use self::resource_server::{OAuthOptions, client_name};
#[cfg(feature = "redis")]
pub use self::session_store::{REFRESH_EVERY, RedisSessionStore, RedisSessionStoreError, SESSION_TTL};
use crate::lines::Lines;

/// Makes the agent of a client ([`AgentFor`]): an error is the reason, which every
/// request of that client then gets.
pub type AgentFactory =
    Arc<dyn Fn(AgentFor) -> Pin<Box<dyn Future<Output = Result<Agent, String>> + Send>> + Send + Sync>;

/// Whom an [`AgentFactory`] makes an agent for.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct AgentFor {
    /// The client's name (`""` over stdio and for the open loopback HTTP server).
    pub client: String,
    /// The settings of the MCP Apps extension ([`crate::APPS_EXTENSION`]) that the host
    /// whose request needed the agent declared, if it did: the agent's MCP servers are
    /// told the same ([`crate::McpSkill::with_apps`]), so that they offer their apps.
    pub apps: Option<JsonObject>,
}

/// What the gateway tells a client, by the client's name, as the server's instructions
/// (which hosts may add to their model's system prompt) when it initializes or
/// discovers the server; `None` tells nothing.
pub type InstructionsFactory =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Option<String>> + Send>> + Send + Sync>;

/// How many tools, prompts, resources or templates one list page holds.
pub const PAGE_SIZE: usize = 200;

/// The gateway: the agents of its clients and the clients' open notification channels.
///
/// Cloning gives another handle to the same gateway (rmcp makes one handler per HTTP
/// session or request).
#[derive(Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
    /// The client every request of this handler is from, for stdio.
    fixed_client: Option<String>,
    /// With tool search, the skills whose tools are still listed.
    tool_search: Option<Arc<BTreeSet<String>>>,
}

/// A client's agent once made, or why it could not be.
type AgentCell = Arc<tokio::sync::OnceCell<Result<Agent, String>>>;

struct Inner {
    factory: AgentFactory,
    instructions: Option<InstructionsFactory>,
    agents: Mutex<BTreeMap<String, AgentCell>>,
    /// The MCP Apps settings each client's agent was made with, which the agent made
    /// afresh keeps.
    apps: Mutex<BTreeMap<String, JsonObject>>,
    /// The words of each client's tools, for tool search (an agent made afresh, or
    /// whose tools changed, gets its index taken again).
    search_indexes: Mutex<BTreeMap<String, Arc<search::Index>>>,
    /// Legacy sessions, by client: they hear `notifications/*/list_changed`.
    peers: Mutex<Vec<(String, Peer<RoleServer>)>>,
    /// 2026-07-28 subscriptions, by client.
    sinks: Mutex<Vec<(String, SubscriptionSink)>>,
    /// Legacy sessions' resource subscriptions.
    subscribed: Mutex<Vec<Subscribed>>,
    /// Cancelled when the gateway stops: ends watchers and subscriptions.
    stopping: CancellationToken,
}

impl std::fmt::Debug for Gateway {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let clients: Vec<String> = lock(&self.inner.agents).keys().cloned().collect();
        f.debug_struct("Gateway").field("clients", &clients).finish_non_exhaustive()
    }
}

impl Gateway {
    /// A gateway whose clients' agents `factory` makes; `instructions` gives each client
    /// the server's instructions as it initializes (or discovers) the server.
    pub fn new(factory: AgentFactory, instructions: Option<InstructionsFactory>) -> Self {
        let inner = Inner {
            factory,
            instructions,
            agents: Mutex::default(),
            apps: Mutex::default(),
            search_indexes: Mutex::default(),
            peers: Mutex::default(),
            sinks: Mutex::default(),
            subscribed: Mutex::default(),
            stopping: CancellationToken::new(),
        };
        Self { inner: Arc::new(inner), fixed_client: None, tool_search: None }
    }

    /// Lists `search_tools` and `call_tool` in place of the agents' tools, for hosts whose
    /// model cannot hold them all: the first finds tools by words of their names and
    /// descriptions, with their input schemas, and the second calls one by name. The
    /// tools of the skills `listed` are still listed, and every tool may still be called
    /// by its own name.
    #[must_use]
    pub fn with_tool_search(self, listed: impl IntoIterator<Item = String>) -> Self {
        Self { tool_search: Some(Arc::new(listed.into_iter().collect())), ..self }
    }

    /// Serves MCP on stdin and stdout, as the client `""`, until the client closes its
    /// end (also before it initializes, which is no error) or `stop` is cancelled; then
    /// closes every agent (ending their upstream servers).
    pub async fn serve_stdio(self, stop: CancellationToken) -> Result<(), std::io::Error> {
        let handler = Gateway { fixed_client: Some(String::new()), ..self.clone() };
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let served = async {
            // Once the client's input ends it asks nothing more: its subscriptions end
            // then, and only the calls in flight are still answered.
            let lines = Lines::new(stdin, stdout).ending(self.inner.stopping.clone());
            let running = match rmcp::ServiceExt::serve_with_ct(handler, lines, stop.child_token()).await {
                Ok(running) => running,
                // A client that leaves before it initializes (a host checking that the
                // command starts) is done with us; nothing failed.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
                Err(error) => return Err(std::io::Error::other(error)),
            };
            running.waiting().await.map_err(std::io::Error::other)?;
            Ok::<(), std::io::Error>(())
        };
        let outcome = served.await;
        self.close().await;
        outcome
    }

    /// Starts the agent of `client` now, rather than on its first request (`--eager`):
    /// before any host has said whether it shows MCP Apps, so its MCP servers are not
    /// told that it does.
    pub async fn start(&self, client: &str) -> Result<(), String> {
        self.agent(client, || None).await.map(drop)
    }

    /// The clients whose agents are running, with those agents.
    pub fn running_agents(&self) -> Vec<(String, Agent)> {
        lock(&self.inner.agents)
            .iter()
            .filter_map(|(client, cell)| Some((client.clone(), cell.get()?.as_ref().ok()?.clone())))
            .collect()
    }

    /// Makes the agent of `client` afresh (its config changed): the new one serves the
    /// client's next requests, the old one is closed (its upstream servers end), and the
    /// client is told that every list changed.
    pub async fn restart(&self, client: &str) {
        let old = lock(&self.inner.agents).insert(client.to_owned(), AgentCell::default());
        let apps = lock(&self.inner.apps).get(client).cloned();
        if let Err(reason) = self.agent(client, || apps).await {
            tracing::error!(client, "the agent could not restart: {reason}");
        }
        if let Some(Ok(old)) = old.as_ref().and_then(|cell| cell.get()) {
            for failure in old.close().await {
                tracing::warn!(skill = %failure.skill, "closing failed: {}", failure.reason);
            }
        }
        notify_client(&self.inner, client, Lists { tools: true, prompts: true, resources: true }).await;
    }

    /// Closes every agent made so far: their upstream servers end.
    pub async fn close(&self) {
        self.inner.stopping.cancel();
        let agents: Vec<_> = std::mem::take(&mut *lock(&self.inner.agents)).into_values().collect();
        for agent in agents.iter().filter_map(|cell| cell.get()).filter_map(|made| made.as_ref().ok()) {
            for failure in agent.close().await {
                tracing::warn!(skill = %failure.skill, "closing failed: {}", failure.reason);
            }
        }
    }

    /// The agent of `client`, made on first use, with the MCP Apps settings `apps` gives;
    /// every later request reuses it, and one that could not be made is tried again by the
    /// next request.
    async fn agent(&self, client: &str, apps: impl FnOnce() -> Option<JsonObject>) -> Result<Agent, String> {
        let cell = Arc::clone(lock(&self.inner.agents).entry(client.to_owned()).or_default());
        let made = cell
            .get_or_init(|| async {
                let apps = apps();
                match &apps {
                    Some(settings) => lock(&self.inner.apps).insert(client.to_owned(), settings.clone()),
                    None => lock(&self.inner.apps).remove(client),
                };
                let made = (self.inner.factory)(AgentFor { client: client.to_owned(), apps }).await;
                if let Ok(agent) = &made {
                    tokio::spawn(announce_changes(Arc::downgrade(&self.inner), client.to_owned(), agent.changes()));
                    let updates = agent.resource_updates();
                    tokio::spawn(announce_updates(Arc::downgrade(&self.inner), client.to_owned(), updates));
                }
                made
            })
            .await;
        if made.is_err() {
            // Every request waiting for this attempt gets its reason; the next one tries
            // again (a server that was down may be up).
            let mut agents = lock(&self.inner.agents);
            if agents.get(client).is_some_and(|current| Arc::ptr_eq(current, &cell)) {
                agents.remove(client);
            }
        }
        made.clone()
    }

    /// The client a request comes from: the fixed one (stdio), else the one the HTTP
    /// layer authenticated, else the open server's `""`.
    fn client_of(&self, extensions: &rmcp::model::Extensions) -> String {
        if let Some(client) = &self.fixed_client {
            return client.clone();
        }
        extensions
            .get::<::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<http::ClientName>())
            .map(|name| name.0.clone())
            .unwrap_or_default()
    }

    /// The words of the tools of `client`'s `agent`, taken again when they changed.
    fn search_index(&self, client: &str, agent: &Agent) -> Arc<search::Index> {
        let cached = lock(&self.inner.search_indexes).get(client).filter(|index| index.is_current(agent)).cloned();
        cached.unwrap_or_else(|| {
            let index = Arc::new(search::Index::of(agent));
            lock(&self.inner.search_indexes).insert(client.to_owned(), Arc::clone(&index));
            index
        })
    }

    /// The instructions for the client of `context`.
    async fn instructions(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        let instructions = self.inner.instructions.as_ref()?;
        instructions(self.client_of(&context.extensions)).await
    }

    async fn request_agent(&self, context: &RequestContext<RoleServer>) -> Result<Agent, ErrorData> {
        let apps = || apps_settings(context);
        self.agent(&self.client_of(&context.extensions), apps)
            .await
            .map_err(|reason| ErrorData::internal_error(format!("the agent could not start: {reason}"), None))
    }
}

/// The agent's `tools` that the client of `context` may show its model: a tool only an
/// MCP App may call is left out unless the client shows apps (MCP Apps has the host keep
/// such tools from the model, and a host without apps would not know to).
fn for_the_host(mut tools: Vec<RegisteredTool>, context: &RequestContext<RoleServer>) -> Vec<RegisteredTool> {
    if apps_settings(context).is_none() {
        tools.retain(|tool| !convert::app_only(tool.meta()));
    }
    tools
}

/// The settings of the MCP Apps extension the client of `context` declared, if it shows
/// apps.
fn apps_settings(context: &RequestContext<RoleServer>) -> Option<JsonObject> {
    context.client_capabilities()?.extensions?.remove(crate::APPS_EXTENSION)
}

impl ServerHandler for Gateway {
    // Logging is deprecated by 2026-07-28 (SEP-2577), but 2025-11-25 clients use it: the
    // gateway sends approvals and its upstreams' log messages.
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_skills()
            .build();
        ServerConfig::new(capabilities).with_server_info(Implementation::new("omniagent", env!("CARGO_PKG_VERSION")))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let mut result = self.negotiate_initialize(&request)?;
        result.instructions = self.instructions(&context).await;
        Ok(result)
    }

    async fn discover(&self, context: RequestContext<RoleServer>) -> Result<DiscoverResult, ErrorData> {
        let mut info = self.get_info();
        info.instructions = self.instructions(&context).await;
        Ok(DiscoverResult::from_server_info(self.supported_protocol_versions().into_owned(), info))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        let client = self.client_of(&context.extensions);
        let mut peers = lock(&self.inner.peers);
        // Sessions that ended are forgotten here too, so a gateway whose lists never
        // change does not keep them.
        peers.retain(|(_, peer)| !peer.is_transport_closed());
        peers.push((client, context.peer));
    }

    /// Accepted: the gateway sends only what its upstreams and approvals send, which
    /// their own levels choose.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let tools = for_the_host(agent.tools(), &context);
        let (tools, next_cursor) = match &self.tool_search {
            None => {
                let (tools, next_cursor) = page(tools, |tool| tool.name(), request.as_ref());
                (tools.iter().map(convert::tool).collect(), next_cursor)
            }
            Some(listed) => {
                let listed = tools.iter().filter(|tool| listed.contains(&tool.source().skill));
                let mut tools: Vec<_> = listed.map(convert::tool).chain(search::tools()).collect();
                tools.sort_by(|a, b| a.name.cmp(&b.name));
                page(tools, |tool| &tool.name, request.as_ref())
            }
        };
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (name, arguments) = match (&self.tool_search, &*request.name) {
            (Some(_), search::SEARCH_TOOLS) => {
                let index = self.search_index(&self.client_of(&context.extensions), &agent);
                let shows_apps = apps_settings(&context).is_some();
                return search::search(&index, shows_apps, &request.arguments.unwrap_or_default()).map(Into::into);
            }
            (Some(_), search::CALL_TOOL) => search::called(request.arguments)?,
            _ => (request.name.into_owned(), request.arguments.map(serde_json::Value::Object).unwrap_or_default()),
        };
        // A client that cancels (or, over HTTP, goes away) drops the call, and with it
        // the upstream request.
        let progress = progress_to(&context);
        let sink = progress.as_ref().map(progress::Forwarding::sink);
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        // Boxed: rmcp spawns each request's future as a task, copying it whole (about 6 KB
        // with the call inline) as it starts and as it ends.
        let call = Box::pin(caller.clone().serving(agent.call_tool(&name, arguments)));
        let call = async move {
            match sink {
                Some(sink) => skill_core::progress::with_progress(sink, call).await,
                None => call.await,
            }
        };
        let outcome = tokio::select! {
            outcome = call => outcome,
            () = context.ct.cancelled() => Err(ToolError::Cancelled),
        };
        if let Some(progress) = progress {
            // Every progress notification goes out before the result.
            progress.flush().await;
        }
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        match outcome {
            Ok(output) => convert::call_result(output).map(Into::into),
            Err(error) => call_error(error),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let asked = CompletionRequest {
            argument: request.argument.name,
            value: request.argument.value,
            context: request.context.and_then(|context| context.arguments).unwrap_or_default().into_iter().collect(),
        };
        let completion = match &request.r#ref {
            Reference::Prompt(prompt) => agent.complete_prompt(&prompt.name, &asked).await,
            Reference::Resource(template) => agent.complete_resource_template(&template.uri, &asked).await,
            other => {
                let kind = other.reference_type();
                return Err(ErrorData::invalid_params(format!("cannot complete a `{kind}` reference"), None));
            }
        }
        .map_err(item_error)?;
        convert::complete_result(&completion)
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (prompts, next_cursor) = page(agent.prompts(), |prompt| prompt.name(), request.as_ref());
        let mut result = ListPromptsResult::with_all_items(prompts.iter().map(convert::prompt).collect());
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let arguments = convert::prompt_arguments(request.arguments);
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        let outcome = caller.clone().serving(agent.get_prompt(&request.name, arguments)).await;
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        convert::prompt_result(&outcome.map_err(item_error)?).map(Into::into)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let mut resources = agent.resources();
        resources.sort_by(|a, b| a.uri.cmp(&b.uri));
        let (resources, next_cursor) = page(resources, |resource| &resource.uri, request.as_ref());
        let mut result = ListResourcesResult::with_all_items(convert::wire_all(&resources)?);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let mut templates = agent.resource_templates();
        templates.sort_by(|a, b| a.uri_template.cmp(&b.uri_template));
        let (templates, next_cursor) = page(templates, |template| &template.uri_template, request.as_ref());
        let mut result = ListResourceTemplatesResult::with_all_items(convert::wire_all(&templates)?);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let caller = caller::Caller::of(&context).answering(request.input_responses, request.request_state);
        let outcome = caller.clone().serving(agent.read_resource(&request.uri)).await;
        if let Some(answer) = passed_up(&caller) {
            return answer;
        }
        let output = outcome.map_err(|error| match error {
            // 2026-07-28 (SEP-2164) makes an unknown resource invalid params; before, it
            // has its own code. Both carry the URI.
            ToolError::NotFound { .. } => {
                let message = format!("no resource `{}`", request.uri);
                let data = Some(serde_json::json!({"uri": request.uri}));
                if context.protocol_version().is_some_and(|version| version >= ProtocolVersion::V_2026_07_28) {
                    ErrorData::invalid_params(message, data)
                } else {
                    ErrorData::resource_not_found(message, data)
                }
            }
            other => item_error(other),
        })?;
        convert::read_result(&output).map(Into::into)
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (skills, next_cursor) = page(skills::skills(&agent).await, |skill| &skill.uri, request.as_ref());
        let mut result = ListSkillsResult::with_all_items(skills);
        result.next_cursor = next_cursor;
        Ok(result)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        let agent = self.request_agent(&context).await?;
        skills::skill_at(&agent, &request.uri).await.map(GetSkillResult::new)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: rmcp::model::SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.request_agent(&context).await?;
        agent.subscribe_resource(&request.uri).await.map_err(item_error)?;
        let subscription = Subscribed {
            client: self.client_of(&context.extensions),
            session: session_of(&context.extensions),
            peer: context.peer,
            uri: request.uri,
        };
        lock(&self.inner.subscribed).push(subscription);
        Ok(())
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: rmcp::model::UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let agent = self.request_agent(&context).await?;
        let (client, session) = (self.client_of(&context.extensions), session_of(&context.extensions));
        let still_wanted = {
            let mut subscribed = lock(&self.inner.subscribed);
            subscribed.retain(|subscription| {
                !(subscription.client == client && subscription.session == session && subscription.uri == request.uri)
            });
            subscribed.iter().any(|subscription| subscription.client == client && subscription.uri == request.uri)
        };
        // The upstream keeps announcing while another session of this client listens.
        if !still_wanted {
            agent.unsubscribe_resource(&request.uri).await.map_err(item_error)?;
        }
        Ok(())
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let client = self.client_of(&context.request_context().extensions);
        let sink = context.sink().clone();
        let id = sink.id().clone();
        // The agent exists (and so announces its changes) from the moment a client listens.
        self.request_agent(context.request_context()).await?;
        lock(&self.inner.sinks).push((client, sink));
        tokio::select! {
            () = context.cancelled() => {}
            () = self.inner.stopping.cancelled() => {}
        }
        lock(&self.inner.sinks).retain(|(_, sink)| *sink.id() != id);
        Ok(())
    }
}

// The gateway's locks guard plain collections that every operation leaves consistent.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_agent_that_could_not_be_made_is_tried_again() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let attempts = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&attempts);
        let factory: AgentFactory = Arc::new(move |_client| {
            let attempt = counted.fetch_add(1, Ordering::SeqCst);
            Box::pin(async move { if attempt == 0 { Err("down".to_owned()) } else { Ok(Agent::builder().build()) } })
        });
        let gateway = Gateway::new(factory, None);
        assert_eq!(gateway.start("").await, Err("down".to_owned()));
        assert_eq!(gateway.start("").await, Ok(()));
        assert_eq!(gateway.start("").await, Ok(()), "a made agent is kept");
        assert_eq!(attempts.load(Ordering::SeqCst), 2);
    }
}
