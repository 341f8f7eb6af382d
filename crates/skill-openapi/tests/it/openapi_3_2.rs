//! An OpenAPI 3.2 document, written as YAML to a file and loaded as a user's would be,
//! called end to end against a real HTTP server on 127.0.0.1 that records each request as
//! it arrived: a QUERY operation (the `query` field) whose `in: querystring` parameter is
//! the whole query string, form-urlencoded with its Encoding Object; an
//! `additionalOperations` method (`PURGE`) with a JSON query string; a JSON Lines body
//! given by `itemSchema`; security requirements that name a scheme by URI and avoid a
//! deprecated one. What 3.2 adds that tools do not use (`$self`, tag `kind` and `parent`,
//! `oauth2MetadataUrl`, the device authorization flow, response `itemSchema`) loads.

use serde_json::json;
use skill_core::Skill;
use skill_openapi::{
    ApiKeyLocation, Credential, Document, Endpoint, LoadOptions, Location, OpenApiConfig, OpenApiSkill,
    OperationFilter, OperationTool, SpecVersion, default_client,
};

use crate::wire::Recorder;

const CATALOG: &str = r##"openapi: 3.2.0
$self: https://catalog.example.com/openapi.yaml
info:
  title: Catalog
  version: "1"
tags:
  - name: products
    kind: nav
  - name: search
    parent: products
servers:
  - url: https://catalog.example.com
    name: production
components:
  securitySchemes:
    legacyKey:
      type: apiKey
      in: query
      name: key
      deprecated: true
    token:
      type: http
      scheme: bearer
    oauth:
      type: oauth2
      oauth2MetadataUrl: https://auth.example.com/.well-known/oauth-authorization-server
      flows:
        deviceAuthorization:
          deviceAuthorizationUrl: https://auth.example.com/device
          tokenUrl: https://auth.example.com/token
          scopes:
            read: Read the catalog
  mediaTypes:
    Selection:
      schema:
        type: object
        properties:
          term: {type: string}
          filter:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          sort: {type: string}
      encoding:
        filter:
          style: deepObject
security:
  - legacyKey: []
  - "#/components/securitySchemes/token": []
paths:
  /products:
    query:
      operationId: searchProducts
      summary: Search the products
      tags: [search]
      parameters:
        - name: selection
          in: querystring
          required: true
          content:
            application/x-www-form-urlencoded:
              $ref: "#/components/mediaTypes/Selection"
      requestBody:
        content:
          application/json:
            schema:
              type: object
              properties:
                fields: {type: array, items: {type: string}}
      responses:
        "200":
          description: The products found, as they are found.
          content:
            application/jsonl:
              itemSchema:
                type: object
                properties:
                  id: {type: integer}
    additionalOperations:
      PURGE:
        operationId: purgeProducts
        summary: Purge cached products
        parameters:
          - name: filter
            in: querystring
            content:
              application/json:
                schema: {type: object}
        responses:
          "204":
            description: Purged.
  /events:
    post:
      operationId: sendEvents
      requestBody:
        required: true
        content:
          application/jsonl:
            itemSchema:
              type: object
              properties:
                kind: {type: string}
              required: [kind]
      responses:
        "202":
          description: Accepted.
"##;

/// The catalog written to a YAML file in a temporary folder (kept alive with it).
fn catalog_file() -> (tempfile::TempDir, String) {
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("catalog.yaml");
    std::fs::write(&path, CATALOG).unwrap();
    (folder, path.to_str().unwrap().to_owned())
}

fn tool<'t>(tools: &'t [OperationTool], name: &str) -> &'t OperationTool {
    tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no tool {name}"))
}

#[tokio::test]
async fn a_query_operation_sends_its_querystring_parameter_as_the_whole_query_string() {
    let (_folder, path) = catalog_file();
    let document = Document::load(&path, &LoadOptions::new()).await.unwrap();
    assert_eq!(document.version(), SpecVersion::V3_2);
    let set = document.tools(&OperationFilter::default()).unwrap();
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    let names: Vec<(&str, &str)> = set.tools.iter().map(|tool| (tool.name.as_str(), tool.method.as_str())).collect();
    assert_eq!(names, [("searchProducts", "QUERY"), ("purgeProducts", "PURGE"), ("sendEvents", "POST")]);
    let search = tool(&set.tools, "searchProducts");
    assert_eq!(search.parameters[0].spec.location, Location::QueryString);
    for tool in &set.tools {
        jsonschema::validator_for(&tool.input_schema).unwrap_or_else(|error| panic!("{}: {error}", tool.name));
    }

    let server = Recorder::start().await;
    // Both credentials are at hand: the bearer token goes, not the deprecated key, and the
    // requirement that names the token by URI is satisfied.
    let credentials = vec![
        Credential::ApiKey { value: "old-k3y".into(), name: None, location: Some(ApiKeyLocation::Query) },
        Credential::Bearer { token: "t0ken".into() },
    ];
    let endpoint = Endpoint::new(&document, Some(&server.base_url), credentials).unwrap();
    let client = default_client();
    let arguments = json!({
        "selection": {"term": "red shoes", "filter": {"size": 9, "color": "red"}, "sort": "price"},
        "body": {"fields": ["id", "name"]}
    });
    let output = endpoint.call(&client, search, &arguments).await.unwrap();
    assert!(!output.is_error, "{output:?}");
    let received = server.take();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.method, "QUERY");
    assert_eq!(request.target, "/products?term=red+shoes&filter%5Bsize%5D=9&filter%5Bcolor%5D=red&sort=price");
    assert_eq!(request.header("authorization"), Some("Bearer t0ken"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.body, br#"{"fields":["id","name"]}"#);

    // A form query string must be an object: nothing is sent.
    let error = endpoint.call(&client, search, &json!({"selection": "term=x"})).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid arguments for `searchProducts`: /selection: parameter `selection`: a form-urlencoded query string \
         must be a JSON object, one property per field, not a primitive value"
    );
    assert!(server.take().is_empty());
}

#[tokio::test]
async fn an_additional_operation_and_a_json_lines_body() {
    let (_folder, path) = catalog_file();
    let document = Document::load(&path, &LoadOptions::new()).await.unwrap();
    let tools = document.tools(&OperationFilter::default()).unwrap().tools;
    let server = Recorder::start().await;
    let endpoint =
        Endpoint::new(&document, Some(&server.base_url), vec![Credential::Bearer { token: "t".into() }]).unwrap();
    let client = default_client();

    let arguments = json!({"filter": {"brand": "acme", "older than": "7d"}});
    endpoint.call(&client, tool(&tools, "purgeProducts"), &arguments).await.unwrap();
    let request = server.take().remove(0);
    assert_eq!(request.method, "PURGE");
    assert_eq!(request.target, "/products?%7B%22brand%22%3A%22acme%22%2C%22older%20than%22%3A%227d%22%7D");

    let arguments = json!({"body": [{"kind": "viewed"}, {"kind": "bought", "n": 2}]});
    endpoint.call(&client, tool(&tools, "sendEvents"), &arguments).await.unwrap();
    let request = server.take().remove(0);
    assert_eq!((request.method.as_str(), request.target.as_str()), ("POST", "/events"));
    assert_eq!(request.header("content-type"), Some("application/jsonl"));
    assert_eq!(request.body, b"{\"kind\":\"viewed\"}\n{\"kind\":\"bought\",\"n\":2}\n");
}

#[tokio::test]
async fn the_skill_gives_query_read_only_and_idempotent_hints() {
    let (_folder, path) = catalog_file();
    let mut config = OpenApiConfig::new(path);
    config.base_url = Some("http://127.0.0.1:9".to_owned());
    let mut skill = OpenApiSkill::new("catalog", config);
    skill.init().await.unwrap();
    // Read-only, destructive and idempotent, per tool.
    let hints: Vec<(String, [Option<bool>; 3])> = skill
        .tools()
        .iter()
        .map(|tool| {
            let hints = tool.annotations();
            (tool.name().to_owned(), [hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint])
        })
        .collect();
    assert_eq!(
        hints,
        [
            ("searchProducts".to_owned(), [Some(true), None, Some(true)]),
            ("purgeProducts".to_owned(), [Some(false), None, None]),
            ("sendEvents".to_owned(), [Some(false), Some(false), Some(false)]),
        ]
    );
}
