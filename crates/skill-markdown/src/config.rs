//! The `skills:` section of the config file.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skill_core::SecretRef;

use crate::PromptMode;

/// Markdown skills' settings: which sources, which skills, and each skill's secrets.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SkillsConfig {
    /// Whether markdown skills are loaded at all.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Embedded packs to load (default `[omniagent-skills]`).
    #[serde(default = "default_packs")]
    pub packs: Vec<String>,
    /// Extra skill folders, after the default ones (`~/` expands to the home folder).
    #[serde(default)]
    pub paths: Vec<String>,
    /// When not empty, only these skills.
    #[serde(default)]
    pub includes: Vec<String>,
    /// Skills left out (applied after `includes`).
    #[serde(default)]
    pub excludes: Vec<String>,
    /// Deprecated alias of `excludes`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled: Vec<String>,
    /// At most this many skills go into a prompt.
    #[serde(default = "default_max_injected")]
    pub max_injected: usize,
    /// How skills go into the prompt: whole (`full`) or as a catalog.
    #[serde(default)]
    pub prompt: PromptMode,
    /// At most this many characters of skills in the prompt (none: no limit).
    #[serde(default)]
    pub max_prompt_chars: Option<usize>,
    /// Whether the working folder's skills (`./skills`, `./.skills`, `./.agents/skills`)
    /// are loaded.
    #[serde(default = "yes")]
    pub project: bool,
    /// Whether the agent gets the tools `skills__activate` and `skills__read`, which load
    /// a skill's body and files on demand ([`crate::SkillTools`]).
    #[serde(default = "yes")]
    pub tools: bool,
    /// Per-skill settings, by skill name.
    #[serde(default)]
    pub config: BTreeMap<String, SkillSettings>,
}

/// One markdown skill's settings.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SkillSettings {
    /// Values for the secrets the skill declares: name -> secret reference.
    #[serde(default)]
    pub secrets: BTreeMap<String, SecretRef>,
}

impl Default for SkillsConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            packs: default_packs(),
            paths: Vec::new(),
            includes: Vec::new(),
            excludes: Vec::new(),
            disabled: Vec::new(),
            max_injected: default_max_injected(),
            prompt: PromptMode::default(),
            max_prompt_chars: None,
            project: true,
            tools: true,
            config: BTreeMap::new(),
        }
    }
}

impl SkillsConfig {
    /// Whether a skill of this name passes `includes`, then `excludes` (and `disabled`).
    pub fn admits(&self, name: &str) -> bool {
        let included = self.includes.is_empty() || self.includes.iter().any(|included| included == name);
        included && !self.excludes.iter().chain(&self.disabled).any(|excluded| excluded == name)
    }
}

fn yes() -> bool {
    true
}

fn default_packs() -> Vec<String> {
    vec!["omniagent-skills".to_owned()]
}

fn default_max_injected() -> usize {
    20
}
