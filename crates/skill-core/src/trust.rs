//! Pinned definitions: what a skill's tools, prompts, resources and resource templates say is
//! recorded in a lock file the first time it is seen (or when a person approves it), and
//! an item whose definition changed since, that is new where approval is required, or
//! that a scan rule flags, is withheld: left out of the agent's lists and refused when
//! called, until `omniagent tools review` shows it and `omniagent tools approve` records
//! it.
//!
//! A [`Trust`] is shared by every agent of a process (the gateway's clients' agents
//! too): it holds the lock as last read, the settings, and a generation that moves when
//! the lock changes, on which each agent judges its items again.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod definition;
mod lock;
mod scan;

use self::definition::changed_fields;
pub use self::definition::field_pairs;
pub(crate) use self::definition::{
    Judged, hex, judge_prompt, judge_resource, judge_template, judge_tool, write_canonical,
};
pub use self::scan::{Finding, escape_invisible, scan_skill_text};
pub(crate) use self::scan::{OtherTools, is_distinctive};

use self::lock::{LockFile, Pinned, Pins};
use crate::agent::{lock, read, write};
use crate::{Error, ItemKind};

/// Whether an origin's definitions are pinned, and from when.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrustMode {
    /// A definition seen first is recorded and offered; a later change is withheld.
    #[default]
    OnFirstUse,
    /// Nothing is offered until a person approved it.
    Approved,
    /// Nothing is pinned.
    Off,
}

/// What a scan rule's finding does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScanMode {
    /// The item is withheld until approved by name (a markdown skill is cut).
    #[default]
    Withhold,
    /// The finding is logged; the item is offered.
    Warn,
    /// No scan.
    Off,
}

/// Why an item is withheld.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithheldReason {
    /// Never approved, where its origin requires approval.
    New,
    /// Its definition differs from the one recorded.
    Changed,
    /// A scan rule flagged its text.
    Flagged,
}

/// Where one skill's definitions come from, and how they are trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PinnedSkill {
    /// The origin they are recorded under: `stdio:` with the command and its arguments,
    /// or a URL.
    pub origin: String,
    /// How they are trusted.
    pub mode: TrustMode,
}

/// What a [`Trust`] is made from.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct TrustSettings {
    /// The lock file.
    pub lock: PathBuf,
    /// What scan findings do.
    pub scan: ScanMode,
}

impl TrustSettings {
    /// Settings with the lock at `lock` and the default scan.
    pub fn new(lock: impl Into<PathBuf>) -> Self {
        Self { lock: lock.into(), ..Self::default() }
    }
}

/// The lock, its settings and the judgments on them, shared by every agent of a process.
/// Cloning gives another handle to the same trust.
#[derive(Clone)]
pub struct Trust {
    inner: Arc<TrustInner>,
}

struct TrustInner {
    file: LockFile,
    scan: ScanMode,
    pins: RwLock<Pins>,
    /// The lock file's modification time and length when last read.
    seen: Mutex<Option<(std::time::SystemTime, u64)>>,
    /// Moves each time the lock is read anew with a change.
    generation: tokio::sync::watch::Sender<u64>,
    /// The withheld items already logged, by origin, key and digest: each is logged once.
    logged: Mutex<BTreeSet<(String, String, String)>>,
}

impl std::fmt::Debug for Trust {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trust").field("lock", &self.inner.file.path()).field("scan", &self.inner.scan).finish()
    }
}

/// An item the agent withholds, with what a review shows of it.
#[derive(Debug, Clone, Serialize)]
pub struct WithheldItem {
    /// The agent-level name (a template's agent-level URI template).
    pub name: String,
    /// The skill that gives it.
    pub skill: String,
    /// `tool`, `prompt`, `resource` or `resource_template`.
    pub kind: &'static str,
    /// Why it is withheld.
    pub reason: WithheldReason,
    /// The first scan rule that flagged it, when flagged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<&'static str>,
    /// Every scan finding in it.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
    /// Its definition as the skill gives it now.
    pub offered: Value,
    /// Its definition as recorded, when it changed (a flagged item's too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Value>,
    /// The origin it is recorded under.
    #[serde(skip)]
    pub(crate) origin: String,
    #[serde(skip)]
    pub(crate) key: String,
    #[serde(skip)]
    pub(crate) sha256: String,
}

impl WithheldItem {
    /// Why a call of it is refused, naming the command that reviews it.
    pub fn refusal(&self) -> String {
        let why = match self.reason {
            WithheldReason::New => "is not approved yet".to_owned(),
            WithheldReason::Changed => "changed since it was approved".to_owned(),
            WithheldReason::Flagged => {
                format!("was flagged by the scan rule `{}`", self.rule.unwrap_or_default())
            }
        };
        format!(
            "the {} `{}` {why}, so it is withheld; run `omniagent tools review` to see it and \
             `omniagent tools approve {}` to offer it",
            self.kind.replace('_', " "),
            self.name,
            self.name
        )
    }
}

/// An origin's recorded definitions, in MCP's wire form, by kind.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct Recorded {
    /// Tools: `name`, `title`, `description`, `inputSchema`, `outputSchema`,
    /// `annotations`, `icons`, `_meta`.
    pub tools: Vec<Value>,
    /// Prompts: `name`, `title`, `description`, `arguments`.
    pub prompts: Vec<Value>,
    /// Resource templates: `uriTemplate`, `name`, `title`, `description`, `mimeType`.
    pub templates: Vec<Value>,
    /// Resources: `uri`, `name`, `title`, `description`, `mimeType`.
    pub resources: Vec<Value>,
}

/// The verdict on one item.
#[derive(Debug, Clone)]
pub(crate) enum Verdict {
    Offered,
    Withheld(Arc<WithheldItem>),
}

impl Trust {
    /// Reads the lock of `settings`; a lock that cannot be read is an error naming it.
    pub fn open(settings: TrustSettings) -> Result<Self, Error> {
        let file = LockFile::new(settings.lock);
        let seen = modified(file.path());
        let pins = file.read()?;
        Ok(Self {
            inner: Arc::new(TrustInner {
                file,
                scan: settings.scan,
                pins: RwLock::new(pins),
                seen: Mutex::new(seen),
                generation: tokio::sync::watch::Sender::new(0),
                logged: Mutex::new(BTreeSet::new()),
            }),
        })
    }

    /// What scan findings do.
    pub(crate) fn scan_mode(&self) -> ScanMode {
        self.inner.scan
    }

    /// Reads the lock again if the file changed since it was last read (another process
    /// approved or recorded items); when what it holds changed, the agents judge their
    /// items anew (and announce the lists that changed). Returns whether it changed.
    pub fn reload(&self) -> Result<bool, Error> {
        let now = modified(self.inner.file.path());
        if now.is_some() && *lock(&self.inner.seen) == now {
            return Ok(false);
        }
        let pins = self.inner.file.read()?;
        *lock(&self.inner.seen) = now;
        let mut current = write(&self.inner.pins);
        if *current == pins {
            return Ok(false);
        }
        *current = pins;
        drop(current);
        self.inner.generation.send_modify(|generation| *generation += 1);
        Ok(true)
    }

    /// A receiver that sees each change of the lock [`reload`](Self::reload) found.
    pub(crate) fn generations(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.generation.subscribe()
    }

    /// Records the definitions of `items` as offered now (and the scan rules they were
    /// flagged by as accepted), so that they are offered from then on; the agents of
    /// this process judge their items anew.
    pub fn approve(&self, items: &[WithheldItem]) -> Result<(), Error> {
        let pins = self.inner.file.update(|pins| {
            for item in items {
                let accepted = item.findings.iter().map(|finding| finding.rule.to_owned()).collect::<BTreeSet<_>>();
                let pinned = Pinned {
                    sha256: item.sha256.clone(),
                    definition: item.offered.clone(),
                    accepted: accepted.into_iter().collect(),
                };
                pins.origins.entry(item.origin.clone()).or_default().items.insert(item.key.clone(), pinned);
            }
        })?;
        *write(&self.inner.pins) = pins;
        self.inner.generation.send_modify(|generation| *generation += 1);
        Ok(())
    }

    /// What the lock holds of `origin`, when it holds any tool of it: the definitions an
    /// upstream's lists can be answered from before it starts.
    pub fn recorded(&self, origin: &str) -> Option<Recorded> {
        let pins = read(&self.inner.pins);
        let items = &pins.origins.get(origin)?.items;
        let mut recorded = Recorded::default();
        for (key, pinned) in items {
            let definition = pinned.definition.clone();
            match key.split_once(':').map(|(kind, _)| kind) {
                Some("tool") => recorded.tools.push(definition),
                Some("prompt") => recorded.prompts.push(definition),
                Some("resource_template") => recorded.templates.push(definition),
                Some("resource") => recorded.resources.push(definition),
                _ => {}
            }
        }
        (!recorded.tools.is_empty()).then_some(recorded)
    }

    /// Judges the items of `skill` (`items`: agent-level name and judged definition each),
    /// pinned as `pinned` says (`None`: not pinned, as the user's own), records the new
    /// ones its mode lets be recorded, and logs each withheld one once. `kind` is the
    /// items' kind.
    pub(crate) fn judge(
        &self,
        skill: &str,
        pinned: Option<&PinnedSkill>,
        kind: ItemKind,
        items: &[(String, Judged)],
    ) -> Vec<Verdict> {
        // What is not pinned has an origin all the same, where approvals of its flagged
        // items are recorded.
        let (origin, mode) = match pinned {
            Some(pinned) => (pinned.origin.clone(), pinned.mode),
            None => (format!("skill:{skill}"), TrustMode::Off),
        };
        let pins = read(&self.inner.pins);
        let recorded = pins.origins.get(&origin);
        let mut to_record = Vec::new();
        let verdicts: Vec<Verdict> = items
            .iter()
            .map(|(name, judged)| {
                let pinned = recorded.and_then(|origin| origin.items.get(&judged.key));
                let flagged = match self.inner.scan {
                    ScanMode::Withhold => judged
                        .findings
                        .iter()
                        .find(|finding| {
                            !pinned.is_some_and(|pinned| {
                                pinned.sha256 == judged.sha256
                                    && pinned.accepted.iter().any(|rule| rule == finding.rule)
                            })
                        })
                        .map(|finding| finding.rule),
                    ScanMode::Warn | ScanMode::Off => None,
                };
                let reason = match (mode, pinned) {
                    _ if flagged.is_some() => Some(WithheldReason::Flagged),
                    (TrustMode::Off, _) => None,
                    (_, Some(pinned)) if pinned.sha256 != judged.sha256 => Some(WithheldReason::Changed),
                    (_, Some(_)) => None,
                    (TrustMode::Approved, None) => Some(WithheldReason::New),
                    (TrustMode::OnFirstUse, None) => {
                        to_record.push(judged);
                        None
                    }
                };
                match reason {
                    None => Verdict::Offered,
                    Some(reason) => Verdict::Withheld(Arc::new(WithheldItem {
                        name: name.clone(),
                        skill: skill.to_owned(),
                        kind: kind_word(kind),
                        reason,
                        rule: flagged,
                        findings: judged.findings.clone(),
                        offered: judged.definition(),
                        recorded: pinned
                            .filter(|pinned| pinned.sha256 != judged.sha256)
                            .map(|pinned| pinned.definition.clone()),
                        origin: origin.clone(),
                        key: judged.key.clone(),
                        sha256: judged.sha256.clone(),
                    })),
                }
            })
            .collect();
        drop(pins);
        self.log(&verdicts, items);
        if !to_record.is_empty() {
            self.record(&origin, &to_record);
        }
        verdicts
    }

    /// Logs each withheld item once (per definition), and each finding a `warn` scan
    /// lets through.
    fn log(&self, verdicts: &[Verdict], items: &[(String, Judged)]) {
        let mut logged = lock(&self.inner.logged);
        for (verdict, (name, judged)) in verdicts.iter().zip(items) {
            if self.inner.scan == ScanMode::Warn {
                for finding in &judged.findings {
                    let seen = logged.insert((name.clone(), finding.rule.to_owned(), judged.sha256.clone()));
                    if seen {
                        tracing::warn!(item = %name, rule = finding.rule, field = %finding.field, "scan finding: {}", finding.excerpt);
                    }
                }
            }
            let Verdict::Withheld(item) = verdict else { continue };
            if !logged.insert((item.origin.clone(), item.key.clone(), item.sha256.clone())) {
                continue;
            }
            match item.reason {
                WithheldReason::Changed => {
                    let changed = item.recorded.as_ref().map(|recorded| changed_fields(recorded, &item.offered));
                    let changed = changed.unwrap_or_default().join(", ");
                    tracing::warn!(item = %item.name, origin = %item.origin, "withheld: its definition changed ({changed}); run `omniagent tools review`");
                }
                WithheldReason::New => {
                    tracing::warn!(item = %item.name, origin = %item.origin, "withheld until approved; run `omniagent tools review`");
                }
                WithheldReason::Flagged => {
                    let finding = item.findings.first();
                    tracing::warn!(
                        item = %item.name,
                        rule = item.rule.unwrap_or_default(),
                        field = finding.map(|finding| finding.field.as_str()).unwrap_or_default(),
                        "withheld: flagged by a scan rule: {}; run `omniagent tools review`",
                        finding.map(|finding| finding.excerpt.as_str()).unwrap_or_default()
                    );
                }
            }
        }
    }

    /// Records items seen first under `origin`. A failure to write is logged, and the
    /// items are offered this time all the same (the lock still pins what it held).
    fn record(&self, origin: &str, items: &[&Judged]) {
        let updated = self.inner.file.update(|pins| {
            let recorded = &mut pins.origins.entry(origin.to_owned()).or_default().items;
            for judged in items {
                // Another process may have recorded it meanwhile: the first record stands.
                recorded.entry(judged.key.clone()).or_insert_with(|| Pinned {
                    sha256: judged.sha256.clone(),
                    definition: judged.definition(),
                    accepted: Vec::new(),
                });
            }
        });
        match updated {
            Ok(pins) => *write(&self.inner.pins) = pins,
            Err(error) => tracing::warn!(origin, "definitions seen first could not be recorded: {error}"),
        }
    }
}

/// The word a kind is written as in the lock and in JSON.
fn kind_word(kind: ItemKind) -> &'static str {
    match kind {
        ItemKind::Tool => "tool",
        ItemKind::Prompt => "prompt",
        ItemKind::Resource => "resource",
        ItemKind::ResourceTemplate => "resource_template",
    }
}

/// The modification time and length of `path`, if it can be read.
fn modified(path: &std::path::Path) -> Option<(std::time::SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}
