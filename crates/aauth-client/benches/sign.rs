//! What signing costs per request: `sign_request` on a `POST` with a 1 KiB JSON body and
//! an agent token in `Signature-Key`, which is the whole of it: the SHA-256
//! `Content-Digest` of the body, the signature base, the Ed25519 signature and the four
//! headers it sets. The target: at most 50 µs.
//!
//! Each iteration signs a fresh copy of the unsigned request (`iter_batched`), so the
//! copy is not timed and no iteration sees the headers of the one before.

use std::hint::black_box;

use aauth_client::{AgentKey, SignatureKey, sign_request};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Request};
use skill_core::SecretString;

/// A JSON body of exactly 1024 bytes.
fn body_1kib() -> String {
    let mut body = String::from(r#"{"resource_token":"eyJhbGciOiJFZDI1NTE5In0","justification":""#);
    body.push_str(&"x".repeat(1024 - body.len() - 2));
    body.push_str("\"}");
    assert_eq!(body.len(), 1024);
    body
}

/// An agent token of a realistic size (about 700 characters of base64url and dots).
fn agent_token() -> SecretString {
    let part = |n: usize| "a".repeat(n);
    SecretString::from(format!("{}.{}.{}", part(120), part(490), part(86)))
}

fn sign(c: &mut Criterion) {
    let key = AgentKey::generate();
    let signature_key = SignatureKey::Jwt(agent_token());
    let mut request = Request::new(Method::POST, "https://ps.example/aauth/token".parse().unwrap());
    request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    *request.body_mut() = Some(body_1kib().into());
    let created = 1_730_217_600;

    c.bench_function("sign_post_1kib", |b| {
        b.iter_batched(
            || request.try_clone().expect("an in-memory body"),
            |mut request| {
                sign_request(&key, &mut request, &signature_key, created).unwrap();
                black_box(request)
            },
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, sign);
criterion_main!(benches);
