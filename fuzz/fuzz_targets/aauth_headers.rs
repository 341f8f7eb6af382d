//! The AAuth headers a client reads: an `AAuth-Requirement` value, and the signature
//! parameters of a `Signature-Input` member, from which a verifier rebuilds the signature
//! base. Neither parser panics, and a base that is rebuilt ends with the parameters.
#![no_main]

use aauth_client::{Requirement, signature_base_with_params};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let (requirement, params) = text.split_once('\n').unwrap_or((text, text));
    if let Ok(requirement) = Requirement::parse(requirement) {
        let _ = requirement.name();
    }
    // A request made without a client, which would need a TLS provider.
    let url = reqwest::Url::parse("https://resource.example/items?x=1").expect("a URL");
    let mut request = reqwest::Request::new(reqwest::Method::POST, url);
    let headers = request.headers_mut();
    headers.insert("content-type", reqwest::header::HeaderValue::from_static("application/json"));
    headers.insert(
        "signature-key",
        reqwest::header::HeaderValue::from_static(
            "sig=hwk;kty=\"OKP\";crv=\"Ed25519\";x=\"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs\"",
        ),
    );
    *request.body_mut() = Some("{}".into());
    if let Ok(base) = signature_base_with_params(&request, params) {
        assert!(base.ends_with(params.trim()) || base.contains("\"@signature-params\": "), "{base}");
    }
});
