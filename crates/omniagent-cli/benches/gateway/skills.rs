//! `gateway_session_open`: opening a 2025-11-25 session over HTTP (rmcp's client:
//! `initialize`, whose answer carries the instructions, `initialized`, the GET stream;
//! then closed) on `omniagent mcp serve --http` whose home holds 500 markdown skills,
//! beside the same gateway with none. The skills' catalog is each session's
//! instructions; the skills are read once per client, not once per session.

use std::path::Path;

use criterion::Criterion;
use tempfile::TempDir;

use super::{Era, ServerProcess, home_with, http_client, http_gateway, runtime};

/// Skills in the home of `gateway_session_open/500_skills`.
const SKILLS: usize = 500;

/// A home whose `skills/` holds `count` skills.
fn home_with_skills(count: usize) -> TempDir {
    let home = home_with("storage: {backend: memory}\n");
    for number in 0..count {
        let folder = home.path().join(format!("skills/skill-{number}"));
        std::fs::create_dir_all(&folder).expect("a writable temporary folder");
        let skill = format!(
            "---\nname: skill-{number}\ndescription: Answers questions about topic {number} from its notes.\n---\n\
             # Topic {number}\n\nRead the notes, then answer.\n"
        );
        std::fs::write(folder.join("SKILL.md"), skill).expect("a writable temporary folder");
    }
    home
}

fn open_and_close(runtime: &tokio::runtime::Runtime, gateway: &ServerProcess) {
    runtime.block_on(async {
        let client = http_client(&gateway.url(), Era::Legacy).await;
        client.cancel().await.expect("the session closes");
    });
}

fn gateway_with(home: &Path, runtime: &tokio::runtime::Runtime, skills: usize) -> ServerProcess {
    let gateway = http_gateway(home);
    let client = runtime.block_on(http_client(&gateway.url(), Era::Legacy));
    let instructions = client.peer_info().and_then(|info| info.instructions.clone()).unwrap_or_default();
    let listed = instructions.matches("</skill>").count();
    assert!(skills == 0 || listed > 0, "the instructions list the skills: {instructions}");
    runtime.block_on(async { client.cancel().await.expect("the session closes") });
    gateway
}

pub(crate) fn session_open(c: &mut Criterion) {
    let runtime = runtime();
    let mut group = c.benchmark_group("gateway_session_open");
    for (name, skills) in [("no_skills", 0), ("500_skills", SKILLS)] {
        let home = home_with_skills(skills);
        let gateway = gateway_with(home.path(), &runtime, skills);
        group.bench_function(name, |b| b.iter(|| open_and_close(&runtime, &gateway)));
    }
    group.finish();
}
