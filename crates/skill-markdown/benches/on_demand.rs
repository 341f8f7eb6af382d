//! `skills__activate` through an agent, as a host calls it (target: within 1 ms), among
//! 1,000 available skills, so the `enum` the arguments are checked against is that long.
//!
//! - `activate_first`: the first activation of a skill with a few files: the arguments
//!   checked, the folder listed (on tokio's blocking threads), the body given. Each
//!   iteration gets a fresh agent (made outside the timing), since a body is given once
//!   per agent.
//! - `activate_again`: the same skill again: only the "already active" answer.
//! - `read`: `skills__read` of a small file, with every path check.
//!
//! All run with `Runtime::block_on` on a current-thread runtime.

use std::collections::BTreeMap;
use std::path::Path;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::json;
use skill_core::Agent;
use skill_markdown::{Environment, LoadedSkill, SkillTools, SkillsConfig, Sources, load};

const N_SKILLS: usize = 1000;

fn generate(root: &Path) {
    for skill_idx in 0..N_SKILLS {
        let dir = root.join(format!("skill-{skill_idx:04}"));
        std::fs::create_dir_all(dir.join("scripts")).expect("a writable temporary folder");
        std::fs::create_dir_all(dir.join("references")).expect("a writable temporary folder");
        let body = "Step one. Step two.\n\n```sh\n{baseDir}/scripts/run.sh --flag value\n```\n".repeat(20);
        std::fs::write(
            dir.join("SKILL.md"),
            format!("---\nname: skill-{skill_idx:04}\ndescription: Does task {skill_idx}\n---\n# Skill {skill_idx}\n\n{body}"),
        )
        .expect("a writable temporary folder");
        std::fs::write(dir.join("scripts/run.sh"), "echo run\n").expect("a writable temporary folder");
        std::fs::write(dir.join("references/api.md"), "# API\n".repeat(50)).expect("a writable temporary folder");
    }
}

fn agent(runtime: &tokio::runtime::Runtime, skills: &[LoadedSkill]) -> Agent {
    let agent = Agent::builder().with_compiled_skill(SkillTools::new(skills, [])).build();
    let report = runtime.block_on(agent.init_compiled_skills());
    assert_eq!(report.loaded, ["skills"]);
    agent
}

fn benches(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    generate(dir.path());
    let sources = Sources { dirs: vec![dir.path().to_owned()], ..Sources::default() };
    let set = load(&sources, &SkillsConfig::default(), &Environment::current(), &BTreeMap::new());
    assert_eq!(set.skills.len(), N_SKILLS);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a runtime");
    let arguments = json!({"name": "skill-0500"});

    let mut group = c.benchmark_group("skills_activate_1000");
    group.sample_size(30);
    group.bench_function("activate_first", |b| {
        b.iter_batched(
            || agent(&runtime, &set.skills),
            |agent| {
                let output = runtime.block_on(agent.call_tool("skills__activate", arguments.clone()));
                assert!(!output.expect("a result").is_error);
                agent
            },
            BatchSize::PerIteration,
        )
    });
    let active = agent(&runtime, &set.skills);
    runtime.block_on(active.call_tool("skills__activate", arguments.clone())).expect("a result");
    group.bench_function("activate_again", |b| {
        b.iter(|| runtime.block_on(active.call_tool("skills__activate", arguments.clone())).expect("a result"))
    });
    let read = json!({"name": "skill-0500", "path": "references/api.md"});
    group.bench_function("read", |b| {
        b.iter(|| runtime.block_on(active.call_tool("skills__read", read.clone())).expect("a result"))
    });
    group.finish();
}

criterion_group!(all, benches);
criterion_main!(all);
