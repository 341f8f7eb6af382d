//! The agent: the host that owns skills, their tools, their secrets and their storage.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, RwLock};

use serde::Serialize;

mod handle;
mod items;
mod layers;
mod left_out;
mod tools;
mod trusted;

pub use self::handle::SkillHandle;
use self::items::Announce;
pub use self::items::{Changes, RegisteredPrompt};
pub use self::layers::{CallContext, CallFuture, CallLayer, CallOutput, Item, Next};
pub use self::left_out::LeftOutKeyword;
pub use self::tools::{RegisteredTool, ToolFailure};

use crate::naming::{agent_tool_name, sanitize_tool_name, shorten_tool_name};
use crate::trust::PinnedSkill;
use crate::{
    Caller, KvStore, MemoryStore, ResourceCatalog, Secrets, Skill, SkillStore, SourceKind, ToolFilter, ToolHook, Trust,
};

/// A skill that could not be loaded (or closed), and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFailure {
    /// The skill's name.
    pub skill: String,
    /// What went wrong, for people: names the missing secret, the failed step.
    pub reason: String,
}

/// What [`Agent::init_compiled_skills`] did.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct InitReport {
    /// The skills that loaded, in registration order.
    pub loaded: Vec<String>,
    /// The skills that were skipped, with the reason.
    pub skipped: Vec<SkillFailure>,
}

/// How many resource updates a slow listener may fall behind before it misses some.
const UPDATES_CAPACITY: usize = 256;

/// Builds an [`Agent`].
///
/// Without [`storage`](AgentBuilder::storage) the agent gets a fresh [`MemoryStore`], so
/// agents share state only when their owner gives them the same store.
pub struct AgentBuilder {
    name: String,
    store: Option<Arc<dyn KvStore>>,
    secrets: BTreeMap<String, Secrets>,
    held_secrets: Vec<(String, Secrets)>,
    hooks: Vec<Arc<dyn ToolHook>>,
    layers: Vec<Arc<dyn CallLayer>>,
    skills: Vec<Box<dyn Skill>>,
    tool_filter: ToolFilter,
    trust: Option<Trust>,
    pinned: BTreeMap<String, PinnedSkill>,
    secret_guard: bool,
}

impl AgentBuilder {
    /// The agent's name (default `default`): it namespaces the agent's storage.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The store the agent's skills keep state in.
    pub fn storage(mut self, store: Arc<dyn KvStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// The secret values the skill named `skill` receives in this agent.
    pub fn skill_secrets(mut self, skill: impl Into<String>, secrets: Secrets) -> Self {
        self.secrets.insert(skill.into(), secrets);
        self
    }

    /// A hook that sees every tool call.
    pub fn hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// A layer of the call path, inside the hooks and the layers given before it, outside
    /// the pinning check: every tool call, prompt get and resource read passes through
    /// it.
    pub fn layer(mut self, layer: Arc<dyn CallLayer>) -> Self {
        self.layers.push(layer);
        self
    }

    /// Secrets the agent holds for `owner`, which is none of its skills (a markdown
    /// skill, whose scripts get them): no skill receives them, and the secret egress guard
    /// refuses their values to every item, naming `owner` as their skill.
    pub fn held_secrets(mut self, owner: impl Into<String>, secrets: Secrets) -> Self {
        self.held_secrets.push((owner.into(), secrets));
        self
    }

    /// Whether the secret egress guard refuses a call that carries a skill's secret to an
    /// item of another skill (default: on). See [`SecretMatcher`](crate::SecretMatcher)
    /// for what it looks for.
    pub fn secret_guard(mut self, on: bool) -> Self {
        self.secret_guard = on;
        self
    }

    /// Which of its skills' tools the agent offers (default: every one).
    pub fn tool_filter(mut self, filter: ToolFilter) -> Self {
        self.tool_filter = filter;
        self
    }

    /// The trust that pins its skills' definitions and scans them: an item it withholds
    /// is left out of the agent's lists and refused when called (default: none, every
    /// item offered).
    pub fn trust(mut self, trust: Trust) -> Self {
        self.trust = Some(trust);
        self
    }

    /// Pins the definitions of the skill `skill` as `pinned` says (its origin and mode);
    /// a skill not pinned is the user's own, only scanned.
    pub fn pinned(mut self, skill: impl Into<String>, pinned: PinnedSkill) -> Self {
        self.pinned.insert(skill.into(), pinned);
        self
    }

    /// A compiled skill, loaded by [`Agent::init_compiled_skills`].
    pub fn with_compiled_skill(mut self, skill: impl Skill + 'static) -> Self {
        self.skills.push(Box::new(skill));
        self
    }

    /// The agent.
    pub fn build(mut self) -> Agent {
        // The guard is the innermost layer but the pinning check, as DESIGN orders them.
        let guard = self.secret_guard.then(|| {
            crate::secret_guard::SecretGuard::new(
                self.secrets.iter().map(|(skill, secrets)| (skill.as_str(), secrets)),
                self.held_secrets.iter().map(|(owner, secrets)| (owner.as_str(), secrets)),
            )
        });
        if let Some(guard) = guard.flatten() {
            self.layers.push(Arc::new(guard));
        }
        let mut members = Members::default();
        let pending = self.skills.into_iter().map(|skill| (members.issue_ticket(), skill)).collect();
        Agent::of(Arc::new(AgentInner {
            store: self.store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
            name: self.name,
            secrets: self.secrets,
            layers: layers::Layers::new(self.hooks, self.layers),
            trust: self.trust,
            pinned: self.pinned,
            trusted: RwLock::new(trusted::Trusted::default()),
            following: Mutex::new(None),
            tool_filter: self.tool_filter,
            pending: Mutex::new(pending),
            loaded: tokio::sync::Mutex::new(Vec::new()),
            members: Mutex::new(members),
            tools: RwLock::new(BTreeMap::new()),
            prompts: RwLock::new(BTreeMap::new()),
            resources: RwLock::new(BTreeMap::new()),
            plain: RwLock::new(BTreeSet::new()),
            changes: tokio::sync::watch::Sender::new(Changes::default()),
            updates: tokio::sync::broadcast::Sender::new(UPDATES_CAPACITY),
            skipped: Mutex::new(Vec::new()),
            tool_problems: RwLock::new(BTreeMap::new()),
        }))
    }
}

impl fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AgentBuilder").field("name", &self.name).field("n_skills", &self.skills.len()).finish()
    }
}

/// The skill host: owns its skills, their secrets and storage, and a registry of their
/// tools under agent-level names.
///
/// Cloning an `Agent` gives another handle to the same agent. Two agents built
/// separately never share secrets, and share state only through a store given to both.
///
/// ```
/// use serde_json::json;
/// use skill_core::{Agent, MemorySkill};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let agent = Agent::builder().with_compiled_skill(MemorySkill::new()).build();
/// let report = agent.init_compiled_skills().await;
/// assert_eq!(report.loaded, ["memory"]);
///
/// agent.call_tool("memory__remember", json!({"key": "city", "value": "Lyon"})).await.unwrap();
/// let output = agent.call_tool("recall", json!({"key": "city"})).await.unwrap();
/// assert_eq!(output, skill_core::ToolOutput::text("Lyon").with_structured(json!({"key": "city", "value": "Lyon"})));
/// agent.close().await;
/// # }
/// ```
#[derive(Clone)]
pub struct Agent {
    inner: Arc<AgentInner>,
    /// Who the calls and lists of this handle are for.
    caller: Arc<Caller>,
}

struct AgentInner {
    name: String,
    store: Arc<dyn KvStore>,
    secrets: BTreeMap<String, Secrets>,
    /// The call path every call goes through.
    layers: layers::Layers,
    trust: Option<Trust>,
    /// The origin and mode of each pinned skill, by name.
    pinned: BTreeMap<String, PinnedSkill>,
    /// What the trust withholds.
    trusted: RwLock<trusted::Trusted>,
    /// The task that follows the trust's lock for this agent, ended with the agent.
    following: Mutex<Option<tokio::task::AbortHandle>>,
    /// Which tools are registered at all.
    tool_filter: ToolFilter,
    /// The skills registered since the last [`Agent::init_compiled_skills`], each with
    /// the ticket of its [`SkillHandle`].
    pending: Mutex<Vec<(u64, Box<dyn Skill>)>>,
    loaded: tokio::sync::Mutex<Vec<Box<dyn Skill>>>,
    /// Which skills may change their items. Every change of a skill's items holds it, and
    /// `close` takes it to refuse all later ones. Taken after `loaded`, before the
    /// registries.
    members: Mutex<Members>,
    tools: RwLock<BTreeMap<String, RegisteredTool>>,
    prompts: RwLock<BTreeMap<String, RegisteredPrompt>>,
    /// Each skill's resources, by skill name; URIs as the skill gave them.
    resources: RwLock<BTreeMap<String, ResourceCatalog>>,
    /// The skills that are not [namespaced](Skill::namespaced).
    plain: RwLock<BTreeSet<String>>,
    changes: tokio::sync::watch::Sender<Changes>,
    /// The agent-level URIs of resources whose content changed.
    updates: tokio::sync::broadcast::Sender<String>,
    skipped: Mutex<Vec<SkillFailure>>,
    /// What could not be taken whole of each loaded skill's tools (tools and parts of
    /// input schemas left out), by skill name.
    tool_problems: RwLock<BTreeMap<String, tools::ToolProblems>>,
}

impl Drop for AgentInner {
    fn drop(&mut self) {
        if let Some(follower) = self.following.get_mut().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            follower.abort();
        }
    }
}

/// The skills of an agent that may change their items, by the ticket of their
/// [`SkillHandle`]: a ticket is issued when a skill is registered, and is admitted when
/// that skill has loaded, so a handle speaks for one skill instance and no other.
#[derive(Debug, Default)]
struct Members {
    /// Set by [`Agent::close`]: the agent takes no items any more.
    closed: bool,
    next_ticket: u64,
    /// The loaded skills' tickets.
    admitted: BTreeMap<u64, Member>,
}

impl Members {
    fn issue_ticket(&mut self) -> u64 {
        self.next_ticket += 1;
        self.next_ticket
    }
}

/// A loaded skill, as its handle acts for it.
#[derive(Debug)]
struct Member {
    name: String,
    /// The kind its tools carry, whatever it registers later.
    kind: SourceKind,
}

impl Agent {
    /// A builder for an agent named `default`.
    pub fn builder() -> AgentBuilder {
        AgentBuilder {
            name: "default".to_owned(),
            store: None,
            secrets: BTreeMap::new(),
            held_secrets: Vec::new(),
            hooks: Vec::new(),
            layers: Vec::new(),
            skills: Vec::new(),
            tool_filter: ToolFilter::default(),
            trust: None,
            pinned: BTreeMap::new(),
            secret_guard: true,
        }
    }

    /// A handle to `inner` that acts for the CLI.
    fn of(inner: Arc<AgentInner>) -> Agent {
        Agent { inner, caller: Arc::new(Caller::default()) }
    }

    /// The agent's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// A handle to the same agent whose calls and lists are `caller`'s: the layers of
    /// its call path see that caller (a policy may refuse it items, a rate limit count
    /// its calls). A handle made otherwise acts for the CLI.
    #[must_use]
    pub fn acting_for(&self, caller: Caller) -> Agent {
        Agent { inner: Arc::clone(&self.inner), caller: Arc::new(caller) }
    }

    /// Who this handle's calls and lists are for.
    pub fn caller(&self) -> &Caller {
        &self.caller
    }

    /// Whether `other` is a handle to this same agent (not merely one alike).
    pub(crate) fn is(&self, other: &Agent) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Adds a skill, loaded by the next [`Agent::init_compiled_skills`]; returns the
    /// skill's handle, through which whoever added it may replace its items later (the
    /// skill gets the same through [`Skill::set_agent`]). The handle takes nothing until
    /// the skill has loaded, and nothing if it is skipped.
    pub fn register(&self, skill: Box<dyn Skill>) -> SkillHandle {
        let ticket = lock(&self.inner.members).issue_ticket();
        let handle = SkillHandle::new(&self.inner, ticket, skill.name());
        lock(&self.inner.pending).push((ticket, skill));
        handle
    }

    /// Loads every skill added since the last call: gives each its capabilities, runs
    /// the `init`s concurrently, and registers the tools of those that succeeded, in the
    /// order the skills were added.
    ///
    /// A skill is skipped, with the reason, when its name is taken, a required secret has
    /// no value, its `init` fails, one of its tools' names or schemas is unusable, or the
    /// agent is closed; the other skills load all the same.
    pub async fn init_compiled_skills(&self) -> InitReport {
        self.follow_trust();
        let pending = std::mem::take(&mut *lock(&self.inner.pending));
        let mut report = InitReport::default();
        let mut inits = tokio::task::JoinSet::new();
        let mut started_names: Vec<String> = Vec::new();
        for (ticket, mut skill) in pending {
            let name = skill.name().to_owned();
            if let Err(reason) = self.prepare(skill.as_mut(), ticket, &started_names).await {
                report.skipped.push(SkillFailure { skill: name, reason });
                continue;
            }
            let skill_idx = started_names.len();
            started_names.push(name);
            inits.spawn(async move {
                let outcome = skill.init().await;
                (skill_idx, ticket, skill, outcome)
            });
        }
        // A skill whose init panics is lost with its task; it is reported like a failed
        // init, and the others load all the same.
        let mut finished = Vec::new();
        let mut panicked = vec![true; started_names.len()];
        while let Some(joined) = inits.join_next().await {
            if let Ok((skill_idx, ticket, skill, outcome)) = joined {
                panicked[skill_idx] = false;
                finished.push((skill_idx, ticket, skill, outcome));
            }
        }
        for (name, _) in started_names.iter().zip(&panicked).filter(|(_, panicked)| **panicked) {
            report.skipped.push(SkillFailure { skill: name.clone(), reason: "init panicked".to_owned() });
        }
        finished.sort_by_key(|(skill_idx, _, _, _)| *skill_idx);

        for (_, ticket, mut skill, outcome) in finished {
            let name = skill.name().to_owned();
            // Held from the admission to the push, so that `close` sees the skill either
            // loaded (and closes it) or not admitted.
            let mut loaded = self.inner.loaded.lock().await;
            let registered = match outcome {
                Ok(()) => self.admit(ticket, skill.as_ref()),
                Err(error) => Err(format!("init failed: {}", error_chain(error.as_ref()))),
            };
            match registered {
                Ok(()) => {
                    tracing::debug!(skill = %name, "skill loaded");
                    loaded.push(skill);
                    report.loaded.push(name);
                }
                Err(reason) => {
                    drop(loaded);
                    tracing::warn!(skill = %name, %reason, "skill skipped");
                    if let Err(error) = skill.close().await {
                        tracing::warn!(skill = %name, error = %error_chain(error.as_ref()), "closing a skipped skill failed");
                    }
                    report.skipped.push(SkillFailure { skill: name, reason });
                }
            }
        }
        lock(&self.inner.skipped).extend(report.skipped.iter().cloned());
        report
    }

    /// Checks a skill can be loaded (`starting`: the names of the skills of this round
    /// that are already starting) and hands it its capabilities, its handle bound to
    /// `ticket`.
    async fn prepare(&self, skill: &mut dyn Skill, ticket: u64, starting: &[String]) -> Result<(), String> {
        let name = skill.name().to_owned();
        if name.is_empty() {
            return Err("the skill has an empty name".to_owned());
        }
        if lock(&self.inner.members).closed {
            return Err(CLOSED.to_owned());
        }
        let taken =
            starting.contains(&name) || self.inner.loaded.lock().await.iter().any(|loaded| loaded.name() == name);
        if taken {
            return Err(format!("another skill named `{name}` is already loaded"));
        }
        let secrets = self.inner.secrets.get(&name).cloned().unwrap_or_default();
        let missing: Vec<String> =
            skill.required_secrets().into_iter().filter(|secret| !secrets.contains(secret)).collect();
        match missing.as_slice() {
            [] => {}
            [one] => return Err(format!("missing secret {one}")),
            several => return Err(format!("missing secrets {}", several.join(", "))),
        }
        if !skill.namespaced() {
            write(&self.inner.plain).insert(name.clone());
        }
        skill.set_storage(SkillStore::new(Arc::clone(&self.inner.store), storage_namespace(&self.inner.name, &name)));
        skill.set_agent(SkillHandle::new(&self.inner, ticket, &name));
        skill.set_secrets(secrets);
        Ok(())
    }

    /// Registers the items of `skill`, whose `init` succeeded, and makes its handle (of
    /// `ticket`) a member: all or none, and none once the agent is closed.
    fn admit(&self, ticket: u64, skill: &dyn Skill) -> Result<(), String> {
        let name = skill.name();
        let kind = skill.source_type();
        // The skill's own code runs before the lock is taken: it may use its handle.
        let (tools, prompts, resources) = (skill.tools(), skill.prompts(), skill.resources());
        let mut members = lock(&self.inner.members);
        let registered = if members.closed {
            Err(CLOSED.to_owned())
        } else {
            self.replace_tools(name, kind, tools, Announce::Always)
                .and_then(|()| self.replace_prompts(name, prompts, Announce::Always))
                .and_then(|()| self.replace_resources(name, resources, Announce::Always))
        };
        match registered {
            Ok(()) => {
                members.admitted.insert(ticket, Member { name: name.to_owned(), kind });
                Ok(())
            }
            Err(reason) => {
                self.forget_items(name);
                Err(reason)
            }
        }
    }

    /// The agent-level name of the tool or prompt `item` of `skill`.
    fn item_name(&self, skill: &str, item: &str) -> String {
        if read(&self.inner.plain).contains(skill) {
            shorten_tool_name(item, sanitize_tool_name(item))
        } else {
            agent_tool_name(skill, item)
        }
    }

    /// Every skill skipped so far, with the reason.
    pub fn skipped(&self) -> Vec<SkillFailure> {
        lock(&self.inner.skipped).clone()
    }

    /// Closes every loaded skill and unregisters its tools, prompts and resources;
    /// returns the skills whose `close` failed. From then on the agent takes nothing: no
    /// skill loads, and no [`SkillHandle`] registers anything (a skill still listening to
    /// its server as it closes, say).
    pub async fn close(&self) -> Vec<SkillFailure> {
        let skills = {
            let mut loaded = self.inner.loaded.lock().await;
            let mut members = lock(&self.inner.members);
            members.closed = true;
            members.admitted.clear();
            write(&self.inner.tools).clear();
            write(&self.inner.tool_problems).clear();
            write(&self.inner.prompts).clear();
            write(&self.inner.resources).clear();
            *write(&self.inner.trusted) = trusted::Trusted::default();
            std::mem::take(&mut *loaded)
        };
        self.inner.changes.send_modify(|changes| {
            changes.tools += 1;
            changes.prompts += 1;
            changes.resources += 1;
        });
        let mut failures = Vec::new();
        for mut skill in skills {
            if let Err(error) = skill.close().await {
                failures.push(SkillFailure { skill: skill.name().to_owned(), reason: error_chain(error.as_ref()) });
            }
        }
        failures
    }
}

impl fmt::Debug for Agent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("name", &self.inner.name)
            .field("store", &self.inner.store)
            .field("secrets", &self.inner.secrets)
            .field("tools", &read(&self.inner.tools).keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Why a skill is not loaded into, or cannot change its items in, a closed agent.
const CLOSED: &str = "the agent is closed";

/// The store namespace of a skill in an agent: `{agent}/{skill}`, with `%` and `/`
/// percent-encoded in each part so that no other pair of names maps to it.
fn storage_namespace(agent: &str, skill: &str) -> String {
    let encode = |part: &str| part.replace('%', "%25").replace('/', "%2F");
    format!("{}/{}", encode(agent), encode(skill))
}

/// An error and its sources, joined by `: `.
fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

// The agent's locks guard plain collections that every operation leaves consistent, so
// a panic elsewhere while one was held does not make the data unusable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|poisoned| poisoned.into_inner())
}

pub(crate) fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_namespaces_never_collide() {
        assert_eq!(storage_namespace("default", "memory"), "default/memory");
        assert_ne!(storage_namespace("a/b", "c"), storage_namespace("a", "b/c"));
        assert_ne!(storage_namespace("a%2F", "b"), storage_namespace("a/", "b"));
    }
}
