//! Skills that cannot load.

use super::*;

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

#[tokio::test]
async fn the_tool_filter_leaves_tools_out_before_anything_else_looks_at_them() {
    let filter: ToolFilter = serde_json::from_value(json!({"include": ["kept__*"], "exclude": ["*__gone*"]})).unwrap();
    let kept = TestSkill::new("kept")
        .tool("one", Action::Echo)
        .tool("gone", Action::Echo)
        // Left out, its schema is never compiled, so it is no skipped tool either.
        .tool_with_schema("gone_bad", json!(12), Action::Echo);
    let other = TestSkill::new("other").tool("one", Action::Echo);
    let (agent, report) = load(Agent::builder().tool_filter(filter), vec![kept, other]).await;
    assert_eq!(report.loaded, ["kept", "other"], "a skill whose tools are all left out still loads");
    assert_eq!(tool_names(&agent), ["kept__one"]);
    assert_eq!(agent.skipped_tools(), []);
    let unknown = agent.call_tool("kept__gone", json!({})).await.unwrap_err();
    assert!(matches!(unknown, ToolError::NotFound { .. }), "{unknown:?}");
    let report = agent.tool_filter_report();
    assert_eq!((report.left_out, report.unmatched_include, report.unmatched_exclude), (3, vec![], vec![]));
}

#[tokio::test]
async fn the_tool_filter_names_its_patterns_that_match_no_tool() {
    let filter = json!({"include": ["kept__*", "kept_*", "other__one"], "exclude": ["*__gone*", "*__delete_*"]});
    let filter: ToolFilter = serde_json::from_value(filter).unwrap();
    let kept = TestSkill::new("kept").tool("one", Action::Echo).tool("gone", Action::Echo);
    let (agent, _) = load(Agent::builder().tool_filter(filter), vec![kept]).await;
    let report = agent.tool_filter_report();
    // `kept_*` matches `kept__one` too; `other__one` is of no loaded skill.
    assert_eq!(report.left_out, 1);
    assert_eq!(report.unmatched_include, ["other__one"]);
    assert_eq!(report.unmatched_exclude, ["*__delete_*"]);
    let lines: Vec<String> = report.unmatched_lines().collect();
    assert_eq!(
        lines,
        ["include pattern `other__one` matches no tool", "exclude pattern `*__delete_*` matches no tool"]
    );
    assert_eq!(Agent::builder().build().tool_filter_report(), skill_core::FilterReport::default());
}
