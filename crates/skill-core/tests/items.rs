//! Prompts and resources through the agent: agent-level names and URIs, skills that
//! keep their own names, routing of reads, collisions, and the change counters a server
//! watches.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::{Value, json};
use skill_core::{
    Agent, Content, Prompt, PromptArgument, PromptInfo, PromptOutput, ResourceCatalog, ResourceContents, ResourceInfo,
    ResourceOutput, ResourceReader, ResourceTemplateInfo, Skill, Tool, ToolContext, ToolError, ToolOutput,
};

/// A prompt that answers with its arguments.
struct EchoPrompt {
    info: PromptInfo,
}

#[async_trait]
impl Prompt for EchoPrompt {
    fn info(&self) -> &PromptInfo {
        &self.info
    }

    async fn get(&self, arguments: BTreeMap<String, String>) -> Result<PromptOutput, ToolError> {
        let mut output = PromptOutput::user_text(None, format!("{} {arguments:?}", self.info.name));
        let mut linking = output.messages[0].clone();
        linking.content = link("test://item/9");
        output.messages.push(linking);
        Ok(output)
    }
}

/// A link to the resource at `uri`.
fn link(uri: &str) -> Content {
    serde_json::from_value(json!({"type": "resource_link", "uri": uri, "name": uri})).unwrap()
}

/// The tool `links`: a link to each of `test://static`, `test://item/3` and
/// `https://example.com/x`, and an embedded copy of `test://item/4`; its `_meta` names
/// the MCP App `ui://w/app.html`.
struct LinksTool {
    schema: Value,
    meta: Value,
}

#[async_trait]
impl Tool for LinksTool {
    fn name(&self) -> &str {
        "links"
    }

    fn description(&self) -> &str {
        "Links to resources"
    }

    fn input_schema(&self) -> &Value {
        &self.schema
    }

    fn meta(&self) -> Option<&Value> {
        Some(&self.meta)
    }

    async fn call(&self, _context: &ToolContext, _arguments: Value) -> Result<ToolOutput, ToolError> {
        let embedded = json!({"type": "resource", "resource": {"uri": "test://item/4", "text": "four"}});
        let mut content = vec![Content::text("see")];
        content.extend(["test://static", "test://item/3", "https://example.com/x"].map(link));
        content.push(serde_json::from_value(embedded).unwrap());
        Ok(ToolOutput { content, ..ToolOutput::default() })
    }
}

/// The URIs of the resources that `blocks` link to or embed.
fn linked_uris<'a>(blocks: impl IntoIterator<Item = &'a Content>) -> Vec<String> {
    let uri_of = |block: &Value| block["uri"].as_str().or(block["resource"]["uri"].as_str()).map(str::to_owned);
    blocks.into_iter().filter_map(|block| uri_of(&serde_json::to_value(block).unwrap())).collect()
}

/// Reads any URI as the text `{skill} read {uri}`.
struct NamingReader {
    skill: String,
}

#[async_trait]
impl ResourceReader for NamingReader {
    async fn read(&self, uri: &str) -> Result<ResourceOutput, ToolError> {
        let text = format!("{} read {uri}", self.skill);
        Ok(ResourceOutput {
            contents: vec![ResourceContents::Text { uri: uri.to_owned(), mime_type: None, text, meta: None }],
            meta: None,
        })
    }
}

/// A skill with one prompt `greet` (argument `who`, required; its second message links
/// to `test://item/9`), the resources `test://static` and `ui://w/app.html` (an MCP App),
/// the template `test://item/{id}`,
/// and, [`with_links`](ItemSkill::with_links), the tool `links`.
struct ItemSkill {
    name: String,
    namespaced: bool,
    links: bool,
}

impl ItemSkill {
    fn new(name: &str, namespaced: bool) -> Self {
        Self { name: name.to_owned(), namespaced, links: false }
    }

    fn with_links(self) -> Self {
        Self { links: true, ..self }
    }
}

#[async_trait]
impl Skill for ItemSkill {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        "prompts and resources"
    }

    fn namespaced(&self) -> bool {
        self.namespaced
    }

    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        let app = "ui://w/app.html";
        let meta = json!({"ui": {"resourceUri": app, "prefersBorder": true}, "ui/resourceUri": app, "other": 1});
        let links = Arc::new(LinksTool { schema: json!({"type": "object"}), meta });
        if self.links { vec![links] } else { Vec::new() }
    }

    fn prompts(&self) -> Vec<Arc<dyn Prompt>> {
        let mut info = PromptInfo::new("greet", "Greets someone");
        info.arguments.push(PromptArgument {
            name: "who".to_owned(),
            title: None,
            description: None,
            required: Some(true),
        });
        vec![Arc::new(EchoPrompt { info })]
    }

    fn resources(&self) -> ResourceCatalog {
        let resource = |uri: &str| {
            serde_json::from_value::<ResourceInfo>(json!({"uri": uri, "name": uri, "mimeType": "text/plain"})).unwrap()
        };
        let template = serde_json::from_value::<ResourceTemplateInfo>(
            serde_json::json!({"uriTemplate": "test://item/{id}", "name": "item"}),
        )
        .unwrap();
        ResourceCatalog {
            resources: vec![resource("test://static"), resource("ui://w/app.html")],
            templates: vec![template],
            reader: Some(Arc::new(NamingReader { skill: self.name.clone() })),
        }
    }
}

#[tokio::test]
async fn a_skill_handle_announces_its_own_skills_resource_updates() {
    let agent = Agent::builder().build();
    let alpha = agent.register(Box::new(ItemSkill::new("alpha", true)));
    let plain = agent.register(Box::new(ItemSkill::new("plain", false)));
    agent.init_compiled_skills().await;
    let mut updates = agent.resource_updates();
    alpha.resource_updated("test://static");
    plain.resource_updated("test://static");
    assert_eq!(updates.try_recv().unwrap(), "omniagent://alpha/test://static");
    assert_eq!(updates.try_recv().unwrap(), "test://static");
    assert!(updates.try_recv().is_err());
}

async fn agent_with(skills: Vec<ItemSkill>) -> Agent {
    let agent = skills.into_iter().fold(Agent::builder(), |builder, skill| builder.with_compiled_skill(skill)).build();
    agent.init_compiled_skills().await;
    agent
}

fn text_of(output: &ResourceOutput) -> &str {
    match &output.contents[..] {
        [ResourceContents::Text { text, .. }] => text,
        other => panic!("expected one text part, got {other:?}"),
    }
}

#[tokio::test]
async fn prompts_and_resources_get_agent_level_names_and_route_back() {
    let agent = agent_with(vec![ItemSkill::new("alpha", true), ItemSkill::new("plain", false)]).await;
    let prompts: Vec<String> = agent.prompts().iter().map(|prompt| prompt.name().to_owned()).collect();
    assert_eq!(prompts, ["alpha__greet", "greet"]);
    let uris: Vec<String> = agent.resources().into_iter().map(|resource| resource.uri).collect();
    assert_eq!(uris, ["omniagent://alpha/test://static", "ui://alpha/w/app.html", "test://static", "ui://w/app.html"]);
    let templates: Vec<String> = agent.resource_templates().into_iter().map(|t| t.uri_template).collect();
    assert_eq!(templates, ["omniagent://alpha/test://item/{id}", "test://item/{id}"]);

    let read = |uri: &'static str| {
        let agent = agent.clone();
        async move { agent.read_resource(uri).await }
    };
    assert_eq!(text_of(&read("omniagent://alpha/test://static").await.unwrap()), "alpha read test://static");
    assert_eq!(text_of(&read("omniagent://alpha/test://item/7").await.unwrap()), "alpha read test://item/7");
    assert_eq!(text_of(&read("test://static").await.unwrap()), "plain read test://static");
    assert_eq!(text_of(&read("test://item/7").await.unwrap()), "plain read test://item/7");
    assert!(matches!(read("other://x").await, Err(ToolError::NotFound { .. })));
    assert!(matches!(read("omniagent://nobody/test://static").await, Err(ToolError::NotFound { .. })));

    let arguments = BTreeMap::from([("who".to_owned(), "Ada".to_owned())]);
    let output = agent.get_prompt("alpha__greet", arguments).await.unwrap();
    assert_eq!(serde_json::to_value(&output.messages[0]).unwrap()["content"]["text"], r#"greet {"who": "Ada"}"#);
    let missing = agent.get_prompt("greet", BTreeMap::new()).await.unwrap_err();
    assert_eq!(missing.to_string(), "invalid arguments for `greet`: missing required argument `who`");
    let unknown = agent.get_prompt("alpha__gret", BTreeMap::new()).await.unwrap_err();
    assert_eq!(unknown.to_string(), "unknown prompt `alpha__gret`; did you mean `alpha__greet`?");
}

#[tokio::test]
async fn what_a_skill_reads_links_or_embeds_comes_under_agent_level_uris() {
    let skills = vec![ItemSkill::new("alpha", true).with_links(), ItemSkill::new("plain", false).with_links()];
    let agent = agent_with(skills).await;
    let read = agent.read_resource("omniagent://alpha/test://item/7").await.unwrap();
    assert_eq!(
        linked_uris(&[Content::Resource { resource: read.contents[0].clone(), annotations: None, meta: None }]),
        ["omniagent://alpha/test://item/7"]
    );
    let read = agent.read_resource("test://item/7").await.unwrap();
    assert!(matches!(&read.contents[..], [ResourceContents::Text { uri, .. }] if uri == "test://item/7"));

    // A link to anything but the skill's own resources stays as it is.
    let output = agent.call_tool("alpha__links", Value::Null).await.unwrap();
    assert_eq!(
        linked_uris(&output.content),
        [
            "omniagent://alpha/test://static",
            "omniagent://alpha/test://item/3",
            "https://example.com/x",
            "omniagent://alpha/test://item/4",
        ]
    );
    let output = agent.call_tool("links", Value::Null).await.unwrap();
    assert_eq!(
        linked_uris(&output.content),
        ["test://static", "test://item/3", "https://example.com/x", "test://item/4"]
    );

    let who = || BTreeMap::from([("who".to_owned(), "Ada".to_owned())]);
    let output = agent.get_prompt("alpha__greet", who()).await.unwrap();
    assert_eq!(
        linked_uris(output.messages.iter().map(|message| &message.content)),
        ["omniagent://alpha/test://item/9"]
    );
    let output = agent.get_prompt("greet", who()).await.unwrap();
    assert_eq!(linked_uris(output.messages.iter().map(|message| &message.content)), ["test://item/9"]);
}

/// An MCP App keeps its `ui://` scheme, which hosts require: the tool's `_meta` names it
/// under the agent-level `ui://{skill}/...`, and that URI reads it back.
#[tokio::test]
async fn a_tools_mcp_app_is_named_under_a_ui_uri_that_reads_back() {
    let skills = vec![ItemSkill::new("alpha", true).with_links(), ItemSkill::new("plain", false).with_links()];
    let agent = agent_with(skills).await;
    let meta = |name: &str| agent.find_tool(name).unwrap().meta().cloned().unwrap();
    assert_eq!(
        meta("alpha__links"),
        json!({"ui": {"resourceUri": "ui://alpha/w/app.html", "prefersBorder": true}, "ui/resourceUri": "ui://alpha/w/app.html", "other": 1})
    );
    assert_eq!(meta("links")["ui"]["resourceUri"], "ui://w/app.html", "a skill that keeps its own URIs");
    assert_eq!(text_of(&agent.read_resource("ui://alpha/w/app.html").await.unwrap()), "alpha read ui://w/app.html");
    // `w` names no skill: the URI is the plain skill's own, which it lists.
    assert_eq!(text_of(&agent.read_resource("ui://w/app.html").await.unwrap()), "plain read ui://w/app.html");
}

/// A plain skill's `ui://w/…` stays its own beside a namespaced skill `w` (whose own app
/// is under `ui://w/w/…`), and what `w` has is still `w`'s.
#[tokio::test]
async fn a_plain_skills_ui_uri_is_its_own_beside_a_namespaced_skill_of_that_name() {
    let agent = agent_with(vec![ItemSkill::new("w", true), ItemSkill::new("plain", false)]).await;
    let read = |uri: &'static str| async { text_of(&agent.read_resource(uri).await.unwrap()).to_owned() };
    assert_eq!(read("ui://w/app.html").await, "plain read ui://w/app.html");
    assert_eq!(read("ui://w/w/app.html").await, "w read ui://w/app.html");
    assert_eq!(read("omniagent://w/test://static").await, "w read test://static");
    assert_eq!(read("test://static").await, "plain read test://static");
}

#[tokio::test]
async fn two_unprefixed_skills_with_the_same_names_keep_only_the_first() {
    let agent = agent_with(vec![ItemSkill::new("first", false), ItemSkill::new("second", false)]).await;
    let skipped = agent.skipped();
    assert_eq!(skipped.len(), 1);
    assert_eq!(skipped[0].skill, "second");
    assert_eq!(skipped[0].reason, "prompt name `greet` of skill `second` collides with a prompt of skill `first`");
    assert_eq!(agent.prompts().len(), 1);
    assert_eq!(text_of(&agent.read_resource("test://static").await.unwrap()), "first read test://static");
}

/// An upstream started after its lists were offered from the lock changes nothing a
/// client saw when its live lists are the same, and is no news then; a skill's own
/// change is news even when its list reads the same (an upstream's `list_changed`).
#[tokio::test]
async fn live_lists_that_read_as_the_stand_ins_are_no_change_and_a_skills_own_change_is_one() {
    let agent = Agent::builder().build();
    let skill = ItemSkill::new("alpha", true).with_links();
    let (tools, prompts, resources) = (skill.tools(), skill.prompts(), skill.resources());
    let alpha = agent.register(Box::new(skill));
    agent.init_compiled_skills().await;
    let mut changes = agent.changes();
    let before = *changes.borrow_and_update();
    alpha.replace_stand_ins(tools.clone(), prompts.clone(), resources.clone()).unwrap();
    assert!(!changes.has_changed().unwrap(), "the same lists as the stand-ins are no change");

    let mut info = PromptInfo::new("greet", "Greets someone, loudly");
    info.arguments.clear();
    alpha.replace_stand_ins(tools.clone(), vec![Arc::new(EchoPrompt { info })], resources.clone()).unwrap();
    let after = *changes.borrow_and_update();
    assert_eq!((after.prompts, after.tools, after.resources), (before.prompts + 1, before.tools, before.resources));

    alpha.replace_tools(tools).unwrap();
    assert_eq!(changes.borrow_and_update().tools, before.tools + 1, "a skill's own relisting is news");
}

#[tokio::test]
async fn every_list_change_moves_its_counter() {
    let agent = Agent::builder().build();
    let alpha = agent.register(Box::new(ItemSkill::new("alpha", true)));
    agent.init_compiled_skills().await;
    let mut changes = agent.changes();
    let before = *changes.borrow_and_update();
    alpha.replace_prompts(Vec::new()).unwrap();
    assert!(changes.has_changed().unwrap());
    let after = *changes.borrow_and_update();
    assert_eq!((after.prompts, after.tools, after.resources), (before.prompts + 1, before.tools, before.resources));
    assert!(agent.prompts().is_empty());

    alpha.replace_resources(ResourceCatalog::default()).unwrap();
    assert_eq!(changes.borrow_and_update().resources, before.resources + 1);
    assert!(agent.resources().is_empty());
    let _: Value = serde_json::to_value(agent.resource_templates()).unwrap();

    agent.close().await;
    let closed = *changes.borrow_and_update();
    assert_eq!(closed.tools, before.tools + 1);
}
