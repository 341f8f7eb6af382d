//! Credentials stay home: a document decides where an operation is called (its own
//! `servers`), but its credentials go only to the skill's server origin and to the
//! origins listed in `openapi.<name>.origins`.

use serde_json::json;
use skill_core::{SecretString, Secrets, Skill as _, SourceKind, ToolContext, ToolError, ToolSource};
use skill_openapi::{OpenApiConfig, OpenApiSkill};

use crate::wire::Recorder;

const TOKEN: &str = "canary-bearer-91c4";

/// The skill `api` for a document served from `home`, whose operation `away` names
/// `other` as its server, with a bearer token and `origins` as given.
async fn skill(folder: &std::path::Path, home: &Recorder, other: &Recorder, origins: &[&str]) -> OpenApiSkill {
    let document = json!({
        "openapi": "3.1.0",
        "servers": [{"url": home.base_url}],
        "components": {"securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}},
        "security": [{"bearer": []}],
        "paths": {
            "/home": {"get": {"operationId": "home"}},
            "/away": {"get": {"operationId": "away", "servers": [{"url": other.base_url}]}},
            "/away-public": {"get": {"operationId": "awayPublic", "security": [], "servers": [{"url": other.base_url}]}}
        }
    });
    let spec = folder.join("api.json");
    std::fs::write(&spec, document.to_string()).unwrap();
    let config: OpenApiConfig = serde_json::from_value(json!({
        "spec": spec,
        "auth": {"bearer": {"token": "env:API_TOKEN"}},
        "origins": origins,
    }))
    .unwrap();
    let mut skill = OpenApiSkill::new("api", config);
    let secrets: Secrets = [("auth.token".to_owned(), SecretString::from(TOKEN))].into_iter().collect();
    assert_eq!(skill.required_secrets(), ["auth.token"]);
    skill.set_secrets(secrets);
    skill.init().await.unwrap();
    skill
}

async fn call(skill: &OpenApiSkill, name: &str) -> Result<(), ToolError> {
    let tool = skill.tools().into_iter().find(|tool| tool.name() == name).unwrap();
    let source = ToolSource { kind: SourceKind::Openapi, skill: "api".to_owned(), tool: name.to_owned() };
    let output = tool.call(&ToolContext::new(name, source), json!({})).await?;
    assert!(!output.is_error, "{output:?}");
    Ok(())
}

#[tokio::test]
async fn credentials_go_only_to_the_skills_origin_unless_another_is_listed() {
    let folder = tempfile::tempdir().unwrap();
    let (home, other) = (Recorder::start().await, Recorder::start().await);
    let api = skill(folder.path(), &home, &other, &[]).await;

    call(&api, "home").await.unwrap();
    let received = home.take();
    assert_eq!(received[0].header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));

    let error = call(&api, "away").await.unwrap_err().to_string();
    assert!(other.take().is_empty(), "the other origin received the call");
    assert!(!error.contains(TOKEN), "{error}");
    assert_eq!(
        error,
        format!(
            "`away`: refused to send its credentials to {}, the server the document names for it: they go only \
             to {}; to trust that origin too, list it in `openapi.api.origins`",
            other.base_url, home.base_url
        )
    );
    // An operation that carries no credentials goes where the document says.
    call(&api, "awayPublic").await.unwrap();
    assert_eq!(other.take()[0].header("authorization"), None);

    // Listed, the other origin is trusted.
    let trusting = skill(folder.path(), &home, &other, &[&other.base_url]).await;
    call(&trusting, "away").await.unwrap();
    assert_eq!(other.take()[0].header("authorization"), Some(format!("Bearer {TOKEN}").as_str()));
}

#[tokio::test]
async fn origins_must_be_plain_origins() {
    let config: OpenApiConfig = serde_json::from_value(json!({
        "spec": "/nonexistent/api.json",
        "origins": ["https://user:pw@uploads.example.com/path?key=s3cret"],
    }))
    .unwrap();
    let error = OpenApiSkill::new("api", config).init().await.unwrap_err().to_string();
    assert_eq!(
        error,
        "openapi.api.origins: `https://uploads.example.com/path?key=REDACTED` is not an origin (write scheme://host, or \
         scheme://host:port)"
    );
}

#[tokio::test]
async fn a_signing_client_counts_as_a_credential() {
    let (home, other) = (Recorder::start().await, Recorder::start().await);
    let document = skill_openapi::Document::from_value(
        "/specs/signed.json",
        json!({
            "openapi": "3.1.0",
            "servers": [{"url": home.base_url}],
            "paths": {"/away": {"post": {"operationId": "away", "servers": [{"url": other.base_url}]}}}
        }),
    )
    .unwrap();
    let tools = document.tools(&skill_openapi::OperationFilter::default()).unwrap().tools;
    let endpoint = skill_openapi::Endpoint::new(&document, None, Vec::new()).unwrap();
    let client = skill_openapi::default_client();
    // Unsigned and without credentials, the call goes where the document says.
    endpoint.call(&client, &tools[0], &json!({})).await.unwrap();
    assert_eq!(other.take().len(), 1);
    let signed = endpoint.with_signing_client();
    let error = signed.call(&client, &tools[0], &json!({})).await.unwrap_err().to_string();
    assert!(error.contains("refused to send its credentials"), "{error}");
    assert!(other.take().is_empty() && home.take().is_empty());
}
