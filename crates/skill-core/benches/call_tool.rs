//! What the agent adds to a tool call: the name lookup, checking the arguments against
//! the tool's schema, and the `tool_call` tracing span.
//!
//! The group `call_tool` times one no-op tool with a small realistic schema and valid
//! arguments, called directly with `Tool::call` (`tool`) and through
//! `Agent::call_tool("noop__noop", ..)` (`agent`). The target: `agent` stays under 5 µs
//! above `tool`.
//!
//! `agent_guarded` is `agent` with the secret egress guard looking for ten 40-byte
//! secrets of other skills (each in its 16 encodings) in the arguments, and
//! `agent_unguarded` the same agent with the guard off: their difference is what the
//! guard adds to a call.
//!
//! Both run with `Runtime::block_on` on a current-thread runtime, so the runtime's cost
//! is in both figures and cancels out in the difference (criterion's own async support
//! needs a feature we do not enable). No tracing subscriber is installed, so the span
//! costs what a disabled span costs.

use std::hint::black_box;
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use skill_core::{
    Agent, SecretString, Secrets, Skill, SourceKind, Tool, ToolContext, ToolError, ToolOutput, ToolSource,
};

/// A tool that does nothing, so that only the path to it is measured.
struct Noop {
    schema: Value,
}

impl Noop {
    fn new() -> Self {
        let schema = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for"},
                "lang": {"type": "string", "description": "The answer's language"}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        Self { schema }
    }
}

#[async_trait]
impl Tool for Noop {
    fn name(&self) -> &str {
        "noop"
    }

    fn description(&self) -> &str {
        "Does nothing"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, _context: &ToolContext, _arguments: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::default())
    }
}

struct NoopSkill;

#[async_trait]
impl Skill for NoopSkill {
    fn name(&self) -> &str {
        "noop"
    }

    fn description(&self) -> &str {
        "One tool that does nothing"
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(Noop::new())]
    }
}

fn call_tool(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("a current-thread runtime");
    let agent = Agent::builder().with_compiled_skill(NoopSkill).build();
    assert_eq!(runtime.block_on(agent.init_compiled_skills()).loaded, ["noop"]);
    let tool = Noop::new();
    let source = ToolSource { kind: SourceKind::Skill, skill: "noop".to_owned(), tool: "noop".to_owned() };
    let context = ToolContext::new("noop__noop", source);
    let arguments = json!({"query": "weather in Lyon", "lang": "fr"});
    // Measuring the error path by mistake would flatter the agent, so check the call first.
    let checked = runtime.block_on(agent.call_tool("noop__noop", arguments.clone()));
    assert!(checked.is_ok(), "{checked:?}");

    let mut group = c.benchmark_group("call_tool");
    group.bench_function("tool", |b| b.iter(|| runtime.block_on(tool.call(&context, black_box(arguments.clone())))));
    group.bench_function("agent", |b| {
        b.iter(|| runtime.block_on(agent.call_tool(black_box("noop__noop"), black_box(arguments.clone()))))
    });
    let guarded = |on: bool| {
        let mut builder = Agent::builder().secret_guard(on).with_compiled_skill(NoopSkill);
        for n in 0..10 {
            let secrets: Secrets =
                [("TOKEN".to_owned(), SecretString::from(format!("ghp_{n:02}aZ3kQ9xV7mP2wL5sR8tY1uB4nC6dE0f")))]
                    .into_iter()
                    .collect();
            builder = builder.skill_secrets(format!("other{n}"), secrets);
        }
        let agent = builder.build();
        assert_eq!(runtime.block_on(agent.init_compiled_skills()).loaded, ["noop"]);
        agent
    };
    for (name, agent) in [("agent_guarded", guarded(true)), ("agent_unguarded", guarded(false))] {
        let checked = runtime.block_on(agent.call_tool("noop__noop", arguments.clone()));
        assert!(checked.is_ok(), "{checked:?}");
        group.bench_function(name, |b| {
            b.iter(|| runtime.block_on(agent.call_tool(black_box("noop__noop"), black_box(arguments.clone()))))
        });
    }
    group.finish();
}

criterion_group!(benches, call_tool);
criterion_main!(benches);
