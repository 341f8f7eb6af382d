use std::time::UNIX_EPOCH;

use serde_json::json;
use skill_core::{Agent, MemorySkill, SecretString};

use super::*;

fn layer(path: &Path, arguments: AuditArguments, on_error: AuditOnError, secrets: &[(String, Secrets)]) -> AuditLayer {
    AuditLayer {
        log: AuditLog::shared(path, DEFAULT_MAX_BYTES, DEFAULT_KEEP).unwrap(),
        arguments,
        on_error,
        secrets: SecretMatcher::new(secrets.iter().map(|(skill, secrets)| (skill.as_str(), secrets))),
    }
}

async fn memory_agent(layer: AuditLayer) -> Agent {
    let agent = Agent::builder().layer(Arc::new(layer)).with_compiled_skill(MemorySkill::new()).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["memory"]);
    agent
}

fn lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|line| serde_json::from_str(line).unwrap_or_else(|error| panic!("{error}: {line}"))).collect()
}

#[test]
fn times_are_rfc3339_utc_to_the_millisecond() {
    let at = |millis: u64| rfc3339_millis(UNIX_EPOCH + Duration::from_millis(millis));
    assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
    assert_eq!(at(951_782_400_007), "2000-02-29T00:00:00.007Z");
    assert_eq!(at(1_796_142_245_123), "2026-12-01T16:24:05.123Z");
}

#[tokio::test]
async fn a_call_gives_one_line_with_every_field() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("audit.jsonl");
    let agent = memory_agent(layer(&path, AuditArguments::Digest, AuditOnError::Refuse, &[])).await;
    let arguments = json!({"key": "city", "value": "Lyon"});
    agent.call_tool("memory__remember", arguments.clone()).await.unwrap();
    agent.call_tool("memory__recall", json!({"key": "nowhere"})).await.unwrap();
    let lines = lines(&path);
    assert_eq!(lines.len(), 2);
    let line = lines[0].as_object().unwrap();
    let fields: Vec<&str> = line.keys().map(String::as_str).collect();
    assert_eq!(
        fields,
        [
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
            "trace_id"
        ]
    );
    assert_eq!(
        (&line["client"], &line["agent"], &line["kind"], &line["item"], &line["skill"], &line["source"]),
        (
            &json!("cli"),
            &json!("default"),
            &json!("tool"),
            &json!("memory__remember"),
            &json!("memory"),
            &json!("skill")
        )
    );
    assert_eq!(line["arguments"], json!(redact::digest(&arguments)));
    assert_eq!((&line["outcome"], &line["error_kind"]), (&json!("ok"), &Value::Null));
    assert!(line["duration_ms"].as_f64().unwrap() >= 0.0);
    // Nothing remembered under the key: the tool's result is an error.
    assert_eq!((&lines[1]["outcome"], &lines[1]["error_kind"]), (&json!("error"), &json!("tool_error")));
    // A line is written as an AuditRecord is, to the byte.
    for text in std::fs::read_to_string(&path).unwrap().lines() {
        let record: AuditRecord = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&record).unwrap(), text);
    }
    agent.close().await;
}

#[tokio::test]
async fn redacted_arguments_show_no_secret_value() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("audit.jsonl");
    let mut secrets = Secrets::new();
    secrets.insert("TOKEN", SecretString::from("tok-0123456789"));
    let secrets = [("api".to_owned(), secrets)];
    let agent = memory_agent(layer(&path, AuditArguments::Redacted, AuditOnError::Refuse, &secrets)).await;
    agent.call_tool("memory__remember", json!({"key": "password", "value": "tok-0123456789"})).await.unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(!text.contains("tok-0123456789"), "{text}");
    assert_eq!(lines(&path)[0]["arguments"], json!({"key": "password", "value": "REDACTED"}));
    agent.close().await;
}

#[test]
fn concurrent_lines_are_whole_and_none_is_lost() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("audit.jsonl");
    let log = AuditLog::shared(&path, DEFAULT_MAX_BYTES, DEFAULT_KEEP).unwrap();
    std::thread::scope(|scope| {
        for thread in 0..8 {
            let log = &log;
            scope.spawn(move || {
                for n in 0..125 {
                    let padding = "x".repeat(n * 37 % 4000);
                    log.append(json!({"thread": thread, "n": n, "padding": padding}).to_string().into_bytes()).unwrap();
                }
            });
        }
    });
    let lines = lines(&path);
    assert_eq!(lines.len(), 1000);
    let mut seen: Vec<(u64, u64)> =
        lines.iter().map(|line| (line["thread"].as_u64().unwrap(), line["n"].as_u64().unwrap())).collect();
    seen.sort_unstable();
    seen.dedup();
    assert_eq!(seen.len(), 1000);
}

#[test]
fn files_rotate_by_size_and_the_latest_lines_are_read_across_them() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("audit.jsonl");
    let log = AuditLog::shared(&path, 4000, 2).unwrap();
    let record = |n: usize| AuditRecord {
        time: rfc3339_millis(UNIX_EPOCH),
        client: if n.is_multiple_of(2) { "alice" } else { "bob" }.to_owned(),
        agent: "default".to_owned(),
        identity: None,
        kind: "tool".to_owned(),
        item: format!("t{n}"),
        skill: "s".to_owned(),
        source: None,
        arguments: None,
        outcome: "ok".to_owned(),
        error_kind: None,
        layer: None,
        reason: None,
        duration_ms: 1.0,
        trace_id: None,
    };
    for n in 0..60 {
        log.append(serde_json::to_vec(&record(n)).unwrap()).unwrap();
    }
    for file in [&path, &rotated(&path, 1), &rotated(&path, 2)] {
        assert!(std::fs::metadata(file).unwrap().len() <= 4000, "{}", file.display());
    }
    assert!(!rotated(&path, 3).exists(), "two rotated files are kept");

    let items = |limit: usize, filter: &AuditFilter| -> Vec<String> {
        read_recent(&path, limit, filter).unwrap().into_iter().map(|record| record.item).collect()
    };
    assert_eq!(items(3, &AuditFilter::default()), ["t59", "t58", "t57"]);
    let bob = AuditFilter { client: Some("bob".to_owned()), ..AuditFilter::default() };
    let in_current_file = std::fs::read_to_string(&path).unwrap().matches("\"bob\"").count();
    let latest_of_bob = items(in_current_file + 2, &bob);
    let expected: Vec<String> = (0..in_current_file + 2).map(|k| format!("t{}", 59 - 2 * k)).collect();
    assert_eq!(latest_of_bob, expected, "read on into the rotated file");
    let one = AuditFilter { item: Some("t58".to_owned()), outcome: Some("ok".to_owned()), ..AuditFilter::default() };
    assert_eq!(items(5, &one), ["t58"]);
    assert_eq!(read_recent(&folder.path().join("none.jsonl"), 5, &AuditFilter::default()).unwrap(), []);
    // Briefs go back as far as asked, across the files too.
    let mut times = 0;
    scan_recent(&path, |brief| {
        assert_eq!(&*brief.outcome, "ok");
        times += 1;
        times < 40
    })
    .unwrap();
    assert_eq!(times, 40);
}

#[tokio::test]
async fn an_audit_that_cannot_be_written_fails_closed_unless_told_otherwise() {
    let full = Path::new("/dev/full");
    let agent = memory_agent(layer(full, AuditArguments::Digest, AuditOnError::Refuse, &[])).await;
    let refused = agent.call_tool("memory__remember", json!({"key": "k", "value": "v"})).await.unwrap_err();
    let ToolError::Refused { layer: refusing, message } = &refused else { panic!("{refused:?}") };
    assert_eq!(*refusing, "audit");
    assert!(message.starts_with("the audit /dev/full cannot be written: "), "{message}");
    assert!(message.ends_with("; the call ran, but its result is withheld"), "{message}");
    agent.close().await;

    let agent = memory_agent(layer(full, AuditArguments::Digest, AuditOnError::Allow, &[])).await;
    agent.call_tool("memory__remember", json!({"key": "k", "value": "v"})).await.unwrap();
    agent.close().await;
}

#[test]
fn a_file_that_cannot_be_opened_is_named_at_start() {
    let folder = tempfile::tempdir().unwrap();
    let blocker = folder.path().join("file");
    std::fs::write(&blocker, "").unwrap();
    let path = blocker.join("audit.jsonl");
    let text = format!("observability: {{audit: {{path: {}}}}}\n", path.display());
    let config = crate::Config::parse(&folder.path().join("config.yaml"), &text).unwrap().for_agent(None).unwrap();
    let home = Home::new(folder.path());
    let error = AuditLayer::from_config(&config, &home, &[]).err().unwrap().to_string();
    assert!(error.starts_with(&format!("observability.audit: cannot open {}: ", path.display())), "{error}");
}
