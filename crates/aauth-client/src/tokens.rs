//! Person and auth tokens: the requests to the person server, the checks an agent makes on
//! what it receives (or reads back from the token cache file), and the per-resource cache
//! in memory.
//!
//! A token is cached per resource (its server identifier) until 5 minutes before it
//! expires, the margin protocol -11 recommends, so that a token never expires between
//! the moment it is chosen and the moment the resource verifies it, and none is
//! presented late (a server answers a late one with a shorter-lived token). With a token cache folder
//! the tokens are also shared with other processes (`shared_tokens`).

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::json;
use skill_core::{ExposeSecret, SecretString};
use url::Url;

use crate::error::{Step, url_for_errors};
use crate::jwt::{Jwt, TokenKind};
use crate::metadata::{RESOURCE_METADATA, ServerId};
use crate::{AgentKey, Error};

/// How long before its expiry a token stops being used, and a fresh one is obtained: the
/// five minutes protocol -11 recommends ("Token Refresh"), applied top down (the agent
/// token is checked before the person token is asked for, and the person token before
/// the resource and auth tokens). A server that issues tokens for five minutes or less
/// gets asked for a fresh one on each request.
pub(crate) const EXPIRY_MARGIN: u64 = 300;

/// Whether a token expiring at `expires_at` may still be presented at `now`.
pub(crate) fn fresh(expires_at: u64, now: u64) -> bool {
    now.saturating_add(EXPIRY_MARGIN) < expires_at
}

/// A person or auth token with its expiry and subject.
#[derive(Clone)]
pub(crate) struct CachedToken {
    pub(crate) token: SecretString,
    /// `exp`, or sooner when the server's `expires_in` says so (Unix seconds).
    pub(crate) expires_at: u64,
    /// The directed person identifier, `sub`.
    pub(crate) sub: Option<String>,
}

impl fmt::Debug for CachedToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedToken")
            .field("expires_at", &self.expires_at)
            .field("sub", &self.sub)
            .finish_non_exhaustive()
    }
}

/// Person and auth tokens by resource.
#[derive(Debug, Default)]
pub(crate) struct TokenCache {
    entries: Mutex<HashMap<(String, TokenKind), CachedToken>>,
}

impl TokenCache {
    /// The `kind` token for `resource`, if one is cached and still fresh.
    pub(crate) fn get(&self, resource: &str, kind: TokenKind, now: u64) -> Option<CachedToken> {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (resource.to_owned(), kind);
        match entries.get(&key) {
            Some(cached) if fresh(cached.expires_at, now) => Some(cached.clone()),
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Caches `token` as the `kind` token for `resource`.
    pub(crate) fn insert(&self, resource: &str, kind: TokenKind, token: CachedToken) {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        entries.insert((resource.to_owned(), kind), token);
    }

    /// Forgets the `kind` token for `resource` if it is still `token` (the resource has
    /// refused it); a newer one cached meanwhile stays.
    pub(crate) fn forget(&self, resource: &str, kind: TokenKind, token: &SecretString) {
        let mut entries = self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = (resource.to_owned(), kind);
        if entries.get(&key).is_some_and(|cached| cached.token.expose_secret() == token.expose_secret()) {
            entries.remove(&key);
        }
    }

    /// How many tokens are cached (for `Debug`).
    pub(crate) fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len()
    }
}

/// What the agent tells its person server beside the token it asks for (protocol -11,
/// "Person Token Request" and "Auth Token Request"): the capabilities it declares, the
/// configured hints about the person and why, and the mission it works under.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RequestHints {
    /// `capabilities`: what the agent can handle (`interaction`, `clarification`).
    /// Without it, a person server that must reach the person answers `user_unreachable`.
    pub(crate) capabilities: Vec<&'static str>,
    /// `login_hint`: who the person is, as the person server knows them.
    pub(crate) login_hint: Option<String>,
    /// `tenant`: the person server's tenant (organization) of the person.
    pub(crate) tenant: Option<String>,
    /// `domain_hint`: the domain of the person's organization.
    pub(crate) domain_hint: Option<String>,
    /// `justification`: why the agent asks, shown to the person (Markdown).
    pub(crate) justification: Option<String>,
    /// `mission_s256`: the mission the person token is for (person token requests only).
    pub(crate) mission_s256: Option<String>,
}

impl RequestHints {
    /// Adds the members that are set to `body`; `login_hint` only when `body` has none.
    fn add_to(&self, body: &mut serde_json::Value) {
        if !self.capabilities.is_empty() {
            body["capabilities"] = json!(self.capabilities);
        }
        for (member, value) in [
            ("login_hint", &self.login_hint),
            ("tenant", &self.tenant),
            ("domain_hint", &self.domain_hint),
            ("justification", &self.justification),
        ] {
            if let Some(value) = value
                && body.get(member).is_none()
            {
                body[member] = json!(value);
            }
        }
    }
}

/// The body of a person token request: `{"resource": "<resource identifier>"}`, the
/// capabilities and hints, and the mission's `mission_s256` when there is one.
pub(crate) fn person_token_request_body(resource: &ServerId, hints: &RequestHints) -> String {
    let mut body = json!({"resource": resource.as_str()});
    hints.add_to(&mut body);
    if let Some(mission) = &hints.mission_s256 {
        body["mission_s256"] = json!(mission);
    }
    body.to_string()
}

/// The body of an auth token request: the resource token, the token the agent presented
/// to the resource when it issued it (`presented_token`, required by protocol -11), the
/// resource token's `login_hint` passed on unchanged (else the configured one), the
/// capabilities and the other hints. It goes on the wire as it is, like every token the
/// client presents (see the crate doc on secrets).
pub(crate) fn auth_token_request_body(
    resource_token: &SecretString,
    checked: &Jwt,
    presented: &SecretString,
    hints: &RequestHints,
) -> String {
    let mut body =
        json!({"resource_token": resource_token.expose_secret(), "presented_token": presented.expose_secret()});
    if let Some(login_hint) = checked.claims.other.get("login_hint").and_then(serde_json::Value::as_str) {
        body["login_hint"] = json!(login_hint);
    }
    hints.add_to(&mut body);
    body.to_string()
}

/// Reads `{"<field>": "<token>", "expires_in": N}` from a token endpoint's `200`.
pub(crate) fn token_from_response(
    step: Step,
    url: &Url,
    body: &[u8],
    field: &'static str,
) -> Result<(SecretString, Option<u64>), Error> {
    #[derive(Deserialize)]
    struct Answer {
        person_token: Option<String>,
        auth_token: Option<String>,
        expires_in: Option<u64>,
    }
    let invalid = || Error::InvalidResponse {
        step,
        url: url_for_errors(url),
        reason: format!("not a JSON object with a string `{field}`"),
    };
    let answer: Answer = serde_json::from_slice(body).map_err(|_| invalid())?;
    let token = match field {
        "person_token" => answer.person_token,
        _ => answer.auth_token,
    };
    let token = token.ok_or_else(invalid)?;
    Ok((SecretString::from(token), answer.expires_in))
}

/// Checks a person token the person server issued for `resource`: `typ`, bound to our
/// key, issued by our person server for this resource, not expired.
pub(crate) fn check_person_token(
    token: SecretString,
    expires_in: Option<u64>,
    resource: &ServerId,
    person_server: &ServerId,
    key: &AgentKey,
    now: u64,
) -> Result<CachedToken, Error> {
    let jwt = Jwt::decode(token.expose_secret(), TokenKind::Person)?;
    jwt.check_bound_to(key)?;
    jwt.check_claim("iss", jwt.claims.iss.as_deref(), person_server.as_str())?;
    check_audience(&jwt, resource)?;
    jwt.check_has_iat()?;
    let exp = jwt.check_not_expired(now)?;
    Ok(CachedToken { token, expires_at: expires_at(exp, expires_in, now), sub: jwt.claims.sub })
}

/// Checks a person token read back from the token cache file as [`check_person_token`]
/// checks a new one; it is usable until `expires_at` (as stored) or its `exp`, whichever
/// comes first.
pub(crate) fn check_cached_person_token(
    token: SecretString,
    expires_at: u64,
    resource: &ServerId,
    person_server: &ServerId,
    key: &AgentKey,
    now: u64,
) -> Result<CachedToken, Error> {
    let mut cached = check_person_token(token, None, resource, person_server, key, now)?;
    cached.expires_at = cached.expires_at.min(expires_at);
    Ok(cached)
}

/// The token the agent presented to the resource, as the resource token must name it.
pub(crate) struct PresentedToken<'a> {
    pub(crate) kind: TokenKind,
    pub(crate) token: &'a SecretString,
}

/// Checks a resource token before it goes to the person server (protocol -11, "Resource
/// Challenge Verification" and "Resource Token Verification"): `typ`; `dwk` is
/// `aauth-resource.json`; `iss` is the resource the request went to; `agent_jkt` is our
/// key's thumbprint; `ps` is our person server; `presented_jti` is the `jti` of the token
/// presented, and `sub` its `sub` (a person or auth token's); `iat` present; not
/// expired. Its signature is not verified: the person server it goes to does that.
pub(crate) fn check_resource_token(
    token: &SecretString,
    resource: &ServerId,
    person_server: &ServerId,
    presented: &PresentedToken<'_>,
    key: &AgentKey,
    now: u64,
) -> Result<Jwt, Error> {
    let jwt = Jwt::decode(token.expose_secret(), TokenKind::Resource)?;
    jwt.check_claim("dwk", jwt.claims.dwk.as_deref(), RESOURCE_METADATA)?;
    jwt.check_claim("iss", jwt.claims.iss.as_deref(), resource.as_str())?;
    jwt.check_claim("agent_jkt", jwt.claims.agent_jkt.as_deref(), &key.thumbprint())?;
    jwt.check_claim("ps", jwt.claims.ps.as_deref(), person_server.as_str())?;
    let shown = Jwt::decode(presented.token.expose_secret(), presented.kind)?;
    let Some(presented_jti) = shown.claims.jti.as_deref() else {
        return Err(Error::TokenClaim {
            token: TokenKind::Resource,
            claim: "presented_jti",
            reason: format!("cannot be checked: the {} presented has no `jti`", presented.kind),
        });
    };
    jwt.check_claim("presented_jti", jwt.claims.presented_jti.as_deref(), presented_jti)?;
    if matches!(presented.kind, TokenKind::Person | TokenKind::Auth)
        && let Some(sub) = shown.claims.sub.as_deref()
    {
        jwt.check_claim("sub", jwt.claims.sub.as_deref(), sub)?;
    }
    jwt.check_has_iat()?;
    jwt.check_not_expired(now)?;
    Ok(jwt)
}

/// Checks an auth token (protocol draft, "Auth Token Response Verification"): `typ`;
/// `iss` is the resource token's `aud`; `aud` is the resource; bound to our key; `sub` is
/// the resource token's; not expired.
pub(crate) fn check_auth_token(
    token: SecretString,
    expires_in: Option<u64>,
    resource: &ServerId,
    resource_token: &Jwt,
    key: &AgentKey,
    now: u64,
) -> Result<CachedToken, Error> {
    let (jwt, exp) = check_auth_token_binding(&token, resource, key, now)?;
    if let Some(issuer) = resource_token.claims.aud.as_ref().and_then(|aud| aud.single()) {
        jwt.check_claim("iss", jwt.claims.iss.as_deref(), issuer)?;
    }
    if let Some(sub) = &resource_token.claims.sub {
        jwt.check_claim("sub", jwt.claims.sub.as_deref(), sub)?;
    }
    Ok(CachedToken { token, expires_at: expires_at(exp, expires_in, now), sub: jwt.claims.sub })
}

/// Checks an auth token read back from the token cache file, where the resource token it
/// was exchanged for is no longer at hand: everything [`check_auth_token`] checks but the
/// two claims compared with the resource token (`iss`, `sub`), which were checked when
/// the token arrived. It is usable until `expires_at` (as stored) or its `exp`, whichever
/// comes first.
pub(crate) fn check_cached_auth_token(
    token: SecretString,
    expires_at: u64,
    resource: &ServerId,
    key: &AgentKey,
    now: u64,
) -> Result<CachedToken, Error> {
    let (jwt, exp) = check_auth_token_binding(&token, resource, key, now)?;
    Ok(CachedToken { token, expires_at: exp.min(expires_at), sub: jwt.claims.sub })
}

/// The checks on an auth token that need no resource token: `typ`, bound to our key,
/// `aud` is the resource, not expired; the decoded token and its `exp`.
fn check_auth_token_binding(
    token: &SecretString,
    resource: &ServerId,
    key: &AgentKey,
    now: u64,
) -> Result<(Jwt, u64), Error> {
    let jwt = Jwt::decode(token.expose_secret(), TokenKind::Auth)?;
    jwt.check_bound_to(key)?;
    check_audience(&jwt, resource)?;
    jwt.check_has_iat()?;
    let exp = jwt.check_not_expired(now)?;
    Ok((jwt, exp))
}

fn check_audience(jwt: &Jwt, resource: &ServerId) -> Result<(), Error> {
    match &jwt.claims.aud {
        Some(aud) if aud.contains(resource.as_str()) => Ok(()),
        Some(_) => Err(Error::TokenClaim {
            token: jwt.kind().unwrap_or(TokenKind::Auth),
            claim: "aud",
            reason: format!("does not name the resource `{resource}`"),
        }),
        None => Err(Error::TokenClaim {
            token: jwt.kind().unwrap_or(TokenKind::Auth),
            claim: "aud",
            reason: "missing".to_owned(),
        }),
    }
}

fn expires_at(exp: u64, expires_in: Option<u64>, now: u64) -> u64 {
    expires_in.map_or(exp, |seconds| exp.min(now.saturating_add(seconds)))
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::metadata::Role;

    const NOW: u64 = 1_800_000_000;

    fn id(role: Role, text: &str) -> ServerId {
        ServerId::parse(role, &Url::parse(text).unwrap(), false).unwrap()
    }

    fn issue(kind: TokenKind, claims: Value) -> SecretString {
        SecretString::from(crate::jwt::test_token(kind, &claims))
    }

    fn resource_claims(agent: &AgentKey) -> Value {
        json!({"iss": "https://r.example", "dwk": "aauth-resource.json", "aud": "https://ps.example",
            "ps": "https://ps.example", "sub": "p1", "presented_jti": "pt-1", "agent_jkt": agent.thumbprint(),
            "iat": NOW - 1, "exp": NOW + 300, "scope": "data.read"})
    }

    /// The person token the agent presented: `jti` `pt-1`, `sub` `p1`.
    fn person_token_presented() -> SecretString {
        issue(TokenKind::Person, json!({"jti": "pt-1", "sub": "p1", "iat": NOW - 5, "exp": NOW + 3600}))
    }

    #[test]
    fn cache_hands_out_fresh_tokens_only() {
        let cache = TokenCache::default();
        let token = |text: &str, expires_at| CachedToken { token: SecretString::from(text), expires_at, sub: None };
        cache.insert("https://r.example", TokenKind::Auth, token("a1", NOW + 301));
        assert_eq!(cache.get("https://r.example", TokenKind::Auth, NOW).unwrap().token.expose_secret(), "a1");
        assert!(cache.get("https://r.example", TokenKind::Person, NOW).is_none());
        assert!(cache.get("https://other.example", TokenKind::Auth, NOW).is_none());
        // 5 minutes before `exp` the token is no longer handed out, and it is dropped.
        assert!(cache.get("https://r.example", TokenKind::Auth, NOW + 1).is_none());
        assert_eq!(cache.len(), 0);

        cache.insert("https://r.example", TokenKind::Person, token("p1", NOW + 3600));
        cache.forget("https://r.example", TokenKind::Person, &SecretString::from("p0"));
        assert!(cache.get("https://r.example", TokenKind::Person, NOW).is_some());
        cache.forget("https://r.example", TokenKind::Person, &SecretString::from("p1"));
        assert!(cache.get("https://r.example", TokenKind::Person, NOW).is_none());
    }

    #[test]
    fn resource_token_checks() {
        let agent = AgentKey::generate();
        let resource = id(Role::Resource, "https://r.example");
        let ps = id(Role::PersonServer, "https://ps.example");
        let person = person_token_presented();
        let presented = PresentedToken { kind: TokenKind::Person, token: &person };
        let check = |claims: Value| {
            check_resource_token(&issue(TokenKind::Resource, claims), &resource, &ps, &presented, &agent, NOW)
        };
        let jwt = check(resource_claims(&agent)).unwrap();
        assert_eq!(jwt.claims.scope.as_deref(), Some("data.read"));

        let other_key = AgentKey::generate();
        let mut cases = Vec::new();
        let with = |member: &str, value: Value| {
            let mut claims = resource_claims(&agent);
            match value {
                Value::Null => _ = claims.as_object_mut().unwrap().remove(member),
                value => claims[member] = value,
            }
            claims
        };
        cases.push((with("agent_jkt", json!(other_key.thumbprint())), "agent_jkt"));
        cases.push((with("agent_jkt", Value::Null), "agent_jkt"));
        cases.push((with("iss", json!("https://evil.example")), "iss"));
        cases.push((with("ps", json!("https://other-ps.example")), "ps"));
        // Protocol -11: `sub` and `presented_jti` are the presented token's.
        cases.push((with("sub", json!("someone-else")), "sub"));
        cases.push((with("presented_jti", json!("pt-2")), "presented_jti"));
        cases.push((with("presented_jti", Value::Null), "presented_jti"));
        // The resource's keys are in `aauth-resource.json`, nowhere else.
        cases.push((with("dwk", json!("aauth-person.json")), "dwk"));
        cases.push((with("dwk", Value::Null), "dwk"));
        // `iat` is required, but a future one is the servers' to judge.
        cases.push((with("iat", Value::Null), "iat"));
        check(with("iat", json!(NOW + 3600))).unwrap();
        for (claims, expected) in cases {
            let error = check(claims).unwrap_err();
            assert!(
                matches!(error, Error::TokenClaim { token: TokenKind::Resource, claim, .. } if claim == expected),
                "{expected}: {error:?}"
            );
        }
        // `exp` has no skew.
        assert!(matches!(check(with("exp", json!(NOW))), Err(Error::TokenExpired { token: TokenKind::Resource, .. })));
        // An agent token presented has a `jti` but no person `sub` to compare.
        let agent_token = issue(TokenKind::Agent, json!({"jti": "pt-1", "sub": "aauth:a@ap.example"}));
        let shown = PresentedToken { kind: TokenKind::Agent, token: &agent_token };
        check_resource_token(&issue(TokenKind::Resource, resource_claims(&agent)), &resource, &ps, &shown, &agent, NOW)
            .unwrap();
        // A person token is not a resource token.
        let error = check_resource_token(
            &issue(TokenKind::Person, resource_claims(&agent)),
            &resource,
            &ps,
            &presented,
            &agent,
            NOW,
        )
        .unwrap_err();
        assert!(matches!(error, Error::TokenType { token: TokenKind::Resource, .. }), "{error:?}");
    }

    #[test]
    fn auth_token_checks() {
        let agent = AgentKey::generate();
        let resource = id(Role::Resource, "https://r.example");
        let ps = id(Role::PersonServer, "https://ps.example");
        let person = person_token_presented();
        let presented = PresentedToken { kind: TokenKind::Person, token: &person };
        let resource_token = check_resource_token(
            &issue(TokenKind::Resource, resource_claims(&agent)),
            &resource,
            &ps,
            &presented,
            &agent,
            NOW,
        )
        .unwrap();
        let claims = |agent: &AgentKey| {
            json!({"iss": "https://ps.example", "aud": "https://r.example", "sub": "p1", "ps": "https://ps.example",
                "cnf": {"jwk": agent.public_jwk()}, "iat": NOW, "exp": NOW + 3600})
        };
        let check = |claims: Value, expires_in| {
            check_auth_token(issue(TokenKind::Auth, claims), expires_in, &resource, &resource_token, &agent, NOW)
        };
        assert_eq!(check(claims(&agent), None).unwrap().expires_at, NOW + 3600);
        assert_eq!(check(claims(&agent), Some(600)).unwrap().expires_at, NOW + 600);
        for (member, value, expected) in [
            ("iss", json!("https://other-ps.example"), "iss"),
            ("aud", json!("https://other.example"), "aud"),
            ("sub", json!("p2"), "sub"),
            ("iat", Value::Null, "iat"),
        ] {
            let mut claims = claims(&agent);
            match value {
                Value::Null => _ = claims.as_object_mut().unwrap().remove(member),
                value => claims[member] = value,
            }
            let error = check(claims, None).unwrap_err();
            assert!(matches!(error, Error::TokenClaim { claim, .. } if claim == expected), "{member}: {error:?}");
        }
        let error = check(claims(&AgentKey::generate()), None).unwrap_err();
        assert!(matches!(error, Error::TokenClaim { token: TokenKind::Auth, claim: "cnf", .. }), "{error:?}");
        // A person token where an auth token is expected is refused by its `typ`.
        let error =
            check_auth_token(issue(TokenKind::Person, claims(&agent)), None, &resource, &resource_token, &agent, NOW)
                .unwrap_err();
        assert!(matches!(error, Error::TokenType { token: TokenKind::Auth, .. }), "{error:?}");
    }

    #[test]
    fn person_token_checks() {
        let agent = AgentKey::generate();
        let resource = id(Role::Resource, "https://r.example");
        let ps = id(Role::PersonServer, "https://ps.example");
        let claims = json!({"iss": "https://ps.example", "aud": "https://r.example", "sub": "p1",
            "cnf": {"jwk": agent.public_jwk()}, "iat": NOW, "exp": NOW + 3600});
        let cached =
            check_person_token(issue(TokenKind::Person, claims.clone()), Some(60), &resource, &ps, &agent, NOW)
                .unwrap();
        assert_eq!((cached.expires_at, cached.sub.as_deref()), (NOW + 60, Some("p1")));
        let mut wrong = claims.clone();
        wrong["aud"] = json!(["https://a.example", "https://b.example"]);
        let error = check_person_token(issue(TokenKind::Person, wrong), None, &resource, &ps, &agent, NOW).unwrap_err();
        assert_eq!(error.to_string(), "person token: claim `aud` does not name the resource `https://r.example`");
    }

    #[test]
    fn request_bodies_and_responses() {
        let resource = id(Role::Resource, "https://r.example");
        let none = RequestHints::default();
        assert_eq!(person_token_request_body(&resource, &none), r#"{"resource":"https://r.example"}"#);
        let hints = RequestHints {
            capabilities: vec!["interaction"],
            login_hint: Some("dana@example.com".into()),
            tenant: Some("acme".into()),
            domain_hint: None,
            justification: Some("to book the trip".into()),
            mission_s256: Some("m256".into()),
        };
        let body: Value = serde_json::from_str(&person_token_request_body(&resource, &hints)).unwrap();
        assert_eq!(
            body,
            json!({"resource": "https://r.example", "capabilities": ["interaction"], "login_hint": "dana@example.com",
                "tenant": "acme", "justification": "to book the trip", "mission_s256": "m256"})
        );
        // The auth token request carries the presented token, and the resource token's
        // `login_hint` unchanged rather than the configured one.
        let checked = |claims: Value| {
            Jwt::decode(&crate::jwt::test_token(TokenKind::Resource, &claims), TokenKind::Resource).unwrap()
        };
        let hints = RequestHints { mission_s256: None, ..hints };
        let body = auth_token_request_body(
            &SecretString::from("rt"),
            &checked(json!({"login_hint": "Dana@Example.COM"})),
            &SecretString::from("pt"),
            &hints,
        );
        let body: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(
            body,
            json!({"resource_token": "rt", "presented_token": "pt", "capabilities": ["interaction"],
                "login_hint": "Dana@Example.COM", "tenant": "acme", "justification": "to book the trip"})
        );
        let body =
            auth_token_request_body(&SecretString::from("rt"), &checked(json!({})), &SecretString::from("pt"), &none);
        assert_eq!(
            serde_json::from_str::<Value>(&body).unwrap(),
            json!({"resource_token": "rt", "presented_token": "pt"})
        );
        let url = Url::parse("https://ps.example/token").unwrap();
        let (token, expires_in) =
            token_from_response(Step::AuthToken, &url, br#"{"auth_token":"t","expires_in":5}"#, "auth_token").unwrap();
        assert_eq!((token.expose_secret(), expires_in), ("t", Some(5)));
        let error = token_from_response(Step::AuthToken, &url, br#"{"person_token":"t"}"#, "auth_token").unwrap_err();
        assert_eq!(
            error.to_string(),
            "requesting an auth token: https://ps.example/token: not a JSON object with a string `auth_token`"
        );
    }

    #[test]
    fn debug_shows_no_token() {
        let cached = CachedToken { token: SecretString::from("secret-token"), expires_at: 1, sub: Some("p".into()) };
        assert!(!format!("{cached:?}").contains("secret-token"));
    }
}
