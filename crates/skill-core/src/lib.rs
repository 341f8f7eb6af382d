//! The core of OmniAgent skills: the [`Tool`] and [`Skill`] traits, tool-source identity
//! ([`ToolSource`]), the agent host ([`Agent`]), key-value storage ([`KvStore`]) and
//! secrets ([`Secrets`], [`SecretRef`]).
//!
//! Every skill kind (markdown, MCP, OpenAPI, compiled Rust) builds on this crate, and this
//! crate knows none of them: it depends on no other workspace crate.
//!
//! # Example: a compiled skill in an agent
//!
//! ```
//! use std::sync::Arc;
//! use async_trait::async_trait;
//! use serde_json::{json, Value};
//! use skill_core::{Agent, Skill, Tool, ToolContext, ToolError, ToolOutput};
//!
//! struct Greet {
//!     schema: Value,
//! }
//!
//! #[async_trait]
//! impl Tool for Greet {
//!     fn name(&self) -> &str { "greet" }
//!     fn description(&self) -> &str { "Greets someone" }
//!     fn input_schema(&self) -> &Value { &self.schema }
//!     async fn call(&self, _: &ToolContext, args: Value) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::text(format!("hello, {}", args["who"].as_str().unwrap_or("you"))))
//!     }
//! }
//!
//! struct Hello;
//!
//! #[async_trait]
//! impl Skill for Hello {
//!     fn name(&self) -> &str { "hello" }
//!     fn description(&self) -> &str { "Greetings" }
//!     fn tools(&self) -> Vec<Arc<dyn Tool>> {
//!         let schema = json!({"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]});
//!         vec![Arc::new(Greet { schema })]
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let agent = Agent::builder().with_compiled_skill(Hello).build();
//! agent.init_compiled_skills().await;
//! assert_eq!(agent.tools()[0].name(), "hello__greet");
//!
//! let output = agent.call_tool("hello__greet", json!({"who": "Ada"})).await.unwrap();
//! assert_eq!(output, ToolOutput::text("hello, Ada"));
//!
//! // Arguments are checked against the tool's schema before the tool runs.
//! let error = agent.call_tool("hello__greet", json!({})).await.unwrap_err();
//! assert!(error.to_string().contains("\"who\" is a required property"));
//! # }
//! ```
//!
//! # Features
//!
//! | feature | default | gives |
//! |---|---|---|
//! | `sqlite` | yes | [`SqliteStore`], the embedded persistent store (bundled SQLite) |
//! | `redis` | no | [`RedisStore`], a store in a Redis server shared by hosts (tokio, no TLS) |

#![deny(missing_docs)]

mod agent;
mod blocking;
mod caller;
pub mod duration;
mod error;
mod filter;
mod hook;
mod icon;
mod memory;
mod naming;
mod output;
pub mod progress;
mod prompt;
pub mod redact;
mod resource;
mod secret;
mod secret_guard;
mod skill;
mod source;
mod store;
mod tool;
mod tool_search;
pub mod trace;
pub mod trust;

pub use crate::agent::{
    Agent, AgentBuilder, CallContext, CallFuture, CallLayer, CallOutput, Changes, InitReport, Item, LeftOutKeyword,
    Next, RegisteredPrompt, RegisteredTool, SkillFailure, SkillHandle, ToolFailure,
};
pub use crate::blocking::{drop_off_runtime, off_runtime};
pub use crate::caller::Caller;
pub use crate::error::{BoxError, Error, ItemKind, ToolError};
pub use crate::filter::{FilterReport, ToolFilter, ToolPattern, wildcard_matches};
pub use crate::hook::{ToolCall, ToolHook};
pub use crate::icon::{Icon, IconTheme};
pub use crate::memory::MemorySkill;
pub use crate::naming::{
    MAX_TOOL_NAME_LEN, RESOURCE_URI_SCHEME, agent_resource_uri, agent_tool_name, close_names, sanitize_tool_name,
    shorten_tool_name, split_agent_resource_uri,
};
pub use crate::output::{Content, ResourceContents, ToolOutput};
pub use crate::prompt::{
    Completion, CompletionRequest, Prompt, PromptArgument, PromptInfo, PromptMessage, PromptOutput, Role,
};
pub use crate::resource::{
    ResourceCatalog, ResourceInfo, ResourceOutput, ResourceReader, ResourceTemplateInfo, SKILL_FRONTMATTER_META_KEY,
};
pub use crate::secret::{
    ExposeSecret, MAX_SECRET_FILE_BYTES, SecretRef, SecretResolver, SecretString, Secrets, expand_home, expand_vars,
    user_home,
};
pub use crate::secret_guard::{FoundSecret, MIN_GUARDED_SECRET_BYTES, SecretMatcher};
pub use crate::skill::Skill;
pub use crate::source::{SourceKind, ToolSource};
#[cfg(feature = "sqlite")]
pub use crate::store::SqliteStore;
pub use crate::store::{KvStore, MemoryStore, SkillStore};
#[cfg(feature = "redis")]
pub use crate::store::{RedisConnection, RedisFailure, RedisStore, RedisStoreError};
pub use crate::tool::{Tool, ToolAnnotations, ToolContext};
pub use crate::tool_search::ToolIndex;
pub use crate::trust::{ScanMode, Trust, TrustMode, TrustSettings, WithheldItem};
