//! Upstream resources through the gateway: reads, links and embedded copies under the
//! gateway's URIs, and subscriptions.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use test_peers::{
    mcp_app_server_or_panic as mcp_app_server, sample_server_or_panic as sample_server,
    server_everything_or_panic as server_everything,
};

use super::{HttpGateway, listed, python, text_of};
use crate::Home;

/// The Python SDK, through the gateway over stdio, follows what an upstream's tools
/// return: the links server-everything's `get-resource-links` gives and the resource
/// `get-resource-reference` embeds come under the gateway's URIs, and reading those URIs
/// back through the gateway gives each resource, under the URI it was read by.
#[test]
fn links_an_upstream_returns_can_be_read_through_the_gateway() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    everything:\n      command: {}\n",
        server_everything().display()
    ));
    let home_dir = home.path().to_str().unwrap();
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let calls = json!({"calls": [
        ["everything__get-resource-links", {"count": 2}],
        ["everything__get-resource-reference", {"resourceType": "Text", "resourceId": 5}],
    ]});
    let out = python("legacy", &serve, calls, &[("OMNIAGENT_HOME", home_dir)]);
    let content = |call: usize| out["calls"][call]["content"].as_array().cloned().unwrap_or_default();
    let links: Vec<String> = content(0)
        .iter()
        .filter(|block| block["type"] == "resource_link")
        .map(|block| block["uri"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        links,
        [
            "omniagent://everything/demo://resource/dynamic/blob/1",
            "omniagent://everything/demo://resource/dynamic/text/2"
        ],
        "{out}"
    );
    let embedded = content(1).into_iter().find(|block| block["type"] == "resource").expect("an embedded resource");
    assert_eq!(embedded["resource"]["uri"], json!("omniagent://everything/demo://resource/dynamic/text/5"));

    let reads = python("legacy", &serve, json!({"reads": links}), &[("OMNIAGENT_HOME", home_dir)]);
    for (read, link) in reads["reads"].as_array().unwrap().iter().zip(&links) {
        let contents = read["contents"].as_array().unwrap();
        assert_eq!(contents[0]["uri"], json!(link), "{read}");
        assert!(contents[0]["text"].is_string() || contents[0]["blob"].is_string(), "{read}");
    }
    assert_eq!(reads["reads"].as_array().unwrap().len(), links.len(), "{reads}");
}

/// An MCP App through the gateway (the MCP Apps extension's own example server): the
/// host finds the app the tool names (`_meta.ui.resourceUri`, and the older key) under
/// the gateway's `ui://` URI for it, reads the app there as the HTML it is, and the app's
/// own call of its tool, by the server's name for it, reaches the server.
#[test]
fn an_mcp_app_reaches_the_host_through_the_gateway() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    apps:\n      command: {}\n      args: [--stdio]\n",
        mcp_app_server().display()
    ));
    let app = "ui://apps/get-time/mcp-app.html";
    let plan = json!({"calls": [["get-time", {}]], "reads": [app]});
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let out = python("legacy", &serve, plan, &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
    let tool = out["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "apps__get-time");
    let meta = &tool.unwrap_or_else(|| panic!("apps__get-time in {out}"))["_meta"];
    assert_eq!((&meta["ui"]["resourceUri"], &meta["ui/resourceUri"]), (&json!(app), &json!(app)), "{meta}");
    assert!(listed(&out, "resources", "uri").contains(&app), "{}", out["resources"]);

    let contents = &out["reads"][0]["contents"][0];
    assert_eq!((&contents["uri"], &contents["mimeType"]), (&json!(app), &json!("text/html;profile=mcp-app")));
    assert!(contents["text"].as_str().is_some_and(|html| html.contains("<html")), "{contents}");
    let call = &out["calls"][0];
    assert!(call["structuredContent"]["time"].is_string(), "{call}");
}

/// The upstreams know whether the host shows MCP Apps, as a server that offers its apps
/// only to such hosts (ext-apps' `getUiCapability`) must: the sample server, on a
/// 2025-11-25 session, finds the extension the Python SDK declared (in either era), with
/// its settings, in the gateway's `initialize`; a host that does not declare it is not
/// made to seem one that does.
#[test]
fn the_upstreams_know_whether_the_host_shows_apps() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    sample:\n      command: {}\n      protocol_version: \"2025-11-25\"\n",
        sample_server().display()
    ));
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let declared = |mode: &str, extensions: Value| {
        let plan = json!({"calls": [["sample__client", {}]], "extensions": extensions});
        let out = python(mode, &serve, plan, &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
        let seen: Value = serde_json::from_str(text_of(&out["calls"][0])).unwrap();
        seen["initialized"]["extensions"].clone()
    };
    let apps = json!({skill_mcp::APPS_EXTENSION: {"mimeTypes": ["text/html;profile=mcp-app"]}});
    for mode in ["legacy", "2026-07-28"] {
        assert_eq!(declared(mode, apps.clone()), apps, "{mode}");
    }
    assert_eq!(declared("legacy", json!({})), Value::Null);
}

/// App-only tools (`_meta.ui.visibility: ["app"]`) reach only hosts that show MCP Apps.
/// FastMCP lists them to every client, since MCP Apps has the host keep them from its
/// model, and a host without apps would not know to: through the gateway (the Python
/// SDK, both eras) such a host gets the app's other tool and not them, and a host with
/// apps gets both, and its app's call of the app-only tool reaches the server. Tool
/// search finds them only for a host with apps too.
#[test]
fn app_only_tools_reach_only_hosts_that_show_apps() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/fastmcp_apps.py");
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    charts:\n      command: {}\n      args: ['{}']\n",
        test_peers::mcp_python_or_panic().display(),
        fixture.display()
    ));
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let apps = json!({skill_mcp::APPS_EXTENSION: {"mimeTypes": ["text/html;profile=mcp-app"]}});
    for mode in ["legacy", "2026-07-28"] {
        let run = |plan: Value| python(mode, &serve, plan, &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
        let without = run(json!({}));
        assert_eq!(listed(&without, "tools", "name"), ["charts__show-chart"], "{mode}");

        let with = run(json!({"calls": [["chart-data", {"series": "a"}]], "extensions": apps}));
        assert_eq!(listed(&with, "tools", "name"), ["charts__chart-data", "charts__show-chart"], "{mode}");
        assert_eq!(with["calls"][0]["structuredContent"]["result"], json!([1, 2, 3]), "{mode}: {with}");
    }
    // Nor does a search find them for such a host.
    let searching = [&serve[..], &["--tool-search"]].concat();
    let plan = json!({"calls": [["search_tools", {"query": "chart"}]]});
    let out = python("legacy", &searching, plan, &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
    let found = out["calls"][0]["structuredContent"]["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(found.iter().map(|tool| &tool["name"]).collect::<Vec<_>>(), [&json!("charts__show-chart")], "{out}");
}

/// What a host shows beside an upstream's items reaches it through the gateway (the
/// Python SDK over stdio, the fixture server): a prompt's, a resource's and a template's
/// own icons, the prompt's `_meta`, and on a tool without icons of its own, its server's.
#[test]
fn icons_and_meta_reach_the_host() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    fixtures:\n      command: {}\n      args: [--conformance]\n",
        sample_server().display()
    ));
    let serve = ["stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"];
    let out = python("legacy", &serve, json!({}), &[("OMNIAGENT_HOME", home.path().to_str().unwrap())]);
    let find = |list: &str, field: &str, value: &str| {
        let items = out[list].as_array().unwrap();
        items.iter().find(|item| item[field] == value).unwrap_or_else(|| panic!("{value} in {items:?}")).clone()
    };
    let own_icon = |item: &serde_json::Value| {
        let icon = &item["icons"][0];
        assert_eq!(
            (&icon["mimeType"], &icon["sizes"], &icon["theme"]),
            (&json!("image/svg+xml"), &json!(["any"]), &json!("dark")),
            "{item}"
        );
    };
    let prompt = find("prompts", "name", "fixtures__test_simple_prompt");
    own_icon(&prompt);
    assert_eq!(prompt["_meta"], json!({"com.example/fixture": "simple"}), "{prompt}");
    own_icon(&find("resources", "uri", "omniagent://fixtures/test://static-text"));
    own_icon(&find("templates", "uriTemplate", "omniagent://fixtures/test://template/{id}/data"));
    let tool = find("tools", "name", "fixtures__test_simple_text");
    assert_eq!(
        tool["icons"],
        json!([{"src": tool["icons"][0]["src"], "mimeType": "image/png", "sizes": ["1x1"]}]),
        "the server's: {tool}"
    );
    assert!(tool["icons"][0]["src"].as_str().unwrap().starts_with("data:image/png;base64,"), "{tool}");
}

/// A client subscribed to an upstream's resource through the gateway hears it change:
/// our own client subscribes (`resources/subscribe` on, through the gateway, to the
/// fixture server), the upstream announces an update, and it arrives under our agent's
/// URI for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscribed_resource_update_reaches_the_client() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    fixtures:\n      command: {}\n      args: [--conformance]\n      prefix: false\n",
        sample_server().display()
    ));
    let gateway = HttpGateway::start(&home, &[], &[]);
    let client_config: skill_mcp::ServerConfig = serde_json::from_value(json!({"url": gateway.url()})).unwrap();
    let agent = skill_core::Agent::builder().with_compiled_skill(skill_mcp::McpSkill::new("gw", client_config)).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, ["gw"]);
    let uri = "omniagent://gw/test://watched-resource";
    let mut updates = agent.resource_updates();
    agent.subscribe_resource(uri).await.expect("the subscription is taken all the way up");
    agent.call_tool("gw__test_trigger_resource_update", json!({})).await.unwrap();
    let updated = tokio::time::timeout(Duration::from_secs(10), updates.recv()).await;
    assert_eq!(updated.expect("an update within 10 s").unwrap(), uri, "{}", gateway.stderr.lock().unwrap());
    agent.unsubscribe_resource(uri).await.unwrap();
    agent.close().await;
}
