//! Which servers the client reaches: http for loopback only, and trust roots from `ca_file`.

use super::*;

/// Server identifiers are https unless `allow_http_loopback`, which admits loopback only.
#[tokio::test]
async fn http_servers_need_allow_http_loopback() {
    let harness = Harness::start().await;
    let error = AAuthClient::builder(AgentKey::generate(), harness.ap.clone()).build().unwrap_err();
    assert!(matches!(error, Error::InvalidServerIdentifier { .. }), "{error:?}");
    let error = AAuthClient::builder(AgentKey::generate(), Url::parse("http://agents.example").unwrap())
        .allow_http_loopback(true)
        .build()
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "agent provider `http://agents.example` is not a valid server identifier: it is http: only 127.0.0.1 and [::1] may use http (allow_http_loopback)"
    );
}

/// `ca_file` adds a trust root: an https agent provider with a certificate from a private
/// CA is reached with it, and refused without it.
#[tokio::test]
async fn ca_file_adds_a_trust_root() {
    let harness = Harness::start_tls().await;
    assert_eq!(harness.ap.scheme(), "https");
    let dir = tempfile::tempdir().unwrap();
    let ca = aauth_harness::ca_file();
    let trusting = builder(&harness, AgentKey::generate(), dir.path()).ca_file(&ca).build().unwrap();
    let response = trusting.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("resource.auth_token"), 1);

    let untrusting =
        AAuthClient::builder(AgentKey::generate(), harness.ap.clone()).allow_http_loopback(true).build().unwrap();
    let error = untrusting.enroll().await.unwrap_err();
    assert!(matches!(error, Error::Http { step: Step::AgentMetadata, .. }), "{error:?}");
    assert_eq!(harness.count("ap.bootstrap"), 1);

    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "hello").unwrap();
    for path in [not_pem, dir.path().join("missing.pem")] {
        let error = builder(&harness, AgentKey::generate(), dir.path()).ca_file(&path).build().unwrap_err();
        assert!(matches!(&error, Error::CaFile { path: p, .. } if *p == path), "{error:?}");
    }
}
