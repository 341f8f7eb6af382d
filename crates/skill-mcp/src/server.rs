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
mod handler;
mod http;
mod page;
mod progress;
mod resource_server;
mod search;
#[cfg(feature = "redis")]
mod session_store;
mod skills;
mod traced;

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use rmcp::model::JsonObject;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use skill_core::Agent;
use tokio::io::AsyncWrite;
use tokio_util::sync::CancellationToken;

use self::announce::{Lists, Subscribed, announce_changes, announce_updates, notify_client};
pub use self::caller::tell_caller;
pub(crate) use self::caller::{Caller, PassedUp};
pub use self::http::{HttpClient, HttpOptions, PageRoutes, TokenCheck, TokenHolder, serve_http};
pub use self::resource_server::{ADMIN_SCOPE, OAuthOptions, client_name};
#[cfg(feature = "redis")]
pub use self::session_store::{REFRESH_EVERY, RedisSessionStore, RedisSessionStoreError, SESSION_TTL};
use self::traced::Served;
pub use self::traced::{McpRequest, RequestOutcome, RequestSpan, RequestSpans};
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
    /// What starts the span of each request, when requests are traced.
    request_spans: Option<Arc<dyn RequestSpans>>,
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
    search_indexes: Mutex<BTreeMap<String, Arc<skill_core::ToolIndex>>>,
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
        Self { inner: Arc::new(inner), fixed_client: None, tool_search: None, request_spans: None }
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
        let served = Served(Gateway { fixed_client: Some(String::new()), ..self.clone() });
        let (stdin, stdout) = rmcp::transport::stdio_pipes();
        let served = async {
            // Once the client's input ends it asks nothing more: its subscriptions end
            // then, and only the calls in flight are still answered.
            let stdout = ClientOutput { write: stdout, ended: self.inner.stopping.clone() };
            let (lines, calls) =
                Lines::new(stdin, stdout).ending(self.inner.stopping.clone()).answering_calls(answer_calls(&served));
            let running = match rmcp::ServiceExt::serve_with_ct(served, lines, stop.child_token()).await {
                Ok(running) => running,
                // A client that leaves before it initializes (a host checking that the
                // command starts) is done with us; nothing failed.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
                Err(error) => return Err(std::io::Error::other(error)),
            };
            calls.ready(running.peer().clone());
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
}

/// How the stdio transport's lane answers a tool call: as rmcp would have the gateway
/// answer it, [`Served`]'s dispatch of the request included.
fn answer_calls(served: &Served) -> crate::lines::AnswerCall {
    let served = served.clone();
    Arc::new(move |request, context| {
        let served = served.clone();
        Box::pin(async move { rmcp::Service::<RoleServer>::handle_request(&served, request, context).await })
    })
}

/// The gateway's stdout, as its stdio client reads it. Once the client's input has ended
/// (`ended`), a client that closed its reading end as well has left: what is still
/// written for it (the answers to its subscriptions, which end then) is dropped, rather
/// than failing (rmcp logs each failed write as an error).
struct ClientOutput<W> {
    write: W,
    ended: CancellationToken,
}

impl<W> ClientOutput<W> {
    /// `outcome`, or `left` when it is the write of a client that has left.
    fn unless_left<T>(&self, outcome: Poll<std::io::Result<T>>, left: T) -> Poll<std::io::Result<T>> {
        match outcome {
            Poll::Ready(Err(error)) if error.kind() == std::io::ErrorKind::BrokenPipe && self.ended.is_cancelled() => {
                Poll::Ready(Ok(left))
            }
            outcome => outcome,
        }
    }
}

impl<W: AsyncWrite + Unpin> AsyncWrite for ClientOutput<W> {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.write).poll_write(cx, buf);
        this.unless_left(outcome, buf.len())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.write).poll_flush(cx);
        this.unless_left(outcome, ())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let outcome = Pin::new(&mut this.write).poll_shutdown(cx);
        this.unless_left(outcome, ())
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
