//! Credentials matched to security schemes, sent where they say, and kept out of every
//! `Debug` output and error.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use skill_core::SecretString;
use skill_openapi::{ApiKeyLocation, Credential, Endpoint, Error, default_client};

use super::{Api, sent};
use crate::wire::{Recorded, Recorder};

fn secured_document() -> Value {
    json!({
        "openapi": "3.0.3",
        "components": {"securitySchemes": {
            "headerKey": {"type": "apiKey", "name": "X-API-Key", "in": "header"},
            "queryKey": {"type": "apiKey", "name": "api_key", "in": "query"},
            "cookieKey": {"type": "apiKey", "name": "session", "in": "cookie"},
            "bearer": {"type": "http", "scheme": "bearer"},
            "basic": {"type": "http", "scheme": "basic"}
        }},
        "security": [{"headerKey": []}],
        "paths": {
            "/header": {"get": {"operationId": "header"}},
            "/query": {"get": {
                "operationId": "query",
                "security": [{"queryKey": []}],
                "parameters": [{"name": "q", "in": "query", "schema": {"type": "string"}}]
            }},
            "/cookie": {"get": {
                "operationId": "cookie",
                "security": [{"cookieKey": []}],
                "parameters": [{"name": "theme", "in": "cookie", "schema": {"type": "string"}}]
            }},
            "/bearer": {"get": {"operationId": "bearer", "security": [{"bearer": []}]}},
            "/basic": {"get": {"operationId": "basic", "security": [{"basic": []}]}},
            "/either": {"get": {"operationId": "either", "security": [{"headerKey": [], "basic": []}, {"bearer": []}]}},
            "/public": {"get": {"operationId": "public", "security": []}}
        }
    })
}

fn all_credentials() -> Vec<Credential> {
    let key = |value: &str, location| Credential::ApiKey { value: value.into(), name: None, location: Some(location) };
    vec![
        key("header-k3y", ApiKeyLocation::Header),
        key("query-k3y", ApiKeyLocation::Query),
        key("cookie-k3y", ApiKeyLocation::Cookie),
        Credential::Bearer { token: "bearer-t0ken".into() },
        Credential::Basic { username: "user".into(), password: "pa55word".into() },
    ]
}

/// The headers a request carried that credentials may set, and its target.
fn auth_seen(recorded: &Recorded) -> (String, Option<&str>, Option<&str>, Option<&str>) {
    (recorded.target.clone(), recorded.header("x-api-key"), recorded.header("authorization"), recorded.header("cookie"))
}

#[tokio::test]
async fn credentials_go_where_the_security_schemes_say() {
    let server = Recorder::start().await;
    let api = Api::new(secured_document());
    let endpoint = api.endpoint(&server.base_url, all_credentials());
    let mut seen = Vec::new();
    for (name, arguments) in [
        ("header", json!({})),
        ("query", json!({"q": "a b"})),
        ("cookie", json!({"theme": "dark"})),
        ("bearer", json!({})),
        ("basic", json!({})),
        ("either", json!({})),
        ("public", json!({})),
    ] {
        let recorded = sent(&server, &endpoint, &api, name, arguments).await;
        let (target, key, authorization, cookie) = auth_seen(&recorded);
        seen.push((target, key.map(str::to_owned), authorization.map(str::to_owned), cookie.map(str::to_owned)));
    }
    let basic = format!("Basic {}", STANDARD.encode("user:pa55word"));
    let row = |target: &str, key: Option<&str>, authorization: Option<&str>, cookie: Option<&str>| {
        (target.to_owned(), key.map(str::to_owned), authorization.map(str::to_owned), cookie.map(str::to_owned))
    };
    assert_eq!(
        seen,
        [
            // The document's `security`.
            row("/header", Some("header-k3y"), None, None),
            row("/query?q=a%20b&api_key=query-k3y", None, None, None),
            row("/cookie", None, None, Some("theme=dark; session=cookie-k3y")),
            row("/bearer", None, Some("Bearer bearer-t0ken"), None),
            row("/basic", None, Some(&basic), None),
            // The first alternative the credentials satisfy: both of its schemes.
            row("/either", Some("header-k3y"), Some(&basic), None),
            // `security: []`: nothing.
            row("/public", None, None, None),
        ]
    );
}

#[tokio::test]
async fn credentials_are_matched_to_schemes_when_endpoints_are_made() {
    let server = Recorder::start().await;
    // One apiKey scheme: it says where a bare key goes.
    let api = Api::new(json!({
        "openapi": "3.1.0",
        "components": {"securitySchemes": {"key": {"type": "apiKey", "name": "token", "in": "query"}}},
        "security": [{"key": []}],
        "paths": {"/a": {"get": {"operationId": "a"}}}
    }));
    let credential = Credential::ApiKey { value: "k3y".into(), name: None, location: None };
    let endpoint = api.endpoint(&server.base_url, vec![credential]);
    assert_eq!(sent(&server, &endpoint, &api, "a", json!({})).await.target, "/a?token=k3y");

    // Several that fit: the error says what to set.
    let several = Api::new(secured_document());
    let credential = Credential::ApiKey { value: "k3y".into(), name: None, location: None };
    let error = Endpoint::new(&several.document, Some(&server.base_url), vec![credential]).unwrap_err();
    assert!(matches!(error, Error::ApiKeyPlacement { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "the API key for /specs/calls.json needs its name and location set: several apiKey schemes fit: \
         `headerKey` (apiKey, header `X-API-Key`), `queryKey` (apiKey, query `api_key`), `cookieKey` (apiKey, cookie `session`)"
    );

    // No security schemes: every credential on every request, but `security: []`.
    let api = Api::new(json!({
        "openapi": "3.1.0",
        "paths": {"/a": {"get": {"operationId": "a"}}, "/b": {"get": {"operationId": "b", "security": []}}}
    }));
    let endpoint = api.endpoint(&server.base_url, vec![Credential::Bearer { token: "t0ken".into() }]);
    assert_eq!(sent(&server, &endpoint, &api, "a", json!({})).await.header("authorization"), Some("Bearer t0ken"));
    assert_eq!(sent(&server, &endpoint, &api, "b", json!({})).await.header("authorization"), None);

    // Schemes defined, but no `security` says which apply (a sloppy document): the key the
    // user configured is sent, where its scheme says.
    let api = Api::new(json!({
        "openapi": "3.1.0",
        "components": {"securitySchemes": {"key": {"type": "apiKey", "name": "X-Key", "in": "header"}}},
        "paths": {"/a": {"get": {"operationId": "a"}}}
    }));
    let credential = Credential::ApiKey { value: "k3y".into(), name: None, location: None };
    let endpoint = api.endpoint(&server.base_url, vec![credential]);
    assert_eq!(sent(&server, &endpoint, &api, "a", json!({})).await.header("x-key"), Some("k3y"));
}

#[tokio::test]
async fn secrets_never_show_in_debug_output_or_errors() {
    const SECRETS: [&str; 5] = ["header-k3y", "query-k3y", "cookie-k3y", "bearer-t0ken", "pa55word"];
    let shows_no_secret = |text: &str| {
        for secret in SECRETS.iter().chain(&["dXNlcjpwYTU1d29yZA"]) {
            assert!(!text.contains(secret), "{secret} shows in {text}");
        }
    };
    let api = Api::new(secured_document());
    for credential in all_credentials() {
        shows_no_secret(&format!("{credential:?}"));
    }
    // A port nothing listens on: the call fails, and its error names the URL.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://user:pa55word@{}", closed.local_addr().unwrap());
    drop(closed);
    let endpoint = api.endpoint(&base_url, all_credentials());
    shows_no_secret(&format!("{endpoint:?}"));
    shows_no_secret(&format!("{:?}", endpoint.clone()));

    let error = endpoint.call(&default_client(), api.tool("query"), &json!({"q": "x"})).await.unwrap_err();
    let message = error.to_string();
    shows_no_secret(&message);
    shows_no_secret(&format!("{error:?}"));
    let address = base_url.trim_start_matches("http://user:pa55word@");
    // Every query value is redacted: any may be a credential.
    assert!(
        message.starts_with(&format!("`query`: GET http://{address}/query?q=REDACTED&api_key=REDACTED: ")),
        "{message}"
    );

    // A credential that cannot be sent: the error says why, never what it is.
    let token = SecretString::from("bearer-t0ken\n");
    let error = Endpoint::new(&api.document, Some(&base_url), vec![Credential::Bearer { token }]).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the bearer token for /specs/calls.json cannot be sent: it holds characters a header value cannot hold"
    );
    shows_no_secret(&format!("{error:?}"));
}
