//! Refs of fetched documents: kept to http(s) and to the spec's folder on its own host,
//! the documents they reference fetched up front.

use axum::body::Bytes;
use serde_json::json;
use skill_openapi::{DocumentOrigin, Error, OperationFilter};
use url::Url;

use super::{Page, Server, json_page, load, yaml_page};

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
