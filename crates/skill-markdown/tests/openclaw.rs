//! Real skills written by no one here: every `SKILL.md` that the `openclaw` npm package
//! ships loads, with no skip and no warning, and says what its frontmatter states.
//!
//! The package is fetched by `cargo xtask test` (or `cargo xtask peers`), which passes its
//! folder in `OMNIAGENT_OPENCLAW_DIR`. What each file states was read by an independent
//! oracle, `xtask/openclaw_expected.py` (PyYAML), and committed as
//! `tests/fixtures/openclaw-<version>.json`; this test runs no Python.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};
use skill_markdown::{MarkdownSkill, Sources, discover};

use test_peers::OPENCLAW_VERSION;

/// Fewer skills than this means the package or the walk lost some.
const MIN_SKILLS: usize = 50;

/// What the oracle reads from a file, in the oracle's shape.
fn stated(skill: &MarkdownSkill) -> Value {
    json!({
        "name": skill.name,
        "description": skill.description,
        "emoji": skill.emoji,
        "requires": {
            "bins": skill.requires.bins,
            "anyBins": skill.requires.any_bins,
            "env": skill.requires.env,
            "config": skill.requires.config,
        },
        "os": skill.os,
        "always": skill.always,
    })
}

/// Every field where `found` differs from `expected`, as `field: expected …, found …`
/// (`field` is dotted: `requires.bins`).
fn differences(field: &str, expected: &Value, found: &Value, out: &mut Vec<String>) {
    match (expected, found) {
        (Value::Object(expected), Value::Object(found)) => {
            let join = |key: &str| if field.is_empty() { key.to_owned() } else { format!("{field}.{key}") };
            for (key, expected_value) in expected {
                differences(&join(key), expected_value, found.get(key).unwrap_or(&Value::Null), out);
            }
            for key in found.keys().filter(|key| !expected.contains_key(*key)) {
                out.push(format!("{}: not in the expected data", join(key)));
            }
        }
        _ if expected != found => out.push(format!("{field}: expected {expected}, found {found}")),
        _ => {}
    }
}

#[test]
fn every_skill_openclaw_ships_loads_as_its_frontmatter_states() {
    let package = test_peers::openclaw_package_or_panic();
    let skill_dirs = [package.join("skills"), package.join("custodian-skills")];
    assert!(
        skill_dirs.iter().all(|dir| dir.is_dir()),
        "the skills of openclaw@{OPENCLAW_VERSION} are not in {}: run `cargo xtask test` once (or just \
         `cargo xtask peers`), which fetches them with npm, or set OMNIAGENT_OPENCLAW_DIR to an extracted \
         package",
        package.display()
    );
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/fixtures/openclaw-{OPENCLAW_VERSION}.json"));
    let expected: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(&fixture).expect("the expected data is committed"))
            .expect("the expected data is JSON");

    let discovery = discover(&Sources { dirs: skill_dirs.to_vec(), ..Sources::default() });

    let mut problems: Vec<String> = discovery
        .skipped
        .iter()
        .map(|skipped| {
            let line = skipped.line.map(|line| format!(" line {line}")).unwrap_or_default();
            format!("{}:{line} skipped: {}", skipped.path.display(), skipped.reason)
        })
        .collect();
    let mut found: BTreeMap<String, Value> = BTreeMap::new();
    for skill in discovery.skills.iter().map(|found| &found.skill) {
        let relative = skill.path.strip_prefix(&package).expect("a skill of the package");
        let relative = relative.to_string_lossy().replace('\\', "/");
        for warning in &skill.warnings {
            problems.push(format!("{relative}: warning: {warning}"));
        }
        found.insert(relative, stated(skill));
    }
    for (path, expected_skill) in &expected {
        match found.get(path) {
            Some(found_skill) => {
                let mut fields = Vec::new();
                differences("", expected_skill, found_skill, &mut fields);
                problems.extend(fields.into_iter().map(|field| format!("{path}: {field}")));
            }
            None => problems.push(format!("{path}: not loaded")),
        }
    }
    for path in found.keys().filter(|path| !expected.contains_key(*path)) {
        problems.push(format!("{path}: loaded, but not in the expected data"));
    }
    assert!(
        problems.is_empty(),
        "{} differences from tests/fixtures/openclaw-{OPENCLAW_VERSION}.json:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert_eq!(discovery.skills.len(), expected.len());
    assert!(expected.len() >= MIN_SKILLS, "only {} skills in openclaw@{OPENCLAW_VERSION}", expected.len());
}
