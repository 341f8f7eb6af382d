//! `omniagent skills validate`: the Agent Skills specification's rules, checked against
//! the specification's own reference validator, PyPI `skills-ref` (its `agentskills
//! validate` command), run as an independent oracle on every skill folder of the fixture
//! corpus and on every skill the `openclaw` npm package ships.
//!
//! Both verdicts are turned into `field/rule` keys (`name/characters`, `homepage/unknown-field`,
//! `/yaml`) and compared per skill. When the oracle cannot parse the frontmatter it says
//! nothing about the fields, so then only the verdict is compared (both must find the skill
//! invalid). Every skill where the two differ must be listed, with both sets and the text
//! of the specification that decides it, in `tests/fixtures/skills-ref-<version>-disagreements.yaml`;
//! an unlisted disagreement fails, and so does a listed one that no longer happens.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;
use test_peers::{OPENCLAW_VERSION, SKILLS_REF_VERSION};

use crate::{Home, json, run};

/// `field/rule` keys: what one side finds wrong with one skill.
type Keys = BTreeSet<String>;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures")
}

/// One listed disagreement.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Disagreement {
    /// A folder under `tests/fixtures/skills`, or `openclaw:<folder in the package>`.
    skill: String,
    ours: Keys,
    oracle: Keys,
    /// The specification's text (or the YAML specification's) that decides it.
    decided_by: String,
}

fn listed_disagreements() -> Vec<Disagreement> {
    let path = fixtures().join(format!("skills-ref-{SKILLS_REF_VERSION}-disagreements.yaml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    serde_yaml_ng::from_str(&text).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

/// Every folder below `root` (hidden ones and any depth included) that holds a `SKILL.md`
/// or `skill.md`, sorted.
fn skill_folders(root: &Path) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    let mut pending = vec![root.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())) {
            let path = entry.expect("a readable folder").path();
            if path.is_dir() {
                pending.push(path);
            } else if matches!(path.file_name().and_then(|name| name.to_str()), Some("SKILL.md" | "skill.md")) {
                folders.push(dir.clone());
            }
        }
    }
    folders.sort();
    folders.dedup();
    folders
}

/// What `omniagent --json skills validate PATHS` finds, by skill folder.
fn ours(paths: &[PathBuf]) -> BTreeMap<PathBuf, Keys> {
    let home = Home::new();
    let mut args = vec!["--json", "skills", "validate"];
    args.extend(paths.iter().map(|path| path.to_str().expect("UTF-8 fixture paths")));
    let (code, stdout, stderr) = run(home.omniagent(&args));
    let report = json(&stdout);
    let any_invalid = report["files"].as_array().expect("files").iter().any(|file| file["valid"] == false);
    assert_eq!(code, i32::from(any_invalid), "{stderr}");
    assert_eq!(report["valid"], Value::Bool(!any_invalid));
    report["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|file| {
            let path = PathBuf::from(file["path"].as_str().expect("a path"));
            let keys = file["violations"]
                .as_array()
                .expect("violations")
                .iter()
                .map(|violation| {
                    let field = violation["field"].as_str().unwrap_or_default();
                    format!("{field}/{}", violation["rule"].as_str().expect("a rule"))
                })
                .collect();
            (path.parent().expect("a SKILL.md in a folder").to_owned(), keys)
        })
        .collect()
}

/// What `agentskills validate FOLDER` finds, as keys.
fn oracle(folder: &Path) -> Keys {
    let output = Command::new(test_peers::skills_ref_python_or_panic())
        .args(["-m", "skills_ref.cli", "validate"])
        .arg(folder)
        .env("PYTHONIOENCODING", "utf-8")
        .output()
        .expect("skills-ref runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    match output.status.code() {
        Some(0) => Keys::new(),
        Some(1) => stderr
            .lines()
            .filter_map(|line| line.strip_prefix("  - "))
            .flat_map(|message| oracle_keys(message, folder))
            .collect(),
        _ => panic!("skills-ref failed on {}: {stderr}", folder.display()),
    }
}

/// The keys of one of the oracle's messages (skills-ref 0.1.1 `validator.py`, `parser.py`).
fn oracle_keys(message: &str, folder: &Path) -> Vec<String> {
    let key = |key: &str| vec![key.to_owned()];
    if let Some(fields) = message.strip_prefix("Unexpected fields in frontmatter: ") {
        let fields = fields.split(". Only ").next().unwrap_or_default();
        return fields.split(", ").map(|field| format!("{field}/unknown-field")).collect();
    }
    if let Some(field) = message.strip_prefix("Missing required field in frontmatter: ") {
        return vec![format!("{field}/required")];
    }
    if let Some(rest) = message.strip_prefix("Field '") {
        let (field, rest) = rest.split_once('\'').unwrap_or((rest, ""));
        return match rest {
            " must be a non-empty string" => vec![format!("{field}/required")],
            " must be a string" => vec![format!("{field}/type")],
            _ => panic!("an unknown skills-ref message for {}: {message}", folder.display()),
        };
    }
    let prefixes = [
        ("SKILL.md must start with YAML frontmatter", "/frontmatter"),
        ("SKILL.md frontmatter not properly closed", "/frontmatter"),
        ("SKILL.md frontmatter must be a YAML mapping", "/frontmatter"),
        ("Invalid YAML in frontmatter", "/yaml"),
        ("Skill name cannot start or end with a hyphen", "name/hyphens"),
        ("Skill name cannot contain consecutive hyphens", "name/hyphens"),
        ("Directory name ", "name/folder-name"),
        ("Description exceeds ", "description/length"),
        ("Compatibility exceeds ", "compatibility/length"),
    ];
    if let Some((_, found)) = prefixes.iter().find(|(prefix, _)| message.starts_with(prefix)) {
        return key(found);
    }
    if message.starts_with("Skill name '") {
        if message.contains("' exceeds ") {
            return key("name/length");
        }
        if message.ends_with(" must be lowercase") || message.contains("' contains invalid characters") {
            return key("name/characters");
        }
    }
    panic!("an unknown skills-ref message for {}: {message}", folder.display())
}

/// The oracle's verdict on each folder, four at a time.
fn oracle_all(folders: &[PathBuf]) -> BTreeMap<PathBuf, Keys> {
    let chunk_len = folders.len().div_ceil(4).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = folders
            .chunks(chunk_len)
            .map(|chunk| {
                scope.spawn(move || chunk.iter().map(|folder| (folder.clone(), oracle(folder))).collect::<Vec<_>>())
            })
            .collect();
        workers.into_iter().flat_map(|worker| worker.join().expect("an oracle thread")).collect()
    })
}

fn is_parse_error(keys: &Keys) -> bool {
    !keys.is_empty() && keys.iter().all(|key| key == "/frontmatter" || key == "/yaml")
}

/// Compares both sides on `folders` (named `label(folder)` in the listing) with the
/// listed disagreements whose names `label` can give, and fails on any difference.
fn check_agreement(
    folders: &[PathBuf],
    ours: &BTreeMap<PathBuf, Keys>,
    label: impl Fn(&Path) -> String,
    domain: impl Fn(&str) -> bool,
) {
    let oracle = oracle_all(folders);
    let ours_folders: Vec<&PathBuf> = ours.keys().collect();
    let oracle_folders: Vec<&PathBuf> = oracle.keys().collect();
    assert_eq!(ours_folders, oracle_folders, "both sides see the same skills");

    let listed: BTreeMap<String, Disagreement> = listed_disagreements()
        .into_iter()
        .filter(|disagreement| domain(&disagreement.skill))
        .map(|disagreement| (disagreement.skill.clone(), disagreement))
        .collect();
    let mut problems = Vec::new();
    let mut n_agreed = 0;
    for (folder, oracle_keys) in &oracle {
        let our_keys = &ours[folder];
        let agree = if is_parse_error(oracle_keys) { !our_keys.is_empty() } else { our_keys == oracle_keys };
        let name = label(folder);
        match (agree, listed.get(&name)) {
            (true, None) => n_agreed += 1,
            (true, Some(_)) => problems.push(format!("{name}: listed as a disagreement, but both now agree")),
            (false, Some(entry)) if &entry.ours == our_keys && &entry.oracle == oracle_keys => {
                assert!(!entry.decided_by.trim().is_empty(), "{name}: say what decides it");
            }
            (false, entry) => problems.push(format!(
                "{name}: ours {our_keys:?}, skills-ref {oracle_keys:?}{}",
                if entry.is_some() { " (listed with other sets)" } else { " (not listed)" }
            )),
        }
    }
    for name in listed.keys().filter(|name| !oracle.keys().any(|folder| &label(folder) == *name)) {
        problems.push(format!("{name}: listed, but no such skill was validated"));
    }
    assert!(
        problems.is_empty(),
        "{} disagreements with skills-ref {SKILLS_REF_VERSION}:\n{}",
        problems.len(),
        problems.join("\n")
    );
    assert!(n_agreed > 0);
}

#[test]
fn skills_validate_agrees_with_skills_ref_on_the_fixture_corpus() {
    let root = fixtures().join("skills").canonicalize().expect("the fixtures");
    let folders = skill_folders(&root);
    assert!(folders.len() >= 90, "the corpus lost skills: {}", folders.len());
    let ours = ours(&folders);
    let relative = |folder: &Path| folder.strip_prefix(&root).expect("below the root").display().to_string();
    check_agreement(&folders, &ours, relative, |skill| !skill.starts_with("openclaw:"));
}

#[test]
fn skills_validate_agrees_with_skills_ref_on_the_skills_openclaw_ships() {
    let package = test_peers::openclaw_package_or_panic().canonicalize().expect("the package");
    let roots = [package.join("skills"), package.join("custodian-skills")];
    let folders: Vec<PathBuf> = roots.iter().flat_map(|root| skill_folders(root)).collect();
    assert!(folders.len() >= 50, "openclaw@{OPENCLAW_VERSION} has fewer skills than expected: {}", folders.len());
    // Given as folders of skills: the walk must find every one.
    let ours = ours(&roots);
    let relative =
        |folder: &Path| format!("openclaw:{}", folder.strip_prefix(&package).expect("in the package").display());
    check_agreement(&folders, &ours, relative, |skill| skill.starts_with("openclaw:"));
}

#[test]
fn violations_print_as_file_line_message_and_exit_1() {
    let home = Home::new();
    let skill = home.write(
        "skills/pdf/SKILL.md",
        "---\nname: PDF\ndescription: Fill PDF forms.\nhomepage: https://example.com\nmetadata:\n  version: 1.0\n---\nBody.\n",
    );
    let file = skill.display();
    let (code, stdout, _) = run(home.omniagent(&["skills", "validate", skill.to_str().expect("UTF-8")]));
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        format!(
            "{file}:2: `name` may hold only lowercase a-z, digits and `-`, not 'P', 'D', 'F' [characters]\n\
             {file}:2: `name` is `PDF` but its folder is `pdf`: they must be equal [folder-name]\n\
             {file}:4: `homepage` is not an Agent Skills field (those are name, description, license, \
             compatibility, metadata and allowed-tools); other properties belong under `metadata` [unknown-field]\n\
             {file}:6: `metadata.version` must be a string, not a number (quote it) [type]\n\
             4 violations in 1 of 1 skill file\n"
        )
    );
}

#[test]
fn without_paths_the_folders_skills_list_reads_are_validated() {
    let home = Home::new();
    home.write("skills/good/SKILL.md", "---\nname: good\ndescription: Good.\n---\n");
    let (code, stdout, stderr) = run(home.omniagent(&["skills", "validate"]));
    assert_eq!((code, stdout.as_str()), (0, "1 skill file valid\n"), "{stderr}");

    // A SKILL.md named alone is in the working folder, whose name it must have.
    let mut command = home.omniagent(&["skills", "validate", "SKILL.md"]);
    command.current_dir(home.path().join("skills/good"));
    let (code, stdout, stderr) = run(command);
    assert_eq!((code, stdout.as_str()), (0, "1 skill file valid\n"), "{stderr}");

    let bad = home.write("skills/bad/SKILL.md", "---\nname: bad\n---\n");
    let (code, stdout, _) = run(home.omniagent(&["--json", "skills", "validate"]));
    assert_eq!(code, 1);
    let report = json(&stdout);
    assert_eq!(report["valid"], Value::Bool(false));
    assert_eq!(
        report["files"][0],
        serde_json::json!({
            "path": bad.display().to_string(),
            "valid": false,
            "violations": [{"line": 1, "field": "description", "rule": "required", "message": "`description` is required"}],
        })
    );
    assert_eq!(report["files"][1]["valid"], Value::Bool(true));
}

#[test]
fn a_path_without_skills_is_a_violation() {
    let home = Home::new();
    home.write("empty/README.md", "Not a skill.\n");
    let (code, stdout, _) = run(home.omniagent(&["skills", "validate", "empty", "missing"]));
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "empty: no SKILL.md in this folder or below it [file]\nmissing: no such folder [file]\n2 violations in 2 of 2 skill files\n"
    );
}
