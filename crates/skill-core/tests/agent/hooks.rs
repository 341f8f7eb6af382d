//! Hooks and tracing.

use super::*;

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
async fn hooks_see_each_call_of_a_tool_before_and_after_in_order() {
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
    // A call refused by the schema passes the hooks on its way in, as every call goes
    // through the path, and is refused innermost; an unknown tool, of no source, does not
    // reach them.
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
            r#"first before openapi:clock/wait {"extra":1}"#.to_owned(),
            r#"second before openapi:clock/wait {"extra":1}"#.to_owned(),
            r#"first after clock__wait openapi:clock/wait {"extra":1} err invalid arguments for `clock__wait`: arguments: False schema does not allow 1"#.to_owned(),
            r#"second after clock__wait openapi:clock/wait {"extra":1} err invalid arguments for `clock__wait`: arguments: False schema does not allow 1"#.to_owned(),
        ]
    );
    // The duration covers the tool's own run, which sleeps for at least `pause`.
    let durations = lock(&first.durations).clone();
    assert_eq!(durations.len(), 3);
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
