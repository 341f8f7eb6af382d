//! Discovering, parsing and checking 1,000 generated skills, beside just finding and
//! reading the same files (target: the whole load within 3× the cost of reading).
//!
//! `find_and_read` is the I/O any loader must do: list each folder, read each `SKILL.md`.
//! `read_known_paths` reads the files by path without listing anything, a lower bound.
//!
//! The skills mix the shapes real ones use: YAML metadata under `openclaw`, a JSON string
//! under `clawdbot`, OmniAgent's own shape, and an unquoted `: ` that sends the
//! frontmatter to the line-by-line fallback.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use skill_markdown::{Environment, SkillsConfig, Sources, load};

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
    group.finish();
}

criterion_group!(all, benches);
criterion_main!(all);
