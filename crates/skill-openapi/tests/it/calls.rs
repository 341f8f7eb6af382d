//! `Endpoint::call` against real HTTP servers on 127.0.0.1: request bodies as the server
//! received them (JSON, multipart with its parts' content types and headers and binary
//! parts from base64 and from a file, text, octet-stream), responses as tool results
//! (JSON as structured content, binary as a resource, truncation, non-2xx, redirects not
//! followed, timeout), credentials matched to security schemes and kept out of every
//! `Debug` output and error, and server URLs from `servers[0]` or a base URL.

use std::convert::Infallible;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use skill_core::{Content, ResourceContents, SecretString, ToolError, ToolOutput};
use skill_openapi::{
    ApiKeyLocation, Credential, Document, Endpoint, Error, OperationFilter, OperationTool, default_client,
};

use crate::wire::{Recorded, Recorder};

/// A document's tools, by name.
struct Api {
    document: Document,
    tools: Vec<OperationTool>,
}

impl Api {
    fn new(root: Value) -> Self {
        let document = Document::from_value("/specs/calls.json", root).unwrap();
        let set = document.tools(&OperationFilter::default()).unwrap();
        assert!(set.skipped.is_empty(), "{:?}", set.skipped);
        Api { document, tools: set.tools }
    }

    fn tool(&self, name: &str) -> &OperationTool {
        self.tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no tool {name}"))
    }

    fn endpoint(&self, base_url: &str, credentials: Vec<Credential>) -> Endpoint {
        Endpoint::new(&self.document, Some(base_url), credentials).unwrap()
    }
}

/// Calls `name` and returns the one request the server received.
async fn sent(server: &Recorder, endpoint: &Endpoint, api: &Api, name: &str, arguments: Value) -> Recorded {
    let client = default_client();
    let call = endpoint.call(&client, api.tool(name), &arguments);
    // A `Tool`'s call future must be `Send`, to run on any runtime thread.
    is_send(&call);
    let output = call.await.unwrap();
    assert!(!output.is_error, "{output:?}");
    let mut received = server.take();
    assert_eq!(received.len(), 1);
    received.remove(0)
}

fn is_send<T: Send>(_: &T) {}

fn text_of(output: &ToolOutput) -> &str {
    match &output.content[0] {
        Content::Text { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

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

/// One part of a multipart body, as a multipart parser (multer, through axum) reads it.
#[derive(Debug, PartialEq)]
struct ReceivedPart {
    name: String,
    file_name: Option<String>,
    content_type: Option<String>,
    /// The part's other headers, `name: value`.
    headers: Vec<String>,
    body: Vec<u8>,
}

async fn parts_of(recorded: &Recorded) -> Vec<ReceivedPart> {
    let content_type = recorded.header("content-type").unwrap();
    assert!(content_type.starts_with("multipart/form-data; boundary="), "{content_type}");
    let request =
        Request::builder().header(header::CONTENT_TYPE, content_type).body(Body::from(recorded.body.clone())).unwrap();
    let mut multipart = Multipart::from_request(request, &()).await.unwrap();
    let mut parts = Vec::new();
    while let Some(field) = multipart.next_field().await.unwrap() {
        let name = field.name().unwrap().to_owned();
        let file_name = field.file_name().map(str::to_owned);
        let content_type = field.content_type().map(str::to_owned);
        let headers = field
            .headers()
            .iter()
            .filter(|(name, _)| *name != header::CONTENT_DISPOSITION && *name != header::CONTENT_TYPE)
            .map(|(name, value)| format!("{name}: {}", value.to_str().unwrap()))
            .collect();
        let body = field.bytes().await.unwrap().to_vec();
        parts.push(ReceivedPart { name, file_name, content_type, headers, body });
    }
    parts
}

fn part(
    name: &str,
    file_name: Option<&str>,
    content_type: Option<&str>,
    headers: &[&str],
    body: &[u8],
) -> ReceivedPart {
    ReceivedPart {
        name: name.to_owned(),
        file_name: file_name.map(str::to_owned),
        content_type: content_type.map(str::to_owned),
        headers: headers.iter().map(|header| header.to_string()).collect(),
        body: body.to_vec(),
    }
}

#[tokio::test]
async fn multipart_parts_with_content_types_headers_and_binary_from_base64_and_files() {
    const PNG: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];
    let server = Recorder::start().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("report.pdf"), b"%PDF-1.7").unwrap();

    let api = Api::new(json!({
        "openapi": "3.1.0",
        "components": {"schemas": {"Address": {"type": "object"}}},
        "paths": {"/upload": {"post": {
            "operationId": "upload",
            "requestBody": {"required": true, "content": {"multipart/form-data": {
                "schema": {"type": "object", "properties": {
                    "addresses": {"type": "array", "items": {"$ref": "#/components/schemas/Address"}},
                    "attachments": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    "count": {"type": "integer"},
                    "id": {"type": "string"},
                    "meta": {"type": "object"},
                    "note": {"type": "string"},
                    "photo": {"type": "string", "format": "binary"},
                    "signature": {"type": "string", "contentEncoding": "base64"},
                    "size": {"type": "object"}
                }},
                "encoding": {
                    "note": {"contentType": "text/markdown"},
                    "photo": {
                        "contentType": "image/png, image/jpeg",
                        "headers": {
                            "X-Rate-Limit-Limit": {"schema": {"type": "integer", "default": 10}},
                            "X-Left-Open": {"schema": {"type": "string"}},
                            "Content-Type": {"schema": {"const": "text/plain"}}
                        }
                    },
                    "size": {"style": "form", "explode": true}
                }
            }}}
        }}}
    }));
    let endpoint = api.endpoint(&server.base_url, Vec::new()).with_upload_folder(folder.path());
    // Keys in order: the parts come in the order of the arguments' object.
    let arguments = json!({"body": {
        "addresses": [{"city": "X"}, {"city": "Y"}],
        "attachments": ["file:report.pdf", "AAEC"],
        "count": 3,
        "id": "a1",
        "meta": {"k": "v"},
        "note": "# Hi",
        "photo": STANDARD.encode(PNG),
        "signature": "c2ln",
        "size": {"h": 2, "w": 3}
    }});
    let recorded = sent(&server, &endpoint, &api, "upload", arguments).await;
    // One buffered body with its length, so that middleware can read it.
    assert_eq!(recorded.header("content-length"), Some(recorded.body.len().to_string().as_str()));
    assert_eq!(
        parts_of(&recorded).await,
        [
            part("addresses", None, Some("application/json"), &[], br#"{"city":"X"}"#),
            part("addresses", None, Some("application/json"), &[], br#"{"city":"Y"}"#),
            part("attachments", Some("report.pdf"), Some("application/octet-stream"), &[], b"%PDF-1.7"),
            part("attachments", Some("attachments"), Some("application/octet-stream"), &[], &[0, 1, 2]),
            // `text/plain` is a part's default, so text parts go without a Content-Type.
            part("count", None, None, &[], b"3"),
            part("id", None, None, &[], b"a1"),
            part("meta", None, Some("application/json"), &[], br#"{"k":"v"}"#),
            part("note", None, Some("text/markdown"), &[], b"# Hi"),
            part("photo", Some("photo"), Some("image/png"), &["x-rate-limit-limit: 10"], &PNG),
            part("signature", None, Some("application/octet-stream"), &["content-transfer-encoding: base64"], b"c2ln"),
            // Style-based: the query-style pairs `h=2&w=3`, one part each.
            part("h", None, None, &[], b"2"),
            part("w", None, None, &[], b"3"),
        ]
    );

    // Each binary problem names its field; nothing is sent.
    let arguments = json!({"body": {"attachments": ["file:../outside.txt"], "photo": "not base64!"}});
    let error = endpoint.call(&default_client(), api.tool("upload"), &arguments).await.unwrap_err();
    let ToolError::InvalidArguments { problems, .. } = error else { panic!("{error:?}") };
    assert_eq!(problems.len(), 2);
    assert!(problems[0].starts_with("/body/attachments: cannot read `../outside.txt`: "), "{problems:?}");
    assert!(problems[1].starts_with("/body/photo: binary data is neither base64 text ("), "{problems:?}");
    assert!(server.take().is_empty());

    // A file larger than the endpoint's upload limit is refused, naming its field.
    let endpoint = endpoint.with_max_upload_bytes(7);
    let arguments = json!({"body": {"attachments": ["file:report.pdf"]}});
    let error = endpoint.call(&default_client(), api.tool("upload"), &arguments).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments for `upload`: /body/attachments: cannot read `report.pdf`: it is larger than the upload \
         limit of 7 bytes"
    );
    assert!(server.take().is_empty());
}

#[tokio::test]
async fn content_parameters_and_allow_reserved() {
    let server = Recorder::start().await;
    let api = Api::new(json!({
        "openapi": "3.1.0",
        "paths": {"/search/{filter}": {"get": {
            "operationId": "search",
            "parameters": [
                {"name": "filter", "in": "path", "required": true, "content": {"application/json": {"schema": {"type": "object"}}}},
                {"name": "q", "in": "query", "content": {"application/json": {"schema": {"type": "object"}}}},
                {"name": "raw", "in": "query", "content": {"text/plain": {"schema": {"type": "string"}}}},
                {"name": "next", "in": "query", "allowReserved": true, "schema": {"type": "string"}},
                {"name": "X-Meta", "in": "header", "content": {"application/json": {"schema": {"type": "object"}}}},
                {"name": "X-Note", "in": "header", "content": {"text/plain": {"schema": {"type": "string"}}}},
                {"name": "prefs", "in": "cookie", "content": {"text/plain": {"schema": {"type": "string"}}}},
                {"name": "id", "in": "cookie", "schema": {"type": "string"}}
            ]
        }}}
    }));
    let endpoint = api.endpoint(&server.base_url, Vec::new());
    let arguments = json!({
        "filter": {"a": 1},
        "q": {"name": "x y", "tags": ["a"]},
        "raw": "a&b=c d",
        "next": "/p?x=1&y",
        "X-Meta": {"k": "v w"},
        "prefs": "dark%20mode",
        "id": "4 2"
    });
    let recorded = sent(&server, &endpoint, &api, "search", arguments).await;
    assert_eq!(
        recorded.target,
        "/search/%7B%22a%22%3A1%7D?q=%7B%22name%22%3A%22x%20y%22%2C%22tags%22%3A%5B%22a%22%5D%7D\
         &raw=a%26b%3Dc%20d&next=/p?x%3D1%26y"
    );
    assert_eq!(recorded.header("x-meta"), Some(r#"{"k":"v w"}"#));
    assert_eq!(recorded.header("cookie"), Some("prefs=dark%20mode; id=4%202"));

    // A required parameter missing, and a header value with a line break.
    let arguments = json!({"X-Meta": "a\nb", "X-Note": "a\nb"});
    let error = endpoint.call(&default_client(), api.tool("search"), &arguments).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments for `search`: /filter: the path parameter `filter` is required; /X-Note: the value cannot be \
         sent in the header `X-Note` (it holds a line break or another control character)"
    );
    assert!(server.take().is_empty());

    // A cookie given by `content` goes as written, so it cannot carry a `;` that would add
    // a cookie of its own (or any other character a cookie value cannot hold).
    for (prefs, character) in [("x; session=evil", "';'"), ("a,b", "','"), ("dark mode", "' '")] {
        let arguments = json!({"filter": {}, "prefs": prefs});
        let error = endpoint.call(&default_client(), api.tool("search"), &arguments).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            format!(
                "invalid arguments for `search`: /prefs: parameter `prefs`: the value cannot be sent as a cookie: it \
                 holds {character}, and a cookie value given by `content` is sent as written, so it may hold only RFC \
                 6265 cookie octets"
            )
        );
    }
    assert!(server.take().is_empty());
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
