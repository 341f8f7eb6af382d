//! What a source is read as: YAML by Content-Type or by extension, a path as a file, and a
//! broken URL named.

use axum::body::Bytes;
use skill_openapi::{DocumentOrigin, Error, OperationFilter, SpecVersion};

use super::{Page, SPEC, Server, load, yaml_page};

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
