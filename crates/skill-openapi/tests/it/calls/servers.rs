//! Server URLs from `servers[0]` or a base URL.

use serde_json::json;
use skill_openapi::{Document, Endpoint, OperationFilter, default_client};

use crate::wire::Recorder;

#[tokio::test]
async fn server_urls_from_servers_or_the_base_url() {
    let server = Recorder::start().await;
    let port = server.base_url.rsplit(':').next().unwrap().to_owned();
    let document = |default_base: &str| {
        Document::from_value(
            "/specs/servers.json",
            json!({
                "openapi": "3.1.0",
                "servers": [{
                    "url": "http://127.0.0.1:{port}/{base}",
                    "variables": {"port": {"default": port}, "base": {"default": default_base, "enum": ["v1", "v2"]}}
                }],
                "paths": {"/items": {"get": {"operationId": "items"}}}
            }),
        )
        .unwrap()
    };
    let tools = document("v1").tools(&OperationFilter::default()).unwrap().tools;
    let client = default_client();

    let endpoint = Endpoint::new(&document("v1"), None, Vec::new()).unwrap();
    assert_eq!(endpoint.base_url().map(|url| url.as_str()), Ok(format!("http://127.0.0.1:{port}/v1").as_str()));
    endpoint.call(&client, &tools[0], &json!({})).await.unwrap();
    assert_eq!(server.take()[0].target, "/v1/items");

    // A server that cannot be used costs the calls, not the tools: each call fails, naming
    // the setting, and sends nothing.
    let endpoint = Endpoint::new(&document("v3"), None, Vec::new()).unwrap().with_settings("openapi.items");
    let problem = "server URL `http://127.0.0.1:{port}/{base}` of /specs/servers.json: variable `base` has the \
                   default `v3`, which its `enum` (`v1`, `v2`) does not list";
    assert_eq!(endpoint.base_url(), Err(problem));
    let error = endpoint.call(&client, &tools[0], &json!({})).await.unwrap_err();
    assert_eq!(error.to_string(), format!("`items`: calls need `openapi.items.base_url`: {problem}"));
    assert!(server.take().is_empty());

    // A base URL replaces the servers, its path and all; a bad variable no longer matters.
    let endpoint = Endpoint::new(&document("v3"), Some(&format!("{}/prefix/", server.base_url)), Vec::new()).unwrap();
    endpoint.call(&client, &tools[0], &json!({})).await.unwrap();
    assert_eq!(server.take()[0].target, "/prefix/items");

    let relative = Document::from_value(
        "/specs/relative.json",
        json!({"openapi": "3.1.0", "servers": [{"url": "/api"}], "paths": {}}),
    )
    .unwrap();
    let endpoint = Endpoint::new(&relative, None, Vec::new()).unwrap();
    assert_eq!(
        endpoint.no_server().as_deref(),
        Some(
            "calls need `base_url`: server URL `/api` in /specs/relative.json is relative, and a document read from \
             a file has no URL to resolve it against"
        )
    );
    let no_servers = Document::from_value("/specs/none.json", json!({"openapi": "3.1.0", "paths": {}})).unwrap();
    let endpoint = Endpoint::new(&no_servers, None, Vec::new()).unwrap();
    assert_eq!(endpoint.base_url(), Err("/specs/none.json has no `servers`"));
}
