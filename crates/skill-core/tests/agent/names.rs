//! Names.

use super::*;

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
        Err(ToolError::NotFound { name: not_found, suggestions, .. }) => {
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
