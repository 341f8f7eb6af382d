//! Discovering, parsing and checking 1,000 generated skills, beside just finding and
//! reading the same files (target: the whole load within 3× the cost of reading); and
//! the catalog prompt of those 1,000 skills end to end, discovery, load and render
//! (target: within 20 ms), with no budget and with an 8,000-character one, and the
//! render alone.
//!
//! `find_and_read` is the I/O any loader must do: list each folder, read each `SKILL.md`.
//! `read_known_paths` reads the files by path without listing anything, a lower bound.
//!
//! The skills mix the shapes real ones use: YAML metadata under `openclaw`, a JSON string
//! under `clawdbot`, OmniAgent's own shape, and an unquoted `: ` that sends the
//! frontmatter to the line-by-line fallback.

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use skill_markdown::{Environment, PromptConfig, PromptMode, SkillsConfig, Sources, load, render_prompt};

const N_SKILLS: usize = 1000;

fn frontmatter(skill_idx: usize) -> String {
    match skill_idx % 4 {
        0 => format!(
            "name: skill-{skill_idx}\ndescription: Does task {skill_idx} with a command line tool\nmetadata:\n  openclaw:\n    emoji: \"🔧\"\n    requires:\n      bins: [sh, tool-{skill_idx}]\n      env: [HOME]\n    install:\n      - kind: brew\n        formula: tool-{skill_idx}\n"
        ),
        1 => format!(
            "name: skill-{skill_idx}\ndescription: \"Calls API {skill_idx}\"\nmetadata: {{\"clawdbot\":{{\"emoji\":\"🌐\",\"requires\":{{\"anyBins\":[\"curl\",\"wget\"]}}}}}}\n"
        ),
        2 => format!(
            "description: Works with files of kind {skill_idx}\nlicense: MIT\nmetadata:\n  emoji: \"📁\"\n  requires:\n    bins: [ls]\n"
        ),
        _ => format!("name: skill-{skill_idx}\ndescription: Use when you need: task {skill_idx}, quickly\n"),
    }
}

fn generate(root: &Path) {
    for skill_idx in 0..N_SKILLS {
        let dir = root.join(format!("skill-{skill_idx:04}"));
        std::fs::create_dir_all(&dir).expect("a writable temporary folder");
        let body = "Step one. Step two.\n\n```sh\ntool --flag value\n```\n".repeat(20);
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\n{}---\n# Skill {skill_idx}\n\n{body}", frontmatter(skill_idx)),
        )
        .expect("a writable temporary folder");
    }
}

/// Variables whose PATH holds every program the generated skills need (empty
/// executables in `bin_dir`), so that all 1,000 are available.
fn everything_installed(bin_dir: &Path) -> HashMap<String, OsString> {
    let bins =
        ["sh", "curl", "ls"].map(str::to_owned).into_iter().chain((0..N_SKILLS).map(|idx| format!("tool-{idx}")));
    for bin in bins {
        let stub = bin_dir.join(bin);
        std::fs::write(&stub, "#!/bin/sh\n").expect("a writable temporary folder");
        #[cfg(unix)]
        std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("a stub");
    }
    HashMap::from([("PATH".to_owned(), bin_dir.as_os_str().to_owned()), ("HOME".to_owned(), "/home/bench".into())])
}

fn read_known_paths(files: &[PathBuf]) -> usize {
    files.iter().map(|file| std::fs::read(file).expect("a generated file").len()).sum()
}

fn find_and_read(root: &Path) -> usize {
    let mut dirs: Vec<PathBuf> =
        std::fs::read_dir(root).expect("the generated folder").map(|entry| entry.expect("an entry").path()).collect();
    dirs.sort();
    dirs.iter()
        .map(|dir| {
            let listing = std::fs::read_dir(dir).expect("a generated folder");
            let file = listing.map(|entry| entry.expect("an entry").path()).find(|path| path.ends_with("SKILL.md"));
            std::fs::read(file.expect("a SKILL.md")).expect("a generated file").len()
        })
        .sum()
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    generate(dir.path());
    let sources = Sources { dirs: vec![dir.path().to_owned()], ..Sources::default() };
    let config = SkillsConfig::default();
    let secrets = BTreeMap::new();
    let set = load(&sources, &config, &Environment::current(), &secrets);
    assert_eq!(set.skills.len(), N_SKILLS);
    assert!(set.skipped.is_empty());

    let mut group = c.benchmark_group("skills_1000");
    group.sample_size(20);
    let files: Vec<PathBuf> =
        (0..N_SKILLS).map(|skill_idx| dir.path().join(format!("skill-{skill_idx:04}/SKILL.md"))).collect();
    group.bench_function("read_known_paths", |b| b.iter(|| read_known_paths(&files)));
    group.bench_function("find_and_read", |b| b.iter(|| find_and_read(dir.path())));
    group.bench_function("discover_parse_check", |b| {
        b.iter(|| load(&sources, &config, &Environment::current(), &secrets).skills.len())
    });

    let bin_dir = tempfile::tempdir().expect("a temporary folder");
    let vars = everything_installed(bin_dir.path());
    let catalog = |max_chars| PromptConfig {
        max_injected: N_SKILLS,
        mode: PromptMode::Catalog,
        max_chars,
        tools: true,
        scan: Default::default(),
    };
    let catalog_prompt = |prompt_config: &PromptConfig| {
        let set = load(&sources, &config, &Environment::new(vars.clone(), "linux"), &secrets);
        render_prompt("You are a helpful agent.", &set.skills, prompt_config).text.len()
    };
    let unlimited = catalog(None);
    let set = load(&sources, &config, &Environment::new(vars.clone(), "linux"), &secrets);
    let prompt = render_prompt("", &set.skills, &unlimited);
    assert_eq!(prompt.skills.len(), N_SKILLS, "every generated skill is in the catalog");
    let budget = catalog(Some(8000));
    assert!(!render_prompt("", &set.skills, &budget).cuts.is_empty());
    group.bench_function("catalog_prompt", |b| b.iter(|| catalog_prompt(&unlimited)));
    group.bench_function("catalog_prompt_budget_8000", |b| b.iter(|| catalog_prompt(&budget)));
    // The render alone, of skills already loaded: what the prompt adds to the load.
    group.bench_function("catalog_render", |b| b.iter(|| render_prompt("", &set.skills, &unlimited).text.len()));
    group.bench_function("catalog_render_budget_8000", |b| {
        b.iter(|| render_prompt("", &set.skills, &budget).text.len())
    });
    group.finish();
}

criterion_group!(all, benches);
criterion_main!(all);
