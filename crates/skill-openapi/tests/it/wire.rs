//! Every row of the OAS 3.1.1 style table (§4.8.12.4), sent by `Endpoint::call` to a real
//! HTTP server on 127.0.0.1 that records each request as it arrived: the request target
//! before any decoding, the headers and the body. Path (`matrix`, `label`, `simple`), query
//! (`form`, `spaceDelimited`, `pipeDelimited`, `deepObject`), header (`simple`), cookie
//! (`form`) and `application/x-www-form-urlencoded` bodies (the query styles through the
//! Encoding Object), each with explode false and true, each with the table's four values.
//! A cell the table leaves _n/a_ is a call-time error naming the parameter, and nothing is
//! sent.
//!
//! The table's object is `{"R": 100, "G": 200, "B": 150}`, its members in that order, which
//! is not their names' order: every style sends them as the caller gave them. Parameters given by `content` and `allowReserved`
//! are checked the same way.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use serde_json::{Value, json};
use skill_core::ToolError;
use skill_openapi::{Document, Endpoint, OperationFilter, default_client};

/// One request as the server received it.
#[derive(Debug, Clone)]
pub(crate) struct Recorded {
    pub(crate) method: String,
    /// The request target (path and query) exactly as sent, before percent-decoding.
    pub(crate) target: String,
    pub(crate) headers: HeaderMap,
    pub(crate) body: Vec<u8>,
}

impl Recorded {
    /// A header's value as text (`None` when absent).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(|value| value.to_str().expect("an ASCII header value"))
    }
}

type Log = Arc<Mutex<Vec<Recorded>>>;

/// An HTTP server on 127.0.0.1 that records every request and answers `200 ok`.
pub(crate) struct Recorder {
    pub(crate) base_url: String,
    log: Log,
}

impl Recorder {
    pub(crate) async fn start() -> Self {
        let log = Log::default();
        let app = Router::new().fallback(record).with_state(Arc::clone(&log));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Recorder { base_url, log }
    }

    /// The requests received since the last call, oldest first.
    pub(crate) fn take(&self) -> Vec<Recorded> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

async fn record(State(log): State<Log>, request: Request) -> &'static str {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap().to_vec();
    let target = parts.uri.path_and_query().map_or_else(String::new, |target| target.as_str().to_owned());
    log.lock().unwrap().push(Recorded { method: parts.method.to_string(), target, headers: parts.headers, body });
    "ok"
}

/// Calls the one operation of `document` with `arguments` against `server`: the request
/// the server received, or the call's error (and then the server received nothing).
pub(crate) async fn call_one(server: &Recorder, document: Value, arguments: Value) -> Result<Recorded, ToolError> {
    let document = Document::from_value("/specs/wire.json", document).unwrap();
    let tools = document.tools(&OperationFilter::default()).unwrap().tools;
    assert_eq!(tools.len(), 1);
    let endpoint = Endpoint::new(&document, Some(&server.base_url), Vec::new()).unwrap();
    let result = endpoint.call(&default_client(), &tools[0], &arguments).await;
    let mut received = server.take();
    match result {
        Ok(output) => {
            assert!(!output.is_error, "{output:?}");
            assert_eq!(received.len(), 1);
            Ok(received.remove(0))
        }
        Err(error) => {
            assert!(received.is_empty(), "a refused call sent {received:?}");
            Err(error)
        }
    }
}

/// The table's four values: undefined, string, array, object.
fn values() -> [Value; 4] {
    [json!(null), json!("blue"), json!(["blue", "black", "brown"]), json!({"R": 100, "G": 200, "B": 150})]
}

/// One cell: what is sent, or the end of the error that refuses the value.
#[derive(Debug, Clone, Copy)]
enum Cell {
    Sent(&'static str),
    Refused(&'static str),
}
use Cell::{Refused, Sent};

const NA_UNDEFINED: Cell = Refused("cannot serialize an undefined (null or empty) value");
const NA_STRING: Cell = Refused("cannot serialize a primitive value");
const NA_EXPLODE_TRUE: Cell = Refused("with explode true is undefined");
const NA_EXPLODE_FALSE: Cell = Refused("with explode false is undefined");

/// A row: style, explode, and the cells for undefined, string, array and object.
type Row = (&'static str, bool, [Cell; 4]);

/// Checks each cell of `rows`: `sent` reads what the server received for the cell; a
/// refused cell's one problem names `field` (the argument) and `parameter`.
async fn check_rows(
    server: &Recorder,
    rows: &[Row],
    (field, parameter): (&str, &str),
    document: impl Fn(&str, bool) -> Value,
    arguments: impl Fn(Value) -> Value,
    sent: impl Fn(&Recorded) -> String,
) {
    for &(style, explode, cells) in rows {
        for (value, cell) in values().into_iter().zip(cells) {
            let what = format!("{style} explode {explode} with {value}");
            let result = call_one(server, document(style, explode), arguments(value)).await;
            match (cell, result) {
                (Sent(expect), Ok(recorded)) => assert_eq!(sent(&recorded), expect, "{what}"),
                (Refused(end), Err(ToolError::InvalidArguments { tool, problems })) => {
                    assert_eq!(tool, "row");
                    assert_eq!(problems.len(), 1, "{what}: {problems:?}");
                    let start = format!("{field}: parameter `{parameter}`: style `{style}` ");
                    assert!(problems[0].starts_with(&start) && problems[0].ends_with(end), "{what}: {problems:?}");
                }
                (cell, result) => panic!("{what}: expected {cell:?}, got {result:?}"),
            }
        }
    }
}

fn parameter_document(name: &str, location: &str, path: &str, style: &str, explode: bool) -> Value {
    json!({
        "openapi": "3.1.0",
        "paths": {path: {"get": {
            "operationId": "row",
            "parameters": [{"name": name, "in": location, "required": location == "path", "style": style, "explode": explode, "schema": {}}]
        }}}
    })
}

#[tokio::test]
async fn path_rows() {
    let server = Recorder::start().await;
    let rows: [Row; 6] = [
        (
            "matrix",
            false,
            [Sent(";color"), Sent(";color=blue"), Sent(";color=blue,black,brown"), Sent(";color=R,100,G,200,B,150")],
        ),
        (
            "matrix",
            true,
            [
                Sent(";color"),
                Sent(";color=blue"),
                Sent(";color=blue;color=black;color=brown"),
                Sent(";R=100;G=200;B=150"),
            ],
        ),
        // Undefined is `.`, a whole segment here, which URLs remove (see below).
        (
            "label",
            false,
            [
                Refused("which URLs remove (RFC 3986 §5.2.4)"),
                Sent(".blue"),
                Sent(".blue,black,brown"),
                Sent(".R,100,G,200,B,150"),
            ],
        ),
        (
            "label",
            true,
            [
                Refused("which URLs remove (RFC 3986 §5.2.4)"),
                Sent(".blue"),
                Sent(".blue.black.brown"),
                Sent(".R=100.G=200.B=150"),
            ],
        ),
        ("simple", false, [Sent(""), Sent("blue"), Sent("blue,black,brown"), Sent("R,100,G,200,B,150")]),
        ("simple", true, [Sent(""), Sent("blue"), Sent("blue,black,brown"), Sent("R=100,G=200,B=150")]),
    ];
    for (style, explode, cells) in rows {
        for (value, cell) in values().into_iter().zip(cells) {
            let what = format!("{style} explode {explode} with {value}");
            let document = parameter_document("color", "path", "/colors/{color}", style, explode);
            let result = call_one(&server, document, json!({"color": value})).await;
            match (cell, result) {
                (Sent(expect), Ok(recorded)) => assert_eq!(recorded.target, format!("/colors/{expect}"), "{what}"),
                (Refused(end), Err(ToolError::InvalidArguments { problems, .. })) => {
                    assert_eq!(problems, [format!("/color: the value makes the path segment `.`, {end}")], "{what}");
                }
                (cell, result) => panic!("{what}: expected {cell:?}, got {result:?}"),
            }
        }
    }

    // The table's `.` itself, where it does not make a whole segment.
    for explode in [false, true] {
        let document = parameter_document("color", "path", "/colors{color}", "label", explode);
        let recorded = call_one(&server, document, json!({"color": null})).await.unwrap();
        assert_eq!(recorded.target, "/colors.");
    }
}

/// The query rows of the OAS 3.1.1 style table, without the `?`: also the rows of
/// `application/x-www-form-urlencoded` bodies (§4.8.15, Encoding Object `style`).
const QUERY_ROWS: [Row; 8] = [
    (
        "form",
        false,
        [Sent("color="), Sent("color=blue"), Sent("color=blue,black,brown"), Sent("color=R,100,G,200,B,150")],
    ),
    (
        "form",
        true,
        [Sent("color="), Sent("color=blue"), Sent("color=blue&color=black&color=brown"), Sent("R=100&G=200&B=150")],
    ),
    (
        "spaceDelimited",
        false,
        [NA_UNDEFINED, NA_STRING, Sent("color=blue%20black%20brown"), Sent("color=R%20100%20G%20200%20B%20150")],
    ),
    ("spaceDelimited", true, [NA_EXPLODE_TRUE; 4]),
    (
        "pipeDelimited",
        false,
        [NA_UNDEFINED, NA_STRING, Sent("color=blue%7Cblack%7Cbrown"), Sent("color=R%7C100%7CG%7C200%7CB%7C150")],
    ),
    ("pipeDelimited", true, [NA_EXPLODE_TRUE; 4]),
    ("deepObject", false, [NA_EXPLODE_FALSE; 4]),
    // The table's n/a cells follow the bracket convention of the npm `qs` parser and
    // Stripe: nothing for an undefined value, the bare pair for a string, `color[]` per item.
    (
        "deepObject",
        true,
        [
            Sent(""),
            Sent("color=blue"),
            Sent("color%5B%5D=blue&color%5B%5D=black&color%5B%5D=brown"),
            Sent("color%5BR%5D=100&color%5BG%5D=200&color%5BB%5D=150"),
        ],
    ),
];

#[tokio::test]
async fn query_rows() {
    let server = Recorder::start().await;
    check_rows(
        &server,
        &QUERY_ROWS,
        ("/color", "color"),
        |style, explode| parameter_document("color", "query", "/q", style, explode),
        |value| json!({"color": value}),
        // A value that sends nothing leaves no `?` either.
        |recorded| {
            let query = recorded.target.strip_prefix("/q").expect("the path");
            query.strip_prefix('?').unwrap_or(query).to_owned()
        },
    )
    .await;
}

#[tokio::test]
async fn header_rows() {
    let server = Recorder::start().await;
    let rows: [Row; 2] = [
        ("simple", false, [Sent(""), Sent("blue"), Sent("blue,black,brown"), Sent("R,100,G,200,B,150")]),
        ("simple", true, [Sent(""), Sent("blue"), Sent("blue,black,brown"), Sent("R=100,G=200,B=150")]),
    ];
    check_rows(
        &server,
        &rows,
        ("/X-Color", "X-Color"),
        |style, explode| parameter_document("X-Color", "header", "/h", style, explode),
        |value| json!({"X-Color": value}),
        |recorded| recorded.header("x-color").expect("the header is sent").to_owned(),
    )
    .await;
}

#[tokio::test]
async fn cookie_rows() {
    let server = Recorder::start().await;
    let rows: [Row; 2] = [
        (
            "form",
            false,
            [Sent("color="), Sent("color=blue"), Sent("color=blue,black,brown"), Sent("color=R,100,G,200,B,150")],
        ),
        (
            "form",
            true,
            [
                Sent("color="),
                Sent("color=blue"),
                Sent("color=blue; color=black; color=brown"),
                Sent("R=100; G=200; B=150"),
            ],
        ),
    ];
    check_rows(
        &server,
        &rows,
        ("/color", "color"),
        |style, explode| parameter_document("color", "cookie", "/c", style, explode),
        |value| json!({"color": value}),
        |recorded| recorded.header("cookie").expect("a Cookie header").to_owned(),
    )
    .await;
}

#[tokio::test]
async fn form_urlencoded_body_rows() {
    let server = Recorder::start().await;
    let document = |style: &str, explode: bool| {
        json!({
            "openapi": "3.1.0",
            "paths": {"/form": {"post": {
                "operationId": "row",
                "requestBody": {"required": true, "content": {"application/x-www-form-urlencoded": {
                    "schema": {"type": "object", "properties": {"color": {}}},
                    "encoding": {"color": {"style": style, "explode": explode}}
                }}}
            }}}
        })
    };
    check_rows(
        &server,
        &QUERY_ROWS,
        ("/body", "color"),
        document,
        |value| json!({"body": {"color": value}}),
        |recorded| {
            assert_eq!((recorded.method.as_str(), recorded.target.as_str()), ("POST", "/form"));
            assert_eq!(recorded.header("content-type"), Some("application/x-www-form-urlencoded"));
            String::from_utf8(recorded.body.clone()).unwrap()
        },
    )
    .await;
}
