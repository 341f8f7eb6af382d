//! Self-hosted enrollment (bootstrap -02, "Self-Hosted Agents"): an agent that runs
//! under a domain its person controls is its own agent provider. It publishes the
//! provider's metadata (`/.well-known/aauth-agent.json`) and a JWKS holding its key on
//! that domain, and issues its own agent tokens, signed with the same key that signs its
//! requests; there is no enrollment or refresh exchange. Person servers, resources and
//! access servers verify those tokens against the published JWKS, as any provider's.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use skill_core::SecretString;

use crate::enroll::AgentToken;
use crate::jwt::TokenKind;
use crate::metadata::{AGENT_METADATA, ServerId};
use crate::{AgentKey, Error};

/// How long a self-issued agent token lasts: an hour, bootstrap -02's typical lifetime.
const AGENT_TOKEN_LIFETIME: u64 = 3600;

/// Where the JWKS is published, under the agent's own server identifier.
const JWKS_PATH: &str = "/jwks.json";

/// What a self-hosted agent publishes on its own domain, for the parties that verify its
/// agent tokens: [`AAuthClient::self_hosted_documents`](crate::AAuthClient::self_hosted_documents).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelfHostedDocuments {
    /// The agent provider metadata, served at `{issuer}/.well-known/aauth-agent.json`:
    /// `{"issuer", "jwks_uri"}`.
    pub metadata: Value,
    /// The JWKS, served at `{issuer}/jwks.json` (the metadata's `jwks_uri`): the agent's
    /// public key, its thumbprint as `kid`.
    pub jwks: Value,
}

/// Checks the `local` part of a self-hosted agent identifier (protocol -11, "Agent
/// Identifiers"): 1 to 255 of `A-Z`, `a-z`, `0-9`, `-`, `_`, `.` (`+` is the sub-agent
/// delimiter, not a top-level agent's).
pub(crate) fn check_local(local: &str) -> Result<(), Error> {
    let valid = !local.is_empty()
        && local.len() <= 255
        && local.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'));
    if valid {
        return Ok(());
    }
    Err(Error::InvalidSelfHostedAgent {
        local: local.to_owned(),
        reason: "the local part must be 1 to 255 of A-Z, a-z, 0-9, `-`, `_` and `.`",
    })
}

/// The documents `issuer` publishes for `key`.
pub(crate) fn documents(issuer: &ServerId, key: &AgentKey) -> SelfHostedDocuments {
    let issuer = issuer.as_str();
    let mut jwk = key.public_jwk();
    jwk["kid"] = json!(key.thumbprint());
    jwk["use"] = json!("sig");
    SelfHostedDocuments {
        metadata: json!({"issuer": issuer, "jwks_uri": format!("{issuer}{JWKS_PATH}")}),
        jwks: json!({"keys": [jwk]}),
    }
}

/// An agent token issued by the agent itself: `iss` its own server identifier, `sub`
/// `aauth:{local}@{host}`, bound to `key` and signed by it (`kid` its thumbprint), with
/// the person server as `ps` when there is one.
pub(crate) fn agent_token(
    issuer: &ServerId,
    local: &str,
    key: &AgentKey,
    person_server: Option<&ServerId>,
    now: u64,
) -> AgentToken {
    let host = issuer.url().host_str().unwrap_or_default().to_owned();
    let agent_id = format!("aauth:{local}@{host}");
    let mut jti = [0u8; 16];
    getrandom::fill(&mut jti).expect("the operating system's random number generator failed");
    let header = json!({"alg": key.alg(), "typ": TokenKind::Agent.typ(), "kid": key.thumbprint()});
    let expires_at = now + AGENT_TOKEN_LIFETIME;
    let mut claims = json!({"iss": issuer.as_str(), "dwk": AGENT_METADATA, "sub": agent_id,
        "jti": URL_SAFE_NO_PAD.encode(jti), "iat": now, "exp": expires_at, "cnf": {"jwk": key.public_jwk()}});
    if let Some(person_server) = person_server {
        claims["ps"] = json!(person_server.as_str());
    }
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
    let signature = URL_SAFE_NO_PAD.encode(key.sign(signing_input.as_bytes()));
    AgentToken {
        token: SecretString::from(format!("{signing_input}.{signature}")),
        agent_id,
        expires_at,
        person_server: person_server.map(|ps| ps.as_str().to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use skill_core::ExposeSecret as _;
    use url::Url;

    use super::*;
    use crate::jwt::Jwt;
    use crate::metadata::Role;

    fn issuer() -> ServerId {
        ServerId::parse(Role::AgentProvider, &Url::parse("https://me.example").unwrap(), false).unwrap()
    }

    #[test]
    fn local_parts_follow_the_agent_identifier_rules() {
        for local in ["me", "Dana.Home-2", "a_b", &"x".repeat(255)] {
            check_local(local).unwrap();
        }
        for local in ["", "with space", "parent+child", "dana@home", &"x".repeat(256)] {
            assert!(check_local(local).is_err(), "{local:?}");
        }
    }

    #[test]
    fn the_token_is_bound_to_the_key_and_names_the_published_key() {
        let key = AgentKey::generate();
        let ps = ServerId::parse(Role::PersonServer, &Url::parse("https://ps.example").unwrap(), false).unwrap();
        let token = agent_token(&issuer(), "Dana", &key, Some(&ps), 1_000);
        assert_eq!(token.agent_id, "aauth:Dana@me.example");
        assert_eq!(token.expires_at, 4_600);
        let jwt = Jwt::decode(token.token.expose_secret(), TokenKind::Agent).unwrap();
        jwt.check_bound_to(&key).unwrap();
        assert_eq!(jwt.claims.iss.as_deref(), Some("https://me.example"));
        assert_eq!(jwt.claims.ps.as_deref(), Some("https://ps.example"));
        assert_eq!(jwt.header.kid.as_deref(), Some(key.thumbprint().as_str()));
        let documents = documents(&issuer(), &key);
        assert_eq!(
            documents.metadata,
            json!({"issuer": "https://me.example", "jwks_uri": "https://me.example/jwks.json"})
        );
        assert_eq!(documents.jwks["keys"][0]["kid"], key.thumbprint());
        assert_eq!(documents.jwks["keys"][0]["x"], key.public_jwk()["x"]);
    }
}
