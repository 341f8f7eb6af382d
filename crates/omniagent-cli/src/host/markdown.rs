//! The markdown skills of one agent's config: where they are looked for, and the
//! tools that load them on demand.

use std::collections::BTreeMap;
use std::path::PathBuf;

use skill_core::{SecretResolver, Secrets};
use skill_markdown::{Environment, SkillSet, Sources};

use super::{private_paths, resolve_secrets};
use crate::config::{AgentConfig, Home};

/// Where to look for markdown skills besides the configured places.
#[derive(Debug, Clone, Default)]
pub struct SkillPaths {
    /// More folders, searched after the others: each a skill, or a folder of skills.
    pub paths: Vec<PathBuf>,
    /// Leave out the default folders (the home's `skills/`, `./skills`, `./.skills`,
    /// `./.agents/skills`, `~/.agents/skills`) and `skills.paths`; packs and `paths` stay.
    pub no_default_paths: bool,
}

/// The markdown skills of `config`: packs, the default folders (unless
/// `paths.no_default_paths`), `skills.paths`, then `paths.paths`; filtered, checked, and
/// with the secrets this agent binds for each.
pub async fn load_markdown_skills(config: &AgentConfig, home: &Home, paths: &SkillPaths) -> SkillSet {
    let skills = &config.sections.skills;
    if !skills.enabled {
        return SkillSet::default();
    }
    if !skills.disabled.is_empty() {
        tracing::warn!("skills.disabled is deprecated; use skills.excludes");
    }
    let resolver = SecretResolver::default();
    let mut secrets = BTreeMap::new();
    for (name, settings) in &skills.config {
        secrets.insert(name.clone(), resolve_secrets(&resolver, name, &settings.secrets).await);
    }
    load_with_secrets(config, home, paths, &secrets)
}

/// [`load_markdown_skills`] with the secrets of `skills.config` already resolved: an
/// agent's start resolves them once (an `op://` reference runs the 1Password CLI each
/// time), for its guard and for the skills alike.
pub(super) fn load_with_secrets(
    config: &AgentConfig,
    home: &Home,
    paths: &SkillPaths,
    secrets: &BTreeMap<String, Secrets>,
) -> SkillSet {
    let sources = markdown_sources(config, home, paths);
    skill_markdown::load(&sources, &config.sections.skills, &Environment::current(), secrets)
}

/// The tools `skills__activate` and `skills__read` over `skills` (loaded for `config`):
/// they never read the agent's private files (its home but `skills/`, its config file,
/// its `file:` secrets, its AAuth key).
pub fn markdown_skill_tools(
    config: &AgentConfig,
    home: &Home,
    skills: &[skill_markdown::LoadedSkill],
) -> skill_markdown::SkillTools {
    skill_markdown::SkillTools::new(skills, private_paths(config, home))
}

/// Where [`load_markdown_skills`] looks: the packs, the default folders (unless
/// `paths.no_default_paths`), `skills.paths`, then `paths.paths`.
///
/// The default folders are ours (the home's `skills/`, then the working folder's
/// `skills/` and `.skills/`), then the Agent Skills ones (`./.agents/skills`, then
/// `~/.agents/skills`). The working folder's three are project folders, whose skills are
/// marked as such; `skills.project: false` leaves them out, so that a checkout cannot
/// write the agent's instructions unnoticed.
pub fn markdown_sources(config: &AgentConfig, home: &Home, paths: &SkillPaths) -> Sources {
    let skills = &config.sections.skills;
    let mut dirs = Vec::new();
    let mut project_dirs = Vec::new();
    if !paths.no_default_paths {
        let home_skills = home.skills_dir();
        if skills.project {
            // Absolute, so that the prompt says where a project skill's folder is from anywhere.
            let working = std::env::current_dir().unwrap_or_default();
            // Run in the home itself, `./skills` is the home's folder, no project's.
            let home_canonical = home_skills.canonicalize().ok();
            let is_home = |dir: &PathBuf| {
                *dir == home_skills || (home_canonical.is_some() && dir.canonicalize().ok() == home_canonical)
            };
            project_dirs = ["skills", ".skills", ".agents/skills"]
                .map(|dir| working.join(dir))
                .into_iter()
                .filter(|dir| !is_home(dir))
                .collect();
        }
        dirs.push(home_skills);
        dirs.extend(project_dirs.iter().cloned());
        if let Some(user_home) = skill_core::user_home() {
            dirs.push(user_home.join(".agents/skills"));
        }
        dirs.extend(skills.paths.iter().map(|path| skill_core::expand_home(path)));
    }
    Sources { packs: skills.packs.clone(), dirs, explicit_dirs: paths.paths.clone(), project_dirs }
}
