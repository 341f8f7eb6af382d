//! Discovery, precedence, filters, requirement checks and prompt injection. Committed
//! fixtures live under `tests/fixtures/skills`. Temporary folders cover what cannot be
//! committed: large, non-UTF-8 and unreadable files, FIFOs, and symlinks. Requirements are
//! checked against an [`Environment`] built for each test, never the process's own.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use skill_core::{ExposeSecret, SecretString, Secrets};
use skill_markdown::{
    Discovery, Environment, LoadedSkill, MAX_SKILL_FILE_BYTES, Missing, Origin, PromptConfig, SkillsConfig, Skipped,
    Sources, discover, inject_into_prompt, load,
};

mod filters;
mod layouts;
mod missing;
mod precedence;
mod prompt;
/// Bins are told apart by their permission bits, which only Unix has.
#[cfg(unix)]
mod requirements;
mod unusable_files;

const PACK: &str = "omniagent-skills";
const CANARY: &str = "canary-secret-5b1e";

fn fixtures() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/skills")).canonicalize().unwrap()
}

fn dirs<const N: usize>(dirs: [PathBuf; N]) -> Sources {
    Sources { dirs: dirs.into(), ..Sources::default() }
}

fn names(discovery: &Discovery) -> Vec<&str> {
    discovery.skills.iter().map(|found| found.skill.name.as_str()).collect()
}

fn write(path: &Path, contents: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn skill_text(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n")
}

fn skipped(path: PathBuf, line: Option<usize>, reason: &str) -> Skipped {
    Skipped { path, line, reason: reason.to_owned() }
}

fn secrets(pairs: &[(&str, &str)]) -> Secrets {
    pairs.iter().map(|(name, value)| ((*name).to_owned(), SecretString::from(*value))).collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}
