//! JSON, text and octet-stream request bodies as the server received them, binary ones
//! from base64 and from a file.

use serde_json::{Value, json};
use skill_openapi::default_client;

use super::{Api, sent};
use crate::wire::Recorder;

fn post_body(media_type: &str, schema: Value) -> Value {
    json!({
        "openapi": "3.1.0",
        "paths": {"/items": {"post": {
            "operationId": "create",
            "requestBody": {"required": true, "content": {media_type: {"schema": schema}}}
        }}}
    })
}

#[tokio::test]
async fn json_text_and_octet_stream_bodies() {
    let server = Recorder::start().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("blob.bin"), [9, 8, 7]).unwrap();

    let api = Api::new(post_body("application/vnd.api+json", json!({"type": "object"})));
    let endpoint = api.endpoint(&server.base_url, Vec::new());
    let recorded = sent(&server, &endpoint, &api, "create", json!({"body": {"name": "a b", "tags": ["x"]}})).await;
    assert_eq!((recorded.method.as_str(), recorded.target.as_str()), ("POST", "/items"));
    assert_eq!(recorded.header("content-type"), Some("application/vnd.api+json"));
    assert_eq!(recorded.body, br#"{"name":"a b","tags":["x"]}"#);

    let api = Api::new(post_body("text/plain; charset=utf-8", json!({"type": "string"})));
    let endpoint = api.endpoint(&server.base_url, Vec::new());
    let recorded = sent(&server, &endpoint, &api, "create", json!({"body": "line one\nline two é"})).await;
    assert_eq!(recorded.header("content-type"), Some("text/plain; charset=utf-8"));
    assert_eq!(recorded.body, "line one\nline two é".as_bytes());

    let api = Api::new(post_body("application/octet-stream", json!({"type": "string", "format": "binary"})));
    let endpoint = api.endpoint(&server.base_url, Vec::new()).with_upload_folder(folder.path());
    let recorded = sent(&server, &endpoint, &api, "create", json!({"body": "AAEC/w=="})).await;
    assert_eq!(recorded.header("content-type"), Some("application/octet-stream"));
    assert_eq!(recorded.body, [0, 1, 2, 255]);
    let recorded = sent(&server, &endpoint, &api, "create", json!({"body": "file:blob.bin"})).await;
    assert_eq!(recorded.body, [9, 8, 7]);

    // XML is text, even though it is not one of the body kinds the tool names.
    let api = Api::new(post_body("application/xml", json!({"type": "string"})));
    let endpoint = api.endpoint(&server.base_url, Vec::new());
    let recorded = sent(&server, &endpoint, &api, "create", json!({"body": "<a>1</a>"})).await;
    assert_eq!(
        (recorded.header("content-type"), recorded.body.as_slice()),
        (Some("application/xml"), &b"<a>1</a>"[..])
    );

    // A required body that is missing, and binary data that is neither base64 nor a file.
    let api = Api::new(post_body("application/octet-stream", json!({"type": "string", "format": "binary"})));
    let endpoint = api.endpoint(&server.base_url, Vec::new());
    let error = endpoint.call(&default_client(), api.tool("create"), &json!({})).await.unwrap_err();
    assert_eq!(error.to_string(), "invalid arguments for `create`: /body: the request body is required");
    let error = endpoint.call(&default_client(), api.tool("create"), &json!({"body": "file:blob.bin"})).await;
    assert_eq!(
        error.unwrap_err().to_string(),
        "invalid arguments for `create`: /body: cannot read `blob.bin`: this skill has no upload folder, so it reads no files"
    );
    assert!(server.take().is_empty());
}
