//! What the `$ref`s of a spec read from a file may read: the agent's home folder holds an
//! AAuth key (`aauth/agent.jwk`) and token cache (`aauth/agent-token.json`); a spec placed
//! there must not copy either into the tool schemas a model is sent.

use std::path::Path;

use serde_json::json;
use skill_core::Skill;
use skill_openapi::{Document, Error, LoadOptions, OpenApiConfig, OpenApiSkill, OperationFilter};

const TOKEN: &str = "agent-t0ken";
const KEY: &str = "private-k3y";

/// A home folder as the agent keeps it, with a spec that reaches for its secrets in every
/// way a ref can: directly, by a link from a public folder, and by a file that is fine.
fn home_with_spec(home: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(home.join("aauth")).unwrap();
    std::fs::create_dir_all(home.join("public")).unwrap();
    std::fs::write(home.join("aauth/agent.jwk"), json!({"kty": "OKP", "d": KEY}).to_string()).unwrap();
    std::fs::write(
        home.join("aauth/agent-token.json"),
        json!({"token": {"type": "string", "default": TOKEN}}).to_string(),
    )
    .unwrap();
    std::os::unix::fs::symlink(home.join("aauth/agent-token.json"), home.join("public/token.json")).unwrap();
    std::fs::write(home.join("public/limit.json"), json!({"type": "integer", "maximum": 100}).to_string()).unwrap();
    let parameter = |name: &str, reference: &str| json!({"name": name, "in": "query", "schema": {"$ref": reference}});
    let spec = json!({
        "openapi": "3.1.0",
        "paths": {
            "/token": {"get": {"operationId": "token", "parameters": [parameter("t", "aauth/agent-token.json#/token")]}},
            "/linked": {"get": {"operationId": "linked", "parameters": [parameter("t", "public/token.json#/token")]}},
            "/key": {"get": {"operationId": "key", "parameters": [parameter("k", "aauth/agent.jwk")]}},
            "/limit": {"get": {"operationId": "limit", "parameters": [parameter("n", "public/limit.json")]}}
        }
    });
    let path = home.join("openapi.json");
    std::fs::write(&path, spec.to_string()).unwrap();
    path
}

#[tokio::test]
async fn refs_never_enter_a_private_folder_even_through_a_link() {
    let home = tempfile::tempdir().unwrap();
    let spec = home_with_spec(home.path());
    // The host names the folder by another path (a link to it): the real paths are compared.
    let alias = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(home.path(), alias.path().join("home")).unwrap();
    let options = LoadOptions::new().with_private_path(alias.path().join("home/aauth"));

    let document = Document::load(spec.to_str().unwrap(), &options).await.unwrap();
    let set = document.tools(&OperationFilter::default()).unwrap();
    let names: Vec<&str> = set.tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["limit"]);
    let real_folder = home.path().join("aauth").canonicalize().unwrap();
    let mut refused: Vec<(String, String)> =
        set.skipped.iter().map(|skipped| (skipped.path.clone(), skipped.error.to_string())).collect();
    refused.sort();
    let spec_name = spec.display();
    assert_eq!(
        refused,
        [
            (
                "/key".to_owned(),
                format!(
                    "$ref `aauth/agent.jwk` in {spec_name} is refused: a spec may reference only .json, .yaml and .yml files"
                )
            ),
            (
                "/linked".to_owned(),
                format!(
                    "$ref `public/token.json#/token` in {spec_name} is refused: it reaches the private path {}",
                    real_folder.display()
                )
            ),
            (
                "/token".to_owned(),
                format!(
                    "$ref `aauth/agent-token.json#/token` in {spec_name} is refused: it reaches the private path {}",
                    real_folder.display()
                )
            ),
        ]
    );
    let token = set.skipped.iter().find(|skipped| skipped.path == "/token").unwrap();
    assert!(
        matches!(&token.error, Error::RefInPrivatePath { reference, path, .. }
            if reference == "aauth/agent-token.json#/token" && *path == real_folder),
        "{:?}",
        token.error
    );
    let schemas = serde_json::to_string(&set.tools.iter().map(|tool| &tool.input_schema).collect::<Vec<_>>()).unwrap();
    assert!(!schemas.contains(TOKEN) && !schemas.contains(KEY), "{schemas}");

    // Without the private path, the token file would be read: that is what the option is for.
    let document = Document::load(spec.to_str().unwrap(), &LoadOptions::new()).await.unwrap();
    let set = document.tools(&OperationFilter::default()).unwrap();
    let token = set.tools.iter().find(|tool| tool.name == "token").unwrap();
    assert!(token.input_schema.to_string().contains(TOKEN));
}

#[tokio::test]
async fn refs_never_name_a_private_file_even_through_a_link() {
    // The agent's config file and key file beside its folders: private one by one.
    let home = tempfile::tempdir().unwrap();
    let spec = home_with_spec(home.path());
    std::fs::write(home.path().join("config.yaml"), format!("token: {{type: string, default: {TOKEN}}}\n")).unwrap();
    std::os::unix::fs::symlink(home.path().join("config.yaml"), home.path().join("public/settings.yaml")).unwrap();
    let mut root: serde_json::Value = serde_json::from_slice(&std::fs::read(&spec).unwrap()).unwrap();
    let parameter =
        |reference: &str| json!({"get": {"parameters": [{"name": "t", "in": "query", "schema": {"$ref": reference}}]}});
    root["paths"]["/config"] = parameter("config.yaml#/token");
    root["paths"]["/settings"] = parameter("public/settings.yaml#/token");
    std::fs::write(&spec, root.to_string()).unwrap();
    let options = LoadOptions::new()
        .with_private_path(home.path().join("config.yaml"))
        .with_private_path(home.path().join("aauth/agent-token.json"));

    let document = Document::load(spec.to_str().unwrap(), &options).await.unwrap();
    let set = document.tools(&OperationFilter::default()).unwrap();
    let real = home.path().canonicalize().unwrap();
    let mut refused: Vec<(&str, String)> =
        set.skipped.iter().map(|skipped| (skipped.path.as_str(), skipped.error.to_string())).collect();
    refused.sort();
    let refusal = |reference: &str, private: &str| {
        format!(
            "$ref `{reference}` in {} is refused: it reaches the private path {}",
            spec.display(),
            real.join(private).display()
        )
    };
    let not_a_document = format!(
        "$ref `aauth/agent.jwk` in {} is refused: a spec may reference only .json, .yaml and .yml files",
        spec.display()
    );
    assert_eq!(
        refused,
        [
            ("/config", refusal("config.yaml#/token", "config.yaml")),
            ("/key", not_a_document),
            ("/linked", refusal("public/token.json#/token", "aauth/agent-token.json")),
            ("/settings", refusal("public/settings.yaml#/token", "config.yaml")),
            ("/token", refusal("aauth/agent-token.json#/token", "aauth/agent-token.json")),
        ]
    );
    let schemas = serde_json::to_string(&set.tools.iter().map(|tool| &tool.input_schema).collect::<Vec<_>>()).unwrap();
    assert!(!schemas.contains(TOKEN), "{schemas}");
}

#[tokio::test]
async fn a_skill_loads_with_the_hosts_private_folders() {
    let home = tempfile::tempdir().unwrap();
    let spec = home_with_spec(home.path());
    let mut config = OpenApiConfig::new(spec.to_str().unwrap());
    config.base_url = Some("http://127.0.0.1:9".to_owned());
    let mut skill = OpenApiSkill::new("home", config)
        .with_load_options(LoadOptions::new().with_private_path(home.path().join("aauth")));
    skill.init().await.unwrap();
    let names: Vec<String> = skill.tools().iter().map(|tool| tool.name().to_owned()).collect();
    assert_eq!(names, ["limit"]);
    for tool in skill.tools() {
        let schema = tool.input_schema().to_string();
        assert!(!schema.contains(TOKEN) && !schema.contains(KEY), "{schema}");
    }
}
