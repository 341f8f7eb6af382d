//! Closing and sources.

use super::*;

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
