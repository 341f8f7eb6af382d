//! Errors about a fetched document name its URL: redirects refused and never followed,
//! error statuses, documents that cannot be read, servers that cannot be reached.

use axum::body::Bytes;
use axum::http::StatusCode;
use serde_json::json;
use skill_openapi::Error;
use url::Url;

use super::{Page, SPEC, Server, json_page, load, yaml_page};

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
