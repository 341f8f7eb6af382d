//! Each client's markdown skills as last read, shared by the instructions every session
//! of that client gets and by the client's agent.
//!
//! Reading them walks the skill folders, parses every `SKILL.md` and resolves the skills'
//! secrets (4 ms for 500 skills). Without this, every session's `initialize` read them
//! for its instructions, and the client's agent read them again for its prompts.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use omniagent_host::{AgentConfig, Home, SkillPaths, load_markdown_skills};
use skill_markdown::SkillSet;

/// The skill sets by client (see the module doc). A set is read again when its client's
/// effective config is no longer the one it was read for, and after [`Self::forget`],
/// which the watch calls when a skill folder changes.
#[derive(Debug, Clone, Default)]
pub(crate) struct SkillSets {
    cached: Arc<Mutex<Cached>>,
}

#[derive(Debug, Default)]
struct Cached {
    /// Counts [`SkillSets::forget`] calls: a set read while one happened may be stale,
    /// and is not kept.
    generation: u64,
    sets: BTreeMap<String, (AgentConfig, Arc<SkillSet>)>,
}

impl SkillSets {
    /// The markdown skills of `client`, whose effective config is `config`.
    pub(crate) async fn of(&self, client: &str, config: &AgentConfig, home: &Home) -> Arc<SkillSet> {
        let generation = {
            let cached = self.lock();
            if let Some((read_for, set)) = cached.sets.get(client)
                && read_for == config
            {
                return Arc::clone(set);
            }
            cached.generation
        };
        let set = Arc::new(load_markdown_skills(config, home, &SkillPaths::default()).await);
        let mut cached = self.lock();
        if cached.generation == generation {
            cached.sets.insert(client.to_owned(), (config.clone(), Arc::clone(&set)));
        }
        set
    }

    /// Forgets every set, so that each is read again when next wanted.
    pub(crate) fn forget(&self) {
        let mut cached = self.lock();
        cached.generation += 1;
        cached.sets.clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Cached> {
        self.cached.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn write_skill(skills: &Path, name: &str) {
        let folder = skills.join(name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), format!("---\nname: {name}\ndescription: Does {name}.\n---\nBody.\n"))
            .unwrap();
    }

    fn names(set: &SkillSet) -> Vec<&str> {
        set.skills.iter().map(|skill| skill.skill.name.as_str()).collect()
    }

    fn agent_config(home: &Home, yaml: &str) -> AgentConfig {
        let path = home.root().join("config.yaml");
        omniagent_host::Config::parse(&path, yaml).unwrap().for_agent(None).unwrap()
    }

    #[tokio::test]
    async fn a_set_is_read_once_until_forgotten_or_its_config_changes() {
        let folder = tempfile::tempdir().unwrap();
        let home = Home::new(folder.path());
        let skills = folder.path().join("skills");
        write_skill(&skills, "first");
        // `includes` keeps out the skills of the machine's own folders (~/.agents/skills).
        let config = agent_config(&home, "skills:\n  includes: [first, second]\n");
        let sets = SkillSets::default();
        let read = sets.of("", &config, &home).await;
        assert_eq!(names(&read), ["first"]);

        write_skill(&skills, "second");
        assert!(Arc::ptr_eq(&read, &sets.of("", &config, &home).await), "the set read before is kept");
        let other_client = sets.of("alice", &config, &home).await;
        assert_eq!(names(&other_client), ["first", "second"], "each client's set is its own");

        sets.forget();
        let read_again = sets.of("", &config, &home).await;
        assert_eq!(names(&read_again), ["first", "second"]);

        let excluding = agent_config(&home, "skills:\n  includes: [first, second]\n  excludes: [first]\n");
        let read_for_the_new_config = sets.of("", &excluding, &home).await;
        assert_eq!(names(&read_for_the_new_config), ["second"], "a changed config reads again");
    }
}
