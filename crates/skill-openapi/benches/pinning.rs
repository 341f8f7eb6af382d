//! What pinning costs when an upstream's definitions arrive: GitHub's 1,223 operations
//! registered in an agent, with and without a trust that checks each against the lock.
//!
//! The group `pinning`:
//! - `register`: the tools replaced through the skill's handle, no trust: the agent
//!   compiles each input schema, as it does for every skill.
//! - `register_pinned`: the same with a trust whose lock holds every definition already
//!   (the steady state of an upstream that starts again): each definition is also
//!   written as canonical JSON, hashed, scanned and looked up in the lock.
//! - `register_pinned_scan_off`: the same, with `trust.scan: off`, which leaves hashing
//!   and the lookup.
//!
//! The difference between `register_pinned` and `register` is the cost of checking the
//! definitions against the lock (target, issue 36: at most 20 ms).
//!
//! The document is `$OMNIAGENT_GITHUB_OPENAPI`, else the copy in the peers cache.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::Value;
use skill_core::trust::PinnedSkill;
use skill_core::{
    Agent, ScanMode, Skill, SkillHandle, Tool, ToolContext, ToolError, ToolOutput, Trust, TrustMode, TrustSettings,
};
use skill_openapi::{Document, OperationFilter};

/// An operation as a tool definition: what the model sees of it.
struct Definition {
    name: String,
    description: String,
    schema: Value,
}

#[async_trait]
impl Tool for Definition {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, _context: &ToolContext, _arguments: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(""))
    }
}

/// A skill whose handle the benchmark keeps, to replace its tools.
struct Upstream(Arc<Mutex<Option<SkillHandle>>>);

#[async_trait]
impl Skill for Upstream {
    fn name(&self) -> &str {
        "github"
    }

    fn description(&self) -> &str {
        "GitHub"
    }

    fn set_agent(&mut self, handle: SkillHandle) {
        *self.0.lock().unwrap() = Some(handle);
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        Vec::new()
    }
}

/// The handle of an agent's `github` skill, the agent built with `trust`.
fn handle(runtime: &tokio::runtime::Runtime, trust: Option<Trust>) -> (Agent, SkillHandle) {
    let slot = Arc::new(Mutex::new(None));
    let mut builder = Agent::builder().with_compiled_skill(Upstream(Arc::clone(&slot)));
    if let Some(trust) = trust {
        let origin = "https://api.github.com/openapi.json".to_owned();
        builder = builder.trust(trust).pinned("github", PinnedSkill { origin, mode: TrustMode::OnFirstUse });
    }
    let agent = builder.build();
    runtime.block_on(agent.init_compiled_skills());
    let handle = slot.lock().unwrap().clone().expect("the skill loaded");
    (agent, handle)
}

fn pinning(c: &mut Criterion) {
    let path = test_peers::github_openapi_or_panic();
    let set = Document::from_file(&path).and_then(|document| document.tools(&OperationFilter::default())).unwrap();
    let tools: Vec<Arc<dyn Tool>> = set
        .tools
        .into_iter()
        .map(|tool| {
            let definition = Definition { name: tool.name, description: tool.description, schema: tool.input_schema };
            Arc::new(definition) as Arc<dyn Tool>
        })
        .collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let folder = tempfile::tempdir().unwrap();

    let mut group = c.benchmark_group("pinning");
    group.sample_size(10).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(10));
    let (_plain, plain) = handle(&runtime, None);
    group.bench_function("register", |b| b.iter(|| plain.replace_tools(tools.clone()).unwrap()));
    for (name, scan) in [("register_pinned", ScanMode::Withhold), ("register_pinned_scan_off", ScanMode::Off)] {
        let mut settings = TrustSettings::new(folder.path().join(format!("{name}.lock")));
        settings.scan = scan;
        let (agent, pinned) = handle(&runtime, Some(Trust::open(settings).unwrap()));
        // The first registration records every definition; the timed ones check them.
        pinned.replace_tools(tools.clone()).unwrap();
        assert_eq!(agent.tools().len(), tools.len(), "every operation is offered");
        group.bench_function(name, |b| b.iter(|| pinned.replace_tools(tools.clone()).unwrap()));
    }
    group.finish();
}

criterion_group!(benches, pinning);
criterion_main!(benches);
