//! The Swagger 2.0 documents of `@readme/oas-examples` (a pinned release, fetched by
//! `cargo xtask peers`), JSON and YAML: each converts to OpenAPI 3.0 and gives one tool
//! per operation, whose input schema compiles.

use serde_json::{Value, json};
use skill_openapi::{BodyKind, Document, Location, OperationFilter, SpecVersion, Style};

fn load(name: &str) -> Document {
    let path = test_peers::swagger_2_examples_or_panic().join(name);
    Document::from_file(&path).unwrap_or_else(|error| panic!("{error}"))
}

/// Operations of the original document, counted from its `paths`.
fn operations_of(name: &str) -> usize {
    let path = test_peers::swagger_2_examples_or_panic().join(name);
    let text = std::fs::read_to_string(path).unwrap();
    let original: Value = serde_json::from_str(&text).unwrap();
    let methods = ["get", "put", "post", "delete", "options", "head", "patch"];
    original["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|item| item.as_object().unwrap().keys().filter(|key| methods.contains(&key.as_str())).count())
        .sum()
}

#[test]
fn every_swagger_2_example_gives_one_tool_per_operation() {
    for stem in [
        "api-with-examples",
        "petstore-expanded",
        "petstore-minimal",
        "petstore-simple",
        "petstore-with-external-docs",
        "petstore",
        "schema-circular",
    ] {
        let expected = operations_of(&format!("json/{stem}.json"));
        for name in [format!("json/{stem}.json"), format!("yaml/{stem}.yaml")] {
            let document = load(&name);
            assert_eq!(document.version(), SpecVersion::V3_0, "{name}");
            let set = document.tools(&OperationFilter::default()).unwrap();
            assert!(set.skipped.is_empty(), "{name}: {:?}", set.skipped);
            assert_eq!(set.tools.len(), expected, "{name}");
            for tool in &set.tools {
                jsonschema::validator_for(&tool.input_schema)
                    .unwrap_or_else(|error| panic!("{name} {}: {error}", tool.name));
            }
        }
    }
}

#[test]
fn the_petstores_parameters_and_bodies_mean_what_they_meant() {
    let document = load("json/petstore.json");
    assert_eq!(document.root()["servers"], json!([{"url": "http://petstore.swagger.io/v2"}]));
    let set = document.tools(&OperationFilter::default()).unwrap();
    let tool = |name: &str| set.tools.iter().find(|tool| tool.name == name).unwrap_or_else(|| panic!("no {name}"));

    // `in: body` with `consumes: [application/json, application/xml]`: a JSON body.
    let add = tool("addPet");
    let body = add.request_body.as_ref().unwrap();
    assert_eq!((body.media_type.as_str(), body.kind, body.required), ("application/json", BodyKind::Json, true));
    assert_eq!(add.input_schema["properties"]["body"]["$ref"], "#/$defs/Pet");
    assert!(add.input_schema["$defs"]["Category"].is_object());

    // `collectionFormat: multi`: form, exploded.
    let by_status = tool("findPetsByStatus");
    let status = &by_status.parameters[0].spec;
    assert_eq!((status.location, status.style, status.explode), (Location::Query, Some(Style::Form), Some(true)));

    // `in: formData` with `consumes: [application/x-www-form-urlencoded]`: a form body.
    let form = tool("updatePetWithForm");
    let body = form.request_body.as_ref().unwrap();
    assert_eq!(body.kind, BodyKind::FormUrlEncoded);
    assert_eq!(form.input_schema["properties"]["body"]["properties"]["name"]["type"], "string");
    assert_eq!(form.parameters[0].spec.location, Location::Path);

    // A `type: file` form parameter: multipart, a binary string.
    let upload = tool("uploadFile");
    assert_eq!(upload.request_body.as_ref().unwrap().kind, BodyKind::Multipart);
    let file = &upload.input_schema["properties"]["body"]["properties"]["file"];
    assert_eq!((&file["type"], &file["format"]), (&json!("string"), &json!("binary")));

    // `securityDefinitions` are `securitySchemes`: an API key in a header, OAuth 2 implicit.
    let schemes = &document.root()["components"]["securitySchemes"];
    assert_eq!(schemes["api_key"], json!({"type": "apiKey", "name": "api_key", "in": "header"}));
    assert_eq!(
        schemes["petstore_auth"]["flows"]["implicit"]["authorizationUrl"],
        "http://petstore.swagger.io/oauth/dialog"
    );
}
