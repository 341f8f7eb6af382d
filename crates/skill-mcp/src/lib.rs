//! MCP skills: the tools of an MCP server, offered to an OmniAgent agent.
//!
//! [`McpSkill`] runs a server as a subprocess (or reaches it over streamable HTTP) with
//! [`rmcp`]'s client, and offers its tools with source kind `mcp`. What other MCP hosts
//! get wrong is handled here:
//!
//! - **Environment.** Built fresh for each agent: an allowlist of host variables
//!   ([`INHERITED_VARS`]), then the server's `env`, then that agent's secrets.
//! - **Processes.** The server leads its own process group; `close`, a restart and a
//!   drop kill the whole group, so `npx`'s grandchildren do not outlive it.
//! - **stderr.** Drained all the time into tracing and a small tail kept for error
//!   messages, so a chatty server never blocks on a full pipe.
//! - **Timeouts.** Start-up and every call are bounded; a timed-out call is cancelled
//!   (`notifications/cancelled`) and the server restarted by the next call.
//! - **Crashes.** A call in flight when the server dies fails at once; the next call
//!   starts the server again and the failed call is not replayed.
//! - **List changes.** `notifications/*/list_changed` re-lists the tools, prompts and
//!   resources (following pagination) and updates the agent.
//!
//! With the `server` feature, [`server::Gateway`] goes the other way: it serves agents
//! (every tool, prompt and resource they have) as one MCP server, over stdio or
//! streamable HTTP, to any MCP host; over HTTP it admits static bearer tokens and, as an
//! OAuth 2.1 resource server, JWT access tokens of an authorization server.
//!
//! # Features
//!
//! | feature | default | gives |
//! |---|---|---|
//! | `server` | no | [`server`]: the gateway, on rmcp's server side and axum |
//! | `redis` | no | `server::RedisSessionStore`: the gateway's 2025-11-25 sessions in Redis, so that replicas serve each other's (implies `server`) |
//!
//! # Example
//!
//! ```no_run
//! use skill_core::Agent;
//! use skill_mcp::{McpSkill, ServerConfig};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let config: ServerConfig = serde_json::from_value(serde_json::json!({
//!     "command": "npx",
//!     "args": ["-y", "@modelcontextprotocol/server-everything"],
//!     "timeout": "30s"
//! }))
//! .unwrap();
//! let agent = Agent::builder().with_compiled_skill(McpSkill::new("everything", config)).build();
//! agent.init_compiled_skills().await;
//! let output = agent.call_tool("everything__echo", serde_json::json!({"message": "hi"})).await.unwrap();
//! println!("{output:?}");
//! agent.close().await;
//! # }
//! ```

#![deny(missing_docs)]

mod config;
mod connection;
mod described;
mod elicit;
mod environment;
mod error;
mod lines;
mod oauth;
mod route;
mod sandbox;
#[cfg(feature = "server")]
pub mod server;
mod skill;
mod stderr;
mod wire;

pub use crate::config::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, OAuthClient, PASTED_KEYS, PastedServer, Protocol, ServerConfig,
    Timeouts, Transport,
};
pub use crate::elicit::{AcceptDefaults, Elicitation, ElicitationAnswer, ElicitationMode, Elicitor};
pub use crate::environment::{CALLERS_HEADER, CALLERS_VAR, INHERITED_VARS, process_env};

/// `${VAR}` expansion, for the fuzz targets (built with `--cfg fuzzing`) only.
#[cfg(fuzzing)]
pub fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    skill_core::expand_vars(text, lookup)
}
pub use crate::error::Error;
/// The stdio transport's reading checked against rmcp's, for the fuzz targets (and the
/// tests) only.
#[cfg(all(any(fuzzing, test), feature = "server"))]
pub use crate::lines::check_against_rmcp;
pub use crate::oauth::{Login, TokenFile};
pub use crate::sandbox::{
    DEFAULT_MEMORY, DEFAULT_PROCESSES, Effective as EffectiveSandbox, Network as SandboxNetwork, SandboxSettings,
};
pub use crate::skill::{APPS_EXTENSION, Health, McpSkill, McpTool, UpstreamHealth, UpstreamState};
