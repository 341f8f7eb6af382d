//! Behaviour of the `Agent` host through its public API: per-agent secrets and storage,
//! how skills that cannot load are skipped, the agent capability (a skill's handle, which
//! changes only that skill's items, and nothing once the agent is closed), agent-level
//! tool names, argument validation, hooks, tracing spans, `close`, and tool sources.
//!
//! The only stand-ins are the small test skills below; the agent, `MemorySkill`,
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
    ToolError, ToolHook, ToolOutput, ToolSource,
};

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

// ---------------------------------------------------------------------------------------
// Secrets and storage are per agent.

const TOKEN: &str = "TOKEN";

/// Requires the secret `TOKEN`; its tool `check` says whether the value it received
/// equals the `expected` argument, without ever showing the value.
#[derive(Debug, Default)]
struct ProbeSkill {
    secrets: Secrets,
}

#[async_trait]
impl Skill for ProbeSkill {
    fn name(&self) -> &str {
        "probe"
    }

    fn description(&self) -> &str {
        "compares its secret with a guess"
    }

    fn set_secrets(&mut self, secrets: Secrets) {
        self.secrets = secrets;
    }

    fn required_secrets(&self) -> Vec<String> {
        vec![TOKEN.to_owned()]
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let schema = json!({
            "type": "object",
            "properties": {"expected": {"type": "string"}},
            "required": ["expected"],
            "additionalProperties": false
        });
        vec![Arc::new(ProbeTool { secrets: self.secrets.clone(), schema })]
    }
}

#[derive(Debug)]
struct ProbeTool {
    secrets: Secrets,
    schema: Value,
}

#[async_trait]
impl Tool for ProbeTool {
    fn name(&self) -> &str {
        "check"
    }

    fn description(&self) -> &str {
        "says whether the secret equals `expected`"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, _context: &ToolContext, arguments: Value) -> Result<ToolOutput, ToolError> {
        let expected = arguments["expected"].as_str().unwrap_or_default();
        let matches = self.secrets.get(TOKEN).is_some_and(|value| value.expose_secret() == expected);
        Ok(ToolOutput::text(if matches { "matches" } else { "differs" }).with_structured(json!({"matches": matches})))
    }
}

fn token_secrets(value: &str) -> Secrets {
    [(TOKEN.to_owned(), SecretString::from(value))].into_iter().collect()
}

fn probe_agent(builder: AgentBuilder) -> Agent {
    builder.with_compiled_skill(ProbeSkill::default()).build()
}

#[tokio::test]
async fn each_agent_gives_a_skill_only_its_own_secrets() {
    let alice = probe_agent(Agent::builder().name("alice").skill_secrets("probe", token_secrets("alice-token")));
    let bob = probe_agent(Agent::builder().name("bob").skill_secrets("probe", token_secrets("bob-token")));
    for agent in [&alice, &bob] {
        assert_eq!(agent.init_compiled_skills().await.loaded, ["probe"], "{}", agent.name());
    }

    let cases = [
        (&alice, "alice-token", "matches"),
        (&alice, "bob-token", "differs"),
        (&bob, "bob-token", "matches"),
        (&bob, "alice-token", "differs"),
    ];
    for (agent, expected, verdict) in cases {
        let output = agent.call_tool("probe__check", json!({"expected": expected})).await.map_err(|e| e.to_string());
        assert_eq!(output, Ok(ToolOutput::text(verdict).with_structured(json!({"matches": verdict == "matches"}))));
    }

    // The agent's `Debug` lists which secrets it holds, never their values.
    for (agent, value) in [(&alice, "alice-token"), (&bob, "bob-token")] {
        let shown = format!("{agent:?}");
        assert!(shown.contains(TOKEN) && !shown.contains(value), "{shown}");
    }
}

#[tokio::test]
async fn a_skill_without_its_required_secret_is_skipped() {
    // Secrets belong to one skill of one agent, and an empty value is no value.
    let builders = [
        ("no secrets at all", Agent::builder()),
        ("the secret given to another skill", Agent::builder().skill_secrets("other", token_secrets("t"))),
        ("an empty value", Agent::builder().skill_secrets("probe", token_secrets(""))),
    ];
    for (case, builder) in builders {
        let agent = probe_agent(builder);
        let report = agent.init_compiled_skills().await;
        let expected = [failure("probe", "missing secret TOKEN")];
        assert_eq!(report.loaded, Vec::<String>::new(), "{case}");
        assert_eq!(report.skipped, expected, "{case}");
        assert_eq!(agent.skipped(), expected, "{case}");
        let error = agent.call_tool("probe__check", json!({"expected": ""})).await.map_err(|e| e.to_string());
        assert_eq!(error, Err("unknown tool `probe__check`".to_owned()), "{case}");
    }
}

async fn memory_agent(builder: AgentBuilder) -> Agent {
    let agent = builder.with_compiled_skill(MemorySkill::new()).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["memory"]);
    agent
}

#[tokio::test]
async fn agents_share_memory_only_with_the_same_store_and_name() {
    let store = Arc::new(MemoryStore::new());
    let with_store = |name: &str| Agent::builder().name(name).storage(Arc::clone(&store) as _);
    let cases = [
        ("two agents with their own stores", Agent::builder(), Agent::builder(), false),
        ("one store, different names", with_store("alice"), with_store("bob"), false),
        ("one store, the same name", with_store("alice"), with_store("alice"), true),
    ];
    for (n_case, (case, first, second, shared)) in cases.into_iter().enumerate() {
        let (first, second) = (memory_agent(first).await, memory_agent(second).await);
        // Each case uses its own key, since the cases share one store.
        let key = format!("city.{n_case}");
        let remembered = first.call_tool("memory__remember", json!({"key": key, "value": "Lyon"})).await;
        assert!(remembered.is_ok(), "{case}: {remembered:?}");

        let recalled = second.call_tool("memory__recall", json!({"key": key})).await.map_err(|e| e.to_string());
        let expected = if shared {
            ToolOutput::text("Lyon").with_structured(json!({"key": key, "value": "Lyon"}))
        } else {
            ToolOutput::error(format!("nothing is remembered under `{key}`"))
        };
        assert_eq!(recalled, Ok(expected), "{case}");
    }
}

// ---------------------------------------------------------------------------------------
// Skills that cannot load.

#[tokio::test]
async fn failed_and_panicking_inits_skip_only_their_skill() {
    let failing = TestSkill::new("failing").tool("ping", Action::Echo).init(Init::Fail);
    let n_failing_closes = failing.n_closes();
    let skills = vec![
        TestSkill::new("first").tool("ping", Action::Echo),
        failing,
        // The panic's message shows in the test output; the agent reports it as a skip.
        TestSkill::new("panicking").tool("ping", Action::Echo).init(Init::Panic),
        TestSkill::new("last").tool("ping", Action::Echo),
    ];
    let (agent, report) = load(Agent::builder(), skills).await;

    let expected = [
        failure("failing", "init failed: cannot reach the server: connection refused"),
        failure("panicking", "init panicked"),
    ];
    assert_eq!(report.loaded, ["first", "last"]);
    assert_eq!(sorted(report.skipped), expected);
    assert_eq!(sorted(agent.skipped()), expected);
    assert_eq!(tool_names(&agent), ["first__ping", "last__ping"]);
    // A skill whose init failed may have started something half-way, so it is closed.
    assert_eq!(n_failing_closes.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_taken_skill_name_skips_the_later_skill() {
    let skills =
        vec![TestSkill::new("dup").tool("first", Action::Echo), TestSkill::new("dup").tool("second", Action::Echo)];
    let (agent, report) = load(Agent::builder(), skills).await;
    let taken = failure("dup", "another skill named `dup` is already loaded");
    assert_eq!(report.loaded, ["dup"]);
    assert_eq!(report.skipped, std::slice::from_ref(&taken));

    // A skill added after the first round meets the already loaded one.
    agent.register(Box::new(TestSkill::new("dup").tool("third", Action::Echo)));
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.loaded, Vec::<String>::new());
    assert_eq!(report.skipped, std::slice::from_ref(&taken));
    assert_eq!(agent.skipped(), [taken.clone(), taken]);
    assert_eq!(tool_names(&agent), ["dup__first"]);
}

#[tokio::test]
async fn a_tool_name_collision_skips_the_whole_later_skill() {
    let check = async |skills: Vec<TestSkill>, tools: &[&str], skipped: &[SkillFailure]| {
        let (agent, report) = load(Agent::builder(), skills).await;
        assert_eq!(report.skipped, skipped);
        assert_eq!(tool_names(&agent), tools);
    };
    // `a` + `b__c` and `a__b` + `c` both make `a__b__c`; none of `a__b`'s tools register.
    check(
        vec![
            TestSkill::new("a").tool("b__c", Action::Echo),
            TestSkill::new("a__b").tool("d", Action::Echo).tool("c", Action::Echo),
        ],
        &["a__b__c"],
        &[failure("a__b", "tool name `a__b__c` of skill:a__b/c collides with skill:a/b__c")],
    )
    .await;
    // Names that differ only in characters a model API refuses collide once sanitized.
    check(
        vec![TestSkill::new("x").tool("get.item", Action::Echo).tool("get item", Action::Echo)],
        &[],
        &[failure("x", "tool name `x__get_item` of skill:x/get item collides with skill:x/get.item")],
    )
    .await;
    // A skill that lists one tool twice collides with itself.
    check(
        vec![TestSkill::new("twice").tool("t", Action::Echo).tool("t", Action::Echo)],
        &[],
        &[failure("twice", "tool name `twice__t` of skill:twice/t collides with skill:twice/t")],
    )
    .await;
}

#[tokio::test]
async fn an_invalid_input_schema_costs_only_its_tool() {
    let skill = TestSkill::new("schemas")
        .tool("good", Action::Echo)
        .tool_with_schema("bad", json!(12), Action::Echo)
        .tool_with_schema("local", json!({"$ref": "#/$defs/missing"}), Action::Echo);
    let (agent, report) = load(Agent::builder(), vec![skill]).await;
    assert_eq!(report.loaded, ["schemas"]);
    assert_eq!(tool_names(&agent), ["schemas__good"]);
    let skipped = agent.skipped_tools();
    let reasons: Vec<(&str, &str)> =
        skipped.iter().map(|failure| (failure.tool.as_str(), failure.reason.as_str())).collect();
    assert_eq!(reasons.len(), 2, "{skipped:?}");
    assert!(skipped.iter().all(|failure| failure.skill == "schemas"));
    assert_eq!(reasons[0].0, "bad");
    assert!(reasons[0].1.starts_with("its input schema is not usable: "), "{}", reasons[0].1);
    assert_eq!(reasons[1].0, "local");
    // The good tool is callable.
    let output = agent.call_tool("schemas__good", json!({})).await.unwrap();
    assert!(!output.is_error, "{output:?}");
    // Closed, the agent lists no skipped tool either.
    agent.close().await;
    assert_eq!(agent.skipped_tools(), []);
}

#[tokio::test]
async fn a_keyword_the_validator_cannot_use_costs_only_itself() {
    // A Java character class, a media type written as `type`, an enum of strings for an
    // integer and a default of the wrong type: each goes; the rest is checked.
    let schema = json!({
        "type": "object",
        "properties": {
            "colour": {"type": "string", "pattern": "^\\p{XDigit}{6}$", "maxLength": 6},
            "file": {"type": "application/json"},
            "size": {"type": "integer", "enum": ["1", "2"], "default": "1"}
        },
        "required": ["colour"]
    });
    let skill = TestSkill::new("paint").tool_with_schema("mix", schema, Action::Echo);
    let (agent, report) = load(Agent::builder(), vec![skill]).await;
    assert_eq!(report.loaded, ["paint"]);
    assert_eq!(agent.skipped_tools(), []);
    let left_out: Vec<(String, String, String)> = agent
        .left_out_keywords()
        .into_iter()
        .map(|part| (format!("{}/{}", part.skill, part.tool), part.location, part.keyword))
        .collect();
    let expect = |location: &str, keyword: &str| ("paint/mix".to_owned(), location.to_owned(), keyword.to_owned());
    assert_eq!(
        left_out,
        [
            expect("/properties/colour", "pattern"),
            expect("/properties/file", "type"),
            expect("/properties/size", "enum"),
            expect("/properties/size", "default"),
        ]
    );
    let tool = &agent.tools()[0];
    assert_eq!(
        tool.description(),
        "a tool of the agent tests\n\nNot checked (left out of the input schema): pattern at /properties/colour; \
         type at /properties/file; enum at /properties/size."
    );
    assert_eq!(
        tool.input_schema(),
        &json!({
            "type": "object",
            "properties": {"colour": {"type": "string", "maxLength": 6}, "file": {}, "size": {"type": "integer"}},
            "required": ["colour"]
        })
    );
    // What is left is checked; what went is not.
    let output = agent.call_tool("paint__mix", json!({"colour": "C0FFEE", "size": 3})).await.unwrap();
    assert!(!output.is_error, "{output:?}");
    let error = agent.call_tool("paint__mix", json!({"colour": "too long colour"})).await.unwrap_err();
    assert!(error.to_string().contains("/colour: \"too long colour\" is longer than 6 characters"), "{error}");
    agent.close().await;
    assert_eq!(agent.left_out_keywords(), []);
}

#[tokio::test]
async fn a_ref_outside_the_schema_is_never_fetched_and_goes_unchecked() {
    // A server that sends a `$ref` to a URL (the MCP conformance scenario
    // `json-schema-ref-no-deref`): nothing listens on port 9, and nothing is asked.
    let schema = json!({
        "type": "object",
        "properties": {
            "remote": {"$ref": "http://127.0.0.1:9/schemas/thing.json"},
            "count": {"type": "integer"}
        },
        "required": ["count"]
    });
    let skill = TestSkill::new("refs").tool_with_schema("get", schema.clone(), Action::Echo);
    let (agent, report) = load(Agent::builder(), vec![skill]).await;
    assert_eq!(report.loaded, ["refs"]);
    assert_eq!(agent.skipped_tools(), []);
    // Listed as the server sent it.
    assert_eq!(agent.tools()[0].input_schema(), &schema);
    // The rest of the schema is checked; the remote part accepts anything.
    agent.call_tool("refs__get", json!({"count": 1, "remote": {"any": "thing"}})).await.unwrap();
    let refused = agent.call_tool("refs__get", json!({"count": "one"})).await.unwrap_err();
    assert!(matches!(refused, ToolError::InvalidArguments { .. }), "{refused:?}");
}

// ---------------------------------------------------------------------------------------
// The agent capability.

/// Keeps the `SkillHandle` it is given where the test can see it; its tool `peers` lists
/// the agent's tools through that handle.
#[derive(Debug)]
struct HandleSkill {
    handle: Arc<Mutex<Option<SkillHandle>>>,
}

#[async_trait]
impl Skill for HandleSkill {
    fn name(&self) -> &str {
        "self"
    }

    fn description(&self) -> &str {
        "looks at its own agent"
    }

    fn set_agent(&mut self, agent: SkillHandle) {
        *lock(&self.handle) = Some(agent);
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![Arc::new(PeersTool { handle: lock(&self.handle).clone(), schema: json!({"type": "object"}) })]
    }
}

#[derive(Debug)]
struct PeersTool {
    handle: Option<SkillHandle>,
    schema: Value,
}

#[async_trait]
impl Tool for PeersTool {
    fn name(&self) -> &str {
        "peers"
    }

    fn description(&self) -> &str {
        "lists the agent's tools"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    async fn call(&self, _context: &ToolContext, _arguments: Value) -> Result<ToolOutput, ToolError> {
        let agent = self.handle.as_ref().and_then(SkillHandle::agent).ok_or_else(|| ToolError::failed("no agent"))?;
        let names: Vec<String> = agent.tools().iter().map(|tool| tool.name().to_owned()).collect();
        Ok(ToolOutput::text(names.join("\n")))
    }
}

#[tokio::test]
async fn a_skill_can_reach_its_agent_but_does_not_keep_it_alive() {
    let slot = Arc::new(Mutex::new(None));
    let agent = Agent::builder()
        .name("host")
        .with_compiled_skill(HandleSkill { handle: Arc::clone(&slot) })
        .with_compiled_skill(TestSkill::new("other").tool("ping", Action::Echo))
        .build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["self", "other"]);
    let handle = lock(&slot).clone().expect("the agent hands out the handle before init");

    assert_eq!(handle.agent().map(|agent| agent.name().to_owned()), Some("host".to_owned()));
    let output = agent.call_tool("self__peers", Value::Null).await.map_err(|e| e.to_string());
    assert_eq!(output, Ok(ToolOutput::text("other__ping\nself__peers")));

    // Any clone keeps the agent alive; once the last is dropped, the skill's handle is
    // dead, which shows the skill held no strong reference back to its agent.
    let clone = agent.clone();
    drop(agent);
    assert!(handle.agent().is_some());
    drop(clone);
    assert!(handle.agent().is_none());
    assert_eq!(format!("{handle:?}"), r#"SkillHandle { skill: "self", alive: false }"#);
    let gone = handle.replace_tools(Vec::new()).map_err(|error| error.to_string());
    assert_eq!(gone, Err("the agent of skill `self` is closed, so it registers nothing".to_owned()));
}

/// A tool of the agent tests that echoes, called `name`.
fn echo_tool(name: &str) -> Arc<dyn Tool> {
    Arc::new(TestTool { name: name.to_owned(), schema: json!({"type": "object"}), action: Action::Echo })
}

fn sources(agent: &Agent) -> Vec<ToolSource> {
    agent.tools().iter().map(|tool| tool.source().clone()).collect()
}

fn source(kind: SourceKind, skill: &str, tool: &str) -> ToolSource {
    ToolSource { kind, skill: skill.to_owned(), tool: tool.to_owned() }
}

#[tokio::test]
async fn a_skill_handle_changes_only_its_own_skills_tools() {
    let slot = Arc::new(Mutex::new(None));
    let agent = Agent::builder()
        .with_compiled_skill(HandleSkill { handle: Arc::clone(&slot) })
        .with_compiled_skill(TestSkill::new("other").kind(SourceKind::Mcp).tool("ping", Action::Echo))
        .build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["self", "other"]);
    let handle = lock(&slot).clone().expect("the agent hands out the handle before init");
    assert_eq!(handle.skill(), "self");

    // The handle names no skill and no source kind: it replaces its own skill's tools,
    // which carry that skill's kind, and leaves the other skill's tool of the same name.
    handle.replace_tools(vec![echo_tool("ping")]).unwrap();
    let expected = [source(SourceKind::Mcp, "other", "ping"), source(SourceKind::Skill, "self", "ping")];
    assert_eq!(sources(&agent), expected);

    // A tool whose schema does not compile is left out, and only it.
    let bad = Arc::new(TestTool { name: "bad".to_owned(), schema: json!(12), action: Action::Echo });
    handle.replace_tools(vec![echo_tool("ping"), bad]).unwrap();
    assert_eq!(sources(&agent), expected);
    assert_eq!(agent.skipped_tools().iter().map(|failure| failure.tool.as_str()).collect::<Vec<_>>(), ["bad"]);
    // Refused tools (a collision within the skill) leave the old ones in place.
    let refused = handle.replace_tools(vec![echo_tool("twice"), echo_tool("twice")]);
    let Err(Error::ItemsRefused { skill, reason }) = &refused else { panic!("expected a refusal: {refused:?}") };
    assert_eq!(skill, "self");
    assert!(reason.contains("collides with"), "{reason}");
    assert_eq!(sources(&agent), expected);

    // The handle of a second skill called `other`, skipped since the name is taken,
    // reaches nothing, least of all the loaded `other`.
    let impostor = agent.register(Box::new(TestSkill::new("other").tool("pong", Action::Echo)));
    assert_eq!(impostor.skill(), "other");
    assert_eq!(agent.init_compiled_skills().await.loaded, Vec::<String>::new());
    for refused in [impostor.replace_tools(Vec::new()), impostor.replace_tools(vec![echo_tool("pong")])] {
        assert!(matches!(&refused, Err(Error::SkillNotLoaded { skill }) if skill == "other"), "{refused:?}");
    }
    assert_eq!(sources(&agent), expected);

    // Whoever registers a skill gets its handle, which takes items once the skill loaded.
    let later = agent.register(Box::new(TestSkill::new("later").tool("first", Action::Echo)));
    assert!(matches!(later.replace_tools(Vec::new()), Err(Error::SkillNotLoaded { .. })));
    assert_eq!(agent.init_compiled_skills().await.loaded, ["later"]);
    later.replace_tools(vec![echo_tool("second")]).unwrap();
    let names = tool_names(&agent);
    assert_eq!(names, ["later__second", "other__ping", "self__ping"]);
}

/// Registers its tools again as it closes, through its handle, as a skill that hears
/// its server's `list_changed` while the agent closes does; keeps its handle, and what
/// the handle answered, where the test can see them.
#[derive(Debug)]
struct LateSkill {
    handle: Arc<Mutex<Option<SkillHandle>>>,
    answer: Arc<Mutex<Option<Result<(), String>>>>,
}

#[async_trait]
impl Skill for LateSkill {
    fn name(&self) -> &str {
        "late"
    }

    fn description(&self) -> &str {
        "lists its tools again as it closes"
    }

    fn set_agent(&mut self, agent: SkillHandle) {
        *lock(&self.handle) = Some(agent);
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        vec![echo_tool("t")]
    }

    async fn close(&mut self) -> Result<(), BoxError> {
        let handle = lock(&self.handle).clone();
        let answer = handle.map(|handle| handle.replace_tools(self.tools()).map_err(|error| error.to_string()));
        *lock(&self.answer) = answer;
        Ok(())
    }
}

#[tokio::test]
async fn after_close_a_refresh_registers_nothing() {
    let (handle, answer) = (Arc::new(Mutex::new(None)), Arc::new(Mutex::new(None)));
    let skill = LateSkill { handle: Arc::clone(&handle), answer: Arc::clone(&answer) };
    let agent = Agent::builder().with_compiled_skill(skill).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["late"]);
    assert_eq!(tool_names(&agent), ["late__t"]);
    let mut updates = agent.resource_updates();

    assert_eq!(agent.close().await, []);
    let refused = "the agent of skill `late` is closed, so it registers nothing";
    assert_eq!(lock(&answer).clone(), Some(Err(refused.to_owned())), "the refresh during close");
    assert_eq!(tool_names(&agent), Vec::<String>::new());

    // Nor does anything the handle is given later.
    let handle = lock(&handle).clone().expect("the agent hands out the handle before init");
    let later = [
        handle.replace_tools(vec![echo_tool("t")]),
        handle.replace_prompts(Vec::new()),
        handle.replace_resources(ResourceCatalog::default()),
    ];
    for refused in later {
        assert!(matches!(&refused, Err(Error::AgentClosed { skill }) if skill == "late"), "{refused:?}");
    }
    handle.resource_updated("test://static");
    assert!(updates.try_recv().is_err(), "a closed agent announced a resource update");
    assert_eq!(tool_names(&agent), Vec::<String>::new());

    // And no skill loads into it.
    agent.register(Box::new(TestSkill::new("fresh").tool("t", Action::Echo)));
    let report = agent.init_compiled_skills().await;
    assert_eq!(report.skipped, [failure("fresh", "the agent is closed")]);
    assert_eq!(tool_names(&agent), Vec::<String>::new());
}

// ---------------------------------------------------------------------------------------
// Names.

#[tokio::test]
async fn tools_are_named_after_skill_and_tool_within_64_characters() {
    let long_tool = "list_every_repository_of_the_organization_with_pagination";
    let skills = vec![
        TestSkill::new("notes").tool("search", Action::Echo),
        TestSkill::new("github").tool(long_tool, Action::Echo),
    ];
    let (agent, _) = load(Agent::builder(), skills).await;

    let long_name = "github__list_every_repository_of_the_organization_with_-1929ae6a";
    assert_eq!(long_name.len(), MAX_TOOL_NAME_LEN);
    assert_eq!(tool_names(&agent), [long_name, "notes__search"]);

    // The full name, and the bare name since only one skill has it, both reach the tool,
    // whose context carries the agent-level name and the source's own tool name.
    for name in [long_name, long_tool] {
        let output = agent.call_tool(name, json!({})).await.map_err(|e| e.to_string());
        let echo = json!({
            "name": long_name,
            "source": {"kind": "skill", "skill": "github", "tool": long_tool},
            "arguments": {}
        });
        assert_eq!(output, Ok(ToolOutput::text(long_name).with_structured(echo)), "{name}");
    }
}

/// The full name `name` resolves to, or the suggestions of the `NotFound` error.
async fn resolve(agent: &Agent, name: &str) -> Result<String, Vec<String>> {
    match agent.call_tool(name, json!({})).await {
        Ok(output) => {
            Ok(output.structured_content.and_then(|echo| echo["name"].as_str().map(str::to_owned)).unwrap_or_default())
        }
        Err(ToolError::NotFound { name: not_found, suggestions }) => {
            assert_eq!(not_found, name);
            Err(suggestions)
        }
        Err(other) => panic!("`{name}`: expected the tool or NotFound, got {other}"),
    }
}

#[tokio::test]
async fn bare_names_resolve_when_unambiguous_and_unknown_names_get_suggestions() {
    let skills = vec![
        TestSkill::new("alpha").tool("search", Action::Echo).tool("fetch", Action::Echo),
        TestSkill::new("beta").tool("search", Action::Echo),
    ];
    let (agent, _) = load(Agent::builder(), skills).await;

    let check = async |name: &str, expected: Result<&str, &[&str]>| {
        let expected = expected.map(str::to_owned).map_err(|names| names.iter().map(|n| n.to_string()).collect());
        assert_eq!(resolve(&agent, name).await, expected, "{name}");
    };
    check("beta__search", Ok("beta__search")).await;
    check("fetch", Ok("alpha__fetch")).await;
    check("search", Err(&["alpha__search", "beta__search"])).await;
    check("alpha__serch", Err(&["alpha__search", "alpha__fetch"])).await;
    check("beta_search", Err(&["beta__search"])).await;
    check("weather", Err(&[])).await;

    let error = agent.call_tool("search", Value::Null).await.map_err(|e| e.to_string());
    assert_eq!(error, Err("unknown tool `search`; did you mean `alpha__search` or `beta__search`?".to_owned()));
}

// ---------------------------------------------------------------------------------------
// Arguments.

/// The arguments the tool received, or the problems of `InvalidArguments`.
async fn arguments_seen(agent: &Agent, name: &str, arguments: Value) -> Result<Value, Vec<String>> {
    match agent.call_tool(name, arguments).await {
        Ok(output) => Ok(output.structured_content.map(|echo| echo["arguments"].clone()).unwrap_or_default()),
        Err(ToolError::InvalidArguments { tool, problems }) => {
            assert_eq!(tool, format!("search__{name}"));
            Err(problems)
        }
        Err(other) => panic!("`{name}`: expected the tool or InvalidArguments, got {other}"),
    }
}

#[tokio::test]
async fn arguments_are_checked_against_the_schema_and_null_means_none_given() {
    let schema = |required: &[&str]| {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
                "filter": {"type": "object", "properties": {"lang": {"enum": ["en", "fr"]}}}
            },
            "required": required,
            "additionalProperties": false
        })
    };
    let skill = TestSkill::new("search").tool_with_schema("find", schema(&[]), Action::Echo).tool_with_schema(
        "lookup",
        schema(&["query"]),
        Action::Echo,
    );
    let (agent, _) = load(Agent::builder(), vec![skill]).await;

    let check = async |name: &str, arguments: Value, expected: Result<Value, &[&str]>| {
        let expected = expected.map_err(|problems| problems.iter().map(|p| p.to_string()).collect());
        assert_eq!(arguments_seen(&agent, name, arguments.clone()).await, expected, "{name} {arguments}");
    };
    check("find", Value::Null, Ok(json!({}))).await;
    check(
        "find",
        json!({"query": "rust", "filter": {"lang": "fr"}}),
        Ok(json!({"query": "rust", "filter": {"lang": "fr"}})),
    )
    .await;
    check("lookup", Value::Null, Err(&["arguments: \"query\" is a required property"])).await;
    check("find", json!({"query": 5}), Err(&["/query: 5 is not of type \"string\""])).await;
    check("find", json!({"filter": {"lang": "de"}}), Err(&["/filter/lang: \"de\" is not one of \"en\" or \"fr\""]))
        .await;
    check(
        "find",
        json!({"query": 1, "limit": 0}),
        // In the schema's order of properties.
        Err(&["/query: 1 is not of type \"string\"", "/limit: 0 is less than the minimum of 1"]),
    )
    .await;
    check(
        "find",
        json!({"extra": true}),
        Err(&["arguments: Additional properties are not allowed ('extra' was unexpected)"]),
    )
    .await;
    check("find", json!(["query"]), Err(&["arguments: [\"query\"] is not of type \"object\""])).await;
    // An optional argument that cannot be null is left out when it is; a required one
    // is not, and a wrong value beside it still fails.
    check("find", json!({"query": "rust", "limit": null}), Ok(json!({"query": "rust"}))).await;
    check("lookup", json!({"query": null}), Err(&["/query: null is not of type \"string\""])).await;
    check(
        "find",
        json!({"query": 5, "limit": null}),
        Err(&["/query: 5 is not of type \"string\"", "/limit: null is not of type \"integer\""]),
    )
    .await;
}

// ---------------------------------------------------------------------------------------
// Hooks and tracing.

/// Writes what it sees to a log shared with other hooks, under its own label, so that
/// the order of hooks shows too.
#[derive(Debug)]
struct RecordingHook {
    label: &'static str,
    log: Arc<Mutex<Vec<String>>>,
    durations: Mutex<Vec<Duration>>,
}

impl ToolHook for RecordingHook {
    fn before_call(&self, source: &ToolSource, arguments: &Value) {
        lock(&self.log).push(format!("{} before {source} {arguments}", self.label));
    }

    fn after_call(&self, call: &ToolCall<'_>) {
        let outcome = match call.outcome {
            Ok(output) => format!("ok {:?}", output.content),
            Err(error) => format!("err {error}"),
        };
        lock(&self.log)
            .push(format!("{} after {} {} {} {outcome}", self.label, call.name, call.source, call.arguments));
        lock(&self.durations).push(call.duration);
    }
}

#[tokio::test]
async fn hooks_see_each_valid_call_before_and_after_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let hook = |label| Arc::new(RecordingHook { label, log: Arc::clone(&log), durations: Mutex::new(Vec::new()) });
    let (first, second) = (hook("first"), hook("second"));
    let pause = Duration::from_millis(5);
    let skill = TestSkill::new("clock")
        .kind(SourceKind::Openapi)
        .tool_with_schema("wait", json!({"type": "object", "additionalProperties": false}), Action::Sleep(pause))
        .tool("fail", Action::Fail("boom"));
    let builder = Agent::builder().hook(Arc::clone(&first) as _).hook(Arc::clone(&second) as _);
    let (agent, _) = load(builder, vec![skill]).await;

    assert!(agent.call_tool("clock__wait", Value::Null).await.is_ok());
    assert!(agent.call_tool("fail", json!({"why": "test"})).await.is_err());
    // Neither a call refused by the schema nor an unknown tool reaches the hooks.
    assert!(agent.call_tool("clock__wait", json!({"extra": 1})).await.is_err());
    assert!(agent.call_tool("clock__nope", json!({})).await.is_err());

    let text = r#"[Text { text: "clock__wait", annotations: None, meta: None }]"#;
    assert_eq!(
        *lock(&log),
        [
            "first before openapi:clock/wait {}".to_owned(),
            "second before openapi:clock/wait {}".to_owned(),
            format!("first after clock__wait openapi:clock/wait {{}} ok {text}"),
            format!("second after clock__wait openapi:clock/wait {{}} ok {text}"),
            r#"first before openapi:clock/fail {"why":"test"}"#.to_owned(),
            r#"second before openapi:clock/fail {"why":"test"}"#.to_owned(),
            r#"first after clock__fail openapi:clock/fail {"why":"test"} err boom"#.to_owned(),
            r#"second after clock__fail openapi:clock/fail {"why":"test"} err boom"#.to_owned(),
        ]
    );
    // The duration covers the tool's own run, which sleeps for at least `pause`.
    let durations = lock(&first.durations).clone();
    assert_eq!(durations.len(), 2);
    assert!(durations[0] >= pause, "{durations:?}");
}

/// A `MakeWriter` that appends everything to one shared buffer.
#[derive(Debug, Clone, Default)]
struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl LogBuffer {
    fn text(&self) -> String {
        String::from_utf8_lossy(&lock(&self.0)).into_owned()
    }
}

impl io::Write for LogBuffer {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        lock(&self.0).extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogBuffer {
    type Writer = LogBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[tokio::test]
async fn each_call_runs_in_a_tool_call_span_carrying_its_source() {
    let buffer = LogBuffer::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(buffer.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .without_time()
        .with_level(false)
        .with_target(false)
        .finish();
    // `#[tokio::test]` runs on one thread, so a thread-local default covers the calls
    // and every task the agent spawns, without touching other tests' output.
    let _default = tracing::subscriber::set_default(subscriber);
    // Tracing caches, for the whole process, whether a callsite is wanted. While only
    // one subscriber exists, a callsite that another test's thread reaches first is
    // asked of that thread's (absent) subscriber and cached as never wanted, which
    // would hide the `tool_call` span here. A second live dispatcher makes tracing ask
    // every live subscriber instead; the rebuild below repairs what was cached before.
    let _second_dispatcher = tracing::Dispatch::new(tracing::subscriber::NoSubscriber::default());

    let skills = vec![
        TestSkill::new("remote").kind(SourceKind::Mcp).tool("emit", Action::Log("inside remote")),
        TestSkill::new("local").tool("emit", Action::Log("inside local")),
    ];
    let (agent, _) = load(Agent::builder(), skills).await;
    tracing::callsite::rebuild_interest_cache();
    for name in ["remote__emit", "local__emit"] {
        assert!(agent.call_tool(name, Value::Null).await.is_ok(), "{name}");
    }

    let text = buffer.text();
    let lines: Vec<&str> = text.lines().filter(|line| line.contains("inside ")).collect();
    assert_eq!(
        lines,
        [
            "tool_call{tool=remote__emit source.kind=mcp source.skill=remote source.tool=emit}: inside remote",
            "tool_call{tool=local__emit source.kind=skill source.skill=local source.tool=emit}: inside local",
        ],
        "{text}"
    );
}

// ---------------------------------------------------------------------------------------
// Closing and sources.

#[tokio::test]
async fn close_closes_each_skill_once_unregisters_tools_and_reports_failures() {
    let skills = vec![
        TestSkill::new("a").tool("t", Action::Echo),
        TestSkill::new("b").tool("t", Action::Echo).fails_to_close(),
        TestSkill::new("c").tool("t", Action::Echo),
    ];
    let counters: Vec<Arc<AtomicUsize>> = skills.iter().map(TestSkill::n_closes).collect();
    let (agent, report) = load(Agent::builder(), skills).await;
    assert_eq!(report.loaded, ["a", "b", "c"]);
    let n_closes = || counters.iter().map(|counter| counter.load(Ordering::SeqCst)).collect::<Vec<_>>();
    assert_eq!(n_closes(), [0, 0, 0]);

    assert_eq!(agent.close().await, [failure("b", "cannot reach the server: connection refused")]);
    assert_eq!(n_closes(), [1, 1, 1]);
    assert_eq!(tool_names(&agent), Vec::<String>::new());
    let error = agent.call_tool("a__t", json!({})).await.map_err(|e| e.to_string());
    assert_eq!(error, Err("unknown tool `a__t`".to_owned()));

    // The skills are gone after the first close, so a second one closes nothing.
    assert_eq!(agent.close().await, []);
    assert_eq!(n_closes(), [1, 1, 1]);
}

#[tokio::test]
async fn tool_sources_carry_the_skills_source_type() {
    let cases = [(SourceKind::Skill, "skill"), (SourceKind::Mcp, "mcp"), (SourceKind::Openapi, "openapi")];
    for (kind, kind_name) in cases {
        let (agent, _) =
            load(Agent::builder(), vec![TestSkill::new("origin").kind(kind).tool("echo", Action::Echo)]).await;
        let tools = agent.tools();
        let [tool] = tools.as_slice() else { panic!("expected one tool: {tools:?}") };
        assert_eq!(tool.source(), &ToolSource { kind, skill: "origin".to_owned(), tool: "echo".to_owned() });
        assert_eq!(tool.source().to_string(), format!("{kind_name}:origin/echo"));

        // The tool sees the same source in its context.
        let output = agent.call_tool("origin__echo", Value::Null).await.map_err(|e| e.to_string());
        let echo = output.map(|output| output.structured_content.map(|echo| echo["source"].clone()));
        assert_eq!(echo, Ok(Some(json!({"kind": kind_name, "skill": "origin", "tool": "echo"}))));
    }
}
