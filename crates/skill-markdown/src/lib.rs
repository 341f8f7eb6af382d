//! Markdown skills: `SKILL.md` files as OpenClaw, ClawHub and Anthropic's Agent Skills
//! write them, loaded unchanged.
//!
//! - [`parse`] reads one file: YAML frontmatter (or, when YAML fails, line by line as
//!   OpenClaw does) and the Markdown body; `metadata` as YAML, JSON or JSON5, under the
//!   `openclaw`, `clawdbot`, `moltbot` or `clawdis` key, or directly (OmniAgent's shape).
//! - [`discover`] finds skills in embedded packs and folders, with precedence (a folder
//!   beats a pack; the first folder wins) and reports every file it cannot use.
//! - [`load`] adds the filters, the requirement checks and each skill's bound secrets.
//! - [`render_prompt`] appends the available skills to a system prompt, whole or as a
//!   catalog, within its limits, and reports every skill it cuts ([`inject_into_prompt`]
//!   gives the text alone).
//! - [`SkillPrompts`] offers the same skills, and that prompt, as MCP-style prompts of
//!   an agent (what the gateway serves), and [`SkillFiles`] their files as
//!   `skill://` resources (the MCP skills extension).
//! - [`validate_paths`] applies the Agent Skills specification's rules strictly, each
//!   [`Violation`] on the line of the key to blame (what `omniagent skills validate` prints).
//! - [`SkillTools`] loads skills on demand: the tools `skills__activate` (a skill's body
//!   and the list of its files, once per agent) and `skills__read` (one file of its
//!   folder, bounded, never a hidden, linked-out or private one).
//!
//! # Example
//!
//! ```
//! use std::collections::BTreeMap;
//! use skill_markdown::{Environment, PromptConfig, SkillsConfig, Sources, inject_into_prompt, load};
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::create_dir(dir.path().join("hello")).unwrap();
//! std::fs::write(
//!     dir.path().join("hello/SKILL.md"),
//!     "---\ndescription: Greet people warmly\nmetadata: {\"openclaw\": {\"emoji\": \"👋\"}}\n---\nSay hello.\n",
//! )
//! .unwrap();
//!
//! let sources = Sources { dirs: vec![dir.path().to_owned()], ..Sources::default() };
//! let set = load(&sources, &SkillsConfig::default(), &Environment::current(), &BTreeMap::new());
//! assert_eq!(set.skills[0].skill.name, "hello");
//!
//! let prompt = inject_into_prompt("You are helpful.", &set.skills, &PromptConfig::default());
//! let folder = dir.path().join("hello").display().to_string();
//! assert!(prompt.ends_with(&format!("<skill name=\"hello\" location=\"{folder}\">\nSay hello.\n</skill>\n")));
//! ```

#![deny(missing_docs)]

mod config;
mod discover;
mod files;
mod folder;
mod frontmatter;
mod on_demand;
mod packs;
mod parse;
mod prompt;
mod prompts;
mod requirements;
mod skill;
mod validate;

use std::collections::BTreeMap;
use std::path::PathBuf;

use skill_core::{SecretString, Secrets};

pub use crate::config::{SkillSettings, SkillsConfig};
pub use crate::discover::{Discovery, Found, Origin, Skipped, Sources, discover};
pub use crate::files::{SKILL_FILES_NAME, SkillFiles};
pub use crate::on_demand::{ACTIVATE_TOOL_NAME, SKILL_TOOLS_NAME, SkillTools};
pub use crate::packs::{PACKS, Pack};
pub use crate::parse::{Location, MAX_SKILL_FILE_BYTES, ParseError, parse, parse_bytes};
pub use crate::prompt::{
    Cut, CutReason, PromptConfig, PromptMode, SkillsPrompt, inject_into_prompt, prompt_skills, render_prompt,
};
pub use crate::prompts::{SKILL_PROMPTS_NAME, SYSTEM_PROMPT_NAME, SkillPrompts};
pub use crate::requirements::{Environment, Missing};
pub use crate::skill::{InstallKind, InstallSpec, MarkdownSkill, Requires, SecretDecl};
pub use crate::validate::{Rule, ValidatedFile, Violation, validate_paths};

/// A discovered skill, checked against its environment, with its bound secrets.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    /// The parsed skill.
    pub skill: MarkdownSkill,
    /// Where it was found.
    pub origin: Origin,
    /// The same-named skills it hides.
    pub shadows: Vec<PathBuf>,
    /// What it lacks here; empty when available.
    pub missing: Missing,
    /// Whether it comes from the working folder (`./skills`, `./.skills`,
    /// `./.agents/skills`): a project skill, marked so in lists and prompts.
    pub project: bool,
    secrets: Secrets,
}

impl LoadedSkill {
    /// Whether the skill can be offered.
    pub fn available(&self) -> bool {
        self.missing.is_empty()
    }

    /// The environment variables the skill's scripts get: its bound secrets, by name.
    /// This is the only way the values leave the agent; they never enter a prompt.
    pub fn script_env(&self) -> impl Iterator<Item = (&str, &SecretString)> {
        self.secrets.iter()
    }
}

/// Every skill of `sources` with the filters of `config` applied, in discovery order.
#[derive(Debug, Clone, Default)]
pub struct SkillSet {
    /// The skills, available or not.
    pub skills: Vec<LoadedSkill>,
    /// Files and sources that could not be used.
    pub skipped: Vec<Skipped>,
}

/// Discovers the skills of `sources`, keeps those `config` admits, and checks each
/// against `environment` with the secrets bound for it (`secrets`, by skill name).
pub fn load(
    sources: &Sources,
    config: &SkillsConfig,
    environment: &Environment,
    secrets: &BTreeMap<String, Secrets>,
) -> SkillSet {
    let discovery = discover(sources);
    let skills = discovery
        .skills
        .into_iter()
        .filter(|found| config.admits(&found.skill.name))
        .map(|found| {
            let secrets = secrets.get(&found.skill.name).cloned().unwrap_or_default();
            let missing = environment.missing(&found.skill, &secrets);
            LoadedSkill {
                skill: found.skill,
                origin: found.origin,
                shadows: found.shadows,
                missing,
                project: found.project,
                secrets,
            }
        })
        .collect();
    SkillSet { skills, skipped: discovery.skipped }
}
