//! The OmniAgent host: reads the config and builds an agent from it. The `omniagent`
//! binary and the MCP gateway server both start their agents here.
//!
//! [`ConfigLocation`] says which file to read, [`Config`] is that file validated (errors
//! name the file, line and key), [`Config::for_agent`] merges one agent's overrides over
//! its top level into an [`AgentConfig`], and [`start_agent`] starts that agent's skills:
//! compiled skills, MCP servers, OpenAPI documents (signed with AAuth when they say
//! `aauth: true`), each with its own secrets and a store namespaced by the agent's name.
//! The futures are `Send`, so a multi-threaded runtime can start many agents at once.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use omniagent_host::{ConfigLocation, Home, Person, Wanted, start_agent};
//!
//! let folder = tempfile::tempdir()?;
//! let file = folder.path().join("config.yaml");
//! std::fs::write(&file, "storage: {backend: memory}\nagents:\n  alice: {}\n")?;
//! let home = Home::new(folder.path());
//! let config = ConfigLocation::find(Some(file), None, &home).load()?;
//!
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
//! runtime.block_on(async {
//!     let alice = start_agent(&config.for_agent(Some("alice"))?, &home, Wanted::All, Person::default()).await?;
//!     let arguments = serde_json::json!({"key": "city", "value": "Lyon"});
//!     alice.call_tool("memory__remember", arguments).await?;
//!     let recalled = alice.call_tool("memory__recall", serde_json::json!({"key": "city"})).await?;
//!     assert_eq!(recalled.content, [skill_core::Content::text("Lyon")]);
//!     alice.close().await;
//!     Ok::<_, Box<dyn std::error::Error>>(())
//! })
//! # }
//! ```
//!
//! [`install`] (with `markdown`) installs skills into the home's `skills/` folder from
//! folders, archives and git repositories, recorded with the SHA-256 of every file in
//! `skills.lock`, and verifies, updates and removes them.
//!
//! The library knows no command line, terminal or exit code: what a person must be told
//! while a signed request waits for them goes to the caller's [`OnInteraction`].
//!
//! | Feature    | What it adds                                                          |
//! |------------|-----------------------------------------------------------------------|
//! | `markdown` | markdown skills: the `skills:` section, `load_markdown_skills`        |
//! | `mcp`      | MCP servers as skills: `mcp:`, pasted `mcpServers`                    |
//! | `openapi`  | OpenAPI documents as skills: `openapi:`, `load_openapi_tools`         |
//! | `aauth`    | the `aauth:` section, signed OpenAPI skills, `aauth_client`           |
//! | `sqlite`   | state in the home's `state/omniagent.db`; else only `storage: memory` |
//! | `redis`    | `storage: {backend: redis, url: …}`: state in a Redis server          |

#![deny(missing_docs)]

pub mod audit;
mod config;
mod error;
mod host;
#[cfg(feature = "markdown")]
pub mod install;
pub mod log;
mod policy;
#[cfg(feature = "telemetry")]
pub mod telemetry;

pub use crate::config::{AgentConfig, Config, ConfigLocation, Home, Origin};
#[cfg(feature = "mcp")]
pub use crate::config::{ServeClient, ServeConfig, ServeOAuth};
pub use crate::error::HostError;
#[cfg(all(feature = "redis", feature = "mcp"))]
pub use crate::host::storage::sessions_redis_url;
#[cfg(feature = "mcp")]
pub use crate::host::storage::top_level_store;
#[cfg(feature = "aauth")]
pub use crate::host::{AAuthKeyCheck, AAuthOverrides, aauth_client, check_aauth_key, current_mission, keep_mission};
pub use crate::host::{OnInteraction, Person, Wanted, pinned_modes, reload_trusts, start_agent};
#[cfg(feature = "mcp")]
pub use crate::host::{OnUpstream, process_mark};
#[cfg(feature = "openapi")]
pub use crate::host::{OpenApiToolsCheck, load_openapi_tools};
#[cfg(feature = "markdown")]
pub use crate::host::{SkillPaths, load_markdown_skills, markdown_skill_tools, markdown_sources};
pub use crate::policy::{BucketView, PolicyReport, PolicyState, RateLimitView, RuleView};
