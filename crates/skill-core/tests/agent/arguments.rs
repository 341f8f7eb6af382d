//! Arguments.

use super::*;

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
