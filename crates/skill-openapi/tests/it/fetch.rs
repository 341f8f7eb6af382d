//! Loading specs by URL under the fetch rules of issue 5, against a real HTTP server run in
//! process (axum on 127.0.0.1:0) that records every path requested: redirects refused and
//! never followed, the size limit enforced while the body streams in, refs of fetched
//! documents kept to http(s) and to the spec's folder, referenced documents fetched up
//! front.

mod credentials;
mod errors;
mod limits;
mod refs;
mod sources;

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::{CONTENT_TYPE, LOCATION};
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use skill_openapi::{Document, Error, LoadOptions};
use url::Url;

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

const SPEC: &str = "openapi: 3.0.3\npaths:\n  /pets:\n    get:\n      operationId: listPets\n";
