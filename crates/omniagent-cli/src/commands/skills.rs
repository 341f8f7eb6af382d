//! `omniagent skills list|info|check|validate` and `omniagent prompt`.

use std::process::ExitCode;

use omniagent_host::install::installed_at;
use omniagent_host::load_markdown_skills;
use skill_markdown::render_prompt;

use super::Session;
use crate::args::{PromptMode, SkillPaths, SkillsCommand};
use crate::render;

pub(crate) async fn run(session: &Session, command: SkillsCommand) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    match command {
        SkillsCommand::List { all, paths } => {
            let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
            let cuts = render_prompt("", &set.skills, &config.prompt_config()).cuts;
            render::skills::list(&set, &cuts, all, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        SkillsCommand::Info { name, paths } => {
            let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
            match set.skills.iter().find(|loaded| loaded.skill.name == name) {
                Some(loaded) => {
                    let installed = loaded.skill.dir.as_deref().and_then(|dir| installed_at(&session.home, dir));
                    render::skills::info(loaded, installed.as_ref(), session.json)?;
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
            let cuts = render_prompt("", &set.skills, &config.prompt_config()).cuts;
            render::skills::check(&set, &cuts, session.json)?;
            let all_met = set.skills.iter().all(|loaded| loaded.available());
            Ok(if all_met { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        SkillsCommand::Validate { paths } => super::validate::run(session, &config, paths),
        SkillsCommand::Installed(_) => unreachable!("`commands::run` sends these to `commands::install`"),
    }
}

/// `omniagent prompt`.
pub(crate) async fn prompt(
    session: &Session,
    base: &str,
    mode: Option<PromptMode>,
    paths: SkillPaths,
) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    let set = load_markdown_skills(&config, &session.home, &paths.into()).await;
    let mut prompt_config = config.prompt_config();
    if let Some(mode) = mode {
        prompt_config.mode = mode.into();
    }
    let prompt = render_prompt(base, &set.skills, &prompt_config);
    render::prompt::prompt(&prompt, &set, &prompt_config, session.json)?;
    Ok(ExitCode::SUCCESS)
}
