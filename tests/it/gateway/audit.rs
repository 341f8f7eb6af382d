//! The audit (`observability.audit`) and the secret egress guard, through the HTTP
//! gateway and the Python SDK.

use super::*;

/// The audit file's lines, each parsed (a line that is not JSON fails the test).
fn audit_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"))).collect()
}

/// The fields of every line, in order.
const FIELDS: [&str; 15] = [
    "time",
    "client",
    "agent",
    "identity",
    "kind",
    "item",
    "skill",
    "source",
    "arguments",
    "outcome",
    "error_kind",
    "layer",
    "reason",
    "duration_ms",
    "trace_id",
];

/// A thousand calls sent at once give a thousand lines: none lost, none interleaved,
/// each with every field and the digest of its own call's arguments.
#[test]
fn a_thousand_concurrent_calls_give_a_thousand_whole_audit_lines() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\n\
         mcp:\n  servers:\n    sample:\n      command: {}\n\
         observability:\n  audit: {{path: audit.jsonl}}\n",
        sample_server().display()
    ));
    let gateway = HttpGateway::start(&home, &[], &[]);
    super::thousand_concurrent_echoes(&gateway);

    // Every answer is sent after its line is written.
    let lines = audit_lines(&home.path().join("audit.jsonl"));
    assert_eq!(lines.len(), 1000);
    let mut digests = std::collections::BTreeSet::new();
    for line in &lines {
        let fields: Vec<&str> = line.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(fields, FIELDS, "{line}");
        assert_eq!(
            (&line["item"], &line["skill"], &line["source"], &line["kind"], &line["outcome"]),
            (&json!("sample__echo"), &json!("sample"), &json!("mcp"), &json!("tool"), &json!("ok")),
            "{line}"
        );
        assert!(line["time"].as_str().unwrap().ends_with('Z') && line["duration_ms"].is_f64(), "{line}");
        digests.insert(line["arguments"].as_str().unwrap().to_owned());
    }
    let expected: std::collections::BTreeSet<String> =
        (0..1000).map(|index| skill_core::redact::digest(&json!({"text": format!("call-{index}")}))).collect();
    assert_eq!(digests, expected, "one line for each call");
}

/// alice's OpenAPI bearer token, given as an argument to the memory skill (whole, or in a
/// base64 `Basic` credential), is refused naming its reference; the audit records the
/// refusal; the token is in no answer, log or audit line. bob's calls are audited as his.
#[test]
fn an_api_token_carried_to_another_skill_is_refused_and_audited_by_its_reference() {
    const TOKEN: &str = "alice-api-token-5b2e8c";
    let api = GreetApi::start();
    let home = Home::new();
    home.write("greet.json", &api.document());
    let home = home.with_config(
        "storage: {backend: memory}\n\
         openapi:\n  greet: {spec: greet.json, auth: {bearer: {token_env: GREET_TOKEN}}}\n\
         serve:\n  clients:\n    alice: {token: \"env:ALICE_TOKEN\", agent: alice}\n    bob: {token: \"env:BOB_TOKEN\", agent: bob}\n\
         agents:\n  alice: {openapi: {greet: {secrets: {GREET_TOKEN: \"env:ALICE_GREET_TOKEN\"}}}}\n  bob: {}\n\
         observability:\n  audit: {path: audit.jsonl, arguments: redacted}\n",
    );
    let env = [
        ("ALICE_TOKEN", "token-of-alice"),
        ("BOB_TOKEN", "token-of-bob"),
        ("ALICE_GREET_TOKEN", TOKEN),
        ("GREET_TOKEN", "greet-token-of-the-default"),
    ];
    let gateway = HttpGateway::start(&home, &[], &env);
    // "user:alice-api-token-5b2e8c" in base64.
    let basic = "dXNlcjphbGljZS1hcGktdG9rZW4tNWIyZThj";
    let plan = json!({"calls": [
        ["greet__greet", {"name": "Ada"}],
        ["memory__remember", {"key": "leak", "value": TOKEN}],
        ["memory__remember", {"key": "leak", "value": format!("Authorization: Basic {basic}")}],
        ["memory__recall", {"key": "leak"}],
    ]});
    let (out, client_stderr) = python_with_stderr("2026-07-28", &["http", &gateway.url(), "token-of-alice"], plan, &[]);
    let calls = &out["calls"];
    assert!(text_of(&calls[0]).contains("hello Ada"), "{}", calls[0]);
    for refused in [&calls[1], &calls[2]] {
        assert_eq!(refused["isError"], json!(true), "{refused}");
        assert_eq!(
            text_of(refused),
            "the arguments hold the value of secret `GREET_TOKEN` of skill `greet` (env:ALICE_GREET_TOKEN), \
             which `memory__remember` (skill `memory`) may not be given"
        );
    }
    assert_eq!(calls[3]["isError"], json!(true), "nothing was remembered: {}", calls[3]);
    let bob = python(
        "2026-07-28",
        &["http", &gateway.url(), "token-of-bob"],
        json!({"calls": [["memory__recall", {"key": "leak"}]]}),
        &[],
    );
    assert_eq!(bob["calls"][0]["isError"], json!(true), "{}", bob["calls"][0]);

    let audit_file = home.path().join("audit.jsonl");
    let lines = audit_lines(&audit_file);
    let of = |client: &str| lines.iter().filter(|line| line["client"] == client).collect::<Vec<_>>();
    let (alice_lines, bob_lines) = (of("alice"), of("bob"));
    assert_eq!((alice_lines.len(), bob_lines.len()), (4, 1), "{lines:?}");
    for refused in &alice_lines[1..3] {
        assert_eq!(
            (&refused["outcome"], &refused["layer"], &refused["item"], &refused["agent"]),
            (&json!("refused"), &json!("secret_guard"), &json!("memory__remember"), &json!("alice")),
            "{refused}"
        );
        assert!(refused["reason"].as_str().unwrap().contains("(env:ALICE_GREET_TOKEN)"), "{refused}");
        assert_eq!(refused["arguments"]["value"], json!("REDACTED"), "{refused}");
    }
    assert_eq!((&alice_lines[0]["outcome"], &alice_lines[0]["source"]), (&json!("ok"), &json!("openapi")));
    assert_eq!(bob_lines[0]["arguments"], json!({"key": "leak"}), "redacted arguments keep what is no secret");

    let answers = format!("{out}{bob}");
    let audit_text = std::fs::read_to_string(&audit_file).unwrap();
    let gateway_log = gateway.stderr.lock().unwrap().clone();
    for (what, text) in [
        ("answers", &answers),
        ("the client's log", &client_stderr),
        ("the gateway's log", &gateway_log),
        ("the audit", &audit_text),
    ] {
        assert!(!text.contains(TOKEN) && !text.contains(basic), "the token in {what}:\n{text}");
    }
}

/// Calls refused before any item runs are audited and counted like any other: a tool
/// that does not exist (`not_found`, under no skill), arguments the input schema refuses
/// (`invalid_arguments`), and a markdown skill's secret carried to a tool, which the guard
/// refuses and the audit redacts, though no tool of that skill could ever be given it.
#[test]
fn calls_refused_before_an_item_runs_and_a_markdown_skills_secret_are_audited() {
    const DEPLOY_TOKEN: &str = "deploy-token-9f31a7c2";
    let home = Home::new();
    home.write(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploys the site with its token.\n---\nRun `deploy.sh`.\n",
    );
    let home = home.with_config(
        "storage: {backend: memory}\n\
         skills: {config: {deploy: {secrets: {DEPLOY_TOKEN: \"env:DEPLOY_TOKEN\"}}}}\n\
         observability:\n  metrics: true\n  audit: {path: audit.jsonl, arguments: redacted}\n",
    );
    let gateway = HttpGateway::start(&home, &[], &[("DEPLOY_TOKEN", DEPLOY_TOKEN)]);
    let plan = json!({"calls": [
        ["memory__forget_everything", {}],
        ["memory__remember", {"key": 1}],
        ["memory__remember", {"key": "note", "value": format!("token {DEPLOY_TOKEN}")}],
    ]});
    let out = python("2026-07-28", &["http", &gateway.url()], plan, &[]);
    let calls = &out["calls"];
    assert!(calls[0]["error"].as_str().unwrap().contains("memory__forget_everything"), "{}", calls[0]);
    assert_eq!(calls[1]["isError"], json!(true), "{}", calls[1]);
    assert_eq!(
        text_of(&calls[2]),
        "the arguments hold the value of secret `DEPLOY_TOKEN` of skill `deploy` (env:DEPLOY_TOKEN), \
         which `memory__remember` (skill `memory`) may not be given"
    );

    let audit_file = home.path().join("audit.jsonl");
    let lines = audit_lines(&audit_file);
    assert_eq!(lines.len(), 3, "one line a call, none twice: {lines:#?}");
    let seen: Vec<_> =
        lines.iter().map(|line| (&line["item"], &line["skill"], &line["outcome"], &line["error_kind"])).collect();
    assert_eq!(
        seen,
        [
            (&json!("memory__forget_everything"), &json!(""), &json!("error"), &json!("not_found")),
            (&json!("memory__remember"), &json!("memory"), &json!("error"), &json!("invalid_arguments")),
            (&json!("memory__remember"), &json!("memory"), &json!("refused"), &json!("refused")),
        ]
    );
    assert_eq!(lines[1]["arguments"], json!({"key": 1}), "{}", lines[1]);
    assert_eq!(lines[2]["layer"], json!("secret_guard"), "{}", lines[2]);
    assert_eq!(lines[2]["arguments"]["value"], json!("REDACTED"), "{}", lines[2]);
    let audit_text = std::fs::read_to_string(&audit_file).unwrap();
    assert!(!audit_text.contains(DEPLOY_TOKEN), "{audit_text}");

    // Counted, the unknown name under no item.
    let (status, _, metrics) = super::telemetry::get(gateway.port, "/metrics");
    assert_eq!(status, 200, "{metrics}");
    for line in [
        r#"omniagent_call_errors_total{item="",kind="tool",source="",client="",error="not_found"} 1"#,
        r#"omniagent_call_errors_total{item="memory__remember",kind="tool",source="skill",client="",error="invalid_arguments"} 1"#,
    ] {
        assert!(metrics.lines().any(|found| found == line), "{line} is not in:\n{metrics}");
    }
}
