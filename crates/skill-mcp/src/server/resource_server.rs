//! The gateway as an OAuth 2.1 resource server, beside the static tokens: a JWT access
//! token (RFC 9068) is admitted when its signature verifies against the issuer's JWKS
//! (see [`jwks`]) with an algorithm of [`ALGORITHMS`], and its `iss`, `aud`, `exp` and
//! `nbf` (with [`LEEWAY`]) and scopes are right; one claim of it names the identity,
//! which gets an agent of its own as the client [`client_name`]; a token verified once is
//! taken for a minute at most without verifying it again (see [`verified`]). The protected-resource
//! metadata (RFC 9728) tells clients where to get tokens; every refusal names it in
//! `WWW-Authenticate`. No token, nor any part of one, is ever logged or echoed.

mod jwks;
mod verified;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use serde_json::{Value, json};
use url::Url;

use self::jwks::{KeyError, Keys};
use self::verified::Verified;

/// The signature algorithms a token may use: asymmetric only (never `none`, never an
/// HMAC whose "key" would be the public JWKS).
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// How far `exp` and `nbf` may be off, for clocks that differ a little.
const LEEWAY_SECONDS: u64 = 10;

/// The prefix of an OAuth identity's client name; static client names have no `:`.
const CLIENT_PREFIX: &str = "oauth:";

/// What an identity keeps as is in its client name: letters, digits and `-._@+~`.
const IDENTITY_ESCAPED: &AsciiSet =
    &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'@').remove(b'+').remove(b'~');

/// How the gateway admits OAuth access tokens.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The authorization server, exactly as tokens name it in `iss`.
    pub issuer: String,
    /// The gateway's public `/mcp` URL: the protected resource of the metadata.
    pub resource: Url,
    /// What tokens must name in `aud` (usually the `resource`).
    pub audience: String,
    /// The scopes every token must hold.
    pub scopes: Vec<String>,
    /// The issuer's JWKS; `None`: the `jwks_uri` of its metadata.
    pub jwks_uri: Option<Url>,
    /// The claim that names the identity (`sub`, or a group claim: a string or an array
    /// of strings).
    pub claim: String,
    /// The identities (values of `claim`) that are admitted, each as its own client.
    pub identities: BTreeSet<String>,
    /// Whether a token whose claim names none of `identities` is admitted (as the
    /// identity its claim's first value names) rather than refused with 403.
    pub admit_others: bool,
}

/// The client name under which the OAuth identity `identity` gets its agent: `oauth:`
/// and the identity with every byte but `A-Za-z0-9-._@+~` percent-encoded, so it is
/// never a static client's name, nor holds a `/`.
pub fn client_name(identity: &str) -> String {
    format!("{CLIENT_PREFIX}{}", utf8_percent_encode(identity, IDENTITY_ESCAPED))
}

/// The scope that makes an OAuth identity an admin of the gateway's console.
pub const ADMIN_SCOPE: &str = "omniagent:admin";

/// Why a request was not admitted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// No bearer token at all.
    NoToken,
    /// A token that is not a valid access token here, and why (for the caller).
    Invalid(&'static str),
    /// A valid token without every required scope.
    Scope,
    /// A valid token whose identity is mapped to no agent.
    Unmapped,
    /// The issuer's keys could not be fetched, so the token cannot be checked now.
    Unreachable,
}

/// The resource server: its options and the issuer's keys.
pub(super) struct ResourceServer {
    options: OAuthOptions,
    keys: Keys,
    verified: Verified,
    metadata_url: String,
}

/// What a verified access token proves.
#[derive(Debug, Clone)]
pub(super) struct Admitted {
    /// The client name of its identity.
    pub(super) client: String,
    /// Whether it holds the scope [`ADMIN_SCOPE`].
    pub(super) admin: bool,
    /// Its claims, for the policy's rules (`client.claims`).
    pub(super) claims: Arc<serde_json::Map<String, Value>>,
}

impl ResourceServer {
    pub(super) fn new(options: OAuthOptions) -> Self {
        let keys = Keys::new(options.issuer.clone(), options.jwks_uri.clone());
        let metadata_url = metadata_url(&options.resource);
        Self { options, keys, verified: Verified::default(), metadata_url }
    }

    /// The identity `token` proves, or why it proves none: verified lately (see
    /// [`verified`]), else now.
    pub(super) async fn admit(&self, token: &str) -> Result<Admitted, Refusal> {
        let digest = Verified::digest(token);
        if let Some(admitted) = self.verified.client(&digest) {
            return Ok(admitted);
        }
        let (admitted, exp) = self.verify(token).await?;
        self.verified.keep(digest, admitted.clone(), exp, LEEWAY_SECONDS);
        Ok(admitted)
    }

    /// The identity `token` proves, and its `exp`.
    async fn verify(&self, token: &str) -> Result<(Admitted, u64), Refusal> {
        let header = jsonwebtoken::decode_header(token).map_err(|error| match error.kind() {
            ErrorKind::Json(_) => {
                Refusal::Invalid("the token's header is not valid or names an algorithm not accepted here")
            }
            _ => Refusal::Invalid("the token is not a JWT"),
        })?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(Refusal::Invalid("the token's signature algorithm is not accepted here"));
        }
        let key = self.keys.key(header.kid.as_deref(), header.alg).await.map_err(|error| match error {
            KeyError::Unknown => Refusal::Invalid("the token is not signed by a key of the issuer"),
            KeyError::Unreachable(_) => Refusal::Unreachable,
        })?;
        let mut validation = Validation::new(header.alg);
        validation.leeway = LEEWAY_SECONDS;
        validation.validate_nbf = true;
        validation.set_issuer(&[&self.options.issuer]);
        validation.set_audience(&[&self.options.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
            .map_err(|error| Refusal::Invalid(why_invalid(error.kind())))?
            .claims;
        let held = scopes(&claims);
        if self.options.scopes.iter().any(|needed| !held.contains(&needed.as_str())) {
            return Err(Refusal::Scope);
        }
        let admin = held.contains(&ADMIN_SCOPE);
        let client = self.identity(&claims).map(|identity| client_name(&identity)).ok_or(Refusal::Unmapped)?;
        // `decode` checked that `exp` is a number; a fractional one is kept to the second.
        let exp = claims.get("exp").and_then(Value::as_f64).unwrap_or_default();
        let Value::Object(claims) = claims else {
            return Err(Refusal::Invalid("the token's claims are not an object"));
        };
        Ok((Admitted { client, admin, claims: Arc::new(claims) }, exp as u64))
    }

    /// The identity the claims name: the first value of the claim that is mapped, else
    /// (when others are admitted) its first value.
    fn identity(&self, claims: &Value) -> Option<String> {
        let values: Vec<&str> = match claims.get(&self.options.claim)? {
            Value::String(value) => vec![value.as_str()],
            Value::Array(values) => values.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        let mapped = values.iter().find(|value| self.options.identities.contains(**value));
        let chosen = mapped.or_else(|| values.first().filter(|_| self.options.admit_others))?;
        (!chosen.is_empty()).then(|| (*chosen).to_owned())
    }

    /// The answer to a request that was not admitted.
    pub(super) fn refuse(&self, refusal: &Refusal) -> Response {
        let metadata = format!(r#"Bearer resource_metadata="{}""#, self.metadata_url);
        let scope = self.options.scopes.join(" ");
        let (status, challenge, text) = match refusal {
            Refusal::NoToken => {
                let challenge = if scope.is_empty() { metadata } else { format!(r#"{metadata}, scope="{scope}""#) };
                (StatusCode::UNAUTHORIZED, Some(challenge), "this MCP server needs `Authorization: Bearer <token>`")
            }
            Refusal::Invalid(why) => (
                StatusCode::UNAUTHORIZED,
                Some(format!(r#"{metadata}, error="invalid_token", error_description="{why}""#)),
                *why,
            ),
            Refusal::Scope => (
                StatusCode::FORBIDDEN,
                Some(format!(
                    r#"{metadata}, error="insufficient_scope", scope="{scope}", error_description="the token lacks a required scope""#
                )),
                "the token lacks a required scope",
            ),
            Refusal::Unmapped => {
                (StatusCode::FORBIDDEN, None, "the token's identity is not mapped to an agent of this MCP server")
            }
            Refusal::Unreachable => (
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                "the authorization server's keys cannot be fetched now; try again later",
            ),
        };
        let mut response = (status, text).into_response();
        if let Some(value) = challenge.and_then(|challenge| HeaderValue::from_str(&challenge).ok()) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        if *refusal == Refusal::Unreachable {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
        }
        response
    }

    /// The protected-resource metadata document (RFC 9728).
    pub(super) fn metadata(&self) -> Response {
        let document = json!({
            "resource": self.options.resource.as_str(),
            "authorization_servers": [self.options.issuer],
            "scopes_supported": self.options.scopes,
            "bearer_methods_supported": ["header"],
            "resource_name": "omniagent gateway",
        });
        ([(header::CONTENT_TYPE, "application/json")], document.to_string()).into_response()
    }
}

/// Where the metadata of `resource` is (RFC 9728 §3.1): the well-known path, with the
/// resource's own path after it.
fn metadata_url(resource: &Url) -> String {
    let path = resource.path().trim_end_matches('/');
    format!("{}/.well-known/oauth-protected-resource{path}", resource.origin().ascii_serialization())
}

/// The scopes a token holds: its `scope` (space-separated) and `scp` (an array, or a
/// string as `scope`).
fn scopes(claims: &Value) -> Vec<&str> {
    let mut held: Vec<&str> =
        claims.get("scope").and_then(Value::as_str).unwrap_or_default().split_whitespace().collect();
    match claims.get("scp") {
        Some(Value::Array(values)) => held.extend(values.iter().filter_map(Value::as_str)),
        Some(Value::String(value)) => held.extend(value.split_whitespace()),
        _ => {}
    }
    held
}

/// What the caller is told about a token that failed verification.
fn why_invalid(kind: &ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ExpiredSignature => "the token has expired",
        ErrorKind::ImmatureSignature => "the token is not valid yet",
        ErrorKind::InvalidIssuer => "the token is from another issuer",
        ErrorKind::InvalidAudience => "the token is for another audience",
        ErrorKind::InvalidSignature => "the token's signature does not verify",
        ErrorKind::MissingRequiredClaim(_) => "the token lacks `exp`, `iss` or `aud`",
        _ => "the token is not a valid access token",
    }
}

#[cfg(test)]
mod tests;
