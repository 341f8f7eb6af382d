//! Markdown skills as prompts, for hosts that take skills as MCP prompts:
//! [`SkillPrompts`], a skill named `skills` whose prompts are the skills `omniagent
//! prompt` would inject, one each, and the whole system prompt.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use skill_core::{Prompt, PromptArgument, PromptInfo, PromptOutput, Skill, Tool, ToolError};

use crate::{LoadedSkill, PromptConfig, SkillTools, inject_into_prompt, prompt_skills};

/// The name of the skill, and so the prefix of its prompts' agent-level names.
pub const SKILL_PROMPTS_NAME: &str = "skills";
/// The prompt that gives the whole system prompt (an underscore, which no Agent Skills
/// name has, so it never collides with a skill's prompt).
pub const SYSTEM_PROMPT_NAME: &str = "system_prompt";

/// A skill whose prompts are markdown skills: one per skill that [`inject_into_prompt`]
/// would put in the system prompt (available, model invocation allowed, at most
/// `max_injected`), named after it, and [`SYSTEM_PROMPT_NAME`], the system prompt with
/// every such skill. Requirements, filters and secret gating are those `skills` had
/// applied when loaded; no secret value is in any prompt.
#[derive(Debug)]
pub struct SkillPrompts {
    skills: Arc<[LoadedSkill]>,
    config: PromptConfig,
    tools: Option<SkillTools>,
}

impl SkillPrompts {
    /// The prompts of `skills` (a loaded [`crate::SkillSet`]'s skills) under `config`.
    pub fn new(skills: Vec<LoadedSkill>, config: PromptConfig) -> Self {
        Self { skills: skills.into(), config, tools: None }
    }

    /// The same skill with `tools` too (`skills__activate`, `skills__read`), for a host
    /// that serves both under the one skill name `skills`.
    pub fn with_tools(self, tools: SkillTools) -> Self {
        Self { tools: Some(tools), ..self }
    }
}

#[async_trait]
impl Skill for SkillPrompts {
    fn name(&self) -> &str {
        SKILL_PROMPTS_NAME
    }

    fn description(&self) -> &str {
        "Markdown skills as prompts, and the system prompt they make"
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.as_ref().map(SkillTools::tools).unwrap_or_default()
    }

    fn prompts(&self) -> Vec<Arc<dyn Prompt>> {
        let mut prompts: Vec<Arc<dyn Prompt>> = prompt_skills(&self.skills, &self.config)
            .map(|loaded| Arc::new(SkillPrompt::new(loaded)) as Arc<dyn Prompt>)
            .collect();
        let mut info = PromptInfo::new(
            SYSTEM_PROMPT_NAME,
            "The system prompt with every available skill, after an optional base prompt",
        );
        info.title = Some("System prompt with skills".to_owned());
        info.arguments.push(PromptArgument {
            name: "base".to_owned(),
            title: None,
            description: Some("The system prompt to start from (default: none)".to_owned()),
            required: Some(false),
        });
        prompts.push(Arc::new(SystemPrompt { info, skills: Arc::clone(&self.skills), config: self.config.clone() }));
        prompts
    }
}

/// One skill as a prompt: its body, with `{baseDir}` made its folder, and where the
/// folder is.
struct SkillPrompt {
    info: PromptInfo,
    text: String,
}

impl SkillPrompt {
    fn new(loaded: &LoadedSkill) -> Self {
        let skill = &loaded.skill;
        let mut info = PromptInfo::new(skill.name.clone(), skill.description.clone());
        info.title = Some(match &skill.emoji {
            Some(emoji) => format!("{emoji} {}", skill.name),
            None => skill.name.clone(),
        });
        let text = match &skill.dir {
            Some(dir) => {
                let dir = dir.display().to_string();
                let body = skill.body_in_folder();
                format!(
                    "Skill `{}`; its folder is {dir} (paths in it are relative to that folder).\n\n{}",
                    skill.name,
                    body.trim()
                )
            }
            None => format!("Skill `{}`.\n\n{}", skill.name, skill.body.trim()),
        };
        Self { info, text }
    }
}

#[async_trait]
impl Prompt for SkillPrompt {
    fn info(&self) -> &PromptInfo {
        &self.info
    }

    async fn get(&self, _arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError> {
        Ok(PromptOutput::user_text(self.info.description.clone(), self.text.clone()))
    }
}

/// The system prompt with the skills.
struct SystemPrompt {
    info: PromptInfo,
    skills: Arc<[LoadedSkill]>,
    config: PromptConfig,
}

#[async_trait]
impl Prompt for SystemPrompt {
    fn info(&self) -> &PromptInfo {
        &self.info
    }

    async fn get(&self, arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError> {
        let base = arguments.get("base").map_or("", String::as_str);
        let text = inject_into_prompt(base, &self.skills, &self.config);
        Ok(PromptOutput::user_text(self.info.description.clone(), text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Environment, SkillsConfig, Sources, load};

    fn text_of(output: &PromptOutput) -> String {
        serde_json::to_value(&output.messages[0]).unwrap()["content"]["text"].as_str().unwrap().to_owned()
    }

    #[tokio::test]
    async fn each_injected_skill_is_a_prompt_and_so_is_the_system_prompt() {
        let dir = tempfile::tempdir().unwrap();
        for (name, frontmatter) in [
            ("hello", "description: Greet people\nmetadata: {\"openclaw\": {\"emoji\": \"👋\"}}"),
            (
                "needs-bin",
                "description: Needs a program\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"no-such-program-here\"]}}}",
            ),
        ] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
            std::fs::write(
                dir.path().join(name).join("SKILL.md"),
                format!("---\n{frontmatter}\n---\nRun {{baseDir}}/go.sh\n"),
            )
            .unwrap();
        }
        let sources = Sources { dirs: vec![dir.path().to_owned()], ..Sources::default() };
        let set = load(&sources, &SkillsConfig::default(), &Environment::current(), &BTreeMap::new());
        let config = PromptConfig::default();
        let skill = SkillPrompts::new(set.skills.clone(), config.clone());
        let prompts = skill.prompts();
        let names: Vec<&str> = prompts.iter().map(|prompt| prompt.info().name.as_str()).collect();
        assert_eq!(names, ["hello", SYSTEM_PROMPT_NAME], "an unavailable skill is no prompt");
        assert_eq!(prompts[0].info().title.as_deref(), Some("👋 hello"));

        let folder = dir.path().join("hello").display().to_string();
        let hello = text_of(&prompts[0].get(BTreeMap::new()).await.unwrap());
        assert_eq!(
            hello,
            format!(
                "Skill `hello`; its folder is {folder} (paths in it are relative to that folder).\n\nRun {folder}/go.sh"
            )
        );
        let base = BTreeMap::from([("base".to_owned(), "You are helpful.".to_owned())]);
        let system = text_of(&prompts[1].get(base).await.unwrap());
        assert_eq!(system, inject_into_prompt("You are helpful.", &set.skills, &config));
    }
}
