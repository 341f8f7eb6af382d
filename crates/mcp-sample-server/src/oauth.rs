//! `--oauth-issuer URL`: the HTTP endpoint as an OAuth 2.1 protected resource, as the MCP
//! authorization specification describes it. Every request to `/mcp` needs a bearer
//! access token that the issuer signed (a JWT access token, RFC 9068, with an Ed25519
//! key from the issuer's JWKS, found through its OpenID discovery document) for this
//! server's URL as audience (RFC 8707), unexpired, with the scope `mcp:tools`; a call of
//! the `env` tool (the server's environment, the privileged one) also needs `mcp:admin`.
//!
//! Without a token, or with one that fails a check, the answer is 401 with
//! `WWW-Authenticate: Bearer resource_metadata="…", scope="mcp:tools"` (and
//! `error="invalid_token"` for a bad one); a token without a scope a request needs gets
//! 403 `error="insufficient_scope"` naming the scopes it needs. The protected-resource
//! metadata (RFC 9728) is served at `/.well-known/oauth-protected-resource/mcp` (and
//! `/.well-known/oauth-protected-resource`), naming the issuer and both scopes.

use std::{
    collections::HashMap,
    sync::Arc,
    time::{SystemTime, UNIX_EPOCH},
};

use anyhow::{Context as _, bail};
use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, StatusCode, header},
    middleware::Next,
    response::{IntoResponse as _, Response},
};
use base64::Engine as _;
use serde_json::{Value, json};

/// The scope every request needs.
const TOOLS_SCOPE: &str = "mcp:tools";
/// The scope a call of the `env` tool needs as well.
const ADMIN_SCOPE: &str = "mcp:admin";
/// The tool that needs [`ADMIN_SCOPE`].
const ADMIN_TOOL: &str = "env";
/// The largest request body the check reads (to find the tool a call names).
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What a token is checked against.
struct Resource {
    issuer: String,
    /// This server's MCP URL, the audience its tokens must name.
    url: String,
    metadata_url: String,
    /// The issuer's Ed25519 keys by key id.
    keys: HashMap<String, ed25519_dalek::VerifyingKey>,
}

/// `mcp` (the router serving `/mcp`) behind the token check, with the protected-resource
/// metadata beside it; `url` is this server's MCP URL. Fetches the issuer's keys first.
pub(crate) async fn protect(mcp: axum::Router, issuer: &str, url: &str) -> anyhow::Result<axum::Router> {
    let keys = issuer_keys(issuer).await?;
    let origin = url.strip_suffix("/mcp").context("the MCP URL ends in /mcp")?;
    let resource = Arc::new(Resource {
        issuer: issuer.to_owned(),
        url: url.to_owned(),
        metadata_url: format!("{origin}/.well-known/oauth-protected-resource/mcp"),
        keys,
    });
    let metadata = json!({
        "resource": url,
        "authorization_servers": [issuer],
        "scopes_supported": [TOOLS_SCOPE, ADMIN_SCOPE],
        "bearer_methods_supported": ["header"],
    })
    .to_string();
    let serve_metadata = move || {
        let metadata = metadata.clone();
        async move { ([(header::CONTENT_TYPE, "application/json")], metadata) }
    };
    Ok(mcp.layer(axum::middleware::from_fn_with_state(resource, check)).merge(
        axum::Router::new()
            .route("/.well-known/oauth-protected-resource/mcp", axum::routing::get(serve_metadata.clone()))
            .route("/.well-known/oauth-protected-resource", axum::routing::get(serve_metadata)),
    ))
}

/// The issuer's Ed25519 signing keys, from the `jwks_uri` of its OpenID discovery document.
async fn issuer_keys(issuer: &str) -> anyhow::Result<HashMap<String, ed25519_dalek::VerifyingKey>> {
    // reqwest is built without a TLS provider of its own; loopback HTTP needs none, but
    // the client builder wants one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::builder().build().context("cannot build the HTTP client")?;
    let get_json = |url: String| {
        let http = http.clone();
        async move {
            let answer = http.get(&url).send().await.with_context(|| format!("cannot fetch {url}"))?;
            let answer = answer.error_for_status().with_context(|| format!("cannot fetch {url}"))?;
            let text = answer.text().await.with_context(|| format!("cannot read {url}"))?;
            serde_json::from_str::<Value>(&text).with_context(|| format!("{url} is not JSON"))
        }
    };
    let discovery = get_json(format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'))).await?;
    if discovery["issuer"] != issuer {
        bail!("the discovery document names issuer {}, not {issuer}", discovery["issuer"]);
    }
    let jwks_uri = discovery["jwks_uri"].as_str().context("the discovery document has no jwks_uri")?;
    let jwks = get_json(jwks_uri.to_owned()).await?;
    let mut keys = HashMap::new();
    for key in jwks["keys"].as_array().context("the JWKS has no keys")? {
        if key["kty"] != "OKP" || key["crv"] != "Ed25519" {
            continue;
        }
        let (Some(kid), Some(x)) = (key["kid"].as_str(), key["x"].as_str()) else { continue };
        let bytes: [u8; 32] = base64url(x)?.try_into().map_err(|_| anyhow::anyhow!("key {kid} is not 32 bytes"))?;
        keys.insert(kid.to_owned(), ed25519_dalek::VerifyingKey::from_bytes(&bytes)?);
    }
    if keys.is_empty() {
        bail!("the issuer's JWKS ({jwks_uri}) has no Ed25519 key");
    }
    Ok(keys)
}

fn base64url(text: &str) -> anyhow::Result<Vec<u8>> {
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(text)?)
}

/// Lets a request through when its token has every scope it needs.
async fn check(State(resource): State<Arc<Resource>>, request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "));
    let scopes = match token.map(|token| resource.verify(token)) {
        None => return resource.challenge(StatusCode::UNAUTHORIZED, None, TOOLS_SCOPE),
        Some(Err(_why)) => {
            return resource.challenge(StatusCode::UNAUTHORIZED, Some("invalid_token"), TOOLS_SCOPE);
        }
        Some(Ok(scopes)) => scopes,
    };
    if !scopes.iter().any(|scope| scope == TOOLS_SCOPE) {
        return resource.challenge(StatusCode::FORBIDDEN, Some("insufficient_scope"), TOOLS_SCOPE);
    }
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    if calls_admin_tool(&body) && !scopes.iter().any(|scope| scope == ADMIN_SCOPE) {
        let needed = format!("{TOOLS_SCOPE} {ADMIN_SCOPE}");
        return resource.challenge(StatusCode::FORBIDDEN, Some("insufficient_scope"), &needed);
    }
    next.run(Request::from_parts(parts, Body::from(body))).await
}

/// Whether a JSON-RPC message (or batch) calls [`ADMIN_TOOL`].
fn calls_admin_tool(body: &[u8]) -> bool {
    let Ok(message) = serde_json::from_slice::<Value>(body) else { return false };
    let messages = match message {
        Value::Array(messages) => messages,
        message => vec![message],
    };
    messages.iter().any(|message| message["method"] == "tools/call" && message["params"]["name"] == ADMIN_TOOL)
}

impl Resource {
    /// The scopes of `token` when it is a JWT access token of the issuer's for this
    /// resource, unexpired.
    fn verify(&self, token: &str) -> anyhow::Result<Vec<String>> {
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            bail!("not a JWT");
        };
        let signed = &token[..header.len() + 1 + payload.len()];
        let header: Value = serde_json::from_slice(&base64url(header)?)?;
        if !matches!(header["alg"].as_str(), Some("EdDSA" | "Ed25519")) {
            bail!("not signed with Ed25519");
        }
        if !header["typ"].as_str().is_some_and(|typ| typ.eq_ignore_ascii_case("at+jwt")) {
            bail!("not an access token (RFC 9068 `typ`)");
        }
        let key = header["kid"].as_str().and_then(|kid| self.keys.get(kid)).context("an unknown key")?;
        let signature: [u8; 64] =
            base64url(signature)?.try_into().map_err(|_| anyhow::anyhow!("the signature is not 64 bytes"))?;
        key.verify_strict(signed.as_bytes(), &ed25519_dalek::Signature::from_bytes(&signature))?;
        let claims: Value = serde_json::from_slice(&base64url(payload)?)?;
        if claims["iss"] != self.issuer.as_str() {
            bail!("another issuer");
        }
        let audience_matches = match &claims["aud"] {
            Value::String(audience) => *audience == self.url,
            Value::Array(audiences) => audiences.iter().any(|audience| *audience == self.url.as_str()),
            _ => false,
        };
        if !audience_matches {
            bail!("another audience");
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_secs());
        if claims["exp"].as_u64().is_none_or(|expiry| expiry <= now) {
            bail!("expired");
        }
        Ok(claims["scope"].as_str().unwrap_or_default().split(' ').map(str::to_owned).collect())
    }

    /// A `status` answer with this resource's challenge.
    fn challenge(&self, status: StatusCode, error: Option<&str>, scope: &str) -> Response {
        let error = error.map(|error| format!("error=\"{error}\", ")).unwrap_or_default();
        let challenge = format!("Bearer {error}scope=\"{scope}\", resource_metadata=\"{}\"", self.metadata_url);
        let mut answer = status.into_response();
        if let Ok(value) = HeaderValue::from_str(&challenge) {
            answer.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use ed25519_dalek::Signer as _;

    use super::*;

    const ISSUER: &str = "http://127.0.0.1:9";
    const URL: &str = "http://127.0.0.1:8/mcp";

    fn encode(value: &Value) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string())
    }

    /// A token signed by `key` with `header` and `claims`.
    fn token(key: &ed25519_dalek::SigningKey, header: &Value, claims: &Value) -> String {
        let signed = format!("{}.{}", encode(header), encode(claims));
        let signature = key.sign(signed.as_bytes()).to_bytes();
        format!("{signed}.{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(signature))
    }

    #[test]
    fn only_the_issuers_unexpired_tokens_for_this_resource_pass() {
        let key = ed25519_dalek::SigningKey::from_bytes(&[7; 32]);
        let other_key = ed25519_dalek::SigningKey::from_bytes(&[8; 32]);
        let resource = Resource {
            issuer: ISSUER.to_owned(),
            url: URL.to_owned(),
            metadata_url: String::new(),
            keys: HashMap::from([("k1".to_owned(), key.verifying_key())]),
        };
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs();
        let header = json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k1"});
        let claims = json!({"iss": ISSUER, "aud": URL, "exp": now + 60, "scope": "mcp:tools mcp:admin"});
        let with = |name: &str, value: Value| {
            let mut changed = claims.clone();
            changed[name] = value;
            changed
        };
        let good = token(&key, &header, &claims);
        assert_eq!(resource.verify(&good).unwrap(), ["mcp:tools", "mcp:admin"]);
        assert_eq!(resource.verify(&token(&key, &header, &with("aud", json!([URL])))).unwrap().len(), 2);

        let (signed, _signature) = good.rsplit_once('.').unwrap();
        let forged = format!("{}.{}", encode(&header), encode(&with("scope", json!("mcp:tools mcp:root"))));
        let refused = [
            (token(&other_key, &header, &claims), "signature error"),
            (format!("{forged}.{}", good.rsplit('.').next().unwrap()), "signature error"),
            (token(&key, &json!({"alg": "EdDSA", "typ": "JWT", "kid": "k1"}), &claims), "not an access token"),
            (token(&key, &json!({"alg": "EdDSA", "typ": "at+jwt", "kid": "k2"}), &claims), "an unknown key"),
            (token(&key, &json!({"alg": "HS256", "typ": "at+jwt", "kid": "k1"}), &claims), "not signed with Ed25519"),
            (token(&key, &header, &with("iss", json!("http://127.0.0.1:10"))), "another issuer"),
            (token(&key, &header, &with("aud", json!("http://127.0.0.1:8/other"))), "another audience"),
            (token(&key, &header, &with("exp", json!(now - 1))), "expired"),
            (signed.to_owned(), "not a JWT"),
        ];
        for (token, why) in refused {
            let error = resource.verify(&token).unwrap_err().to_string();
            assert!(error.contains(why), "{error:?} is not {why:?}");
        }
    }
}
