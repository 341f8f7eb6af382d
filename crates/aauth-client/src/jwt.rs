//! Compact JWTs (RFC 7519) as AAuth uses them: decoding with the `typ` checked, and the
//! claims an agent must check on the tokens it receives.
//!
//! The client does not verify the signatures of the tokens it receives: an agent token
//! and its auth tokens come from servers it already trusts, and it checks what binds a
//! token to this agent and this resource (`typ`, `cnf.jwk`, `agent_jkt`, `iss`, `aud`,
//! `dwk`, `iat`, `exp`). The server that receives a token verifies its signature. Issuing
//! tokens is a server's business: the test servers (`aauth-harness`) do it themselves.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{AgentKey, Error};

/// The four AAuth token types, told apart by the JWT header `typ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TokenKind {
    /// `aa-agent+jwt`, issued by the agent provider.
    Agent,
    /// `aa-person+jwt`, issued by the person server for one resource.
    Person,
    /// `aa-resource+jwt`, issued by a resource in an `auth-token` requirement.
    Resource,
    /// `aa-auth+jwt`, issued by the person server (or an access server).
    Auth,
}

impl TokenKind {
    /// The JWT header `typ` of this kind.
    pub fn typ(self) -> &'static str {
        match self {
            Self::Agent => "aa-agent+jwt",
            Self::Person => "aa-person+jwt",
            Self::Resource => "aa-resource+jwt",
            Self::Auth => "aa-auth+jwt",
        }
    }

    /// The kind a JWT header `typ` names.
    pub fn from_typ(typ: &str) -> Option<Self> {
        [Self::Agent, Self::Person, Self::Resource, Self::Auth].into_iter().find(|kind| kind.typ() == typ)
    }
}

impl fmt::Display for TokenKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Agent => "agent token",
            Self::Person => "person token",
            Self::Resource => "resource token",
            Self::Auth => "auth token",
        })
    }
}

/// A JWT's protected header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JwtHeader {
    /// The signing algorithm; AAuth requires a fully specified one (`Ed25519`, `ES256`).
    pub alg: String,
    /// The token type (`aa-agent+jwt`, …).
    pub typ: String,
    /// The issuer's key identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kid: Option<String>,
}

/// The `aud` claim: one audience or several.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Audience {
    /// A single audience.
    One(String),
    /// Several audiences.
    Many(Vec<String>),
}

impl Audience {
    /// Whether `audience` is one of the audiences.
    pub fn contains(&self, audience: &str) -> bool {
        match self {
            Self::One(one) => one == audience,
            Self::Many(many) => many.iter().any(|one| one == audience),
        }
    }

    /// The single audience, when there is exactly one.
    pub fn single(&self) -> Option<&str> {
        match self {
            Self::One(one) => Some(one),
            Self::Many(many) if many.len() == 1 => Some(&many[0]),
            Self::Many(_) => None,
        }
    }
}

/// The confirmation claim (RFC 7800): the key a token is bound to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    /// The public JWK.
    pub jwk: Value,
}

/// The claims AAuth tokens carry; the ones a kind does not use stay `None`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Claims {
    /// Issuer: a server identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iss: Option<String>,
    /// Subject: the agent identifier (agent token) or a directed person identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sub: Option<String>,
    /// Audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aud: Option<Audience>,
    /// Token identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    /// Issued at (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iat: Option<u64>,
    /// Expires at (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exp: Option<u64>,
    /// The well-known metadata document naming the issuer's keys (`aauth-agent.json`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dwk: Option<String>,
    /// The person server (agent, resource and auth tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ps: Option<String>,
    /// The JWK thumbprint of the agent's key (resource tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_jkt: Option<String>,
    /// The person token the resource verified (resource tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presented_jti: Option<String>,
    /// Space-separated scopes (resource and auth tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The key the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cnf: Option<Confirmation>,
    /// Every other claim.
    #[serde(flatten)]
    pub other: serde_json::Map<String, Value>,
}

/// A decoded JWT: header and claims. The token text and its signature are not kept, so
/// this value can be logged.
#[derive(Debug, Clone, PartialEq)]
pub struct Jwt {
    /// The protected header.
    pub header: JwtHeader,
    /// The claims.
    pub claims: Claims,
}

impl Jwt {
    /// Decodes a compact JWT (`header.claims.signature`, base64url without padding) and
    /// checks that its `typ` is `kind`'s and that its `alg` is one AAuth allows (not
    /// `none`, not the polymorphic `EdDSA`, not symmetric). The signature is not verified.
    pub fn decode(token: &str, kind: TokenKind) -> Result<Self, Error> {
        let malformed = |reason: &str| Error::MalformedToken { token: kind, reason: reason.to_owned() };
        let mut parts = token.split('.');
        let (Some(header), Some(claims), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(malformed("not a compact JWT (three dot-separated parts)"));
        };
        if signature.is_empty() {
            return Err(malformed("it has no signature"));
        }
        let header = URL_SAFE_NO_PAD.decode(header).map_err(|_| malformed("the header is not base64url"))?;
        let header: JwtHeader = serde_json::from_slice(&header)
            .map_err(|_| malformed("the header is not a JSON object with string `alg` and `typ`"))?;
        if header.typ != kind.typ() {
            return Err(Error::TokenType { token: kind, found: header.typ });
        }
        if matches!(header.alg.as_str(), "none" | "EdDSA") || header.alg.starts_with("HS") {
            return Err(Error::TokenClaim {
                token: kind,
                claim: "alg",
                reason: format!(
                    "`{}` is not allowed: AAuth requires a fully specified asymmetric algorithm",
                    header.alg
                ),
            });
        }
        let claims = URL_SAFE_NO_PAD.decode(claims).map_err(|_| malformed("the claims are not base64url"))?;
        let claims: Claims = serde_json::from_slice(&claims)
            .map_err(|_| malformed("the claims are not a JSON object of the expected types"))?;
        Ok(Self { header, claims })
    }

    /// The token kind its `typ` names.
    pub fn kind(&self) -> Option<TokenKind> {
        TokenKind::from_typ(&self.header.typ)
    }

    /// Checks that `cnf.jwk` is `key`'s public key: the same `kty`, `crv`, `x` and (P-256)
    /// `y`, the members of its thumbprint, and the fully specified `alg` the protocol
    /// draft requires every conveyed key to carry, `Ed25519` or `ES256` (not `EdDSA`, not
    /// absent).
    pub fn check_bound_to(&self, key: &AgentKey) -> Result<(), Error> {
        let kind = self.kind_or_agent();
        let wrong = |reason: String| Error::TokenClaim { token: kind, claim: "cnf", reason };
        let Some(cnf) = &self.claims.cnf else {
            return Err(wrong("missing".to_owned()));
        };
        let ours = key.public_jwk();
        // The members of the key's thumbprint: `kty`, `crv`, `x`, and `y` for P-256.
        let same = ["kty", "crv", "x", "y"]
            .iter()
            .filter(|member| ours.get(**member).is_some())
            .all(|member| cnf.jwk.get(member) == ours.get(member));
        if !same {
            return Err(wrong(format!("`jwk` is not this agent's key (thumbprint {})", key.thumbprint())));
        }
        match cnf.jwk.get("alg") {
            None => Err(wrong("`jwk` has no `alg`; AAuth requires a fully specified one".to_owned())),
            Some(alg) if *alg == ours["alg"] => Ok(()),
            Some(alg) => Err(wrong(format!("`jwk` has `alg` {alg}, expected {}", ours["alg"]))),
        }
    }

    /// Checks that the token has an `iat`: every AAuth token carries one (protocol -11).
    /// It is not a validity check: a server whose clock is behind the issuer's says so
    /// (`clock_skew`), and the agent does not judge other servers' clocks with its own.
    pub(crate) fn check_has_iat(&self) -> Result<(), Error> {
        match self.claims.iat {
            None => Err(Error::TokenClaim { token: self.kind_or_agent(), claim: "iat", reason: "missing".to_owned() }),
            Some(_) => Ok(()),
        }
    }

    /// Checks that the token has not expired at `now` (Unix seconds): `exp` is compared
    /// as it is, with no allowance for clock skew (protocol -11).
    pub fn check_not_expired(&self, now: u64) -> Result<u64, Error> {
        let kind = self.kind_or_agent();
        let Some(exp) = self.claims.exp else {
            return Err(Error::TokenClaim { token: kind, claim: "exp", reason: "missing".to_owned() });
        };
        if exp <= now { Err(Error::TokenExpired { token: kind, exp }) } else { Ok(exp) }
    }

    /// Checks that string claim `claim` equals `expected`.
    pub(crate) fn check_claim(&self, claim: &'static str, actual: Option<&str>, expected: &str) -> Result<(), Error> {
        match actual {
            Some(actual) if actual == expected => Ok(()),
            Some(actual) => Err(Error::TokenClaim {
                token: self.kind_or_agent(),
                claim,
                reason: format!("is `{actual}`, expected `{expected}`"),
            }),
            None => Err(Error::TokenClaim { token: self.kind_or_agent(), claim, reason: "missing".to_owned() }),
        }
    }

    /// The kind for error messages; `decode` already checked `typ`.
    fn kind_or_agent(&self) -> TokenKind {
        self.kind().unwrap_or(TokenKind::Agent)
    }
}

/// A compact JWT of `kind` with `claims`, signed by a fresh key, for unit tests (the
/// client never issues tokens).
#[cfg(test)]
pub(crate) fn test_token(kind: TokenKind, claims: &Value) -> String {
    let header = serde_json::json!({"alg": "Ed25519", "typ": kind.typ(), "kid": "test"});
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(claims).unwrap())
    );
    let signature = AgentKey::generate().sign(signing_input.as_bytes());
    format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn b64(value: &Value) -> String {
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(value).unwrap())
    }

    #[test]
    fn decode_reads_header_and_claims() {
        let agent = AgentKey::generate();
        let claims = json!({
            "iss": "https://ap.example", "dwk": "aauth-agent.json", "sub": "aauth:a1@ap.example",
            "jti": "j1", "iat": 1_700_000_000, "exp": 1_700_003_600, "ps": "https://ps.example",
            "cnf": {"jwk": agent.public_jwk()}, "extra": [1, 2]
        });
        let jwt = Jwt::decode(&test_token(TokenKind::Agent, &claims), TokenKind::Agent).unwrap();
        assert_eq!(
            jwt.header,
            JwtHeader { alg: "Ed25519".into(), typ: "aa-agent+jwt".into(), kid: Some("test".into()) }
        );
        assert_eq!(jwt.claims.sub.as_deref(), Some("aauth:a1@ap.example"));
        assert_eq!(jwt.claims.ps.as_deref(), Some("https://ps.example"));
        assert_eq!(jwt.claims.other["extra"], json!([1, 2]));
        jwt.check_bound_to(&agent).unwrap();
        assert!(matches!(jwt.check_bound_to(&AgentKey::generate()), Err(Error::TokenClaim { claim: "cnf", .. })));
        assert_eq!(jwt.check_not_expired(1_700_000_000).unwrap(), 1_700_003_600);
        assert!(matches!(
            jwt.check_not_expired(1_700_003_600),
            Err(Error::TokenExpired { token: TokenKind::Agent, .. })
        ));
    }

    /// `cnf.jwk` must name the fully specified `alg` of the agent's key: absent or the
    /// polymorphic `EdDSA` is refused, as is an `alg` that disagrees with the key.
    #[test]
    fn binding_requires_the_keys_alg() {
        let agent = AgentKey::generate();
        let bound = |jwk: Value| {
            let token = test_token(TokenKind::Person, &json!({"cnf": {"jwk": jwk}}));
            Jwt::decode(&token, TokenKind::Person).unwrap().check_bound_to(&agent)
        };
        bound(agent.public_jwk()).unwrap();
        for (alg, expected) in [
            (None, "person token: claim `cnf` `jwk` has no `alg`; AAuth requires a fully specified one"),
            (Some("EdDSA"), r#"person token: claim `cnf` `jwk` has `alg` "EdDSA", expected "Ed25519""#),
            (Some("ES256"), r#"person token: claim `cnf` `jwk` has `alg` "ES256", expected "Ed25519""#),
        ] {
            let mut jwk = agent.public_jwk();
            match alg {
                Some(alg) => jwk["alg"] = json!(alg),
                None => _ = jwk.as_object_mut().unwrap().remove("alg"),
            }
            assert_eq!(bound(jwk).unwrap_err().to_string(), expected);
        }
    }

    #[test]
    fn iat_is_required_but_not_judged() {
        let jwt = |claims: Value| Jwt::decode(&test_token(TokenKind::Resource, &claims), TokenKind::Resource).unwrap();
        let now = 1_800_000_000u64;
        jwt(json!({"iat": now})).check_has_iat().unwrap();
        // A server whose clock is ahead of ours issued it: not the agent's to refuse.
        jwt(json!({"iat": now + 3600})).check_has_iat().unwrap();
        let error = jwt(json!({})).check_has_iat().unwrap_err();
        assert_eq!(error.to_string(), "resource token: claim `iat` missing");
        // `exp` has no skew: a token is expired from its `exp` on.
        assert!(jwt(json!({"exp": now})).check_not_expired(now).is_err());
        assert_eq!(jwt(json!({"exp": now + 1})).check_not_expired(now).unwrap(), now + 1);
    }

    #[test]
    fn typ_is_checked() {
        let token = test_token(TokenKind::Person, &json!({"aud": "https://r.example"}));
        let error = Jwt::decode(&token, TokenKind::Auth).unwrap_err();
        assert!(
            matches!(&error, Error::TokenType { token: TokenKind::Auth, found } if found == "aa-person+jwt"),
            "{error:?}"
        );
        assert!(Jwt::decode(&token, TokenKind::Person).is_ok());
    }

    #[test]
    fn forbidden_algorithms_are_refused() {
        for alg in ["none", "EdDSA", "HS256"] {
            let token = format!("{}.{}.c2ln", b64(&json!({"alg": alg, "typ": "aa-auth+jwt"})), b64(&json!({})));
            let error = Jwt::decode(&token, TokenKind::Auth).unwrap_err();
            assert!(matches!(error, Error::TokenClaim { claim: "alg", .. }), "{alg}: {error:?}");
        }
    }

    #[test]
    fn malformed_tokens_name_the_problem_without_the_token() {
        let header = b64(&json!({"alg": "Ed25519", "typ": "aa-resource+jwt"}));
        let cases = [
            ("only.two".to_owned(), "three dot-separated parts"),
            ("a.b.c.d".to_owned(), "three dot-separated parts"),
            (format!("{header}.{}.", b64(&json!({}))), "no signature"),
            ("!!!.e30.c2ln".to_owned(), "header is not base64url"),
            (format!("{}.e30.c2ln", b64(&json!({"alg": "Ed25519"}))), "header is not a JSON object"),
            (format!("{header}.%%%.c2ln"), "claims are not base64url"),
            (format!("{header}.{}.c2ln", b64(&json!({"exp": "soon"}))), "claims are not a JSON object"),
        ];
        for (token, expected) in cases {
            let error = Jwt::decode(&token, TokenKind::Resource).unwrap_err().to_string();
            assert!(error.contains(expected), "{token}: {error}");
            assert!(error.starts_with("resource token"), "{error}");
            assert!(!error.contains(&token), "{error}");
        }
    }

    #[test]
    fn audience_one_or_many() {
        let one: Audience = serde_json::from_value(json!("https://r.example")).unwrap();
        let many: Audience = serde_json::from_value(json!(["https://a.example", "https://r.example"])).unwrap();
        assert!(one.contains("https://r.example") && many.contains("https://r.example"));
        assert_eq!(one.single(), Some("https://r.example"));
        assert_eq!(many.single(), None);
    }

    #[test]
    fn claim_checks_name_the_claim() {
        let token = test_token(TokenKind::Resource, &json!({"iss": "https://r.example"}));
        let jwt = Jwt::decode(&token, TokenKind::Resource).unwrap();
        jwt.check_claim("iss", jwt.claims.iss.as_deref(), "https://r.example").unwrap();
        let error = jwt.check_claim("iss", jwt.claims.iss.as_deref(), "https://other.example").unwrap_err();
        assert_eq!(
            error.to_string(),
            "resource token: claim `iss` is `https://r.example`, expected `https://other.example`"
        );
        let error = jwt.check_claim("agent_jkt", None, "x").unwrap_err();
        assert!(matches!(error, Error::TokenClaim { token: TokenKind::Resource, claim: "agent_jkt", .. }));
    }
}
