//! Loading specs by URL under the fetch rules of issue 5, against a real HTTP server run in
//! process (axum on 127.0.0.1:0) that records every path requested: redirects refused and
//! never followed, the size limit enforced while the body streams in, refs of fetched
//! documents kept to http(s) and to the spec's folder, referenced documents fetched up
//! front.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE, LOCATION, TRANSFER_ENCODING};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use skill_openapi::{Document, DocumentOrigin, Error, LoadOptions, OperationFilter, SpecVersion};
use url::Url;

const MIB: usize = 1024 * 1024;

/// What the server answers at one path.
#[derive(Debug, Clone)]
enum Page {
    /// A body with its `Content-Type` (and a `Content-Length`).
    Text { content_type: &'static str, body: Bytes },
    /// A redirect to `location`.
    Redirect { status: StatusCode, location: String },
    /// A JSON body sent in these chunks, without `Content-Length`.
    Chunked(Vec<Bytes>),
    /// No answer, ever.
    Silence,
}

fn json_page(value: &Value) -> Page {
    Page::Text { content_type: "application/json", body: Bytes::from(value.to_string()) }
}

fn yaml_page(text: &str) -> Page {
    Page::Text { content_type: "application/yaml", body: Bytes::from(text.to_owned()) }
}

#[derive(Debug)]
struct Site {
    pages: HashMap<String, Page>,
    requests: Mutex<Vec<String>>,
}

async fn answer(State(site): State<Arc<Site>>, uri: Uri) -> Response {
    site.requests.lock().unwrap().push(uri.path().to_owned());
    match site.pages.get(uri.path()).cloned() {
        None => StatusCode::NOT_FOUND.into_response(),
        Some(Page::Text { content_type, body }) => ([(CONTENT_TYPE, content_type)], body).into_response(),
        Some(Page::Redirect { status, location }) => (status, [(LOCATION, location)]).into_response(),
        Some(Page::Chunked(chunks)) => (
            [(CONTENT_TYPE, "application/json")],
            Body::from_stream(futures_util::stream::iter(chunks.into_iter().map(Ok::<_, Infallible>))),
        )
            .into_response(),
        Some(Page::Silence) => std::future::pending().await,
    }
}

struct Server {
    base: Url,
    site: Arc<Site>,
}

impl Server {
    async fn start(pages: Vec<(&str, Page)>) -> Server {
        Self::start_with(|_| pages).await
    }

    /// A server whose pages may name its own URL, `base`.
    async fn start_with<'a>(pages: impl FnOnce(&Url) -> Vec<(&'a str, Page)>) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        let pages = pages(&base).into_iter().map(|(path, page)| (path.to_owned(), page)).collect();
        let site = Arc::new(Site { pages, requests: Mutex::new(Vec::new()) });
        let app = Router::new().fallback(answer).with_state(Arc::clone(&site));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { base, site }
    }

    fn url(&self, path: &str) -> String {
        self.base.join(path).unwrap().to_string()
    }

    fn requests(&self) -> Vec<String> {
        self.site.requests.lock().unwrap().clone()
    }
}

async fn load(url: &str) -> Result<Document, Error> {
    Document::load(url, &LoadOptions::new()).await
}

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

const SPEC: &str = "openapi: 3.0.3\npaths:\n  /pets:\n    get:\n      operationId: listPets\n";

#[tokio::test]
async fn redirects_are_refused_naming_the_location_and_never_followed() {
    for status in [301, 302, 307, 308] {
        let status = StatusCode::from_u16(status).unwrap();
        let server = Server::start_with(|base| {
            let location = base.join("/target.yaml").unwrap().to_string();
            vec![("/api.yaml", Page::Redirect { status, location }), ("/target.yaml", yaml_page(SPEC))]
        })
        .await;
        let (url, location) = (server.url("/api.yaml"), server.url("/target.yaml"));
        let error = load(&url).await.unwrap_err();
        assert!(
            matches!(&error, Error::Redirect { url: at, status: s, location: Some(l) }
                if at.as_str() == url && *s == status.as_u16() && *l == location),
            "{error:?}"
        );
        assert_eq!(error.to_string(), format!("{url} answered {status} to {location}, and redirects are not followed"),);
        assert_eq!(server.requests(), ["/api.yaml"], "the redirect target is never requested");
    }
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
async fn a_fetched_document_may_not_reference_a_local_file() {
    let spec = json!({"openapi": "3.1.0", "components": {"schemas": {"Secret": {"$ref": "file:///etc/passwd"}}}});
    let server = Server::start(vec![("/api.json", json_page(&spec))]).await;
    let url = server.url("/api.json");
    let error = load(&url).await.unwrap_err();
    assert!(
        matches!(&error, Error::RefNotHttp { reference, document: DocumentOrigin::Url(at) }
            if reference == "file:///etc/passwd" && at.as_str() == url),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        format!("$ref `file:///etc/passwd` in {url} is refused: a fetched document may reference only http(s) URLs")
    );
}

#[tokio::test]
async fn a_fetched_document_may_not_climb_out_of_the_spec_folder() {
    let spec = json!({"openapi": "3.1.0", "paths": {"/secret": {"$ref": "../secret.yaml"}}});
    let server =
        Server::start(vec![("/specs/api.json", json_page(&spec)), ("/secret.yaml", yaml_page("get: {}\n"))]).await;
    let url = server.url("/specs/api.json");
    let error = load(&url).await.unwrap_err();
    assert!(
        matches!(&error, Error::RefOutsideSpecFolder { reference, document: DocumentOrigin::Url(at) }
            if reference == "../secret.yaml" && at.as_str() == url),
        "{error:?}"
    );
    assert_eq!(error.to_string(), format!("$ref `../secret.yaml` in {url} points outside the spec's folder"));
    assert_eq!(server.requests(), ["/specs/api.json"], "/secret.yaml is never requested");
}

#[tokio::test]
async fn a_schema_cycle_across_two_fetched_documents_loads_as_defs() {
    let api = "openapi: 3.1.0
paths:
  /items:
    post:
      operationId: createItem
      requestBody:
        content:
          application/json:
            schema: {$ref: '#/components/schemas/A'}
components:
  schemas:
    A:
      type: object
      properties:
        b: {$ref: 'b.yaml#/B'}
";
    let b = "B:\n  type: object\n  properties:\n    a: {$ref: 'api.yaml#/components/schemas/A'}\n";
    let server = Server::start(vec![("/specs/api.yaml", yaml_page(api)), ("/specs/b.yaml", yaml_page(b))]).await;
    let document = load(&server.url("/specs/api.yaml")).await.unwrap();
    assert_eq!(server.requests(), ["/specs/api.yaml", "/specs/b.yaml"], "each document is fetched once");

    let set = document.tools(&OperationFilter::default()).unwrap();
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    let schema = &set.tools[0].input_schema;
    assert_eq!(schema["properties"]["body"], json!({"$ref": "#/$defs/A"}));
    assert_eq!(schema["$defs"]["A"]["properties"]["b"], json!({"$ref": "#/$defs/B"}));
    assert_eq!(schema["$defs"]["B"]["properties"]["a"], json!({"$ref": "#/$defs/A"}));
    let validator = jsonschema::validator_for(schema).unwrap();
    assert!(validator.is_valid(&json!({"body": {"b": {"a": {"b": {}}}}})));
    assert!(!validator.is_valid(&json!({"body": {"b": {"a": {"b": 1}}}})));
}

#[tokio::test]
async fn a_spec_referencing_a_document_beside_it_gets_its_parameters_and_schemas() {
    let spec = json!({
        "openapi": "3.0.3",
        "paths": {"/pets": {"get": {
            "operationId": "listPets",
            "parameters": [{"$ref": "common/parameters.yaml#/limit"}]
        }}}
    });
    let parameters =
        "limit:\n  name: limit\n  in: query\n  schema: {$ref: '#/Limit'}\nLimit:\n  type: integer\n  maximum: 100\n";
    let server = Server::start(vec![
        ("/v1/openapi.json", json_page(&spec)),
        ("/v1/common/parameters.yaml", Page::Text { content_type: "text/plain", body: Bytes::from(parameters) }),
    ])
    .await;
    let url = server.url("/v1/openapi.json");
    let document = load(&url).await.unwrap();
    assert_eq!(document.url().map(Url::as_str), Some(url.as_str()));
    assert_eq!(document.path(), None);
    let tool = &document.tools(&OperationFilter::default()).unwrap().tools[0];
    assert_eq!(tool.name, "listPets");
    assert_eq!(tool.parameters[0].argument, "limit");
    assert_eq!(tool.input_schema["properties"]["limit"], json!({"$ref": "#/$defs/Limit"}));
    assert_eq!(tool.input_schema["$defs"]["Limit"], json!({"type": "integer", "maximum": 100}));
    jsonschema::validator_for(&tool.input_schema).unwrap();
}

#[tokio::test]
async fn yaml_is_read_by_content_type_or_by_extension() {
    let server = Server::start(vec![
        ("/openapi", yaml_page(SPEC)),
        ("/spec.yml", Page::Text { content_type: "text/plain", body: Bytes::from(SPEC) }),
        ("/guess", Page::Text { content_type: "application/octet-stream", body: Bytes::from(SPEC) }),
    ])
    .await;
    for path in ["/openapi", "/spec.yml", "/guess"] {
        let document = load(&server.url(path)).await.unwrap();
        assert_eq!(document.version(), SpecVersion::V3_0, "{path}");
        assert_eq!(document.tools(&OperationFilter::default()).unwrap().tools[0].name, "listPets", "{path}");
    }
}

#[tokio::test]
async fn errors_about_a_fetched_document_name_its_url() {
    let server = Server::start(vec![
        ("/swagger.json", json_page(&json!({"swagger": "1.2"}))),
        ("/broken.json", Page::Text { content_type: "application/json", body: Bytes::from("openapi: 3.1.0") }),
        ("/dangling.json", json_page(&json!({"openapi": "3.1.0", "paths": {"/a": {"$ref": "gone.json"}}}))),
    ])
    .await;

    let url = server.url("/missing.yaml");
    let error = load(&url).await.unwrap_err();
    assert!(matches!(&error, Error::HttpStatus { url: at, status: 404 } if at.as_str() == url), "{error:?}");
    assert_eq!(error.to_string(), format!("{url} answered 404 Not Found"));

    let url = server.url("/swagger.json");
    let error = load(&url).await.unwrap_err();
    assert!(
        matches!(&error, Error::UnsupportedSwagger { document, .. } if document.url().map(Url::as_str) == Some(&url))
    );
    assert!(error.to_string().starts_with(&format!("{url} is Swagger 1.2")), "{error}");

    let url = server.url("/broken.json");
    let error = load(&url).await.unwrap_err();
    assert!(matches!(&error, Error::Parse { format: "JSON", .. }), "{error:?}");
    assert!(error.to_string().starts_with(&format!("{url} is not valid JSON: ")), "{error}");

    // A referenced document that cannot be fetched fails the whole load.
    let error = load(&server.url("/dangling.json")).await.unwrap_err();
    let gone = server.url("/gone.json");
    assert!(matches!(&error, Error::HttpStatus { url: at, status: 404 } if at.as_str() == gone), "{error:?}");
}

#[tokio::test]
async fn an_unreachable_server_fails_naming_the_url_and_the_cause() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/api.yaml");
    let error = load(&url).await.unwrap_err();
    assert!(matches!(&error, Error::Fetch { url: at, .. } if at.as_str() == url), "{error:?}");
    let message = error.to_string();
    assert!(message.starts_with(&format!("cannot fetch {url}: ")), "{message}");
    assert!(message.to_ascii_lowercase().contains("refused"), "{message}");
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
async fn a_source_that_is_not_a_url_is_a_file_and_a_broken_url_is_named() {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("api.yaml");
    std::fs::write(&path, SPEC).unwrap();
    let document = load(path.to_str().unwrap()).await.unwrap();
    assert_eq!(document.origin(), &DocumentOrigin::File(path.clone()));
    assert_eq!(document.url(), None);

    let error = load("http://[::1/api.yaml").await.unwrap_err();
    assert!(matches!(&error, Error::InvalidUrl { url, .. } if url == "http://[::1/api.yaml"), "{error:?}");
    assert!(error.to_string().starts_with("`http://[::1/api.yaml` is not a URL that can be fetched: "), "{error}");
}

#[tokio::test]
async fn a_fetched_spec_may_reference_no_other_host_and_nothing_outside_its_folder() {
    let other = Server::start(vec![("/specs/x.json", json_page(&json!({"a": 1})))]).await;
    let refs = [
        other.url("/specs/x.json"),
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        "http://10.0.0.1/specs/x.json".to_owned(),
        "//localhost/specs/x.json".to_owned(),
        "/x.yaml".to_owned(),
        "/specs-old/x.yaml".to_owned(),
    ];
    for reference in refs {
        let spec = json!({"openapi": "3.1.0", "components": {"schemas": {"X": {"$ref": reference}}}});
        let server = Server::start(vec![("/specs/api.json", json_page(&spec)), ("/x.yaml", yaml_page("a: 1\n"))]).await;
        let url = server.url("/specs/api.json");
        let error = load(&url).await.unwrap_err();
        assert!(
            matches!(&error, Error::RefOutsideSpecFolder { reference: r, document: DocumentOrigin::Url(at) }
                if *r == reference && at.as_str() == url),
            "{reference}: {error:?}"
        );
        assert_eq!(error.to_string(), format!("$ref `{reference}` in {url} points outside the spec's folder"));
        assert_eq!(server.requests(), ["/specs/api.json"], "{reference} is never requested");
    }
    assert!(other.requests().is_empty(), "the other host is never asked");

    // A ref written as an absolute (or root-relative) URL into the spec's own folder is fine.
    let server = Server::start_with(|base| {
        let absolute = base.join("/specs/common.json#/Limit").unwrap().to_string();
        let spec = json!({"openapi": "3.1.0", "components": {"schemas": {
            "A": {"$ref": absolute}, "B": {"$ref": "/specs/common.json#/Limit"}
        }}});
        vec![
            ("/specs/api.json", json_page(&spec)),
            ("/specs/common.json", json_page(&json!({"Limit": {"type": "integer"}}))),
        ]
    })
    .await;
    load(&server.url("/specs/api.json")).await.unwrap();
    assert_eq!(server.requests(), ["/specs/api.json", "/specs/common.json"]);
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
