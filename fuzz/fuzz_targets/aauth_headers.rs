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
    let request = reqwest::Client::new()
        .post("https://resource.example/items?x=1")
        .header("content-type", "application/json")
        .header("signature-key", "sig=hwk;kty=\"OKP\";crv=\"Ed25519\";x=\"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs\"")
        .body("{}")
        .build()
        .expect("a request");
    if let Ok(base) = signature_base_with_params(&request, params) {
        assert!(base.ends_with(params.trim()) || base.contains("\"@signature-params\": "), "{base}");
    }
});
