//! [`SkillHandle`]: what a skill holds of its agent, bound to that one skill.

use std::fmt;
use std::sync::{Arc, Weak};

use super::items::Announce;
use super::{Agent, AgentInner, Member, lock};
use crate::trust::WithheldItem;
use crate::{Error, ItemKind, Prompt, ResourceCatalog, Tool};

/// One skill's handle on the agent hosting it: the agent hands it to the skill before
/// `init` ([`Skill::set_agent`](crate::Skill::set_agent)), and to whoever
/// [registers](Agent::register) the skill.
///
/// It is bound to that skill, as loaded in that agent: it replaces that skill's tools,
/// prompts and resources and announces that skill's resource updates, never another's,
/// and the tools it registers carry the skill's own [`SourceKind`](crate::SourceKind).
/// It takes nothing before the skill is loaded, after the skill was skipped, or once the
/// agent is closed or dropped. It is weak, so a skill holding it creates no reference
/// cycle.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use async_trait::async_trait;
/// use skill_core::{Agent, Error, Skill, SkillHandle, Tool};
///
/// /// A skill whose tools change while it runs (as an MCP server's do).
/// struct Live {
///     handle: Arc<Mutex<Option<SkillHandle>>>,
/// }
///
/// #[async_trait]
/// impl Skill for Live {
///     fn name(&self) -> &str { "live" }
///     fn description(&self) -> &str { "tools that change" }
///     fn set_agent(&mut self, handle: SkillHandle) { *self.handle.lock().unwrap() = Some(handle); }
///     fn tools(&self) -> Vec<Arc<dyn Tool>> { Vec::new() }
/// }
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let slot = Arc::new(Mutex::new(None));
/// let agent = Agent::builder().with_compiled_skill(Live { handle: Arc::clone(&slot) }).build();
/// agent.init_compiled_skills().await;
/// let handle = slot.lock().unwrap().clone().unwrap();
/// assert_eq!(handle.skill(), "live");
/// assert!(handle.replace_tools(Vec::new()).is_ok());
///
/// agent.close().await;
/// assert!(matches!(handle.replace_tools(Vec::new()), Err(Error::AgentClosed { .. })));
/// # }
/// ```
#[derive(Clone)]
pub struct SkillHandle {
    agent: Weak<AgentInner>,
    /// Which registration of a skill in the agent this handle speaks for.
    ticket: u64,
    /// The skill's name when it was registered, for messages.
    skill: String,
}

impl SkillHandle {
    pub(super) fn new(agent: &Arc<AgentInner>, ticket: u64, skill: &str) -> Self {
        Self { agent: Arc::downgrade(agent), ticket, skill: skill.to_owned() }
    }

    /// The name of the skill this handle is bound to.
    pub fn skill(&self) -> &str {
        &self.skill
    }

    /// The agent, unless it was dropped: to list or call the other skills' tools.
    pub fn agent(&self) -> Option<Agent> {
        self.agent.upgrade().map(Agent::of)
    }

    /// Replaces the skill's registered tools with `tools`, all or none (a skill whose
    /// tools change while it runs, such as an MCP server on `tools/list_changed`). On an
    /// error (a name collision, an invalid schema, the skill not loaded) the old tools
    /// stay.
    pub fn replace_tools(&self, tools: Vec<Arc<dyn Tool>>) -> Result<(), Error> {
        self.change(|agent, member| agent.replace_tools(&member.name, member.kind, tools, Announce::Always))
    }

    /// Replaces the skill's registered prompts with `prompts`, all or none.
    pub fn replace_prompts(&self, prompts: Vec<Arc<dyn Prompt>>) -> Result<(), Error> {
        self.change(|agent, member| agent.replace_prompts(&member.name, prompts, Announce::Always))
    }

    /// Replaces the skill's resources and resource templates with `catalog`, all or
    /// none. A skill that is not [namespaced](crate::Skill::namespaced) may not list a
    /// URI that another such skill lists.
    pub fn replace_resources(&self, catalog: ResourceCatalog) -> Result<(), Error> {
        self.change(|agent, member| agent.replace_resources(&member.name, catalog, Announce::Always))
    }

    /// Replaces the stand-ins the skill offered (the definitions a trust lock recorded,
    /// offered before its upstream started) with its live `tools`, `prompts` and
    /// `catalog`, each list all or none, as `replace_tools` and the others do. A list
    /// that reads the same as the stand-ins is no change for the agent's clients: the
    /// switch is the agent's own doing, not news. The `replace_*` methods announce even
    /// a list that reads the same, as an upstream's own `list_changed` is news whatever
    /// it lists.
    pub fn replace_stand_ins(
        &self,
        tools: Vec<Arc<dyn Tool>>,
        prompts: Vec<Arc<dyn Prompt>>,
        catalog: ResourceCatalog,
    ) -> Result<(), Error> {
        self.change(|agent, member| {
            agent.replace_tools(&member.name, member.kind, tools, Announce::IfChanged)?;
            agent.replace_prompts(&member.name, prompts, Announce::IfChanged)?;
            agent.replace_resources(&member.name, catalog, Announce::IfChanged)
        })
    }

    /// Why the agent withholds the skill's item of `kind` that the skill gives as `name`
    /// (a resource by its own URI), if it does. A skill that offered stand-ins checks
    /// this once its live items replaced them: a call of a stand-in passed the call
    /// path's pinning check with the lock's definition, and the live one may differ.
    pub fn withheld(&self, kind: ItemKind, name: &str) -> Option<WithheldItem> {
        let agent = self.agent()?;
        agent.withheld_own(&self.skill, kind, name).map(|item| WithheldItem::clone(&item))
    }

    /// Announces that the skill's resource `uri` (as the skill gives it) changed, to the
    /// agent's [`resource_updates`](Agent::resource_updates) listeners; nothing once the
    /// skill is not loaded.
    pub fn resource_updated(&self, uri: &str) {
        // A skill that is not loaded has no resources whose change could be news.
        let _ = self.change(|agent, member| {
            agent.resource_updated(&member.name, uri);
            Ok(())
        });
    }

    /// Runs `change` for the skill while the agent cannot close, if the skill is loaded.
    fn change(&self, change: impl FnOnce(&Agent, &Member) -> Result<(), String>) -> Result<(), Error> {
        let closed = || Error::AgentClosed { skill: self.skill.clone() };
        let agent = self.agent().ok_or_else(closed)?;
        // Held across the change: `close` takes it to refuse every later change, so none
        // can slip in between its check here and the registry.
        let members = lock(&agent.inner.members);
        if members.closed {
            return Err(closed());
        }
        let member =
            members.admitted.get(&self.ticket).ok_or_else(|| Error::SkillNotLoaded { skill: self.skill.clone() })?;
        change(&agent, member).map_err(|reason| Error::ItemsRefused { skill: member.name.clone(), reason })
    }
}

impl fmt::Debug for SkillHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SkillHandle")
            .field("skill", &self.skill)
            .field("alive", &(self.agent.strong_count() > 0))
            .finish()
    }
}
