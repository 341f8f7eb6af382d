//! Multipart request bodies as a multipart parser reads them: each part's content type and
//! headers, binary parts from base64 and from a file, and the upload limit.

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::header;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::json;
use skill_core::ToolError;
use skill_openapi::default_client;

use super::{Api, sent};
use crate::wire::{Recorded, Recorder};

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
async fn openapi_3_0_multipart_follows_3_0s_rules_but_deep_object() {
    // OAS 3.0.4: the Encoding Object's style fields "SHALL be ignored" unless the body is
    // form-urlencoded, so an array is one part per item and an object one JSON part; only
    // `deepObject`, which 3.0 gives no multipart meaning, keeps 3.1's (docs/config.md).
    let server = Recorder::start().await;
    let document = |version: &str| {
        json!({
            "openapi": version,
            "paths": {"/upload": {"post": {
                "operationId": "upload",
                "requestBody": {"content": {"multipart/form-data": {
                    "schema": {"type": "object", "properties": {
                        "tags": {"type": "array", "items": {"type": "string"}},
                        "size": {"type": "object"},
                        "link": {"type": "object"}
                    }},
                    "encoding": {
                        "tags": {"style": "form", "explode": false},
                        "size": {"style": "form", "explode": true},
                        "link": {"style": "deepObject", "explode": true}
                    }
                }}}
            }}}
        })
    };
    let arguments = json!({"body": {"tags": ["a", "b"], "size": {"h": 2, "w": 3}, "link": {"create": true, "metadata": {"k": "v"}}}});
    let api = Api::new(document("3.0.3"));
    let recorded = sent(&server, &api.endpoint(&server.base_url, Vec::new()), &api, "upload", arguments.clone()).await;
    assert_eq!(
        parts_of(&recorded).await,
        [
            part("tags", None, None, &[], b"a"),
            part("tags", None, None, &[], b"b"),
            part("size", None, Some("application/json"), &[], br#"{"h":2,"w":3}"#),
            part("link[create]", None, None, &[], b"true"),
            part("link[metadata][k]", None, None, &[], b"v"),
        ]
    );
    // 3.1 applies every style to multipart.
    let api = Api::new(document("3.1.0"));
    let recorded = sent(&server, &api.endpoint(&server.base_url, Vec::new()), &api, "upload", arguments).await;
    let names: Vec<String> = parts_of(&recorded).await.into_iter().map(|part| part.name).collect();
    assert_eq!(names, ["tags", "h", "w", "link[create]", "link[metadata][k]"]);
}
