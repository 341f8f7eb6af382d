//! OpenAPI documents through the CLI: configured in `openapi:`, listed with their source,
//! called with `tools call`, and checked by a real request validator (Stoplight's Prism,
//! which answers 422 to a request its document does not allow).

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use crate::{Home, json, raw_http_status, run};

/// The document Prism serves: parameters of several styles, and JSON, form and multipart
/// bodies, each with constraints a wrongly serialized request breaks.
fn prism_document() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/openapi/prism.yaml")
}

/// Prism serving `document` on a free port of 127.0.0.1, killed on drop.
struct Prism {
    child: Child,
    port: u16,
}

impl Prism {
    fn start(document: &Path) -> Self {
        Self::start_with(document, &[])
    }

    /// Prism serving `document` with its flags `flags` (`--errors`: a request it finds
    /// invalid is answered with a problem document, whatever responses the document lists).
    fn start_with(document: &Path, flags: &[&str]) -> Self {
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = Command::new(test_peers::prism_or_panic())
            .args(["mock", "--host", "127.0.0.1", "--port", &port.to_string()])
            .args(flags)
            .arg(document)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("prism starts");
        // Prism says when it listens; a Prism that exits first ends the stream. It logs
        // every request after that, so its output is drained until it exits.
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen = Vec::new();
        for line in stdout.by_ref() {
            let line = line.unwrap();
            if line.contains("Prism is listening") {
                std::thread::spawn(move || stdout.for_each(drop));
                return Prism { child, port };
            }
            seen.push(line);
        }
        let _ = child.kill();
        let status = child.wait();
        panic!("prism exited ({status:?}) before listening:\n{}", seen.join("\n"));
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The status Prism answers to a GET of `target` sent as is.
    fn raw_get_status(&self, target: &str) -> u16 {
        let request = format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
        raw_http_status(("127.0.0.1", self.port), &request)
    }

    /// The status Prism answers to a GET of `target` sent as is, with the header `name`.
    fn raw_get_status_with_header(&self, target: &str, name: &str, value: &str) -> u16 {
        let request =
            format!("GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n{name}: {value}\r\nConnection: close\r\n\r\n");
        raw_http_status(("127.0.0.1", self.port), &request)
    }
}

impl Drop for Prism {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn call(home: &Home, tool: &str, arguments: Value) -> Value {
    let (code, stdout, stderr) =
        run(home.omniagent(&["--json", "tools", "call", tool, "--args", &arguments.to_string()]));
    assert_eq!(code, 0, "{tool} {arguments}: {stdout}\n{stderr}");
    let result = json(&stdout);
    assert_eq!(result["isError"], false, "{tool}: {result}");
    result
}

#[test]
fn calls_pass_prisms_request_validation() {
    let prism = Prism::start(&prism_document());
    let config = format!(
        "compiled: {{memory: {{enabled: false}}}}\nskills: {{tools: false}}\nopenapi:\n  checks:\n    spec: {}\n    base_url: {}\n",
        prism_document().display(),
        prism.base_url()
    );
    // Uploads come from a folder outside `$OMNIAGENT_HOME`, all of which (but `skills/`)
    // is private to the agent.
    let uploads = tempfile::tempdir().unwrap();
    std::fs::write(uploads.path().join("report.bin"), "report bytes").unwrap();
    let home = Home::new().with_config(&format!("{config}    upload_folder: '{}'\n", uploads.path().display()));
    // The validator can fail: a form-exploded array where the document says `explode: false`.
    assert_eq!(
        prism
            .raw_get_status("/search?limit=5&tags=red&tags=green&ids=1%7C2&filter%5Bkind%5D=cat&filter%5Bage%5D=3&q=x"),
        422
    );

    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "checks__createOrder",
            "checks__createPet",
            "checks__getColors",
            "checks__getLabel",
            "checks__getPet",
            "checks__getPoint",
            "checks__search",
            "checks__upload"
        ]
    );
    let search = listing["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == "checks__search").unwrap();
    assert_eq!(search["source"], json!({"kind": "openapi", "skill": "checks", "tool": "search"}));

    let result = call(&home, "checks__getPet", json!({"petId": 12, "X-Trace-Ids": ["t1", "t2"], "session": "s-1"}));
    assert_eq!(result["structuredContent"], json!({"ok": true}));
    call(&home, "checks__getLabel", json!({"color": "blue"}));
    call(&home, "checks__getPoint", json!({"point": 5}));
    // Objects go out with their members in the caller's order (`R,100,G,200,B,150`), in
    // query and header, and Prism reads each as the object. Every style and location,
    // path and cookie too, is checked against the in-process server by skill-openapi's
    // `wire` tests; Prism 5 fails on object path parameters.
    let color = json!({"R": 100, "G": 200, "B": 150});
    call(&home, "checks__getColors", json!({"form": color, "X-Color": color}));
    // And it refuses a member that breaks the schema, so the call above was checked.
    assert_eq!(prism.raw_get_status_with_header("/colors?form=R,100,G,200,B,999", "X-Color", "R,1,G,2,B,3"), 422);
    call(
        &home,
        "checks__search",
        json!({"limit": 5, "tags": ["red", "green"], "ids": [1, 2], "filter": {"kind": "cat", "age": 3}, "q": "a&b=c d"}),
    );
    let created = call(&home, "checks__createPet", json!({"body": {"name": "rex", "tags": ["good"]}}));
    assert_eq!(created["structuredContent"], json!({"id": 1}));
    call(&home, "checks__createOrder", json!({"body": {"quantity": 2, "item": "apple", "note": "fresh & ripe"}}));
    call(&home, "checks__upload", json!({"body": {"title": "a report", "count": 2, "file": "aGVsbG8="}}));
    // A file from the skill's upload folder (relative to the config file's folder), and
    // never one outside it.
    call(&home, "checks__upload", json!({"body": {"title": "a report", "file": "file:report.bin"}}));
    let outside = home.write("outside.bin", "not for upload");
    let outside = json!({"body": {"title": "a report", "file": format!("file:{}", outside.display())}}).to_string();
    let (code, _, stderr) = run(home.omniagent(&["tools", "call", "checks__upload", "--args", &outside]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("outside the upload folder"), "{stderr}");
}

#[test]
fn a_document_that_cannot_load_skips_its_skill_only() {
    let home = Home::new();
    home.write("specs/swagger.yaml", "swagger: '1.2'\npaths: {}\n");
    home.write(
        "specs/good.yaml",
        "openapi: 3.0.3\ninfo: {title: Good, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\n\
         paths:\n  /ping:\n    get: {operationId: ping, responses: {'204': {description: pong}}}\n",
    );
    // Relative specs are taken from the config file's folder, not the working folder.
    let home = home.with_config(
        "compiled: {memory: {enabled: false}}\nopenapi:\n  good: {spec: specs/good.yaml}\n  \
         old: {spec: specs/swagger.yaml}\n  gone: {spec: specs/missing.json}\n\
         agents:\n  same: {}\n  slower: {openapi: {good: {timeout: 90s}}}\n",
    );
    let elsewhere = tempfile::tempdir().unwrap();
    let mut command = home.omniagent(&["--json", "tools", "list"]);
    command.current_dir(elsewhere.path());
    let (code, stdout, stderr) = run(command);
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["tools"][0]["name"], "good__ping");
    let skipped: Vec<(&str, &str)> = listing["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| (entry["skill"].as_str().unwrap(), entry["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped.len(), 2, "{skipped:?}");
    assert_eq!(skipped[0].0, "gone");
    assert!(skipped[0].1.contains("specs/missing.json"), "{skipped:?}");
    assert_eq!(skipped[1].0, "old");
    assert!(skipped[1].1.contains("swagger.yaml is Swagger 1.2, which is not supported"), "{skipped:?}");

    let (code, stdout, _) = run(home.omniagent(&["--json", "config", "check"]));
    assert_eq!(code, 1, "a document that cannot load fails the check");
    let documents: Vec<(Value, String, u64, bool)> = json(&stdout)["documents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|document| {
            (
                document["agent"].clone(),
                document["skill"].as_str().unwrap().to_owned(),
                document["tools"].as_u64().unwrap(),
                document["error"].is_null(),
            )
        })
        .collect();
    // An agent's skill is checked again only where its overrides change it.
    assert_eq!(
        documents,
        [
            (Value::Null, "gone".into(), 0, false),
            (Value::Null, "good".into(), 1, true),
            (Value::Null, "old".into(), 0, false),
            (json!("slower"), "good".into(), 1, true),
        ]
    );
    let (_, stdout, _) = run(home.omniagent(&["config", "check"]));
    assert!(stdout.contains("ok     openapi.good (1 tool)\n"), "{stdout}");
    assert!(stdout.contains("error  openapi.old: "), "{stdout}");
}

/// A server that answers every request with what it received: method, path and query as
/// sent, and the headers.
fn start_echo_server() -> (tokio::runtime::Runtime, String) {
    use axum::extract::Request;
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let address = listener.local_addr().unwrap();
    let app = axum::Router::new().fallback(|request: Request| async move {
        let headers: serde_json::Map<String, Value> = request
            .headers()
            .iter()
            .map(|(name, value)| (name.to_string(), Value::String(value.to_str().unwrap_or_default().to_owned())))
            .collect();
        let body = json!({"target": request.uri().to_string(), "headers": headers}).to_string();
        ([(axum::http::header::CONTENT_TYPE, "application/json")], body)
    });
    runtime.spawn(async move { axum::serve(listener, app).await });
    (runtime, format!("http://{address}"))
}

#[test]
fn credentials_come_from_the_auth_section_and_the_agents_secrets() {
    let (_runtime, base_url) = start_echo_server();
    let home = Home::new();
    home.write(
        "echo.yaml",
        "openapi: 3.1.0\ninfo: {title: Echo, version: '1'}\n\
         components:\n  securitySchemes:\n    bearer: {type: http, scheme: bearer}\n    \
         key: {type: apiKey, in: query, name: api_key}\n\
         security: [{bearer: [], key: []}]\n\
         paths:\n  /echo:\n    get: {operationId: echo, responses: {'200': {description: what was received}}}\n",
    );
    let key_file = home.write("key.txt", "k3y-from-a-file\n");
    let home = home.with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nskills: {{tools: false}}\nopenapi:\n  echo:\n    spec: echo.yaml\n    base_url: {base_url}\n    \
         auth:\n      bearer: {{token_env: ECHO_TOKEN}}\n      api_key: {{api_key_env: ECHO_KEY}}\n    \
         secrets: {{ECHO_KEY: 'file:{}'}}\n",
        key_file.display()
    ));
    let mut command = home.omniagent(&["--json", "tools", "call", "echo__echo"]);
    command.env("ECHO_TOKEN", "t0ken-from-the-env");
    let (code, stdout, stderr) = run(command);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let received = &json(&stdout)["structuredContent"];
    assert_eq!(received["target"], "/echo?api_key=k3y-from-a-file");
    assert_eq!(received["headers"]["authorization"], "Bearer t0ken-from-the-env");

    // Without the token's variable the skill is skipped, naming the secret, and nothing is sent.
    let mut command = home.omniagent(&["--json", "tools", "list"]);
    command.env_remove("ECHO_TOKEN");
    let (code, stdout, stderr) = run(command);
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["tools"], json!([]));
    assert_eq!(listing["skipped"][0]["skill"], "echo");
    assert!(listing["skipped"][0]["reason"].as_str().unwrap().contains("ECHO_TOKEN"), "{listing}");
}

#[test]
fn documents_cannot_refer_to_the_agents_private_files() {
    let home = Home::new();
    // A spec beside `$OMNIAGENT_HOME/aauth/` and the config file, whose parameter schemas
    // are taken from a token cache and from the config (which holds a token).
    home.write("aauth/agent-token-0123456789abcdef.json", r#"{"agent_token": "s3cret-token"}"#);
    home.write(
        "api.yaml",
        "openapi: 3.1.0\ninfo: {title: Nosy, version: '1'}\nservers: [{url: 'http://127.0.0.1:9'}]\n\
         paths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n        \
         - {name: q, in: query, schema: {$ref: 'aauth/agent-token-0123456789abcdef.json'}}\n  \
         /b:\n    get:\n      operationId: b\n      parameters:\n        \
         - {name: q, in: query, schema: {$ref: 'config.yaml#/openapi/nosy/auth'}}\n",
    );
    let home = home.with_config(
        "compiled: {memory: {enabled: false}}\nskills: {tools: false}\n\
         openapi:\n  nosy: {spec: api.yaml, auth: {bearer: {token: 'literal:sk-live-s3cret'}}}\n",
    );
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    for secret in ["s3cret-token", "sk-live-s3cret"] {
        assert!(!stdout.contains(secret), "{stdout}");
        assert!(!stderr.contains(secret), "{stderr}");
    }
    let listing = json(&stdout);
    let tools = listing["tools"].as_array().unwrap();
    let skipped = listing["skipped"].as_array().unwrap();
    assert!(tools.is_empty() && skipped.is_empty(), "both operations are left out, with a warning: {listing}");
    assert_eq!(stderr.matches("private").count(), 2, "{stderr}");
}

#[test]
fn file_secrets_and_the_homes_state_are_private_too() {
    let home = Home::new();
    let project = tempfile::tempdir().unwrap();
    // A `file:` secret beside a spec outside the home, and the home's state beside a spec
    // in it: neither may become a tool's schema.
    std::fs::write(project.path().join("token.json"), r#"{"token": "s3cret-file"}"#).unwrap();
    home.write("state/notes.json", r#"{"note": "s3cret-state"}"#);
    let spec = |reference: &str| {
        format!(
            "openapi: 3.1.0\ninfo: {{title: Nosy, version: '1'}}\nservers: [{{url: 'http://127.0.0.1:9'}}]\n\
             paths:\n  /a:\n    get:\n      operationId: a\n      parameters:\n        \
             - {{name: q, in: query, schema: {{$ref: '{reference}'}}}}\n"
        )
    };
    std::fs::write(project.path().join("api.yaml"), spec("token.json")).unwrap();
    home.write("api.yaml", &spec("state/notes.json"));
    let home = home.with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nskills: {{tools: false}}\n\
         openapi:\n  outside: {{spec: '{}', auth: {{bearer: {{token: 'file:{}'}}}}}}\n  inside: {{spec: api.yaml}}\n",
        project.path().join("api.yaml").display(),
        project.path().join("token.json").display(),
    ));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    for secret in ["s3cret-file", "s3cret-state"] {
        assert!(!stdout.contains(secret) && !stderr.contains(secret), "{stdout}\n{stderr}");
    }
    assert_eq!(json(&stdout)["tools"], serde_json::json!([]), "{stdout}");
    assert_eq!(stderr.matches("private").count(), 2, "{stderr}");
}

#[test]
fn a_document_without_a_server_gives_its_tools_and_each_call_says_what_to_set() {
    let home = Home::new();
    home.write(
        "api.yaml",
        "openapi: 3.1.0\ninfo: {title: Relative, version: '1'}\nservers: [{url: /v1}]\n\
         paths:\n  /a:\n    get:\n      operationId: a\n  /b:\n    get:\n      operationId: b\n",
    );
    let home = home.with_config("compiled: {memory: {enabled: false}}\nopenapi:\n  rel: {spec: api.yaml}\n");
    let expected = "calls need `openapi.rel.base_url`: server URL `/v1` in";
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["rel__a", "rel__b", "skills__activate", "skills__read"]);
    assert_eq!(stderr.matches(expected).count(), 1, "said once: {stderr}");
    let (code, _, stderr) = run(home.omniagent(&["config", "check"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches(expected).count(), 1, "said once: {stderr}");
    let (code, _, stderr) = run(home.omniagent(&["tools", "call", "rel__a"]));
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("error: `a`: {expected}")), "{stderr}");
}

#[test]
fn config_show_hides_credentials_in_urls() {
    let home = Home::new().with_config(
        "openapi:\n  remote:\n    spec: 'https://user:pw1@example.com/spec.json?key=s3cret'\n    \
         base_url: 'https://api:pw2@example.com/v1?t=t0k'\n",
    );
    for args in [&["config", "show"][..], &["--json", "config", "show"]] {
        let (code, stdout, stderr) = run(home.omniagent(args));
        assert_eq!(code, 0, "{stderr}");
        for secret in ["pw1", "s3cret", "pw2", "t0k"] {
            assert!(!stdout.contains(secret), "{stdout}");
        }
        assert!(stdout.contains("https://example.com/spec.json?key=REDACTED"), "{stdout}");
    }
}

/// Issue 13: a keyword the validator cannot use (a Java regex, an enum of strings for an
/// integer) is left out of its tool's input schema, with a note; the tool and the rest of
/// its schema stay, and `config check` says what went.
#[test]
fn issue_13_a_bad_pattern_or_enum_costs_only_itself() {
    let (_runtime, base_url) = start_echo_server();
    let home = Home::new();
    home.write(
        "paint.yaml",
        "openapi: 3.0.3\ninfo: {title: Paint, version: '1'}\n\
         paths:\n  /mix:\n    get:\n      operationId: mix\n      parameters:\n        \
         - {name: colour, in: query, required: true, schema: {type: string, pattern: '^\\p{XDigit}{6}$', maxLength: 6}}\n        \
         - {name: size, in: query, schema: {type: integer, enum: ['1', '2']}}\n  \
         /clean:\n    get: {operationId: clean}\n",
    );
    let home = home.with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nopenapi:\n  paint: {{spec: paint.yaml, base_url: '{base_url}'}}\n"
    ));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["paint__clean", "paint__mix", "skills__activate", "skills__read"]);
    assert_eq!(listing["skipped_tools"], json!([]));
    let left_out: Vec<(&str, &str, &str)> = listing["left_out_keywords"]
        .as_array()
        .unwrap()
        .iter()
        .map(|part| {
            (part["tool"].as_str().unwrap(), part["location"].as_str().unwrap(), part["keyword"].as_str().unwrap())
        })
        .collect();
    assert_eq!(left_out, [("mix", "/properties/colour", "pattern"), ("mix", "/properties/size", "enum")]);
    let mix = &listing["tools"][1];
    assert!(
        mix["description"].as_str().unwrap().ends_with(
            "Not checked (left out of the input schema): pattern at /properties/colour; enum at /properties/size."
        ),
        "{mix}"
    );
    assert_eq!(mix["input_schema"]["properties"]["colour"], json!({"type": "string", "maxLength": 6}));
    // What the list reports is not logged again, unless asked.
    assert_eq!(stderr, "");
    let (_, _, verbose) = run(home.omniagent(&["-v", "--json", "tools", "list"]));
    assert!(verbose.contains("`pattern` at `/properties/colour` left out of the input schema"), "{verbose}");

    let (code, stdout, stderr) = run(home.omniagent(&["config", "check"]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert_eq!(stderr, "");
    assert!(stdout.contains("openapi.paint (2 tools)"), "{stdout}");
    assert!(
        stdout.contains("openapi.paint: tool mix: `pattern` at /properties/colour left out of its input schema: "),
        "{stdout}"
    );
    let (code, stdout, _) = run(home.omniagent(&["--json", "config", "check"]));
    assert_eq!(code, 0);
    assert_eq!(json(&stdout)["documents"][0]["left_out_keywords"][1]["keyword"], "enum");

    // The tool calls; what is left of its schema is still checked.
    let received = call(&home, "paint__mix", json!({"colour": "C0FFEE", "size": 3}));
    assert_eq!(received["structuredContent"]["target"], "/mix?colour=C0FFEE&size=3");
    let (code, _, stderr) = run(home.omniagent(&["tools", "call", "paint__mix", "--args", r#"{"colour":"C0FFEE00"}"#]));
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("/colour: \"C0FFEE00\" is longer than 6 characters"), "{stderr}");
}

/// Issue 13: a Swagger 2.0 document (`@readme/oas-examples`' petstore) gives its tools,
/// and their calls pass the validation of Prism serving the original 2.0 document: a JSON
/// body from `in: body`, a form body from `in: formData`, a multipart upload from a
/// `type: file`, `collectionFormat: multi` and `csv` arrays, and the API key header of
/// its `securityDefinitions`.
#[test]
fn issue_13_swagger_2_calls_pass_prisms_validation_of_the_original_document() {
    let petstore = test_peers::swagger_2_examples_or_panic().join("json/petstore.json");
    let prism = Prism::start_with(&petstore, &["--errors"]);
    let home = Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nskills: {{tools: false}}\nopenapi:\n  pets:\n    spec: '{}'\n    base_url: '{}'\n    \
         auth: {{api_key: {{api_key: special-key, name: api_key, in: header}}, bearer: {{token: t0ken}}}}\n",
        petstore.display(),
        prism.base_url()
    ));
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let mut names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names.len(), 20, "{names:?}");
    assert!(names.contains(&"pets__uploadFile") && names.contains(&"pets__createUsersWithArrayInput"), "{names:?}");
    assert_eq!((&listing["skipped"], &listing["skipped_tools"]), (&json!([]), &json!([])));

    // Prism checks the security the 2.0 document asks for: without the API key, 401.
    assert_eq!(prism.raw_get_status("/pet/7"), 401);

    // Prism answers with the responses the document lists, which for some operations are
    // only errors (`addPet` lists 405 alone, `updatePet` 400, 404 and 405): what matters
    // is that it did not refuse the request, which `--errors` makes it say in a problem
    // document of its own.
    let accepted = |tool: &str, arguments: Value| {
        let (_, stdout, stderr) =
            run(home.omniagent(&["--json", "tools", "call", tool, "--args", &arguments.to_string()]));
        let result = json(&stdout);
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        let refused = text.contains("stoplight.io/prism/errors") || text.starts_with("HTTP 401");
        assert!(!refused && result["content"].is_array(), "{tool} {arguments}: {stdout}\n{stderr}");
    };
    let pet = json!({"id": 7, "name": "doggie", "photoUrls": ["https://example.com/a.png"], "status": "available"});
    accepted("pets__addPet", json!({"body": pet}));
    accepted("pets__updatePet", json!({"body": pet}));
    accepted("pets__findPetsByStatus", json!({"status": ["available", "sold"]}));
    accepted("pets__getPetById", json!({"petId": 7}));
    accepted("pets__updatePetWithForm", json!({"petId": 7, "body": {"name": "rex", "status": "sold"}}));
    accepted("pets__uploadFile", json!({"petId": 7, "body": {"additionalMetadata": "a photo", "file": "aGVsbG8="}}));
    accepted("pets__deletePet", json!({"petId": 7, "api_key": "special-key"}));
    accepted("pets__placeOrder", json!({"body": {"id": 1, "petId": 7, "quantity": 2, "status": "placed"}}));
    accepted("pets__loginUser", json!({"username": "alice", "password": "s3cret"}));
    accepted("pets__createUsersWithArrayInput", json!({"body": [{"id": 1, "username": "alice"}]}));
    // The check can fail: a pet id that is no integer.
    assert_eq!(prism.raw_get_status_with_header("/pet/abc", "api_key", "special-key"), 400);
    assert_eq!(prism.raw_get_status_with_header("/pet/7", "api_key", "special-key"), 200);
}
