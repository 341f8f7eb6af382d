//! Our signatures checked by an implementation of RFC 9421 that is not ours: the PyPI
//! package `http-message-signatures`, installed by `cargo xtask peers`. The requests are
//! signed with our code, written out (method, URL, header lines, body), and verified by
//! `verify_with_http_message_signatures.py` beside this file, which applies the AAuth
//! profile: covered components, `created` only, Content-Digest against the body, and the
//! key from `Signature-Key`. Tampered requests must be rejected by it too.

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use aauth_client::{AgentKey, SignatureKey, sign_request};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Body, Method, Request};
use serde_json::{Value, json};
use skill_core::SecretString;

const AGENT_TOKEN: &str =
    "eyJhbGciOiJFZDI1NTE5IiwidHlwIjoiYWEtYWdlbnQrand0In0.eyJzdWIiOiJhYXV0aDphQGV4In0.c2lnbmF0dXJl";

fn jwt() -> SignatureKey {
    SignatureKey::Jwt(SecretString::from(AGENT_TOKEN))
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

/// A request as it goes on the wire, for the script.
fn case(name: &str, request: &Request) -> Value {
    let headers: Vec<[&str; 2]> =
        request.headers().iter().map(|(name, value)| [name.as_str(), value.to_str().unwrap()]).collect();
    let body = request.body().map(|body| body.as_bytes().expect("an in-memory body")).unwrap_or_default();
    json!({
        "name": name,
        "method": request.method().as_str(),
        "url": request.url().as_str(),
        "headers": headers,
        "body": STANDARD.encode(body),
    })
}

fn get(key: &AgentKey, created: u64) -> Request {
    let mut request = Request::new(Method::GET, "https://resource.example/api/documents?page=2".parse().unwrap());
    sign_request(key, &mut request, &jwt(), created).unwrap();
    request
}

fn post_json(key: &AgentKey, created: u64) -> Request {
    let mut request = Request::new(Method::POST, "http://127.0.0.1:8443/aauth/token".parse().unwrap());
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    *request.body_mut() =
        Some(Body::from(r#"{"resource_token":"eyJ.eyJ.c2ln","justification":"summarize the report"}"#));
    sign_request(key, &mut request, &jwt(), created).unwrap();
    request
}

fn with_authorization(key: &AgentKey, created: u64) -> Request {
    let mut request = Request::new(Method::DELETE, "https://resource.example/api/documents/42".parse().unwrap());
    request.headers_mut().insert(AUTHORIZATION, HeaderValue::from_static("AAuth c2Vzc2lvbi10b2tlbg"));
    sign_request(key, &mut request, &jwt(), created).unwrap();
    request
}

fn hwk_bootstrap(key: &AgentKey, created: u64) -> Request {
    let mut request = Request::new(Method::POST, "https://agents.example/bootstrap".parse().unwrap());
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    *request.body_mut() = Some(Body::from(r#"{"ps":"https://ps.example"}"#));
    sign_request(key, &mut request, &SignatureKey::Hwk, created).unwrap();
    request
}

fn set(mut request: Request, name: &'static str, value: &str) -> Request {
    request.headers_mut().insert(HeaderName::from_static(name), HeaderValue::from_str(value).unwrap());
    request
}

/// Runs the script on `cases` and returns its output.
fn verdicts(key: &AgentKey, cases: &[Value]) -> Value {
    let python = test_peers::httpsig_python_or_panic();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/verify_with_http_message_signatures.py");
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cases.json");
    let public_key_x = key.public_jwk()["x"].clone();
    std::fs::write(&input, serde_json::to_vec(&json!({"public_key_x": public_key_x, "requests": cases})).unwrap())
        .unwrap();
    let output = Command::new(&python).arg(&script).arg(&input).output().unwrap();
    assert!(output.status.success(), "{} failed: {}", python.display(), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn http_message_signatures_accepts_our_signatures_and_rejects_tampered_ones() {
    let key = AgentKey::generate();
    let created = now();
    let other_body = r#"{"resource_token":"eyJ.eyJ.c2ln","justification":"delete the report"}"#;
    let mut tampered_body = post_json(&key, created);
    *tampered_body.body_mut() = Some(Body::from(other_body));
    let mut tampered_path = get(&key, created);
    tampered_path.url_mut().set_path("/api/secrets");
    let cases = [
        case("get", &get(&key, created)),
        case("post_json", &post_json(&key, created)),
        case("authorization", &with_authorization(&key, created)),
        case("hwk", &hwk_bootstrap(&key, created)),
        case("tampered_body", &tampered_body),
        case("tampered_path", &tampered_path),
        case("tampered_signature_key", &set(get(&key, created), "signature-key", "sig=jwt;jwt=\"eyJ.b3RoZXI.c2ln\"")),
        case("tampered_authorization", &set(with_authorization(&key, created), "authorization", "AAuth b3RoZXI")),
        case("other_key", &get(&AgentKey::generate(), created)),
        case("hwk_other_key", &hwk_bootstrap(&AgentKey::generate(), created)),
        case("stale", &get(&key, created - 3600)),
    ];
    let output = verdicts(&key, &cases);

    assert_eq!(output["package_version"], test_peers::HTTP_MESSAGE_SIGNATURES_VERSION);
    let verdicts: Vec<(&str, bool, &Value, &Value)> = output["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|verdict| {
            (
                verdict["name"].as_str().unwrap(),
                verdict["verified"].as_bool().unwrap(),
                &verdict["covered"],
                &verdict["error"],
            )
        })
        .collect();
    assert_eq!(verdicts.len(), cases.len());
    let covered = |name: &str| verdicts.iter().find(|verdict| verdict.0 == name).unwrap().2.clone();

    for (name, verified, _, error) in &verdicts {
        let expected = !name.starts_with("tampered") && !name.contains("other_key") && *name != "stale";
        assert_eq!(*verified, expected, "{name}: {error}");
    }
    assert_eq!(covered("get"), json!(["@method", "@authority", "@path", "signature-key"]));
    assert_eq!(
        covered("post_json"),
        json!(["@method", "@authority", "@path", "content-type", "content-digest", "signature-key"])
    );
    assert_eq!(covered("authorization"), json!(["@method", "@authority", "@path", "authorization", "signature-key"]));
    assert_eq!(covered("hwk"), covered("post_json"));

    // Each rejection is for the reason the tampering gives, not some incidental failure.
    let error = |name: &str| verdicts.iter().find(|verdict| verdict.0 == name).unwrap().3.as_str().unwrap().to_owned();
    assert!(error("tampered_body").contains("Content-Digest does not match"), "{}", error("tampered_body"));
    assert!(error("hwk_other_key").contains("another key"), "{}", error("hwk_other_key"));
    assert!(error("stale").contains("maximum allowable age"), "{}", error("stale"));
    for name in ["tampered_path", "tampered_signature_key", "tampered_authorization", "other_key"] {
        assert!(error(name).contains("InvalidSignature"), "{name}: {}", error(name));
    }
}
