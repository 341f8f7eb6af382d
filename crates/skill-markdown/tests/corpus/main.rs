//! The parsing corpus: every folder of `tests/fixtures/skills/parsing` is one case, loaded
//! the way discovery loads it and compared, whole, with the skill it must give. Comparing
//! the whole [`MarkdownSkill`] means a case also fails when a field it does not mention
//! changes (an unexpected warning, a lost default).

use std::collections::BTreeMap;
use std::path::PathBuf;

use skill_markdown::{InstallKind, InstallSpec, MarkdownSkill, Requires, SecretDecl, Sources, discover};

mod coverage;
mod fields;
mod files;
mod install;
mod metadata;
mod requirements;
mod yaml;

const BODY: &str = "Body.\n";
const LINE_BY_LINE: &str = "the frontmatter is not valid YAML; it was read line by line";

fn fixture_dir(case: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/skills/parsing")).join(case)
}

/// The skill of fixture `case`: its folder, discovered as a folder that holds `SKILL.md`.
fn load(case: &str) -> MarkdownSkill {
    let discovery = discover(&Sources { dirs: vec![fixture_dir(case)], ..Sources::default() });
    assert!(discovery.skipped.is_empty(), "{case}: {:?}", discovery.skipped);
    let mut skills: Vec<MarkdownSkill> = discovery.skills.into_iter().map(|found| found.skill).collect();
    assert_eq!(skills.len(), 1, "{case}: {skills:?}");
    skills.remove(0)
}

/// What fixture `case` gives when its frontmatter sets only `name: {case}` and
/// `description`: every other field at its default.
fn expected(case: &str, description: &str, body: &str) -> MarkdownSkill {
    let dir = fixture_dir(case);
    MarkdownSkill {
        name: case.to_owned(),
        description: description.to_owned(),
        body: body.to_owned(),
        path: dir.join("SKILL.md"),
        dir: Some(dir),
        emoji: None,
        homepage: None,
        license: None,
        compatibility: None,
        allowed_tools: Vec::new(),
        metadata: BTreeMap::new(),
        user_invocable: true,
        disable_model_invocation: false,
        always: false,
        os: Vec::new(),
        primary_env: None,
        requires: Requires::default(),
        install: Vec::new(),
        has_hooks: false,
        has_scripts: false,
        warnings: Vec::new(),
    }
}

fn check(case: &str, expect: MarkdownSkill) {
    assert_eq!(load(case), expect, "{case}");
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn emoji(emoji: &str) -> Option<String> {
    Some(emoji.to_owned())
}

fn bins(bins: &[&str]) -> Requires {
    Requires { bins: strings(bins), ..Requires::default() }
}

fn spec(kind: InstallKind) -> InstallSpec {
    InstallSpec {
        kind,
        id: None,
        label: None,
        bins: Vec::new(),
        os: Vec::new(),
        formula: None,
        package: None,
        module: None,
        url: None,
    }
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}
