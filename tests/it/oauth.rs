//! OAuth for a remote MCP server, end to end over real HTTP: a real authorization server
//! (npm `oidc-provider`, OpenID certified, run by `tests/fixtures/oauth/provider.mjs` with
//! dynamic registration, PKCE, resource indicators, short-lived JWT access tokens and
//! refresh tokens, and interactions that complete themselves) and a real protected MCP
//! server (`mcp-sample-server --http --oauth-issuer`, which checks each token's
//! signature, issuer, audience, expiry and scopes). The test plays the browser: it
//! follows the redirects of the URL `omniagent mcp login` prints, keeping cookies, to the
//! login's loopback listener. No person takes part. The same login also reaches the
//! gateway itself as a resource server (`serve.oauth`).

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use test_peers::sample_server_or_panic as sample_server;

use crate::{Home, json, run};

/// The server's name in the config.
const SERVER: &str = "remote";
/// A value only the server's environment has, which its `env` tool (the one that needs
/// the extra scope `mcp:admin`) answers.
const ADMIN_VALUE: (&str, &str) = ("OMNIAGENT_OAUTH_TEST_VALUE", "stepped up");

/// `oidc-provider` on a free loopback port, stopped when dropped.
struct Provider {
    child: Child,
    /// Held open: the script stops when its stdin ends, so it never outlives the test.
    _stdin: ChildStdin,
    issuer: String,
    /// The lines it printed after `listening on`: one per grant it issued.
    events: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

impl Provider {
    fn start() -> Self {
        let install = test_peers::oidc_provider_or_panic();
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/oauth/provider.mjs");
        let mut child = std::process::Command::new(test_peers::oidc_provider_node(&install))
            .arg(script)
            .arg(test_peers::oidc_provider_package(&install))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("node runs the provider");
        let stdin = child.stdin.take().unwrap();
        let stderr = collect(child.stderr.take().unwrap());
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let Some(issuer) = first.trim_end().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the provider did not start: {first:?}\n{}", stderr.lock().unwrap());
        };
        let issuer = issuer.to_owned();
        let events = Arc::new(Mutex::new(Vec::new()));
        let lines = events.clone();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Self { child, _stdin: stdin, issuer, events, stderr }
    }

    /// How many grants of `grant_type` the token endpoint issued.
    fn grants(&self, grant_type: &str) -> usize {
        let expected = json!({"event": "grant.success", "grant_type": grant_type}).to_string();
        self.events.lock().unwrap().iter().filter(|line| **line == expected).count()
    }

    /// The scopes of each authorization request the provider accepted, in order.
    fn authorization_scopes(&self) -> Vec<String> {
        let events = self.events.lock().unwrap();
        let events = events.iter().filter_map(|line| serde_json::from_str::<Value>(line).ok());
        events
            .filter(|event| event["event"] == "authorization.accepted")
            .filter_map(|event| event["scope"].as_str().map(str::to_owned))
            .collect()
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Collects what `stream` says, on a thread.
fn collect(mut stream: impl std::io::Read + Send + 'static) -> Arc<Mutex<String>> {
    let text = Arc::new(Mutex::new(String::new()));
    let written = text.clone();
    std::thread::spawn(move || {
        let mut buffer = [0; 4096];
        while let Ok(read @ 1..) = stream.read(&mut buffer) {
            written.lock().unwrap().push_str(&String::from_utf8_lossy(&buffer[..read]));
        }
    });
    text
}

/// The protected MCP server, ended when dropped.
struct ProtectedServer {
    child: Child,
    url: String,
}

impl ProtectedServer {
    fn start(issuer: &str) -> Self {
        let mut child = std::process::Command::new(sample_server())
            .args(["--http", "127.0.0.1:0", "--oauth-issuer", issuer])
            .env(ADMIN_VALUE.0, ADMIN_VALUE.1)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("mcp-sample-server starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let Some(url) = first.trim_end().strip_prefix("listening on ") else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("mcp-sample-server did not start: {first:?}");
        };
        let url = url.to_owned();
        // Its later stderr is not read: drained, so that it never blocks.
        collect(stderr);
        Self { child, url }
    }
}

impl Drop for ProtectedServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The config of `home` with the protected server at `url`, with `oauth` settings.
fn config(url: &str, oauth: &str) -> String {
    format!("compiled: {{memory: {{enabled: false}}}}\nmcp:\n  servers:\n    {SERVER}:\n      url: {url}\n{oauth}")
}

/// Everything the commands of one test printed, to look for tokens in.
#[derive(Default)]
struct Outputs(Vec<String>);

impl Outputs {
    fn run(&mut self, command: assert_cmd::Command) -> (i32, String, String) {
        let (code, stdout, stderr) = run(command);
        self.0.push(format!("{stdout}{stderr}"));
        (code, stdout, stderr)
    }

    /// `omniagent mcp login SERVER --no-browser`, with the test as the browser.
    fn log_in(&mut self, home: &Home) -> (i32, String, String) {
        let mut login = Ended(
            home.omniagent_process(&["mcp", "login", SERVER, "--no-browser"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("omniagent runs"),
        );
        let stderr = collect(login.0.stderr.take().unwrap());
        let mut stdout = BufReader::new(login.0.stdout.take().unwrap());
        let mut said = String::new();
        for _ in 0..2 {
            stdout.read_line(&mut said).unwrap();
        }
        let url = said.lines().nth(1).map(str::to_owned);
        let browsed = url.as_deref().map(play_the_browser);
        let mut rest = String::new();
        stdout.read_to_string(&mut rest).unwrap();
        let code = login.0.wait().unwrap().code().expect("omniagent exits by itself");
        let stderr = stderr.lock().unwrap().clone();
        let stdout = format!("{said}{rest}");
        self.0.push(format!("{stdout}{stderr}"));
        assert!(said.starts_with(&format!("Open this URL to log in to `{SERVER}`:\n")), "{stdout}{stderr}");
        let browsed = browsed.expect("a URL on the second line");
        assert!(browsed.visited_interaction, "the provider asked for a login: {:?}", browsed.path);
        (code, stdout, stderr)
    }

    /// Fails when any output holds one of `tokens`.
    fn assert_none_holds(&self, tokens: &[String]) {
        for (output_idx, output) in self.0.iter().enumerate() {
            for token in tokens {
                assert!(!output.contains(token.as_str()), "output {output_idx} shows a token:\n{output}");
            }
        }
    }
}

/// A child process, killed when dropped (a login still waiting when the test fails).
struct Ended(Child);

impl Drop for Ended {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a browser went.
struct Browsed {
    path: Vec<String>,
    visited_interaction: bool,
}

/// Opens `url` as a browser would with no person at it: follows every redirect (at most
/// 12), keeping the cookies the provider sets, until a page answers 200; that page must be
/// the login's loopback listener.
fn play_the_browser(url: &str) -> Browsed {
    let mut cookies = BTreeMap::new();
    let mut next = url::Url::parse(url).expect("the login prints a URL");
    let mut path = Vec::new();
    for _ in 0..12 {
        path.push(format!("{}{}", next.origin().ascii_serialization(), next.path()));
        let (status, headers) = get(&next, &cookies);
        for cookie in headers.iter().filter(|(name, _)| name == "set-cookie").map(|(_, value)| value) {
            let pair = cookie.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                cookies.insert(name.trim().to_owned(), value.trim().to_owned());
            }
        }
        let location = headers.iter().find(|(name, _)| name == "location").map(|(_, value)| value);
        match (status, location) {
            (300..=399, Some(location)) => next = next.join(location).expect("a valid redirect"),
            (200, None) => {
                assert_eq!(next.path(), "/callback", "the browser ended on the login's listener: {path:?}");
                let visited_interaction = path.iter().any(|step| step.contains("/interaction/"));
                return Browsed { path, visited_interaction };
            }
            _ => panic!("the browser got {status} at {next}: {path:?}"),
        }
    }
    panic!("too many redirects: {path:?}")
}

/// `GET url` over HTTP/1.1 with `cookies`: the status and the headers (names lowercase).
fn get(url: &url::Url, cookies: &BTreeMap<String, String>) -> (u16, Vec<(String, String)>) {
    let host = url.host_str().expect("a host");
    let port = url.port_or_known_default().expect("a port");
    let mut stream = std::net::TcpStream::connect((host, port)).expect("the server listens");
    stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    let cookie = cookies.iter().map(|(name, value)| format!("{name}={value}")).collect::<Vec<_>>().join("; ");
    let cookie = if cookie.is_empty() { String::new() } else { format!("Cookie: {cookie}\r\n") };
    let request = format!("GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\n{cookie}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).unwrap();
    let response = String::from_utf8_lossy(&response);
    let head = response.split("\r\n\r\n").next().unwrap_or_default();
    let mut lines = head.split("\r\n");
    let status = lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|status| status.parse().ok());
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    (status.expect("an HTTP status line"), headers)
}

/// The token file's access and refresh tokens.
fn tokens_in(file: &Path) -> (String, String) {
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    let token = |name: &str| stored["token_response"][name].as_str().expect("a token").to_owned();
    (token("access_token"), token("refresh_token"))
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The access-token lifetime the token file says, in seconds.
fn expires_in(file: &Path) -> u64 {
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    stored["token_response"]["expires_in"].as_u64().expect("expires_in")
}

#[test]
fn a_remote_server_is_logged_in_to_called_refreshed_and_stepped_up_without_a_person() {
    let provider = Provider::start();
    let server = ProtectedServer::start(&provider.issuer);
    let home = Home::new().with_config(&config(&server.url, ""));
    let token_file: PathBuf = home.path().join("oauth/default").join(format!("{SERVER}.json"));
    let mut outputs = Outputs::default();

    // Before a login: skipped, naming the command that logs in.
    let (code, stdout, stderr) = outputs.run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let skipped = &json(&stdout)["skipped"];
    assert_eq!(skipped[0]["skill"], json!(SERVER), "{stdout}");
    let login_hint = format!("the server requires an OAuth login: run `omniagent mcp login {SERVER}`");
    assert!(skipped[0]["reason"].as_str().unwrap().contains(&login_hint), "{stdout}");

    // The login: dynamic registration, PKCE, the resource indicator, the provider's own
    // login and consent, the redirect to the loopback listener, the code exchange.
    let (code, stdout, stderr) = outputs.log_in(&home);
    assert_eq!(code, 0, "{stdout}{stderr}\nprovider: {}", provider.stderr.lock().unwrap());
    assert!(stdout.ends_with(&format!("Logged in to `{SERVER}` (tokens in {})\n", token_file.display())), "{stdout}");
    assert_eq!(provider.grants("authorization_code"), 1);
    assert_eq!((mode(&token_file), mode(token_file.parent().unwrap())), (0o600, 0o700));
    let mut seen_tokens = Vec::new();
    let (access, refresh) = tokens_in(&token_file);
    seen_tokens.extend([access.clone(), refresh]);

    let echo = |text: &str| {
        let args = json!({"text": text}).to_string();
        home.omniagent(&["tools", "call", &format!("{SERVER}__echo"), "--args", &args])
    };
    let (code, stdout, stderr) = outputs.run(echo("first call"));
    assert_eq!((code, stdout.as_str()), (0, "first call\n"), "{stderr}");

    // Past the access token's lifetime, the next call refreshes it first.
    let lifetime = Duration::from_secs(expires_in(&token_file));
    assert!(lifetime <= Duration::from_secs(10), "the provider issues short-lived tokens: {lifetime:?}");
    std::thread::sleep(lifetime + Duration::from_secs(1));
    let (code, stdout, stderr) = outputs.run(echo("after expiry"));
    assert_eq!((code, stdout.as_str()), (0, "after expiry\n"), "{stderr}");
    assert_eq!(provider.grants("refresh_token"), 1, "one refresh: {:?}", provider.events.lock().unwrap());
    let (refreshed, refresh) = tokens_in(&token_file);
    assert_ne!(refreshed, access, "the token file holds the new access token");
    assert_eq!(mode(&token_file), 0o600, "a rewritten token file stays private");
    seen_tokens.extend([refreshed, refresh]);

    // Step-up: `env` needs `mcp:admin`, which this login did not ask for. The server's
    // 403 `insufficient_scope` ends the call (a command cannot log in again by itself)
    // with an error that names the scope and the login command; the token file keeps
    // the scope for that login, which asks for it beside the scope it holds.
    let env_call = || {
        let args = json!({"name": ADMIN_VALUE.0}).to_string();
        home.omniagent(&["tools", "call", &format!("{SERVER}__env"), "--args", &args])
    };
    let (code, stdout, stderr) = outputs.run(env_call());
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    let asked = format!(
        "MCP server `{SERVER}` needs the OAuth scopes `mcp:tools mcp:admin` for this call: run \
         `omniagent mcp login {SERVER}` to grant them"
    );
    assert!(stderr.contains(&asked), "{stderr}");
    let (code, stdout, stderr) = outputs.log_in(&home);
    assert_eq!(code, 0, "{stdout}{stderr}\nprovider: {}", provider.stderr.lock().unwrap());
    assert_eq!(provider.grants("authorization_code"), 2);
    let asked_for: Vec<String> = provider.authorization_scopes();
    assert_eq!(asked_for.last().map(String::as_str), Some("mcp:tools mcp:admin"), "{asked_for:?}");
    let (access, refresh) = tokens_in(&token_file);
    seen_tokens.extend([access, refresh]);
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&token_file).unwrap()).unwrap();
    assert_eq!(stored.get("step_up"), None, "a granted scope is no longer noted: {}", stored["granted_scopes"]);
    let (code, stdout, stderr) = outputs.run(env_call());
    assert_eq!((code, stdout.trim_end()), (0, ADMIN_VALUE.1), "{stderr}");

    // No token in anything any command printed, or in what the provider printed.
    outputs.0.push(provider.events.lock().unwrap().join("\n"));
    outputs.assert_none_holds(&seen_tokens);

    // The logout removes the tokens; the server is then skipped again.
    let (code, stdout, _) = outputs.run(home.omniagent(&["mcp", "logout", SERVER]));
    assert_eq!((code, stdout.as_str()), (0, format!("Logged out of `{SERVER}`\n").as_str()));
    assert!(!token_file.exists());
    let (code, stdout, _) = outputs.run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0);
    assert!(json(&stdout)["skipped"][0]["reason"].as_str().unwrap().contains(&login_hint), "{stdout}");
}

/// omniagent's own MCP client logs in to the gateway's OAuth (`serve.oauth`), with the
/// gateway's RFC 9728 metadata leading it to the authorization server, and calls through.
#[test]
fn omniagent_logs_in_to_a_gateway_that_is_an_oauth_resource_server() {
    let provider = Provider::start();
    let port = crate::gateway::free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let gateway_home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\nserve:\n  url: {resource}\n  oauth:\n    issuer: {}\n    scopes: [mcp:tools]\n    agents: {{test-person: ~}}\n",
        provider.issuer
    ));
    let gateway = crate::gateway::HttpGateway::start_on(port, &gateway_home, &[], &[]);
    let home = Home::new().with_config(&config(&resource, ""));
    let mut outputs = Outputs::default();

    let (code, stdout, stderr) = outputs.log_in(&home);
    assert_eq!(code, 0, "{stdout}{stderr}\nprovider: {}", provider.stderr.lock().unwrap());
    assert_eq!(provider.authorization_scopes(), ["mcp:tools"], "the scope the gateway names");
    let token_file = home.path().join("oauth/default").join(format!("{SERVER}.json"));
    let (access, refresh) = tokens_in(&token_file);

    let remember = json!({"key": "city", "value": "Lyon"}).to_string();
    let (code, _, stderr) =
        outputs.run(home.omniagent(&["tools", "call", &format!("{SERVER}__memory__remember"), "--args", &remember]));
    assert_eq!(code, 0, "{stderr}");
    let recall = json!({"key": "city"}).to_string();
    let (code, stdout, stderr) =
        outputs.run(home.omniagent(&["tools", "call", &format!("{SERVER}__memory__recall"), "--args", &recall]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("Lyon"), "{stdout}");
    outputs.0.push(gateway.stderr.lock().unwrap().clone());
    outputs.assert_none_holds(&[access, refresh]);
}
