//! Parameters given by `content`, `allowReserved`, and the values a header or a cookie
//! cannot carry.

use serde_json::json;
use skill_openapi::default_client;

use super::{Api, sent};
use crate::wire::Recorder;

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
