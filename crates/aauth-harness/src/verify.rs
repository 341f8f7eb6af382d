//! Signature verification, before any handler: the signature base rebuilt from what
//! arrived, the AAuth profile's covered components, `Content-Digest`, `created` within
//! the window, the key from `Signature-Key`, and the replay cache.

use std::sync::Arc;

use aauth_client::{Claims, Jwt, TokenKind};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use httpsig::prelude::message_component::{HttpMessageComponent, HttpMessageComponentId};
use httpsig::prelude::{AlgorithmName, HttpSignatureBase, HttpSignatureHeaders, PublicKey, VerifyingKey as _};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::{HarnessState, WINDOW, now, thumbprint};

/// What the verifier learned from a request's signature.
#[derive(Clone)]
pub(crate) struct Verified {
    /// The RFC 7638 thumbprint of the signing key.
    pub(crate) jkt: String,
    /// The signing key as a public JWK, with `alg`.
    pub(crate) jwk: Value,
    /// The token in `Signature-Key` (`None` for `hwk` and `jkt-jwt`).
    pub(crate) token: Option<(TokenKind, Claims)>,
    /// Under `jkt-jwt`: the thumbprint of the key that signed the naming JWT (the
    /// enrolled key), which delegated to the signing key.
    pub(crate) naming_jkt: Option<String>,
}

/// What the replay cache keys a state-changing request by.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ReplayTuple {
    jkt: String,
    created: u64,
    method: String,
    authority: String,
    path: String,
}

fn signature_error(state: &HarnessState, error: &str, reason: &str) -> Response {
    state.count(&format!("rejected:{reason}"));
    Response::builder()
        .status(StatusCode::UNAUTHORIZED)
        .header("signature-error", format!("error={error}"))
        .header(header::CONTENT_TYPE, "application/problem+json")
        .body(Body::from(json!({"error": error, "detail": reason}).to_string()))
        .unwrap()
}

pub(crate) async fn verify_signature(State(state): State<Arc<HarnessState>>, request: Request, next: Next) -> Response {
    let path = request.uri().path().to_owned();
    // Metadata and the person's own browser are not agent requests.
    if path.starts_with("/.well-known/") || path == "/interact" {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    match verify(&state, &parts.method, &parts.headers, &path, &body) {
        Ok(verified) => {
            parts.extensions.insert(verified);
            next.run(Request::from_parts(parts, Body::from(body))).await
        }
        Err((error, reason)) => signature_error(&state, error, reason),
    }
}

/// Verifies the signature of a request as an AAuth resource or server does; the error
/// code and reason for `Signature-Error` otherwise.
fn verify(
    state: &HarnessState,
    method: &Method,
    headers: &HeaderMap,
    path: &str,
    body: &[u8],
) -> Result<Verified, (&'static str, &'static str)> {
    let header = |name: &str| headers.get(name).and_then(|value| value.to_str().ok());
    let (Some(signature), Some(input), Some(signature_key)) =
        (header("signature"), header("signature-input"), header("signature-key"))
    else {
        return Err(("invalid_request", "missing signature headers"));
    };
    let parsed = HttpSignatureHeaders::try_parse(signature, input).map_err(|_| ("invalid_request", "unparsable"))?;
    let signature_headers = parsed.get("sig").ok_or(("invalid_request", "no sig label"))?;
    let params = signature_headers.signature_params();

    // The AAuth profile's covered components.
    let covered: Vec<String> = params.covered_components.iter().map(ToString::to_string).collect();
    let mut required = vec!["\"@method\"", "\"@authority\"", "\"@path\"", "\"signature-key\""];
    if !body.is_empty() {
        required.extend(["\"content-type\"", "\"content-digest\""]);
    }
    if headers.contains_key(header::AUTHORIZATION) {
        required.push("\"authorization\"");
    }
    if !required.iter().all(|name| covered.iter().any(|covered| covered == name)) {
        return Err(("invalid_input", "required components not covered"));
    }
    if params.alg.is_some() || params.keyid.is_some() {
        return Err(("invalid_input", "alg or keyid present"));
    }

    // Freshness.
    let created = params.created.ok_or(("invalid_signature", "no created"))?;
    if created.abs_diff(now()) > WINDOW {
        return Err(("invalid_signature", "stale"));
    }

    // Content-Digest.
    if !body.is_empty() {
        let digest = header("content-digest").ok_or(("invalid_request", "no content-digest"))?;
        let digest: sfv::Dictionary =
            sfv::Parser::new(digest).parse().map_err(|_| ("invalid_request", "bad content-digest"))?;
        let Some(sfv::ListEntry::Item(item)) = digest.get("sha-256") else {
            return Err(("invalid_request", "no sha-256 digest"));
        };
        if item.bare_item.as_byte_sequence() != Some(Sha256::digest(body).as_slice()) {
            return Err(("invalid_request", "content-digest mismatch"));
        }
    }

    // The key, from Signature-Key.
    let dictionary: sfv::Dictionary =
        sfv::Parser::new(signature_key).parse().map_err(|_| ("invalid_key", "bad signature-key"))?;
    let Some(sfv::ListEntry::Item(item)) = dictionary.get("sig") else {
        return Err(("invalid_key", "no sig member in signature-key"));
    };
    let param = |name: &str| item.params.get(name).and_then(|value| value.as_string()).map(|value| value.as_str());
    let mut naming_jkt = None;
    let (x, token) = match item.bare_item.as_token().map(|token| token.as_str()) {
        Some("hwk") => {
            if param("kty") != Some("OKP") || param("crv") != Some("Ed25519") || param("alg") != Some("Ed25519") {
                return Err(("invalid_key", "hwk is not an Ed25519 key with alg"));
            }
            if item.params.contains_key("kid") {
                return Err(("invalid_key", "hwk with kid"));
            }
            (param("x").ok_or(("invalid_key", "hwk without x"))?.to_owned(), None)
        }
        Some("jwt") => {
            let jwt = param("jwt").ok_or(("invalid_key", "jwt scheme without jwt"))?;
            let (kind, claims) = verify_jwt(state, jwt)?;
            let x = claims.cnf.as_ref().and_then(|cnf| cnf.jwk["x"].as_str()).ok_or(("invalid_jwt", "no cnf.jwk"))?;
            (x.to_owned(), Some((kind, claims)))
        }
        Some("jkt-jwt") => {
            let jwt = param("jwt").ok_or(("invalid_key", "jkt-jwt scheme without jwt"))?;
            let (naming, x) = verify_naming_jwt(jwt)?;
            naming_jkt = Some(naming);
            (x, None)
        }
        _ => return Err(("unsupported_scheme", "unsupported scheme")),
    };
    let x_bytes = URL_SAFE_NO_PAD.decode(&x).map_err(|_| ("invalid_key", "x is not base64url"))?;
    let public_key =
        PublicKey::from_bytes(&AlgorithmName::Ed25519, &x_bytes).map_err(|_| ("invalid_key", "bad key"))?;

    // The signature base, rebuilt from what arrived.
    let mut lines = Vec::new();
    for id in &params.covered_components {
        let name = id.to_string();
        let value = match name.as_str() {
            "\"@method\"" => method.as_str().to_owned(),
            "\"@authority\"" => header("host").ok_or(("invalid_request", "no host"))?.to_owned(),
            "\"@path\"" => path.to_owned(),
            field if !field.starts_with("\"@") => {
                let field = field.trim_matches('"');
                let values: Vec<&str> = headers.get_all(field).iter().filter_map(|value| value.to_str().ok()).collect();
                if values.is_empty() {
                    return Err(("invalid_input", "covered header missing"));
                }
                values.join(", ")
            }
            _ => return Err(("invalid_input", "unsupported derived component")),
        };
        let id = HttpMessageComponentId::try_from(name.as_str()).unwrap();
        let line =
            HttpMessageComponent::try_from((&id, &[value][..])).map_err(|_| ("invalid_input", "bad component"))?;
        lines.push(line);
    }
    let base = HttpSignatureBase::try_new(&lines, params).map_err(|_| ("invalid_input", "bad base"))?;
    base.verify_signature_headers(&public_key, signature_headers)
        .map_err(|_| ("invalid_signature", "bad signature"))?;

    // Replay: a state-changing request whose tuple was seen before (protocol draft,
    // "Freshness and Replay"). Entries older than the window cannot come back: forgotten.
    let jkt = thumbprint(&x);
    if !matches!(*method, Method::GET | Method::HEAD) {
        let tuple = ReplayTuple {
            jkt: jkt.clone(),
            created,
            method: method.to_string(),
            authority: header("host").unwrap_or_default().to_owned(),
            path: path.to_owned(),
        };
        let mut seen = state.seen.lock().unwrap();
        seen.retain(|earlier| earlier.created.abs_diff(now()) <= WINDOW);
        if !seen.insert(tuple) {
            return Err(("invalid_signature", "replay"));
        }
    }
    state.count("verified");
    Ok(Verified { jkt, jwk: json!({"kty": "OKP", "crv": "Ed25519", "x": x, "alg": "Ed25519"}), token, naming_jkt })
}

/// Verifies a `jkt-jwt` naming JWT (Signature-Key -09): `typ` `jkt-s256+jwt`, an Ed25519
/// `jwk` in its header whose thumbprint URI is `iss`, signed by that key, not expired;
/// the thumbprint of that key and the `x` of the key it delegates to (`cnf.jwk`).
fn verify_naming_jwt(token: &str) -> Result<(String, String), (&'static str, &'static str)> {
    let invalid = |reason| ("invalid_jwt", reason);
    let (signing_input, signature) = token.rsplit_once('.').ok_or(invalid("not a JWT"))?;
    let (header, claims) = signing_input.split_once('.').ok_or(invalid("not a JWT"))?;
    let decode = |part: &str| -> Result<Value, (&'static str, &'static str)> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).map_err(|_| invalid("not base64url"))?)
            .map_err(|_| invalid("not JSON"))
    };
    let (header, claims) = (decode(header)?, decode(claims)?);
    if header["typ"] != "jkt-s256+jwt" || header["alg"] != "Ed25519" || header["jwk"]["crv"] != "Ed25519" {
        return Err(invalid("not an Ed25519 jkt-s256+jwt"));
    }
    let naming_x = header["jwk"]["x"].as_str().ok_or(invalid("no jwk x"))?;
    let naming_jkt = thumbprint(naming_x);
    if claims["iss"].as_str() != Some(&format!("urn:jkt:sha-256:{naming_jkt}")) {
        return Err(invalid("iss is not the jwk's thumbprint URI"));
    }
    let naming_key = PublicKey::from_bytes(
        &AlgorithmName::Ed25519,
        &URL_SAFE_NO_PAD.decode(naming_x).map_err(|_| invalid("jwk x is not base64url"))?,
    )
    .map_err(|_| invalid("bad jwk"))?;
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| invalid("signature"))?;
    naming_key.verify(signing_input.as_bytes(), &signature).map_err(|_| invalid("naming jwt signature"))?;
    if claims["exp"].as_u64().is_none_or(|exp| exp <= now()) || claims["iat"].as_u64().is_none() {
        return Err(("expired_jwt", "naming jwt expired or without iat"));
    }
    let x = claims["cnf"]["jwk"]["x"].as_str().ok_or(invalid("no cnf.jwk"))?;
    Ok((naming_jkt, x.to_owned()))
}

/// Verifies a JWT the harness issued: signature with the issuer's key, `typ`, expiry.
fn verify_jwt(state: &HarnessState, token: &str) -> Result<(TokenKind, Claims), (&'static str, &'static str)> {
    let (signing_input, signature) = token.rsplit_once('.').ok_or(("invalid_jwt", "not a JWT"))?;
    let header = signing_input.split('.').next().unwrap();
    let header: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).map_err(|_| ("invalid_jwt", "header"))?)
        .map_err(|_| ("invalid_jwt", "header"))?;
    let kind = header["typ"].as_str().and_then(TokenKind::from_typ).ok_or(("invalid_jwt", "unknown typ"))?;
    let issuer = match kind {
        TokenKind::Agent => &state.ap_key,
        TokenKind::Person | TokenKind::Auth => &state.ps_key,
        _ => return Err(("invalid_jwt", "a resource token cannot sign")),
    };
    let issuer_x = URL_SAFE_NO_PAD.decode(issuer.public_jwk()["x"].as_str().unwrap()).unwrap();
    let issuer_key = PublicKey::from_bytes(&AlgorithmName::Ed25519, &issuer_x).unwrap();
    let signature = URL_SAFE_NO_PAD.decode(signature).map_err(|_| ("invalid_jwt", "signature"))?;
    issuer_key.verify(signing_input.as_bytes(), &signature).map_err(|_| ("invalid_jwt", "jwt signature"))?;
    let jwt = Jwt::decode(token, kind).map_err(|_| ("invalid_jwt", "claims"))?;
    if jwt.claims.exp.is_none_or(|exp| exp <= now()) {
        return Err(("expired_jwt", "expired jwt"));
    }
    Ok((kind, jwt.claims))
}
