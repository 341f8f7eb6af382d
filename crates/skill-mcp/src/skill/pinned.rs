//! A server's items as the trust lock recorded them, offered before it starts (the
//! gateway's instant start), and its first start, which puts the server's own items in
//! their place before any request reaches it: a call of an item whose definition changed
//! meanwhile (or is new where approval is required, or is flagged) is refused as
//! withheld, never sent.

use std::sync::Arc;

use skill_core::trust::Recorded;
use skill_core::{ItemKind, Prompt, PromptInfo, ResourceCatalog, Tool, ToolError};

use super::items::{McpPrompt, McpResources};
use super::{Items, McpTool, Shared};
use crate::Error;
use crate::connection::Connection;
use crate::wire::wire_into;

impl Shared {
    /// `connection`, just started; at the first start after the skill offered what the
    /// trust lock recorded, once the server's own lists replaced the recorded ones
    /// ([`skill_core::SkillHandle::replace_stand_ins`], which announces only lists that
    /// differ). That is before any request reaches the server, so the agent's trust has
    /// judged the live definitions by the time a call of a stand-in asks whether it may
    /// go on ([`Shared::refuse_withheld`]). A server whose lists cannot be read, or are
    /// not taken, has not started: its connection is closed, and the next call tries
    /// again.
    pub(super) async fn go_live(self: &Arc<Self>, connection: Arc<Connection>) -> Result<Arc<Connection>, Error> {
        if !self.from_lock.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(connection);
        }
        let taken = self.list_items(&connection).await.and_then(|items| {
            let Some(handle) = &self.handle else { return Ok(()) };
            handle.replace_stand_ins(items.tools, items.prompts, items.resources).map_err(|error| Error::Startup {
                reason: format!("its lists were not taken in place of the trust lock's: {error}"),
                stderr: String::new(),
            })
        });
        if let Err(error) = taken {
            connection.close().await;
            return Err(error);
        }
        self.health.relisted();
        self.from_lock.store(false, std::sync::atomic::Ordering::Release);
        Ok(connection)
    }

    /// Refuses a call of the stand-in of `kind` that the server names `name` (one offered
    /// from the trust lock), now that the server started, when the agent withholds the
    /// server's own definition of it (changed since it was pinned, new where approval is
    /// required, or flagged): the call passed the call path's pinning check as the
    /// lock's definition, and is refused as that check refuses, before it is sent.
    pub(super) fn refuse_withheld(&self, kind: ItemKind, name: &str) -> Result<(), ToolError> {
        match self.handle.as_ref().and_then(|handle| handle.withheld(kind, name)) {
            Some(item) => Err(ToolError::Withheld { message: item.refusal() }),
            None => Ok(()),
        }
    }

    /// Readies a prompt get or a read of the stand-in of `kind` called `name`: starts
    /// the server (which replaces the stand-ins with its own items), and refuses it as
    /// [`Shared::refuse_withheld`] says.
    pub(super) async fn ready_stand_in(self: &Arc<Self>, kind: ItemKind, name: &str) -> Result<(), ToolError> {
        self.connected().await?;
        self.refuse_withheld(kind, name)
    }

    /// The items the trust lock recorded of the server, offered before it starts (the
    /// stand-ins). A definition that does not read as MCP's is passed over (the live
    /// lists bring it).
    pub(super) fn items_from_lock(self: &Arc<Self>, recorded: Recorded) -> Items {
        let tools = recorded.tools.into_iter().filter_map(|tool| serde_json::from_value(tool).ok());
        let prompts = recorded.prompts.iter().filter_map(|prompt| wire_into::<PromptInfo>(prompt).ok());
        Items {
            tools: tools
                .map(|tool| Arc::new(McpTool::new(tool, &[], Arc::clone(self)).stand_in()) as Arc<dyn Tool>)
                .collect(),
            prompts: prompts
                .map(|info| Arc::new(McpPrompt { info, shared: Arc::clone(self), stand_in: true }) as Arc<dyn Prompt>)
                .collect(),
            resources: ResourceCatalog {
                resources: recorded.resources.iter().filter_map(|resource| wire_into(resource).ok()).collect(),
                templates: recorded.templates.iter().filter_map(|template| wire_into(template).ok()).collect(),
                reader: Some(Arc::new(McpResources { shared: Arc::clone(self), stand_in: true })),
            },
        }
    }
}
