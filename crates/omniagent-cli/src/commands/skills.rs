//! `omniagent skills list|info|check|validate` and `omniagent prompt`.

use std::process::ExitCode;

use omniagent_host::load_markdown_skills;
use skill_markdown::{PromptConfig, inject_into_prompt};

use super::Session;
use crate::args::{SkillPaths, SkillsCommand};
use crate::render;

pub(crate) async fn run(session: &Session, command: SkillsCommand) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    match command {
        SkillsCommand::List { all, paths } => {
            let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
            render::skills::list(&set, all, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        SkillsCommand::Info { name, paths } => {
            let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
            match set.skills.iter().find(|loaded| loaded.skill.name == name) {
                Some(loaded) => {
                    render::skills::info(loaded, session.json)?;
                    Ok(ExitCode::SUCCESS)
                }
                None => {
                    render::skills::unknown(&name, &set);
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        SkillsCommand::Check { paths } => {
            let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
            render::skills::check(&set, session.json)?;
            let all_met = set.skills.iter().all(|loaded| loaded.available());
            Ok(if all_met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        SkillsCommand::Validate { paths } => super::validate::run(session, &config, paths),
        SkillsCommand::Installed(_) => unreachable!("`commands::run` sends these to `commands::install`"),
    }
}

/// `omniagent prompt`.
pub(crate) async fn prompt(session: &Session, base: &str, paths: SkillPaths) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
    let prompt_config = PromptConfig { max_injected: config.skills().max_injected };
    let prompt = inject_into_prompt(base, &set.skills, &prompt_config);
    render::skills::prompt(&prompt, &set, &prompt_config, session.json)?;
    Ok(ExitCode::SUCCESS)
}
