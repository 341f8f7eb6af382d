//! Secrets and storage are per agent.

use super::*;

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

/// The secret egress guard: the probe's token, carried to the memory skill (whole or
/// base64-encoded), is refused naming the secret, never showing it; the probe itself may
/// be given it; with the guard off, the call goes through.
#[tokio::test]
async fn a_secret_carried_to_another_skill_is_refused() {
    const VALUE: &str = "probe-token-4e1f9a";
    let mut secrets = Secrets::new();
    let reference: skill_core::SecretRef = "env:PROBE_TOKEN".parse().unwrap();
    secrets.insert_resolved(TOKEN, &reference, SecretString::from(VALUE));
    let agent = |guard: bool| {
        Agent::builder()
            .skill_secrets("probe", secrets.clone())
            .secret_guard(guard)
            .with_compiled_skill(ProbeSkill::default())
            .with_compiled_skill(MemorySkill::new())
            .build()
    };
    let guarded = agent(true);
    assert_eq!(guarded.init_compiled_skills().await.loaded, ["probe", "memory"]);
    // "probe-token-4e1f9a" in base64, inside a longer text.
    for value in [VALUE.to_owned(), format!("note: {VALUE}"), "see cHJvYmUtdG9rZW4tNGUxZjlh".to_owned()] {
        let refused = guarded.call_tool("memory__remember", json!({"key": "k", "value": value})).await.unwrap_err();
        let ToolError::Refused { layer, message } = &refused else { panic!("{refused:?}") };
        assert_eq!(*layer, "secret_guard");
        assert_eq!(
            message,
            "the arguments hold the value of secret `TOKEN` of skill `probe` (env:PROBE_TOKEN), which \
             `memory__remember` (skill `memory`) may not be given"
        );
        assert!(!format!("{refused:?}").contains(VALUE));
    }
    let recalled = guarded.call_tool("memory__recall", json!({"key": "k"})).await.unwrap();
    assert!(recalled.is_error, "nothing was remembered: {recalled:?}");
    let probed = guarded.call_tool("probe__check", json!({"expected": VALUE})).await.unwrap();
    assert_eq!(probed.structured_content, Some(json!({"matches": true})), "its own skill may be given it");

    let unguarded = agent(false);
    assert_eq!(unguarded.init_compiled_skills().await.loaded, ["probe", "memory"]);
    assert!(unguarded.call_tool("memory__remember", json!({"key": "k", "value": VALUE})).await.is_ok());
}
