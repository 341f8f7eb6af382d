//! Putting skills into a system prompt.

use crate::LoadedSkill;

/// How skills go into a prompt.
#[derive(Debug, Clone)]
pub struct PromptConfig {
    /// At most this many skills are injected.
    pub max_injected: usize,
}

impl Default for PromptConfig {
    fn default() -> Self {
        Self { max_injected: 20 }
    }
}

/// The skills [`inject_into_prompt`] puts in a prompt, in order.
pub fn prompt_skills<'a>(skills: &'a [LoadedSkill], config: &PromptConfig) -> impl Iterator<Item = &'a LoadedSkill> {
    skills
        .iter()
        .filter(|loaded| loaded.available() && !loaded.skill.disable_model_invocation)
        .take(config.max_injected)
}

const HEADER: &str = "# Skills\n\n\
The skills below are instructions for specific tasks. When a task matches a skill's \
description, follow that skill. Paths in a skill are relative to its folder.";

/// `system_prompt` followed by the available skills (model invocation allowed), each
/// under `## {emoji} {name}` with its body, at most `config.max_injected`, in the order
/// given (discovery order). `{baseDir}` in a body becomes the skill's folder.
///
/// Only the skills' text goes in: bound secret values never do.
pub fn inject_into_prompt(system_prompt: &str, skills: &[LoadedSkill], config: &PromptConfig) -> String {
    let mut offered = prompt_skills(skills, config).peekable();
    if offered.peek().is_none() {
        return system_prompt.to_owned();
    }
    let mut prompt = system_prompt.trim_end().to_owned();
    if !prompt.is_empty() {
        prompt.push_str("\n\n");
    }
    prompt.push_str(HEADER);
    for loaded in offered {
        let skill = &loaded.skill;
        let heading = match &skill.emoji {
            Some(emoji) => format!("{emoji} {}", skill.name),
            None => skill.name.clone(),
        };
        let body = match &skill.dir {
            Some(dir) => skill.body.replace("{baseDir}", &dir.display().to_string()),
            None => skill.body.clone(),
        };
        prompt.push_str(&format!("\n\n## {heading}\n\n{}", body.trim()));
    }
    prompt.push('\n');
    prompt
}
