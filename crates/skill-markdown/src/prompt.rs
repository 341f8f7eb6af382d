//! Putting skills into a system prompt: whole ([`PromptMode::Full`]) or as a catalog
//! ([`PromptMode::Catalog`]), within `max_injected` skills and `max_prompt_chars`
//! characters, every cut reported ([`render_prompt`]).

mod budget;
mod text;

use serde::{Deserialize, Serialize};

use crate::{LoadedSkill, SkillsConfig};

/// How skills go into a prompt.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PromptMode {
    /// Each skill's whole body, between `<skill>` tags.
    #[default]
    Full,
    /// Each skill's name, description and folder in one `<available_skills>` block; the
    /// model loads a body with the tool `skills__activate`.
    Catalog,
}

/// How skills go into a prompt.
#[derive(Debug, Clone)]
pub struct PromptConfig {
    /// At most this many skills are put in.
    pub max_injected: usize,
    /// Whole bodies or a catalog.
    pub mode: PromptMode,
    /// At most this many characters (Unicode scalar values) of skills: the part of the
    /// prompt after the base prompt. None: no limit.
    pub max_chars: Option<usize>,
    /// Whether the agent has the tools that load a skill (`skills__activate`,
    /// `skills__read`). Without them a catalog points at each skill's `SKILL.md`, and
    /// gives a pack skill, which has no file, whole.
    pub tools: bool,
    /// What a scan rule's finding in a skill's name, description or body does: withheld
    /// (the default), a skill is left out with a [`CutReason::Flagged`].
    pub scan: skill_core::ScanMode,
}

impl Default for PromptConfig {
    fn default() -> Self {
        Self::from(&SkillsConfig::default())
    }
}

impl From<&SkillsConfig> for PromptConfig {
    fn from(config: &SkillsConfig) -> Self {
        Self {
            max_injected: config.max_injected,
            mode: config.prompt,
            max_chars: config.max_prompt_chars,
            tools: config.tools,
            scan: skill_core::ScanMode::default(),
        }
    }
}

/// A skill the prompt holds less of than it could.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cut {
    /// The skill's name.
    pub skill: String,
    /// What was cut, and why.
    #[serde(flatten)]
    pub reason: CutReason,
}

/// What was cut of a skill, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CutReason {
    /// Left out: more skills are available than `max_injected`.
    MaxInjected {
        /// The limit.
        max_injected: usize,
    },
    /// Left out: no room under `max_prompt_chars`.
    Budget {
        /// The limit.
        max_prompt_chars: usize,
    },
    /// Its description shortened (in a catalog) to fit `max_prompt_chars`.
    Shortened {
        /// The limit.
        max_prompt_chars: usize,
        /// The description's length, in characters.
        description_chars: usize,
        /// How many of them the prompt keeps.
        kept_chars: usize,
    },
    /// Left out: a scan rule flagged its text (`trust.scan: warn` keeps it).
    Flagged {
        /// The rule's id.
        rule: &'static str,
        /// Where: `name`, `description` or `body`.
        field: String,
        /// The offending text, invisible characters shown escaped.
        excerpt: String,
    },
}

impl std::fmt::Display for CutReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MaxInjected { max_injected } => {
                write!(f, "left out of the prompt: more skills than skills.max_injected ({max_injected})")
            }
            Self::Budget { max_prompt_chars } => {
                write!(f, "left out of the prompt: no room under skills.max_prompt_chars ({max_prompt_chars})")
            }
            Self::Shortened { max_prompt_chars, description_chars, kept_chars } => write!(
                f,
                "description shortened from {description_chars} to {kept_chars} characters to fit \
                 skills.max_prompt_chars ({max_prompt_chars})"
            ),
            Self::Flagged { rule, field, excerpt } => {
                write!(f, "left out of the prompt: the scan rule `{rule}` flagged its {field}: {excerpt}")
            }
        }
    }
}

/// A system prompt with skills, and what did not fit.
#[derive(Debug, Clone)]
pub struct SkillsPrompt<'a> {
    /// The whole prompt: the base prompt, then the skills.
    pub text: String,
    /// The skills in it, in order.
    pub skills: Vec<&'a LoadedSkill>,
    /// The skills cut, in discovery order.
    pub cuts: Vec<Cut>,
    /// How many characters past `max_chars` the skills take when the `always` skills,
    /// which are never left out, do not fit by themselves.
    pub over_budget: Option<usize>,
}

/// The skills a prompt may offer: available, model invocation allowed, at most
/// `config.max_injected` of them (`always` skills first, then in the order given), in
/// the order given. [`render_prompt`] puts in those that fit its budget.
pub fn prompt_skills<'a>(skills: &'a [LoadedSkill], config: &PromptConfig) -> impl Iterator<Item = &'a LoadedSkill> {
    budget::offered(skills, config.max_injected, config.scan).0.into_iter().map(|skill_idx| &skills[skill_idx])
}

/// `system_prompt` followed by the skills [`prompt_skills`] offers, as `config.mode`
/// says, within `config.max_chars`: over it, descriptions are shortened first (in a
/// catalog, to no fewer than 48 characters), then skills are left out, lowest priority
/// first (`always` skills are never left out; then the order given). Every cut is in
/// the result. `{baseDir}` in a body becomes the skill's folder.
///
/// Only the skills' text goes in: bound secret values never do. Without a skill to
/// offer, the prompt is `system_prompt` unchanged.
pub fn render_prompt<'a>(system_prompt: &str, skills: &'a [LoadedSkill], config: &PromptConfig) -> SkillsPrompt<'a> {
    let fitted = budget::fit(skills, config);
    if fitted.skills.is_empty() {
        return SkillsPrompt {
            text: system_prompt.to_owned(),
            skills: Vec::new(),
            cuts: fitted.cuts,
            over_budget: None,
        };
    }
    let mut prompt = system_prompt.trim_end().to_owned();
    if !prompt.is_empty() {
        prompt.push_str("\n\n");
    }
    prompt.push_str(&fitted.section);
    SkillsPrompt { text: prompt, skills: fitted.skills, cuts: fitted.cuts, over_budget: fitted.over_budget }
}

/// The text of [`render_prompt`]: `system_prompt` and the skills that fit.
pub fn inject_into_prompt(system_prompt: &str, skills: &[LoadedSkill], config: &PromptConfig) -> String {
    render_prompt(system_prompt, skills, config).text
}
