//! Responses as tool results: JSON as structured content, binary as a resource,
//! truncation, non-2xx, redirects not followed, timeout.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use skill_core::{Content, ResourceContents, ToolError, ToolOutput};
use skill_openapi::default_client;

use super::Api;

fn text_of(output: &ToolOutput) -> &str {
    match &output.content[0] {
        Content::Text { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

/// A server whose routes answer with the responses a tool result must render.
async fn responder() -> String {
    let app = Router::new()
        .route("/json", get(|| async { ([(header::CONTENT_TYPE, "application/json")], r#"{"id":1,"name":"a"}"#) }))
        .route(
            "/png",
            get(|| async { ([(header::CONTENT_TYPE, "image/png")], Bytes::from_static(&[0x89, b'P', b'N', b'G'])) }),
        )
        .route("/big", get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "a".repeat(3000)) }))
        .route("/endless", get(endless))
        .route(
            "/missing",
            get(|| async {
                (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "application/json")], r#"{"error":"no such item"}"#)
            }),
        )
        .route("/moved", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/json")], "") }))
        .route("/empty", get(|| async { StatusCode::NO_CONTENT }))
        .route("/slow", get(std::future::pending::<&'static str>));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base_url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    base_url
}

/// A chunked body that never ends: reading it all would never finish.
async fn endless() -> Response {
    let chunks = futures_util::stream::repeat_with(|| Ok::<_, Infallible>(Bytes::from_static(&[b'x'; 1024])));
    ([(header::CONTENT_TYPE, "text/plain")], Body::from_stream(chunks)).into_response()
}

fn get_document(paths: &[&str]) -> Value {
    let paths: serde_json::Map<String, Value> = paths
        .iter()
        .map(|path| (path.to_string(), json!({"get": {"operationId": path.trim_start_matches('/')}})))
        .collect();
    json!({"openapi": "3.1.0", "paths": paths})
}

#[tokio::test]
async fn responses_become_tool_results() {
    let base_url = responder().await;
    let api = Api::new(get_document(&["/json", "/png", "/big", "/endless", "/missing", "/moved", "/empty", "/slow"]));
    let endpoint = api.endpoint(&base_url, Vec::new()).with_max_response_bytes(2500);
    let client = default_client();
    let no_arguments = json!({});
    let call = |name: &'static str| endpoint.call(&client, api.tool(name), &no_arguments);

    let output = call("json").await.unwrap();
    assert_eq!(text_of(&output), "HTTP 200 OK\nContent-Type: application/json\n\n{\"id\":1,\"name\":\"a\"}");
    assert_eq!(output.structured_content, Some(json!({"id": 1, "name": "a"})));
    assert!(!output.is_error);

    let output = call("png").await.unwrap();
    assert_eq!(
        text_of(&output),
        "HTTP 200 OK\nContent-Type: image/png\n\n(4 bytes of image/png, in the embedded resource)"
    );
    let Content::Resource { resource: ResourceContents::Blob { uri, mime_type, blob, .. }, .. } = &output.content[1]
    else {
        panic!("{output:?}")
    };
    assert_eq!((uri.as_str(), mime_type.as_deref()), (format!("{base_url}/png").as_str(), Some("image/png")));
    assert_eq!(STANDARD.decode(blob).unwrap(), [0x89, b'P', b'N', b'G']);

    let output = call("big").await.unwrap();
    assert_eq!(
        text_of(&output),
        format!(
            "HTTP 200 OK\nContent-Type: text/plain\n\n{}\n\n[truncated: the body is 3000 bytes; the first 2500 are shown \
             and 500 were dropped]",
            "a".repeat(2500)
        )
    );

    let output = call("endless").await.unwrap();
    assert_eq!(
        text_of(&output),
        format!(
            "HTTP 200 OK\nContent-Type: text/plain\n\n{}\n\n[truncated: only the first 2500 bytes were read; the rest, \
             of unknown length, was dropped]",
            "x".repeat(2500)
        )
    );

    let output = call("missing").await.unwrap();
    assert!(output.is_error);
    assert_eq!(text_of(&output), "HTTP 404 Not Found\nContent-Type: application/json\n\n{\"error\":\"no such item\"}");
    assert_eq!(output.structured_content, Some(json!({"error": "no such item"})));

    // Redirects are not followed: the 3xx is the result.
    let output = call("moved").await.unwrap();
    assert!(output.is_error);
    assert!(text_of(&output).starts_with("HTTP 302 Found\n") && text_of(&output).contains("\nLocation: /json"));

    let output = call("empty").await.unwrap();
    assert_eq!((text_of(&output), output.is_error, output.content.len()), ("HTTP 204 No Content", false, 1));

    let endpoint = endpoint.with_timeout(Duration::from_millis(200));
    let error = endpoint.call(&client, api.tool("slow"), &json!({})).await.unwrap_err();
    assert!(matches!(error, ToolError::Timeout { after } if after == Duration::from_millis(200)), "{error:?}");
}
