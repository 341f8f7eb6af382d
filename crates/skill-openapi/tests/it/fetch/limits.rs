//! The limits of one load: bytes per document, enforced while the body streams in and
//! whatever its Content-Length claims, bytes and documents for the whole load, and time per
//! fetch and per load.

use std::io::{Read, Write};
use std::time::Duration;

use axum::body::Bytes;
use axum::http::header::{CONTENT_LENGTH, TRANSFER_ENCODING};
use serde_json::json;
use skill_openapi::{Document, Error, LoadOptions};
use url::Url;

use super::{Page, Server, json_page, load};

const MIB: usize = 1024 * 1024;

const PADDED_START: &str = r#"{"openapi": "3.1.0", "x-padding": ""#;
const PADDED_END: &str = r#""}"#;

/// A JSON spec of exactly `size` bytes, padded with an extension string.
fn padded_spec(size: usize) -> Vec<u8> {
    let mut bytes = PADDED_START.as_bytes().to_vec();
    bytes.resize(size - PADDED_END.len(), b'a');
    bytes.extend_from_slice(PADDED_END.as_bytes());
    bytes
}

fn chunks_of(bytes: &[u8]) -> Vec<Bytes> {
    bytes.chunks(64 * 1024).map(Bytes::copy_from_slice).collect()
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_or_without_content_length() {
    let eleven_mib = padded_spec(11 * MIB);
    let server = Server::start(vec![
        ("/declared.json", Page::Text { content_type: "application/json", body: Bytes::from(eleven_mib.clone()) }),
        ("/chunked.json", Page::Chunked(chunks_of(&eleven_mib))),
    ])
    .await;

    let url = server.url("/declared.json");
    let error = load(&url).await.unwrap_err();
    let declared = 11 * MIB as u64;
    assert!(
        matches!(&error, Error::TooLarge { url: at, limit: 10_485_760, declared: Some(d) } if at.as_str() == url && *d == declared),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("{url} is larger than the limit of 10485760 bytes per document (Content-Length: {declared})")
    );

    // The chunked body really comes without Content-Length.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let raw = reqwest::Client::new().get(server.url("/chunked.json")).send().await.unwrap();
    assert_eq!(raw.headers().get(TRANSFER_ENCODING).unwrap(), "chunked");
    assert!(raw.headers().get(CONTENT_LENGTH).is_none());
    drop(raw);
    let url = server.url("/chunked.json");
    let error = load(&url).await.unwrap_err();
    assert!(
        matches!(&error, Error::TooLarge { url: at, limit: 10_485_760, declared: None } if at.as_str() == url),
        "{error:?}"
    );
    assert_eq!(error.to_string(), format!("{url} is larger than the limit of 10485760 bytes per document"));
}

#[tokio::test]
async fn a_document_of_exactly_the_limit_loads_with_or_without_content_length() {
    let ten_mib = padded_spec(10 * MIB);
    let server = Server::start(vec![
        ("/declared.json", Page::Text { content_type: "application/json", body: Bytes::from(ten_mib.clone()) }),
        ("/chunked.json", Page::Chunked(chunks_of(&ten_mib))),
    ])
    .await;
    for path in ["/declared.json", "/chunked.json"] {
        let document = load(&server.url(path)).await.unwrap();
        let padding = document.root()["x-padding"].as_str().unwrap().len();
        assert_eq!(padding, 10 * MIB - PADDED_START.len() - PADDED_END.len(), "{path}");
    }
    // A lower limit refuses the same document.
    let options = LoadOptions::new().with_max_bytes(10 * MIB as u64 - 1);
    let error = Document::load(&server.url("/chunked.json"), &options).await.unwrap_err();
    assert!(matches!(error, Error::TooLarge { declared: None, .. }), "{error:?}");
}

/// A server that answers one request with `head` and then `body`, whatever they claim,
/// on a plain TCP socket: no HTTP library would send a wrong Content-Length.
fn raw_server(head: String, body: Vec<u8>) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/api.json", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut request = Vec::new();
        let mut buffer = [0; 1024];
        while !request.ends_with(b"\r\n\r\n") {
            let n = stream.read(&mut buffer).unwrap();
            if n == 0 {
                return;
            }
            request.extend_from_slice(&buffer[..n]);
        }
        // The client may hang up before everything is written: that is what is tested.
        let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
    });
    url
}

#[tokio::test]
async fn a_body_longer_than_its_content_length_is_read_only_to_that_length() {
    // YAML, so that the declared part and the whole body are both whole documents: the
    // whole body, 11 MiB more than declared, would be another (and too large) document.
    let declared = "openapi: 3.1.0\npaths: {}\n";
    let mut body = declared.as_bytes().to_vec();
    body.extend_from_slice(b"x-more: ");
    body.resize(body.len() + 11 * MIB, b'a');
    body.push(b'\n');
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/yaml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        declared.len()
    );
    let url = raw_server(head, body);
    let document = load(&url).await.unwrap();
    assert_eq!(document.root(), &json!({"openapi": "3.1.0", "paths": {}}));
    assert_eq!(document.url().map(Url::as_str), Some(url.as_str()));
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_fails_naming_the_url() {
    let spec = br#"{"openapi": "3.1.0", "paths": {}}"#.to_vec();
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        spec.len() + 100
    );
    let url = raw_server(head, spec);
    let error = load(&url).await.unwrap_err();
    assert!(matches!(&error, Error::Fetch { url: at, .. } if at.as_str() == url), "{error:?}");
    assert!(error.to_string().starts_with(&format!("cannot fetch {url}: ")), "{error}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let server = Server::start(vec![("/api.yaml", Page::Silence)]).await;
    let url = server.url("/api.yaml");
    let options = LoadOptions::new().with_timeout(Duration::from_millis(200));
    let error = Document::load(&url, &options).await.unwrap_err();
    assert!(
        matches!(&error, Error::FetchTimeout { url: at, after } if at.as_str() == url && *after == Duration::from_millis(200)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), format!("fetching {url} took longer than 0.2 s"));
}

#[tokio::test]
async fn the_number_of_referenced_documents_is_bounded() {
    // A chain: each document references the next.
    let link = |n: usize| json_page(&json!({"openapi": "3.1.0", "x-next": {"$ref": format!("{}.json", n + 1)}}));
    let server =
        Server::start(vec![("/0.json", link(0)), ("/1.json", link(1)), ("/2.json", link(2)), ("/3.json", link(3))])
            .await;
    let url = server.url("/0.json");
    let error = Document::load(&url, &LoadOptions::new().with_max_documents(3)).await.unwrap_err();
    assert!(matches!(&error, Error::TooManyDocuments { url: at, limit: 3 } if at.as_str() == url), "{error:?}");
    assert_eq!(error.to_string(), format!("{url} references more than 3 documents (the spec included)"));
    assert_eq!(server.requests(), ["/0.json", "/1.json", "/2.json"]);
    // With room for the fifth document, the chain ends there: it does not exist.
    let error = Document::load(&url, &LoadOptions::new().with_max_documents(5)).await.unwrap_err();
    let fifth = server.url("/4.json");
    assert!(matches!(&error, Error::HttpStatus { url: at, status: 404 } if at.as_str() == fifth), "{error:?}");
}

#[tokio::test]
async fn all_the_documents_of_one_load_share_a_byte_budget() {
    let spec =
        json!({"openapi": "3.1.0", "components": {"schemas": {"A": {"$ref": "a.json"}, "B": {"$ref": "b.json"}}}});
    let spec_len = spec.to_string().len() as u64;
    let padded = |size: usize| {
        let mut bytes = br#"{"type": "object", "x-padding": ""#.to_vec();
        bytes.resize(size - 2, b'a');
        bytes.extend_from_slice(br#""}"#);
        Bytes::from(bytes)
    };
    let server = Server::start(vec![
        ("/specs/api.json", json_page(&spec)),
        // `a.json` declares its length; `b.json` comes chunked, without one.
        ("/specs/a.json", Page::Text { content_type: "application/json", body: padded(1000) }),
        ("/specs/b.json", Page::Chunked(vec![padded(1000)])),
    ])
    .await;
    let url = server.url("/specs/api.json");
    let within = |limit: u64| LoadOptions::new().with_max_total_bytes(limit);

    let total = spec_len + 2000;
    Document::load(&url, &within(total)).await.unwrap();
    for (limit, passed_at) in [(total - 1, "/specs/b.json"), (spec_len + 999, "/specs/a.json")] {
        let error = Document::load(&url, &within(limit)).await.unwrap_err();
        let at = server.url(passed_at);
        assert!(
            matches!(&error, Error::TotalTooLarge { url: spec, document, limit: l }
                if spec.as_str() == url && document.as_str() == at && *l == limit),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "{url} and the documents it references are larger than the limit of {limit} bytes for one load \
                 (passed while fetching {at})"
            )
        );
    }
    // The per-document limit still applies on its own.
    let error = Document::load(&url, &LoadOptions::new().with_max_bytes(999)).await.unwrap_err();
    assert!(matches!(&error, Error::TooLarge { limit: 999, .. }), "{error:?}");
}

#[tokio::test]
async fn one_load_has_a_time_budget_however_long_each_fetch_may_take() {
    let spec = json!({"openapi": "3.1.0", "components": {"schemas": {"A": {"$ref": "slow.json"}}}});
    let server = Server::start(vec![("/specs/api.json", json_page(&spec)), ("/specs/slow.json", Page::Silence)]).await;
    let url = server.url("/specs/api.json");
    let options = LoadOptions::new().with_total_timeout(Duration::from_millis(300));
    assert_eq!(options.timeout(), LoadOptions::DEFAULT_TIMEOUT);
    let error = Document::load(&url, &options).await.unwrap_err();
    assert!(
        matches!(&error, Error::LoadTimeout { url: at, after } if at.as_str() == url && *after == Duration::from_millis(300)),
        "{error:?}"
    );
    assert_eq!(error.to_string(), format!("loading {url} and the documents it references took longer than 0.3 s"));
    assert_eq!(server.requests(), ["/specs/api.json", "/specs/slow.json"]);
}
