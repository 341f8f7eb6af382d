//! `skills__activate` and `skills__read` through the gateway, called by the Python SDK:
//! one client's agent gives a body once, and every refusal reaches the client as an
//! error result.

use serde_json::{Value, json};

use super::{HttpGateway, listed, python, text_of};
use crate::skill_tools::skills_home;

fn plan() -> Value {
    let read = |skill: &str, path: &str| json!(["skills__read", {"name": skill, "path": path}]);
    json!({
        "calls": [
            ["skills__activate", {"name": "hello"}],
            ["skills__activate", {"name": "hello"}],
            read("hello", "scripts/greet.sh"),
            read("hello", "../../config.yaml"),
            read("hello", "escape.txt"),
            read("hello", ".secrets/key"),
            read("hello", "references/huge.md"),
            read("hello", "token.txt"),
            read("stash", "SKILL.md"),
            ["skills__activate", {"name": "nobody"}]
        ]
    })
}

fn check(out: &Value, folder: &str) {
    let tools = out["tools"].as_array().unwrap();
    let activate = tools.iter().find(|tool| tool["name"] == "skills__activate").unwrap_or_else(|| panic!("{tools:?}"));
    assert_eq!(activate["inputSchema"]["properties"]["name"]["enum"], json!(["hello", "stash"]));
    assert_eq!(activate["annotations"]["readOnlyHint"], json!(true));
    assert!(activate["outputSchema"]["properties"]["already_active"].is_object(), "{activate}");
    let prompts = listed(out, "prompts", "name");
    assert!(prompts.contains(&"skills__hello"), "the prompts stay beside the tools: {prompts:?}");

    let calls = out["calls"].as_array().unwrap();
    let first = text_of(&calls[0]);
    assert!(first.starts_with(&format!("<skill name=\"hello\" location=\"{folder}\">\n")), "{first}");
    assert!(
        first.contains(&format!("Run `{folder}/scripts/greet.sh NAME`.")) && first.ends_with("</skill>"),
        "{first}"
    );
    assert_eq!(calls[0]["structuredContent"]["already_active"], json!(false));
    assert_eq!(
        text_of(&calls[1]),
        "Skill `hello` is already active: its instructions were given earlier. If they are no longer in your \
         context, call skills__activate with \"reload\": true."
    );
    assert_eq!(calls[1]["structuredContent"]["already_active"], json!(true));
    assert_eq!(text_of(&calls[2]), "echo \"hello $1\"\n");
    let refusals = [
        "`../../config.yaml` is refused: `..` may not appear in a path",
        "`escape.txt` is refused: it leads outside the folder of skill `hello`",
        "`.secrets/key` is refused: hidden names (starting with `.`) are never read",
        "`references/huge.md` is 262145 bytes, over the limit of 262144 bytes (256 KiB) that skills__read gives",
        "`token.txt` is refused: it is one of the agent's private files",
        "`SKILL.md` is refused: it is one of the agent's private files",
    ];
    for (call, reason) in calls[3..9].iter().zip(refusals) {
        assert_eq!((call["isError"].as_bool(), text_of(call)), (Some(true), reason), "{call}");
    }
    // A name not in the enum fails the input schema: a result for the model to correct.
    assert_eq!(calls[9]["isError"], json!(true), "{}", calls[9]);
    let unknown = text_of(&calls[9]);
    assert!(unknown.starts_with("invalid arguments for `skills__activate`: /name: \"nobody\""), "{unknown}");
}

#[test]
fn the_python_sdk_activates_and_reads_skills_over_stdio_and_http() {
    let home = skills_home();
    let folder = home.path().join("skills/hello").display().to_string();
    let omniagent = env!("CARGO_BIN_EXE_omniagent");
    let home_dir = home.path().to_str().unwrap();
    for mode in ["legacy", "2026-07-28"] {
        let out = python(mode, &["stdio", omniagent, "mcp", "serve"], plan(), &[("OMNIAGENT_HOME", home_dir)]);
        check(&out, &folder);
    }
    let gateway = HttpGateway::start(&home, &[], &[]);
    let out = python("legacy", &["http", &gateway.url()], plan(), &[]);
    check(&out, &folder);
    // The HTTP client's agent outlives the connection: a second one finds the skill active.
    let again = python(
        "2026-07-28",
        &["http", &gateway.url()],
        json!({"calls": [["skills__activate", {"name": "hello"}]]}),
        &[],
    );
    assert_eq!(again["calls"][0]["structuredContent"]["already_active"], json!(true), "{again}");
}

/// The names a running gateway's `skills__activate` takes, as our own client lists them.
fn activatable(agent: &skill_core::Agent) -> Vec<String> {
    let Ok(tool) = agent.find_tool("gw__skills__activate") else { return Vec::new() };
    let names = tool.input_schema()["properties"]["name"]["enum"].as_array().cloned().unwrap_or_default();
    names.iter().filter_map(|name| name.as_str().map(str::to_owned)).collect()
}

/// A skill added while the gateway runs joins the `enum` of a connected client's tools,
/// and can be activated at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_added_while_serving_can_be_activated() {
    let home = crate::Home::new().with_config("storage: {backend: memory}\nskills: {packs: []}\n");
    home.write("skills/first/SKILL.md", "---\nname: first\ndescription: The first skill\n---\nFirst.\n");
    let gateway = HttpGateway::start(&home, &["--eager"], &[]);
    let client_config: skill_mcp::ServerConfig = serde_json::from_value(json!({"url": gateway.url()})).unwrap();
    let agent = skill_core::Agent::builder().with_compiled_skill(skill_mcp::McpSkill::new("gw", client_config)).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["gw"]);
    assert_eq!(activatable(&agent), ["first"]);
    let first = agent.call_tool("gw__skills__activate", json!({"name": "first"})).await.unwrap();
    assert!(text_of(&serde_json::to_value(&first).unwrap()).starts_with("<skill name=\"first\""), "{first:?}");

    home.write("skills/second/SKILL.md", "---\nname: second\ndescription: A skill added later\n---\nSecond.\n");
    super::eventually("the new skill in the enum", || activatable(&agent) == ["first", "second"]).await;
    let second = agent.call_tool("gw__skills__activate", json!({"name": "second"})).await.unwrap();
    let second = serde_json::to_value(&second).unwrap();
    assert!(text_of(&second).contains("\nSecond.\n</skill>"), "{second}");
    agent.close().await;
}
