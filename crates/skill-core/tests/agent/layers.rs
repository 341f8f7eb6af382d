//! The call path: layers given to the builder see every call with its caller, may refuse
//! it, and may keep items from a caller's lists.

use skill_core::{CallContext, CallFuture, CallLayer, CallOutput, Caller, Item, Next};

use super::*;

/// Refuses the tools whose name holds `word` to the client `client`, whatever the
/// arguments, and any call whose arguments hold `"stop": true`; writes what it sees.
struct Guard {
    label: &'static str,
    client: &'static str,
    word: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl CallLayer for Guard {
    fn hides(&self, caller: &Caller, item: &Item<'_>) -> bool {
        caller.client == self.client && item.name.contains(self.word)
    }

    fn check(&self, call: &CallContext<'_>) -> Result<(), ToolError> {
        lock(&self.log).push(format!("{} {} {} {}", self.label, call.caller.client, call.item.name, call.arguments));
        if self.hides(call.caller, &call.item) || call.arguments.get("stop") == Some(&json!(true)) {
            return Err(ToolError::Refused { layer: "policy", message: format!("refused by {}", self.label) });
        }
        Ok(())
    }
}

/// Watches each call run, and notes how it ended.
struct Watch(Arc<Mutex<Vec<String>>>);

impl CallLayer for Watch {
    fn call<'a>(&'a self, call: &'a CallContext<'a>, next: Next<'a>) -> CallFuture<'a> {
        Box::pin(async move {
            let outcome = next.run().await;
            let ended = match &outcome {
                Ok(CallOutput::Tool(output)) => format!("tool ok, error {}", output.is_error),
                Ok(_) => "other ok".to_owned(),
                Err(error) => format!("err {error}"),
            };
            lock(&self.0).push(format!("watch {} {ended}", call.item.name));
            outcome
        })
    }
}

#[tokio::test]
async fn layers_see_each_call_in_order_and_the_first_refusal_ends_it() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let guard = |label, word| Arc::new(Guard { label, client: "bob", word, log: Arc::clone(&log) });
    let builder = Agent::builder()
        .layer(Arc::new(Watch(Arc::clone(&log))))
        .layer(guard("outer", "delete"))
        .layer(guard("inner", "nothing"));
    let skill = TestSkill::new("files").tool("read", Action::Echo).tool("delete", Action::Echo);
    let (agent, _) = load(builder, vec![skill]).await;
    let bob = agent.acting_for(Caller::new("bob"));

    assert!(bob.call_tool("files__read", json!({})).await.is_ok());
    let refused = bob.call_tool("files__delete", json!({})).await.unwrap_err();
    assert!(matches!(&refused, ToolError::Refused { layer: "policy", .. }), "{refused:?}");
    let stopped = agent.call_tool("files__read", json!({"stop": true})).await.unwrap_err();
    assert_eq!(stopped.to_string(), "refused by outer");
    assert_eq!(
        *lock(&log),
        [
            "outer bob files__read {}",
            "inner bob files__read {}",
            "watch files__read tool ok, error false",
            "outer bob files__delete {}",
            "watch files__delete err refused by outer",
            r#"outer cli files__read {"stop":true}"#,
            "watch files__read err refused by outer",
        ]
    );
}

#[tokio::test]
async fn an_item_a_layer_hides_is_left_out_of_that_callers_lists_only() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let builder = Agent::builder().layer(Arc::new(Guard { label: "p", client: "bob", word: "delete", log }));
    let skill = TestSkill::new("files").tool("read", Action::Echo).tool("delete", Action::Echo);
    let (agent, _) = load(builder, vec![skill]).await;
    let names = |agent: &Agent| agent.tools().iter().map(|tool| tool.name().to_owned()).collect::<Vec<_>>();

    assert_eq!(names(&agent), ["files__delete", "files__read"]);
    assert_eq!(names(&agent.acting_for(Caller::new("bob"))), ["files__read"]);
    assert_eq!(names(&agent.acting_for(Caller::new("alice"))), ["files__delete", "files__read"]);
    assert_eq!(agent.caller().client, Caller::CLI);
}

#[tokio::test]
async fn an_unknown_name_suggests_only_the_items_offered_to_the_caller() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let builder = Agent::builder().layer(Arc::new(Guard { label: "p", client: "bob", word: "delete", log }));
    let skill = TestSkill::new("files").tool("delete", Action::Echo).tool("delete_all", Action::Echo);
    let (agent, _) = load(builder, vec![skill]).await;
    let suggested = |agent: &Agent, name: &'static str| {
        let agent = agent.clone();
        async move {
            match agent.call_tool(name, json!({})).await.unwrap_err() {
                ToolError::NotFound { suggestions, .. } => suggestions,
                other => panic!("{other:?}"),
            }
        }
    };

    let bob = agent.acting_for(Caller::new("bob"));
    assert_eq!(suggested(&agent, "files__delet").await, ["files__delete", "files__delete_all"]);
    assert!(suggested(&bob, "files__delet").await.is_empty(), "a hidden tool's name is not told");
}

#[tokio::test]
async fn calls_of_unknown_items_and_with_refused_arguments_pass_the_layers_and_end_innermost() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let builder = Agent::builder().layer(Arc::new(Watch(Arc::clone(&log)))).layer(Arc::new(Guard {
        label: "p",
        client: "bob",
        word: "nothing",
        log: Arc::clone(&log),
    }));
    let skill = TestSkill::new("files").tool_with_schema(
        "read",
        json!({"type": "object", "properties": {"path": {"type": "string"}}, "additionalProperties": false}),
        Action::Echo,
    );
    let (agent, _) = load(builder, vec![skill]).await;

    let invalid = agent.call_tool("files__read", json!({"path": 1})).await.unwrap_err();
    assert!(matches!(invalid, ToolError::InvalidArguments { .. }), "{invalid:?}");
    let unknown = agent.call_tool("files__write", json!({"path": "a"})).await.unwrap_err();
    assert!(matches!(unknown, ToolError::NotFound { .. }), "{unknown:?}");
    let prompt = agent.get_prompt("files__nope", Default::default()).await.unwrap_err();
    assert!(matches!(prompt, ToolError::NotFound { .. }), "{prompt:?}");
    let read = agent.read_resource("omniagent://files/nope").await.unwrap_err();
    assert!(matches!(read, ToolError::NotFound { .. }), "{read:?}");
    // A layer may still refuse a call of an unknown item first.
    let stopped = agent.call_tool("nothing", json!({"stop": true})).await.unwrap_err();
    assert_eq!(stopped.to_string(), "refused by p");
    let log = lock(&log);
    assert_eq!(
        log[..4],
        [
            r#"p cli files__read {"path":1}"#.to_owned(),
            format!("watch files__read err {invalid}"),
            r#"p cli files__write {"path":"a"}"#.to_owned(),
            format!("watch files__write err {unknown}"),
        ]
    );
    assert_eq!(log[4..6], ["p cli files__nope {}", &format!("watch files__nope err {prompt}")]);
    assert_eq!(log[6..8], ["p cli omniagent://files/nope {}", &format!("watch omniagent://files/nope err {read}")]);
    assert_eq!(log[8..], [r#"p cli nothing {"stop":true}"#, "watch nothing err refused by p"]);
}
