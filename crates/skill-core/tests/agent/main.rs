//! Behaviour of the `Agent` host through its public API: per-agent secrets and storage,
//! how skills that cannot load are skipped, the agent capability (a skill's handle, which
//! changes only that skill's items, and nothing once the agent is closed), agent-level
//! tool names, argument validation, hooks and the layers of the call path, tracing spans, `close`, and tool sources.
//!
//! The only stand-ins are the small test skills below (each module holds those of its
//! own tests); the agent, `MemorySkill`,
//! `MemoryStore` and the tracing subscriber are the real ones.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use skill_core::{
    Agent, AgentBuilder, BoxError, Error, ExposeSecret, InitReport, MAX_TOOL_NAME_LEN, MemorySkill, MemoryStore,
    ResourceCatalog, SecretString, Secrets, Skill, SkillFailure, SkillHandle, SourceKind, Tool, ToolCall, ToolContext,
    ToolError, ToolFilter, ToolHook, ToolOutput, ToolSource,
};

mod arguments;
mod capability;
mod closing;
mod hooks;
mod layers;
mod loading;
mod names;
mod secrets;
mod trust;

// ---------------------------------------------------------------------------------------
// Test skills.

/// What a [`TestTool`] does when called.
#[derive(Debug, Clone, Copy)]
enum Action {
    /// Succeeds with its context and arguments as structured content.
    Echo,
    /// Fails with this message.
    Fail(&'static str),
    /// Sleeps, then echoes, so that a hook has a duration to measure.
    Sleep(Duration),
    /// Emits an `info` event with this message, then echoes.
    Log(&'static str),
}

/// A tool whose schema and behaviour each test chooses.
#[derive(Debug, Clone)]
struct TestTool {
    name: String,
    schema: Value,
    action: Action,
}

#[async_trait]
impl Tool for TestTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a tool of the agent tests"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        match self.action {
            Action::Echo => {}
            Action::Fail(message) => return Err(ToolError::failed(message)),
            Action::Sleep(duration) => tokio::time::sleep(duration).await,
            Action::Log(message) => tracing::info!("{message}"),
        }
        let echo = json!({"name": context.name, "source": context.source, "arguments": arguments});
        Ok(ToolOutput::text(context.name.clone()).with_structured(echo))
    }
}

/// How a [`TestSkill`]'s `init` ends.
#[derive(Debug, Clone, Copy)]
enum Init {
    Succeed,
    Fail,
    Panic,
}

/// An error with a cause, to check that reasons show the whole chain.
#[derive(Debug, thiserror::Error)]
#[error("cannot reach the server")]
struct Unreachable(#[source] io::Error);

fn unreachable_error() -> BoxError {
    Box::new(Unreachable(io::Error::new(io::ErrorKind::ConnectionRefused, "connection refused")))
}

/// A skill with the tools, source kind, `init` and `close` outcome a test asks for; it
/// counts its `close` calls in a counter the test keeps.
#[derive(Debug)]
struct TestSkill {
    name: String,
    kind: SourceKind,
    tools: Vec<TestTool>,
    init: Init,
    fails_to_close: bool,
    n_closes: Arc<AtomicUsize>,
}

impl TestSkill {
    fn new(name: &str) -> Self {
        Self {
            name: name.to_owned(),
            kind: SourceKind::default(),
            tools: Vec::new(),
            init: Init::Succeed,
            fails_to_close: false,
            n_closes: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// Adds a tool that accepts any object.
    fn tool(self, name: &str, action: Action) -> Self {
        self.tool_with_schema(name, json!({"type": "object"}), action)
    }

    fn tool_with_schema(mut self, name: &str, schema: Value, action: Action) -> Self {
        self.tools.push(TestTool { name: name.to_owned(), schema, action });
        self
    }

    fn kind(mut self, kind: SourceKind) -> Self {
        self.kind = kind;
        self
    }

    fn init(mut self, init: Init) -> Self {
        self.init = init;
        self
    }

    fn fails_to_close(mut self) -> Self {
        self.fails_to_close = true;
        self
    }

    /// The counter of this skill's `close` calls, which outlives the skill.
    fn n_closes(&self) -> Arc<AtomicUsize> {
        Arc::clone(&self.n_closes)
    }
}

#[async_trait]
impl Skill for TestSkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "a skill of the agent tests"
    }

    fn source_type(&self) -> SourceKind {
        self.kind
    }

    async fn init(&mut self) -> Result<(), BoxError> {
        match self.init {
            Init::Succeed => Ok(()),
            Init::Fail => Err(unreachable_error()),
            Init::Panic => panic!("the test skill's init panics on purpose"),
        }
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools.iter().map(|tool| Arc::new(tool.clone()) as Arc<dyn Tool>).collect()
    }

    async fn close(&mut self) -> Result<(), BoxError> {
        self.n_closes.fetch_add(1, Ordering::SeqCst);
        if self.fails_to_close { Err(unreachable_error()) } else { Ok(()) }
    }
}

/// Builds an agent from `builder` with `skills` and loads them.
async fn load(builder: AgentBuilder, skills: Vec<TestSkill>) -> (Agent, InitReport) {
    let agent = skills.into_iter().fold(builder, AgentBuilder::with_compiled_skill).build();
    let report = agent.init_compiled_skills().await;
    (agent, report)
}

fn tool_names(agent: &Agent) -> Vec<String> {
    agent.tools().iter().map(|tool| tool.name().to_owned()).collect()
}

fn failure(skill: &str, reason: &str) -> SkillFailure {
    SkillFailure { skill: skill.to_owned(), reason: reason.to_owned() }
}

/// Skipped skills sorted by name, so that checks do not depend on the order in which
/// concurrent `init`s finished.
fn sorted(mut failures: Vec<SkillFailure>) -> Vec<SkillFailure> {
    failures.sort_by(|a, b| a.skill.cmp(&b.skill));
    failures
}

// The tests share plain collections with hooks and writers; a panic in one assertion
// must not hide the data from the next, so a poisoned lock is used as it is.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
