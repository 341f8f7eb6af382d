//! The agent capability.

use super::*;

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

#[tokio::test]
async fn the_tool_filter_holds_for_tools_a_skill_registers_later() {
    let slot = Arc::new(Mutex::new(None));
    let filter: ToolFilter = serde_json::from_value(json!({"exclude": ["self__ping"]})).unwrap();
    let agent =
        Agent::builder().tool_filter(filter).with_compiled_skill(HandleSkill { handle: Arc::clone(&slot) }).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["self"]);
    let handle = lock(&slot).clone().expect("the agent hands out the handle before init");
    handle.replace_tools(vec![echo_tool("ping"), echo_tool("pong")]).unwrap();
    assert_eq!(tool_names(&agent), ["self__pong"]);
}
