//! RFC 9421's own test vector for Ed25519 (Appendix B.2.6), and our signatures checked
//! with `httpsig`'s verifier: a signed request verifies, a tampered one does not.

use aauth_client::{AgentKey, SignatureKey, sign_request, signature_base, signature_base_with_params};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use httpsig::prelude::message_component::HttpMessageComponent;
use httpsig::prelude::{AlgorithmName, HttpSignatureBase, HttpSignatureHeaders, PublicKey};
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Body, Method, Request};
use serde_json::json;
use sha2::{Digest as _, Sha256};
use skill_core::SecretString;

/// RFC 9421 §B.1.4, test-key-ed25519: the public key.
const RFC_PUBLIC_KEY_PEM: &str = "-----BEGIN PUBLIC KEY-----
MCowBQYDK2VwAyEAJrQLj5P/89iXES9+vFgrIy29clF9CC/oPPsw3c5D0bs=
-----END PUBLIC KEY-----
";

/// The same key as a private JWK: the 32-byte seed of the RFC's PKCS#8 private key
/// (`MC4CAQAwBQYDK2VwBCIEIJ+DYvh6…`) and its public key, base64url.
fn rfc_key() -> AgentKey {
    AgentKey::from_jwk(&json!({
        "kty": "OKP",
        "crv": "Ed25519",
        "kid": "test-key-ed25519",
        "d": "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU",
        "x": "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
    }))
    .unwrap()
}

/// RFC 9421 §B.2, the test-request message:
///
/// ```text
/// POST /foo?param=Value&Pet=dog HTTP/1.1
/// Host: example.com
/// Date: Tue, 20 Apr 2021 02:07:55 GMT
/// Content-Type: application/json
/// Content-Digest: sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:
/// Content-Length: 18
///
/// {"hello": "world"}
/// ```
fn rfc_test_request() -> Request {
    let mut request = Request::new(Method::POST, "https://example.com/foo?param=Value&Pet=dog".parse().unwrap());
    let headers = request.headers_mut();
    for (name, value) in [
        ("host", "example.com"),
        ("date", "Tue, 20 Apr 2021 02:07:55 GMT"),
        ("content-type", "application/json"),
        (
            "content-digest",
            "sha-512=:WZDPaVn/7XgHaAy8pmojAkGWoRx2UFChF41A2svX+TaPm+AbwAgBWnrIiYllu7BNNyealdVLvRwEmTHWXvJwew==:",
        ),
        ("content-length", "18"),
    ] {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    *request.body_mut() = Some(Body::from(r#"{"hello": "world"}"#));
    request
}

/// RFC 9421 §B.2.6: the signature parameters, the signature base and the signature.
const B26_PARAMS: &str = r#"("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#;
const B26_BASE: &str = r#""date": Tue, 20 Apr 2021 02:07:55 GMT
"@method": POST
"@path": /foo
"@authority": example.com
"content-type": application/json
"content-length": 18
"@signature-params": ("date" "@method" "@path" "@authority" "content-type" "content-length");created=1618884473;keyid="test-key-ed25519""#;
const B26_SIGNATURE: &str = "wqcAqbmYJ2ji2glfAMaRy4gruYYnx2nEFN2HN6jrnDnQCK1u02Gb04v9EDgwUPiu4A0w6vuQv5lIp5WPpBKRCw==";

#[test]
fn b26_signature_base_is_the_rfcs_byte_for_byte() {
    let base = signature_base_with_params(&rfc_test_request(), B26_PARAMS).unwrap();
    assert_eq!(base.as_bytes(), B26_BASE.as_bytes());
}

#[test]
fn b26_rfc_signature_verifies_with_the_rfc_public_key() {
    let public_key = PublicKey::from_pem(&AlgorithmName::Ed25519, RFC_PUBLIC_KEY_PEM).unwrap();
    let base = signature_base_with_params(&rfc_test_request(), B26_PARAMS).unwrap();
    let signature = STANDARD.decode(B26_SIGNATURE).unwrap();
    httpsig::prelude::VerifyingKey::verify(&public_key, base.as_bytes(), &signature).unwrap();

    // The RFC's key as our JWK is the same key, and deterministic Ed25519 gives the RFC's
    // bytes exactly.
    assert_eq!(rfc_key().sign(base.as_bytes()).as_slice(), signature.as_slice());

    // One byte changed in the base, and the signature no longer verifies.
    let tampered = base.replace("/foo", "/fop");
    assert!(httpsig::prelude::VerifyingKey::verify(&public_key, tampered.as_bytes(), &signature).is_err());
}

/// What a resource does with a request it receives: parse `Signature-Input` and
/// `Signature`, check the `Content-Digest` against the body, rebuild the signature base
/// from the request and verify it with `httpsig` and the public key.
fn verify(request: &Request, public_key: &PublicKey) -> Result<(), String> {
    let header = |name: &str| -> Result<&str, String> {
        let value = request.headers().get(name).ok_or(format!("no {name}"))?;
        value.to_str().map_err(|error| error.to_string())
    };
    let signatures = HttpSignatureHeaders::try_parse(header("signature")?, header("signature-input")?)
        .map_err(|error| error.to_string())?;
    let signature = signatures.get("sig").ok_or("no signature labelled sig")?;
    let params = signature.signature_params();
    let covered: Vec<String> = params.covered_components.iter().map(ToString::to_string).collect();
    for required in ["\"@method\"", "\"@authority\"", "\"@path\"", "\"signature-key\""] {
        if !covered.iter().any(|component| component == required) {
            return Err(format!("{required} is not covered"));
        }
    }
    if let Some(body) = request.body().and_then(Body::as_bytes) {
        if !covered.iter().any(|component| component == "\"content-digest\"") {
            return Err("the body's digest is not covered".into());
        }
        let expected = format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(body)));
        if header("content-digest")? != expected {
            return Err("Content-Digest does not match the body".into());
        }
    }
    let base = signature_base_with_params(request, &params.to_string()).map_err(|error| error.to_string())?;
    let lines = base
        .lines()
        .filter(|line| !line.starts_with("\"@signature-params\""))
        .map(HttpMessageComponent::try_from)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|error| error.to_string())?;
    let base = HttpSignatureBase::try_new(&lines, params).map_err(|error| error.to_string())?;
    base.verify_signature_headers(public_key, signature).map_err(|error| error.to_string())
}

fn verifying_key_of(key: &AgentKey) -> PublicKey {
    let x = key.public_jwk()["x"].as_str().unwrap().to_owned();
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(x).unwrap();
    PublicKey::from_bytes(&AlgorithmName::Ed25519, &bytes).unwrap()
}

fn token(value: &str) -> SignatureKey {
    SignatureKey::Jwt(SecretString::from(value))
}

fn signed_post(key: &AgentKey) -> Request {
    let mut request = Request::new(Method::POST, "https://ps.example/aauth/token?x=1".parse().unwrap());
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    request.headers_mut().insert(AUTHORIZATION, HeaderValue::from_static("AAuth session-token"));
    *request.body_mut() = Some(Body::from(r#"{"resource_token":"eyJ.eyJ.sig","justification":"read the docs"}"#));
    sign_request(key, &mut request, &token("eyJhbGciOiJFZDI1NTE5In0.eyJzdWIiOiJhIn0.c2ln"), 1_730_217_600).unwrap();
    request
}

#[test]
fn our_signed_requests_verify_with_httpsig() {
    let key = AgentKey::generate();
    let public_key = verifying_key_of(&key);
    let mut get = Request::new(Method::GET, "http://127.0.0.1:8080/api/documents".parse().unwrap());
    sign_request(&key, &mut get, &SignatureKey::Hwk, 1_730_217_600).unwrap();
    verify(&get, &public_key).unwrap();
    verify(&signed_post(&key), &public_key).unwrap();

    // The base it checked is the one `signature_base` shows for the covered components.
    let post = signed_post(&key);
    let components =
        ["@method", "@authority", "@path", "content-type", "content-digest", "authorization", "signature-key"];
    let base = signature_base(&post, &components, 1_730_217_600).unwrap();
    let params = post.headers()["signature-input"].to_str().unwrap().strip_prefix("sig=").unwrap();
    assert_eq!(base, signature_base_with_params(&post, params).unwrap());
    assert!(base.starts_with("\"@method\": POST\n\"@authority\": ps.example\n\"@path\": /aauth/token\n"), "{base}");

    // Another key does not verify it.
    assert!(verify(&post, &verifying_key_of(&AgentKey::generate())).is_err());
}

/// A change made to a signed request on its way.
type Tampering = fn(&mut Request);

const OTHER_BODY: &str = r#"{"resource_token":"eyJ.eyJ.sig","justification":"delete the docs"}"#;

fn set_header(request: &mut Request, name: &'static str, value: String) {
    request.headers_mut().insert(HeaderName::from_static(name), HeaderValue::try_from(value).unwrap());
}

#[test]
fn tampered_requests_fail_verification() {
    let key = AgentKey::generate();
    let public_key = verifying_key_of(&key);
    let tamper = |change: Tampering| {
        let mut request = signed_post(&key);
        change(&mut request);
        verify(&request, &public_key)
    };
    let cases: [(&str, Tampering); 7] = [
        ("body", |request| *request.body_mut() = Some(Body::from(OTHER_BODY))),
        ("body and its digest", |request| {
            *request.body_mut() = Some(Body::from(OTHER_BODY));
            set_header(request, "content-digest", format!("sha-256=:{}:", STANDARD.encode(Sha256::digest(OTHER_BODY))));
        }),
        ("path", |request| request.url_mut().set_path("/aauth/other")),
        ("host", |request| request.url_mut().set_host(Some("evil.example")).unwrap()),
        ("method", |request| *request.method_mut() = Method::PUT),
        ("signature-key", |request| set_header(request, "signature-key", "sig=jwt;jwt=\"eyJ.other.token\"".into())),
        ("authorization", |request| set_header(request, "authorization", "AAuth other-session".into())),
    ];
    for (what, change) in cases {
        assert!(tamper(change).is_err(), "a request with another {what} verified");
    }
    // Unchanged, it verifies: the failures above are the tampering's.
    assert_eq!(tamper(|_| {}), Ok(()));
}
