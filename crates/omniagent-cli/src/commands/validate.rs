//! `omniagent skills validate [PATH]...`.

use std::process::ExitCode;

use omniagent_host::{AgentConfig, SkillPaths, markdown_sources};

use super::Session;
use crate::render;

/// Validates the SKILL.md files of `paths`, else those of the folders `skills list` reads;
/// exit 1 on any violation.
pub(crate) fn run(session: &Session, config: &AgentConfig, paths: Vec<std::path::PathBuf>) -> anyhow::Result<ExitCode> {
    let validated = if paths.is_empty() {
        let dirs = markdown_sources(config, &session.home, &SkillPaths::default()).dirs;
        skill_markdown::validate_paths(&dirs, false)
    } else {
        skill_markdown::validate_paths(&paths, true)
    };
    render::validate::report(&validated, session.json)?;
    let all_valid = validated.iter().all(skill_markdown::ValidatedFile::is_valid);
    Ok(if all_valid { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
