//! The answers the servers give: JSON, problem details, requirements, pending answers.

use aauth_client::TokenKind;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use crate::verify::Verified;

pub(crate) fn json_response(status: StatusCode, body: Value) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

pub(crate) fn problem(status: StatusCode, error: &str, detail: &str) -> Response {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/problem+json")
        .body(Body::from(json!({"error": error, "detail": detail}).to_string()))
        .unwrap()
}

pub(crate) fn requirement(status: StatusCode, value: String) -> Response {
    Response::builder().status(status).header("aauth-requirement", value).body(Body::empty()).unwrap()
}

pub(crate) fn pending(location: &str, requirement: Option<String>, body: Value) -> Response {
    let mut builder = Response::builder()
        .status(StatusCode::ACCEPTED)
        .header(header::LOCATION, location)
        .header(header::RETRY_AFTER, "0")
        .header(header::CACHE_CONTROL, "no-store")
        .header(header::CONTENT_TYPE, "application/json");
    if let Some(requirement) = requirement {
        builder = builder.header("aauth-requirement", requirement);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

pub(crate) async fn body_json(request: Request) -> Option<Value> {
    let bytes = axum::body::to_bytes(request.into_body(), usize::MAX).await.ok()?;
    serde_json::from_slice(&bytes).ok()
}

pub(crate) fn token_kind(verified: &Verified) -> Option<TokenKind> {
    verified.token.as_ref().map(|(kind, _)| *kind)
}
