//! Credentials in a spec URL never show in errors, descriptions or `Debug` output.

use std::time::Duration;

use axum::http::StatusCode;
use serde_json::json;
use skill_openapi::{Document, LoadOptions};
use url::Url;

use super::{Page, Server, json_page};

#[tokio::test]
async fn credentials_in_a_spec_url_never_show_in_errors_or_descriptions() {
    use skill_core::Skill;

    let shows_none = |text: &str| {
        for secret in ["pw", "s3cret", "t0ken"] {
            assert!(!text.contains(secret), "{secret} shows in {text}");
        }
    };
    let swagger = json!({"swagger": "1.2"});
    let local_ref = json!({"openapi": "3.1.0", "components": {"schemas": {"A": {"$ref": "file:///etc/passwd"}}}});
    // Relative server URLs, which take the spec URL's user info.
    let usable = json!({
        "openapi": "3.1.0",
        "info": {"title": "Usable"},
        "servers": [{"url": "/api"}],
        "paths": {"/a": {"get": {"operationId": "a", "servers": [{"url": "/other"}]}}}
    });
    let server = Server::start_with(|base| {
        let mut location = base.join("/moved.json?token=t0ken").unwrap();
        location.set_username("user").unwrap();
        location.set_password(Some("pw")).unwrap();
        vec![
            ("/swagger.json", json_page(&swagger)),
            ("/local.json", json_page(&local_ref)),
            ("/moved.json", Page::Redirect { status: StatusCode::FOUND, location: location.to_string() }),
            ("/large.json", json_page(&json!({"openapi": "3.1.0", "x": "a".repeat(200)}))),
            ("/silent.json", Page::Silence),
            ("/usable.json", json_page(&usable)),
        ]
    })
    .await;
    let secret_url = |path: &str| {
        let mut url = Url::parse(&server.url(path)).unwrap();
        url.set_username("user").unwrap();
        url.set_password(Some("pw")).unwrap();
        url.set_query(Some("key=s3cret&t0ken"));
        url.to_string()
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let unreachable = format!("http://user:pw@127.0.0.1:{port}/spec.json?key=s3cret");
    let short = LoadOptions::new().with_timeout(Duration::from_millis(100));
    let cases: Vec<(String, LoadOptions)> = vec![
        (secret_url("/missing.json"), LoadOptions::new()),
        (secret_url("/swagger.json"), LoadOptions::new()),
        (secret_url("/local.json"), LoadOptions::new()),
        (secret_url("/moved.json"), LoadOptions::new()),
        (secret_url("/large.json"), LoadOptions::new().with_max_bytes(100)),
        (secret_url("/large.json"), LoadOptions::new().with_max_total_bytes(100)),
        (secret_url("/silent.json"), short),
        (secret_url("/silent.json"), LoadOptions::new().with_total_timeout(Duration::from_millis(100))),
        (unreachable, LoadOptions::new()),
        ("http://user:pw@[::1/spec.json?key=s3cret".to_owned(), LoadOptions::new()),
    ];
    let mut messages = Vec::new();
    for (url, options) in cases {
        let error = Document::load(&url, &options).await.unwrap_err();
        shows_none(&error.to_string());
        shows_none(&format!("{error:?}"));
        messages.push(error.to_string());
    }
    // The URL is still named, its query's names with it.
    let named = format!("{}?key=REDACTED&REDACTED", server.url("/missing.json"));
    assert_eq!(messages[0], format!("{named} answered 404 Not Found"));
    let moved = format!("to {}?token=REDACTED, and redirects are not followed", server.url("/moved.json"));
    assert!(messages[3].ends_with(&moved), "{}", messages[3]);

    // The skill's description and the reason it is skipped.
    let mut skill =
        skill_openapi::OpenApiSkill::new("api", skill_openapi::OpenApiConfig::new(secret_url("/swagger.json")));
    shows_none(skill.description());
    assert_eq!(
        skill.description(),
        format!("Operations of the OpenAPI document {}", named.replace("missing", "swagger"))
    );
    let error = skill.init().await.unwrap_err();
    shows_none(&error.to_string());
    shows_none(&format!("{skill:?}"));
    // A skill that loads: its description is the title, and its Debug output (tools,
    // servers and all) still shows no credential.
    let mut skill =
        skill_openapi::OpenApiSkill::new("api", skill_openapi::OpenApiConfig::new(secret_url("/usable.json")));
    skill.init().await.unwrap();
    assert_eq!((skill.description(), skill.tools().len()), ("Usable", 1));
    let debug = format!("{skill:?}");
    assert!(debug.contains("/other"), "{debug}");
    shows_none(&debug);
}
