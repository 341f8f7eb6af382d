//! The `aauth` commands against the AAuth harness of `aauth-client`'s tests (an agent
//! provider, a person server and a resource that verify every signature): `enroll` and
//! `whoami` show who the agent is and no secret, `fetch` goes through the whole token dance, and the
//! key and the agent token stay in private files under `$OMNIAGENT_HOME/aauth/`.

use aauth_harness::Harness;

use crate::{Home, json, raw_http_status, run};

/// The harness, serving from its own runtime while the test runs the binary.
fn start_harness() -> (tokio::runtime::Runtime, Harness) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let harness = runtime.block_on(Harness::start());
    (runtime, harness)
}

fn home_for(harness: &Harness) -> Home {
    Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\naauth:\n  agent_provider: {}\n  allow_http_loopback: true\n",
        harness.ap
    ))
}

/// Nothing the harness issued, and not the agent key's private part, is in `text`.
fn assert_no_secret(harness: &Harness, home: &Home, text: &str) {
    for token in harness.issued_tokens() {
        assert!(!text.contains(&token), "a token leaked: {text}");
    }
    let key: serde_json::Value =
        serde_json::from_slice(&std::fs::read(home.path().join("aauth/agent.jwk")).unwrap()).unwrap();
    assert!(!text.contains(key["d"].as_str().unwrap()), "the private key leaked: {text}");
}

/// The person approves, on the person server's interaction `page`, the request `code`
/// names.
/// The first log message the Python client script relays (its `LOG {json}` lines on
/// `stderr`, each line read kept in `seen`): the interaction the gateway sent, and the
/// page it names.
fn interaction_log(stderr: &mut impl std::io::BufRead, seen: &mut String) -> (serde_json::Value, url::Url) {
    loop {
        let mut line = String::new();
        assert_ne!(stderr.read_line(&mut line).unwrap(), 0, "no log message:\n{seen}");
        seen.push_str(&line);
        if let Some(log) = line.strip_prefix("LOG ") {
            let log = serde_json::from_str::<serde_json::Value>(log).unwrap();
            let page = url::Url::parse(log["url"].as_str().unwrap()).unwrap();
            return (log, page);
        }
    }
}

fn approve(page: &url::Url, code: &str) {
    let form = format!("code={code}&decision=approve");
    let request = format!(
        "POST /interact HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{form}",
        form.len()
    );
    assert_eq!(raw_http_status(("127.0.0.1", page.port().unwrap()), &request), 200);
}

#[test]
fn enroll_then_whoami_reuses_the_agent_token_and_shows_no_secret() {
    let (_runtime, harness) = start_harness();
    let home = home_for(&harness);
    let (code, enrolled, stderr) = run(home.omniagent(&["aauth", "enroll"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(harness.count("ap.bootstrap"), 1);

    // Other processes reuse the key and the cached agent token.
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "aauth", "whoami"]));
    assert_eq!(code, 0, "{stderr}");
    let identity = json(&stdout);
    assert!(identity["agent_id"].as_str().unwrap().starts_with("aauth:"), "{identity}");
    assert!(identity["expires_in"].as_u64().unwrap() > 0, "{identity}");
    assert_eq!(identity["person_server"], harness.ps.as_str().trim_end_matches('/'));
    assert!(enrolled.contains(identity["thumbprint"].as_str().unwrap()), "{enrolled}");
    let (code, again, _) = run(home.omniagent(&["--json", "aauth", "whoami"]));
    assert_eq!(code, 0);
    // The same token, its lifetime counted down by the time between the two runs.
    let (mut again, mut identity) = (json(&again), identity);
    let (left, left_before) = (again["expires_in"].take(), identity["expires_in"].take());
    assert!(left.as_u64() <= left_before.as_u64(), "{left} seconds left after {left_before}");
    assert_eq!(again, identity);
    assert_eq!(harness.count("ap.bootstrap"), 1);

    // `enroll` asks for a new agent token, here naming the person server. AAuth has no
    // nonce: the same request signed twice in one second is a replay to the provider, so
    // the second process signs in the next second (the processes share the token folder).
    let (code, _, stderr) = run(home.omniagent(&["aauth", "enroll", "--ps", harness.ps.as_str()]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(harness.count("ap.bootstrap"), 2);

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let files: Vec<std::path::PathBuf> = std::fs::read_dir(home.path().join("aauth"))
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .filter(|path| path.extension().is_some_and(|extension| extension == "json" || extension == "jwk"))
            .collect();
        assert_eq!(files.len(), 2, "the key and one agent-token cache: {files:?}");
        for file in files {
            let mode = std::fs::metadata(&file).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{}", file.display());
        }
    }
    assert_no_secret(&harness, &home, &format!("{enrolled}{stdout}{again}{stderr}"));
}

#[test]
fn fetch_sends_a_signed_request_through_the_token_dance() {
    let (_runtime, harness) = start_harness();
    let home = home_for(&harness);
    let url = harness.resource.join("/data").unwrap();
    let (code, stdout, stderr) = run(home.omniagent(&[
        "-vv",
        "aauth",
        "fetch",
        "-X",
        "POST",
        "-H",
        "Content-Type: application/json",
        "-d",
        r#"{"query":"all"}"#,
        url.as_str(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let answer = json(&stdout);
    assert_eq!((answer["method"].as_str(), answer["body"].as_str()), (Some("POST"), Some(r#"{"query":"all"}"#)));
    assert_eq!(harness.count("resource.auth_token"), 1);
    assert_eq!(harness.count("ps.auth_token"), 1);
    assert_no_secret(&harness, &home, &format!("{stdout}{stderr}"));

    // A resource path that does not exist: the body still goes to stdout, exit code 1.
    let (code, _, stderr) =
        run(home.omniagent(&["aauth", "fetch", harness.resource.join("/nothing").unwrap().as_str()]));
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("HTTP 404"), "{stderr}");

    let (code, _, stderr) = run(home.omniagent(&["aauth", "fetch", "-H", "no colon", url.as_str()]));
    assert_eq!((code, stderr.trim()), (2, "error: -H no colon: write it as `Name: value`"));
}

#[test]
fn fetch_with_data_alone_posts_a_form_as_curl_does() {
    let (_runtime, harness) = start_harness();
    let home = home_for(&harness);
    let url = harness.resource.join("/data").unwrap();
    // Twice, back to back: the second command signs in another second than the first,
    // so the resource (which keeps a replay cache) takes both.
    for _ in 0..2 {
        let (code, stdout, stderr) = run(home.omniagent(&["aauth", "fetch", "-d", "a=1", url.as_str()]));
        assert_eq!(code, 0, "{stderr}");
        let answer = json(&stdout);
        assert_eq!((answer["method"].as_str(), answer["body"].as_str()), (Some("POST"), Some("a=1")));
    }
}

#[test]
fn without_an_agent_provider_the_commands_say_what_to_set() {
    let home = Home::new().with_config("compiled: {memory: {enabled: false}}\n");
    let (code, _, stderr) = run(home.omniagent(&["aauth", "whoami"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("set `aauth.agent_provider`"), "{stderr}");
}

/// The harness resource's `POST /data`, as an OpenAPI document.
const DATA_DOCUMENT: &str = r#"{"openapi": "3.1.0", "info": {"title": "Harness data", "version": "1"},
  "paths": {"/data": {"post": {"operationId": "query",
    "requestBody": {"required": true, "content": {"application/json": {"schema": {
      "type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}}}}},
    "responses": {"200": {"description": "the data"}}}}}}"#;

/// A home whose agent has the OpenAPI skill `data` (the harness's resource), every call
/// signed by its AAuth agent.
fn signed_data_home(harness: &Harness) -> Home {
    let home = Home::new();
    home.write("data.json", DATA_DOCUMENT);
    home.with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\naauth:\n  agent_provider: {}\n  allow_http_loopback: true\n\
         openapi:\n  data: {{spec: data.json, base_url: '{}', aauth: true}}\n",
        harness.ap, harness.resource
    ))
}

#[test]
fn an_openapi_skill_with_aauth_calls_as_the_agent() {
    let (_runtime, harness) = start_harness();
    let home = signed_data_home(&harness);
    let (code, stdout, stderr) =
        run(home.omniagent(&["--json", "tools", "call", "data__query", "--args", r#"{"body":{"query":"all"}}"#]));
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let answer = &json(&stdout)["structuredContent"];
    assert_eq!((answer["method"].as_str(), answer["scope"].as_str()), (Some("POST"), Some("data.read")));
    assert_eq!(answer["body"], r#"{"query":"all"}"#);
    // Enrolled, then three signed attempts at the resource (with the agent, person and auth
    // token) and the two token requests, every signature verified by the harness.
    for (step, count) in [
        ("ap.bootstrap", 1),
        ("resource.agent_token", 1),
        ("resource.person_token", 1),
        ("resource.auth_token", 1),
        ("verified", 6),
    ] {
        assert_eq!(harness.count(step), count, "{step}");
    }
    assert_no_secret(&harness, &home, &format!("{stdout}{stderr}"));
}

#[test]
fn an_openapi_skill_with_aauth_is_skipped_without_an_aauth_section() {
    let home = Home::new();
    home.write("data.json", DATA_DOCUMENT);
    let home = home.with_config(
        "compiled: {memory: {enabled: false}}\nskills: {tools: false}\n\
         openapi:\n  data: {spec: data.json, base_url: 'http://127.0.0.1:9', aauth: true}\n",
    );
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    assert_eq!(listing["tools"], serde_json::json!([]));
    assert_eq!(listing["skipped"][0]["skill"], "data");
    let reason = listing["skipped"][0]["reason"].as_str().unwrap();
    assert!(
        reason.ends_with(
            "`aauth: true`, but no AAuth agent provider: set `aauth.agent_provider` in the config (or pass --agent-provider)"
        ),
        "{reason}"
    );
}

#[test]
fn fetch_shows_the_interaction_and_a_person_approves_once() {
    let (runtime, harness) = start_harness();
    harness.set(|scenario| scenario.consent = aauth_harness::Consent::Interaction);
    let home = home_for(&harness);
    let url = harness.resource.join("/data").unwrap();
    let mut child = home
        .omniagent_process(&["aauth", "fetch", url.as_str()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();

    // The person reads the URL and the code on stderr while the request waits.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("action needed") {
        line.clear();
        assert_ne!(std::io::BufRead::read_line(&mut stderr, &mut line).unwrap(), 0, "no interaction on stderr");
    }
    let page = line.split("open ").nth(1).and_then(|rest| rest.split(' ').next()).expect("a URL to open");
    let code = page.split("code=").nth(1).expect("the code in the URL");
    assert!(line.contains(&format!("(code {code})")), "{line}");
    let page = url::Url::parse(page).unwrap();
    assert_eq!(page.path(), "/interact");
    // They decide once the request is polling.
    runtime.block_on(harness.wait_for_ps_polls(1));
    approve(&page, code);

    let output = child.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(0));
    assert_eq!(json(&String::from_utf8(output.stdout).unwrap())["method"], "GET");
    assert_eq!(harness.count("ps.interaction_decision"), 1);

    // Another command reuses the tokens: nobody is asked again.
    let (code, stdout, stderr) = run(home.omniagent(&["aauth", "fetch", url.as_str()]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(json(&stdout)["method"], "GET");
    assert!(!stderr.contains("action needed"), "{stderr}");
    assert_eq!(harness.count("ps.auth_token"), 1);
}

#[test]
fn fetch_errors_show_no_credentials_from_the_url() {
    let (_runtime, harness) = start_harness();
    let home = home_for(&harness);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://user:pw1@127.0.0.1:{closed}/items?key=s3cret");
    let (code, _, stderr) = run(home.omniagent(&["aauth", "fetch", &url]));
    assert_ne!(code, 0);
    assert!(stderr.contains(&format!("GET http://127.0.0.1:{closed}/items failed")), "{stderr}");
    for secret in ["pw1", "s3cret"] {
        assert!(!stderr.contains(secret), "{stderr}");
    }
}

/// Through `omniagent mcp serve`, a person's approval is asked of the MCP client that made
/// the call (a log message with the URL, the client not having declared URL elicitation),
/// while the call waits; nothing of it goes to the gateway's own stderr.
#[test]
fn through_the_gateway_the_interaction_reaches_the_calling_client() {
    let (runtime, harness) = start_harness();
    harness.set(|scenario| scenario.consent = aauth_harness::Consent::Interaction);
    let home = signed_data_home(&harness);
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_client.py");
    let mut client = std::process::Command::new(test_peers::mcp_python_or_panic())
        .arg(script)
        .args(["legacy", "stdio", env!("CARGO_BIN_EXE_omniagent"), "mcp", "serve"])
        .env("OMNIAGENT_HOME", home.path())
        .current_dir(home.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let plan = serde_json::json!({"calls": [["data__query", {"body": {"query": "all"}}]]});
    std::io::Write::write_all(&mut client.stdin.take().unwrap(), plan.to_string().as_bytes()).unwrap();

    let mut stderr = std::io::BufReader::new(client.stderr.take().unwrap());
    let mut seen = String::new();
    let (log, page) = interaction_log(&mut stderr, &mut seen);
    assert_eq!(page.path(), "/interact");
    let code = page.query_pairs().find(|(name, _)| name == "code").map(|(_, code)| code.into_owned()).unwrap();
    assert!(log["message"].as_str().unwrap().contains(&format!("(code {code})")), "{log}");
    runtime.block_on(harness.wait_for_ps_polls(1));
    approve(&page, &code);

    let output = client.wait_with_output().unwrap();
    seen.push_str(&String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "{seen}");
    let out = json(&String::from_utf8(output.stdout).unwrap());
    let answer = &out["calls"][0]["structuredContent"];
    assert_eq!((answer["method"].as_str(), answer["scope"].as_str()), (Some("POST"), Some("data.read")), "{out}");
    assert_eq!(harness.count("ps.interaction_decision"), 1);
    // The gateway's stderr reaches this client's: only the log message may say it.
    let printed = seen.lines().filter(|line| !line.starts_with("LOG ")).any(|line| line.contains("action needed"));
    assert!(!printed, "the gateway printed the interaction itself:\n{seen}");
}

/// Issue 15, "Must show": two `omniagent mcp serve --http` replicas (each its own
/// `OMNIAGENT_HOME`, one agent key, one `redis-server`), and the Python SDK's calls of the
/// signed OpenAPI tool alternating between them, back to back to one resource path. The
/// replicas share their AAuth state in Redis: one enrollment, one person approval, and
/// `created` strictly increasing across them, so the harness's replay cache refuses none.
#[test]
fn replicas_sharing_redis_sign_no_replay_and_ask_the_person_once() {
    const CALLS: usize = 24;
    let (runtime, harness) = start_harness();
    harness.set(|scenario| scenario.consent = aauth_harness::Consent::Interaction);
    let redis = test_peers::RedisServer::start();
    let keys = tempfile::tempdir().unwrap();
    let key = keys.path().join("aauth/agent.jwk");
    aauth_client::AgentKey::load_or_generate(&key).unwrap();
    let replica_home = || {
        let home = Home::new();
        home.write("data.json", DATA_DOCUMENT);
        home.with_config(&format!(
            "compiled: {{memory: {{enabled: false}}}}\nstorage: {{backend: redis, url: '{}'}}\n\
             aauth:\n  agent_provider: {}\n  allow_http_loopback: true\n  key: '{}'\n\
             openapi:\n  data: {{spec: data.json, base_url: '{}', aauth: true}}\n",
            redis.url(),
            harness.ap,
            key.display(),
            harness.resource
        ))
    };
    let homes = [replica_home(), replica_home()];
    let replicas: Vec<_> = homes.iter().map(|home| crate::gateway::HttpGateway::start(home, &[], &[])).collect();

    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/gateway/python_alternate.py");
    let mut client = std::process::Command::new(test_peers::mcp_python_or_panic())
        .arg(script)
        .arg("legacy")
        .args(replicas.iter().map(crate::gateway::HttpGateway::url))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let calls: Vec<_> = (0..CALLS).map(|_| serde_json::json!(["data__query", {"body": {"query": "all"}}])).collect();
    let plan = serde_json::json!({"calls": calls});
    std::io::Write::write_all(&mut client.stdin.take().unwrap(), plan.to_string().as_bytes()).unwrap();

    // The first call, on the first replica, waits for the person.
    let mut stderr = std::io::BufReader::new(client.stderr.take().unwrap());
    let mut seen = String::new();
    let (_, page) = interaction_log(&mut stderr, &mut seen);
    let code = page.query_pairs().find(|(name, _)| name == "code").map(|(_, code)| code.into_owned()).unwrap();
    runtime.block_on(harness.wait_for_ps_polls(1));
    approve(&page, &code);

    // Nobody is asked again: a second request for the person would wait for ever.
    loop {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stderr, &mut line).unwrap() == 0 {
            break;
        }
        seen.push_str(&line);
        if line.starts_with("LOG ") {
            let _ = client.kill();
            panic!("the person was asked again:\n{seen}");
        }
    }
    let output = client.wait_with_output().unwrap();
    assert!(output.status.success(), "{seen}");
    let out = json(&String::from_utf8(output.stdout).unwrap());
    let answers = out["calls"].as_array().unwrap();
    assert_eq!(answers.len(), CALLS);
    for (index, answer) in answers.iter().enumerate() {
        assert_eq!(answer["replica"], index % 2, "{answer}");
        let result = &answer["structuredContent"];
        assert_eq!(
            (result["method"].as_str(), result["scope"].as_str()),
            (Some("POST"), Some("data.read")),
            "{answer}"
        );
    }
    assert_eq!(out["logs"].as_array().unwrap().len(), 1, "the person was asked once: {out}");
    for (step, count) in [
        ("ap.bootstrap", 1),
        ("ps.person_token", 1),
        ("ps.auth_token", 1),
        ("ps.interaction_decision", 1),
        ("resource.auth_token", CALLS),
        ("rejected:replay", 0),
    ] {
        assert_eq!(harness.count(step), count, "{step}: {:?}", harness.counts());
    }
    assert_eq!(
        harness.counts().keys().filter(|step| step.starts_with("rejected:")).count(),
        0,
        "{:?}",
        harness.counts()
    );
    // The tokens are in Redis, not in the replicas' folders (which hold nothing of AAuth).
    for home in &homes {
        let aauth = home.path().join("aauth");
        let entries: Vec<_> =
            std::fs::read_dir(&aauth).map(|dir| dir.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        assert!(entries.is_empty(), "{entries:?}");
    }
    let redis_keys = redis_keys(&redis);
    assert!(redis_keys.iter().any(|key| key.starts_with("omniagent:aauth:agent-token-")), "{redis_keys:?}");
    assert!(redis_keys.iter().any(|key| key.starts_with("omniagent:aauth:resource-tokens-")), "{redis_keys:?}");
    assert!(harness.issued_tokens().iter().all(|token| !seen.contains(token.as_str())), "a token leaked");
}

/// Every key in `redis` (`KEYS *`, in RESP by hand).
fn redis_keys(redis: &test_peers::RedisServer) -> Vec<String> {
    use std::io::{BufRead as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", redis.port())).unwrap();
    stream.write_all(b"*2\r\n$4\r\nKEYS\r\n$1\r\n*\r\n").unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    let count: usize = line.trim().strip_prefix('*').unwrap().parse().unwrap();
    (0..count)
        .map(|_| {
            let (mut length, mut key) = (String::new(), String::new());
            reader.read_line(&mut length).unwrap();
            reader.read_line(&mut key).unwrap();
            key.trim_end().to_owned()
        })
        .collect()
}

/// With `storage.backend: redis` and the server down, an AAuth command fails saying the
/// shared state cannot be reached, and neither the URL nor its password shows, at any
/// verbosity.
#[test]
fn with_redis_down_aauth_commands_fail_without_showing_the_url() {
    let (_runtime, harness) = start_harness();
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("redis://:hunter2@127.0.0.1:{closed}/");
    let home = Home::new().with_config(&format!(
        "compiled: {{memory: {{enabled: false}}}}\nstorage: {{backend: redis, url: env:TEST_REDIS_URL}}\n\
         aauth:\n  agent_provider: {}\n  allow_http_loopback: true\n",
        harness.ap
    ));
    let mut whoami = home.omniagent(&["-vv", "aauth", "whoami"]);
    whoami.env("TEST_REDIS_URL", &url);
    let (code, stdout, stderr) = run(whoami);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stderr.contains("AAuth state in Redis: cannot read the agent token: cannot connect"), "{stderr}");
    assert!(!format!("{stdout}{stderr}").contains("hunter2"), "{stderr}");
    assert_eq!(harness.count("ap.bootstrap"), 0);
}
