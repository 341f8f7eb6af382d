//! What the agent's [`Trust`] withholds of its skills' items: each skill's items judged
//! as they are registered, judged again when the lock changes, and left out of the
//! agent's lists while withheld. A call of a withheld item is refused by the pinning
//! layer of the call path ([`super::layers`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::{Agent, lock, read, write};
use crate::trust::{
    Judged, OtherTools, Trust, Verdict, WithheldItem, is_distinctive, judge_prompt, judge_resource, judge_template,
    judge_tool,
};
use crate::{ItemKind, Prompt, ResourceInfo, ResourceTemplateInfo, Tool};

/// The judged items of every skill, and those withheld, by agent-level name.
#[derive(Default)]
pub(super) struct Trusted {
    /// By skill, then kind: each item's agent-level name and judged definition.
    judged: BTreeMap<String, BTreeMap<Kind, Vec<(String, Judged)>>>,
    /// By kind, then agent-level name.
    withheld: BTreeMap<Kind, BTreeMap<String, Arc<WithheldItem>>>,
}

/// [`ItemKind`] as a map key (the kinds that are pinned).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    Tool,
    Prompt,
    Template,
    Resource,
}

impl Kind {
    fn of(kind: ItemKind) -> Self {
        match kind {
            ItemKind::Tool => Kind::Tool,
            ItemKind::Prompt => Kind::Prompt,
            ItemKind::ResourceTemplate => Kind::Template,
            ItemKind::Resource => Kind::Resource,
        }
    }

    fn item_kind(self) -> ItemKind {
        match self {
            Kind::Tool => ItemKind::Tool,
            Kind::Prompt => ItemKind::Prompt,
            Kind::Template => ItemKind::ResourceTemplate,
            Kind::Resource => ItemKind::Resource,
        }
    }
}

impl Agent {
    fn trust(&self) -> Option<&Trust> {
        self.inner.trust.as_ref()
    }

    /// The names, as their skills give them, of the distinctive tools of every skill but
    /// `skill`, less the names `skill`'s own registered tools have: what a description of
    /// `skill` has no business naming.
    fn other_tools(&self, skill: &str) -> OtherTools {
        let tools = read(&self.inner.tools);
        let own: Vec<&str> = tools
            .values()
            .filter(|tool| tool.source().skill == skill)
            .map(|tool| tool.source().tool.as_str())
            .collect();
        let names: BTreeSet<&str> = tools
            .values()
            .map(|tool| tool.source())
            .filter(|source| {
                source.skill != skill && is_distinctive(&source.tool) && !own.contains(&source.tool.as_str())
            })
            .map(|source| source.tool.as_str())
            .collect();
        OtherTools::new(&names.into_iter().collect::<Vec<_>>())
    }

    /// Judges the tools `skill` registered (agent-level name and tool each), once they
    /// are in the registry.
    pub(super) fn judge_tools(&self, skill: &str, tools: &[(String, Arc<dyn Tool>)]) {
        let Some(trust) = self.trust() else { return };
        let others = self.other_tools(skill);
        let judged =
            tools.iter().map(|(name, tool)| (name.clone(), judge_tool(tool, &others, trust.scan_mode()))).collect();
        self.judge(skill, Kind::Tool, judged);
    }

    /// Judges the prompts `skill` registered.
    pub(super) fn judge_prompts(&self, skill: &str, prompts: &[(String, Arc<dyn Prompt>)]) {
        let Some(trust) = self.trust() else { return };
        let others = self.other_tools(skill);
        let judged = prompts
            .iter()
            .map(|(name, prompt)| (name.clone(), judge_prompt(prompt.info(), &others, trust.scan_mode())))
            .collect();
        self.judge(skill, Kind::Prompt, judged);
    }

    /// Judges the resource templates `skill` registered (agent-level URI template and
    /// template each).
    pub(super) fn judge_templates(&self, skill: &str, templates: &[(String, ResourceTemplateInfo)]) {
        let Some(trust) = self.trust() else { return };
        let others = self.other_tools(skill);
        let judged = templates
            .iter()
            .map(|(name, template)| (name.clone(), judge_template(template, &others, trust.scan_mode())))
            .collect();
        self.judge(skill, Kind::Template, judged);
    }

    /// Judges the resources `skill` registered (agent-level URI and resource each).
    pub(super) fn judge_resources(&self, skill: &str, resources: &[(String, ResourceInfo)]) {
        let Some(trust) = self.trust() else { return };
        let others = self.other_tools(skill);
        let judged = resources
            .iter()
            .map(|(name, resource)| (name.clone(), judge_resource(resource, &others, trust.scan_mode())))
            .collect();
        self.judge(skill, Kind::Resource, judged);
    }

    /// Records the judgment of `skill`'s items of `kind`, replacing the last one.
    fn judge(&self, skill: &str, kind: Kind, judged: Vec<(String, Judged)>) {
        let Some(trust) = self.trust() else { return };
        let verdicts = trust.judge(skill, self.inner.pinned.get(skill), kind.item_kind(), &judged);
        let mut trusted = write(&self.inner.trusted);
        let withheld = trusted.withheld.entry(kind).or_default();
        withheld.retain(|_, item| item.skill != skill);
        for verdict in verdicts {
            if let Verdict::Withheld(item) = verdict {
                withheld.insert(item.name.clone(), item);
            }
        }
        trusted.judged.entry(skill.to_owned()).or_default().insert(kind, judged);
    }

    /// Judges every item again (the lock changed), and announces each list whose
    /// withheld items changed.
    pub(super) fn judge_again(&self) {
        let Some(trust) = self.trust() else { return };
        let mut trusted = write(&self.inner.trusted);
        let mut withheld: BTreeMap<Kind, BTreeMap<String, Arc<WithheldItem>>> = BTreeMap::new();
        for (skill, kinds) in &trusted.judged {
            for (kind, judged) in kinds {
                for verdict in trust.judge(skill, self.inner.pinned.get(skill), kind.item_kind(), judged) {
                    if let Verdict::Withheld(item) = verdict {
                        withheld.entry(*kind).or_default().insert(item.name.clone(), item);
                    }
                }
            }
        }
        let changed = |kind: Kind| {
            let names = |map: Option<&BTreeMap<String, Arc<WithheldItem>>>| {
                map.map(|map| map.iter().map(|(name, item)| (name.clone(), item.reason)).collect::<Vec<_>>())
                    .unwrap_or_default()
            };
            names(trusted.withheld.get(&kind)) != names(withheld.get(&kind))
        };
        let (tools, prompts) = (changed(Kind::Tool), changed(Kind::Prompt));
        let templates = changed(Kind::Template) || changed(Kind::Resource);
        trusted.withheld = withheld;
        drop(trusted);
        if tools || prompts || templates {
            self.inner.changes.send_modify(|changes| {
                changes.tools += u64::from(tools);
                changes.prompts += u64::from(prompts);
                changes.resources += u64::from(templates);
            });
        }
    }

    /// Forgets the judgments of `skill` (it is gone).
    pub(super) fn forget_judged(&self, skill: &str) {
        let mut trusted = write(&self.inner.trusted);
        trusted.judged.remove(skill);
        for withheld in trusted.withheld.values_mut() {
            withheld.retain(|_, item| item.skill != skill);
        }
    }

    /// The withheld item of `kind` called `name` (agent-level), if it is withheld.
    pub(super) fn withheld_item(&self, kind: Kind, name: &str) -> Option<Arc<WithheldItem>> {
        read(&self.inner.trusted).withheld.get(&kind)?.get(name).cloned()
    }

    /// The withheld item of `kind` that `skill` gives as `own` (its own name; a
    /// resource's own URI, a template's own URI template), if it is withheld.
    pub(super) fn withheld_own(&self, skill: &str, kind: ItemKind, own: &str) -> Option<Arc<WithheldItem>> {
        let trusted = read(&self.inner.trusted);
        let withheld = trusted.withheld.get(&Kind::of(kind))?;
        // An item's key in the lock is its kind's word and its own name.
        let is_own =
            |item: &WithheldItem| item.key.strip_prefix(item.kind).and_then(|key| key.strip_prefix(':')) == Some(own);
        withheld.values().find(|item| item.skill == skill && is_own(item)).cloned()
    }

    /// Whether any item of `kind` is withheld (so the lists need filtering).
    pub(super) fn withholds(&self, kind: Kind) -> bool {
        read(&self.inner.trusted).withheld.get(&kind).is_some_and(|withheld| !withheld.is_empty())
    }

    /// Every withheld tool, prompt, resource template and resource, with what a review
    /// shows of it: tools first, each kind by name.
    pub fn withheld(&self) -> Vec<WithheldItem> {
        let trusted = read(&self.inner.trusted);
        trusted.withheld.values().flat_map(|items| items.values().map(|item| WithheldItem::clone(item))).collect()
    }

    /// Records the definitions of `items` (some of [`withheld`](Self::withheld)) in the
    /// lock, so that they are offered: this agent at once, every other agent of the trust
    /// as it follows the lock. Nothing without a trust.
    pub fn approve(&self, items: &[WithheldItem]) -> Result<(), crate::Error> {
        let Some(trust) = self.trust() else { return Ok(()) };
        trust.approve(items)?;
        self.judge_again();
        Ok(())
    }

    /// Follows the trust's lock: each change judges the items again. The task ends
    /// when the agent is dropped.
    pub(super) fn follow_trust(&self) {
        let Some(trust) = self.trust() else { return };
        let mut following = lock(&self.inner.following);
        if following.is_some() {
            return;
        }
        let mut generations = trust.generations();
        let agent = Arc::downgrade(&self.inner);
        let follower = tokio::spawn(async move {
            while generations.changed().await.is_ok() {
                let Some(inner) = agent.upgrade() else { return };
                Agent::of(inner).judge_again();
            }
        });
        *following = Some(follower.abort_handle());
    }
}
