//! AAuth agent client: every HTTP request signed as an AAuth agent.
//!
//! [AAuth](https://github.com/dickhardt/AAuth) (draft-hardt-oauth-aauth-protocol) lets an
//! agent call APIs under its own identity and, when a resource asks for it, on behalf of
//! a person. Every request the agent sends carries an HTTP Message Signature (RFC 9421)
//! made with the agent's key, and a `Signature-Key` header
//! (draft-hardt-httpbis-signature-key) through which the server finds that key: inline
//! (`hwk`, only towards the agent provider) or inside a token whose `cnf.jwk` it is (`jwt`:
//! the agent, person or auth token).
//!
//! This crate is the agent side:
//! - [`AgentKey`]: the agent's Ed25519 key, generated or kept in a JWK file readable only
//!   by its owner, with its RFC 7638 thumbprint;
//! - [`sign_request`]: signs a [`reqwest::Request`] under the AAuth profile: label `sig`,
//!   covering `@method`, `@authority`, `@path`, `signature-key`, plus `content-type` and
//!   `content-digest` (RFC 9530, SHA-256) with a body and `authorization` when present;
//!   `created` and nothing else as parameters. Signing is deterministic Ed25519.
//!   [`signature_base`] and [`signature_base_with_params`] show the exact bytes signed;
//! - [`AAuthClient`]: enrollment at the agent provider (`bootstrap_endpoint`, then
//!   `refresh_endpoint` before the agent token expires; the token cached in a 0600 file
//!   other processes reuse), and [`AAuthClient::http_client`], a
//!   `reqwest_middleware` client that signs every request with the agent, person or auth
//!   token and satisfies `AAuth-Requirement` answers: person token and auth token from the
//!   person server, deferred `202` delivery, interaction (`on_interaction`), approval and
//!   clarification (`on_clarification`), polling `Location` as the draft says;
//! - [`Requirement`] and [`Jwt`]: the `AAuth-Requirement` header and the tokens, for
//!   servers and tests as much as for the client.
//!
//! Every failure is an [`Error`] naming its step and URL; keys and tokens never appear in
//! errors, logs or `Debug` output.
//!
//! # Example
//!
//! Sign a JSON `POST` with an agent token, as a request to a person server is signed:
//!
//! ```
//! use aauth_client::{AgentKey, SignatureKey, sign_request};
//! use reqwest::header::{CONTENT_TYPE, HeaderValue};
//! use skill_core::SecretString;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let key = AgentKey::generate();
//! let agent_token = SecretString::from("eyJhbGciOiJFZDI1NTE5In0.eyJzdWIiOiJhYXV0aDphZ2VudEBleGFtcGxlIn0.c2ln");
//!
//! let mut request = reqwest::Request::new(reqwest::Method::POST, "https://ps.example/token".parse()?);
//! request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
//! *request.body_mut() = Some(r#"{"resource_token":"eyJ..."}"#.into());
//!
//! let created = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH)?.as_secs();
//! sign_request(&key, &mut request, &SignatureKey::Jwt(agent_token), created)?;
//!
//! let header = |name: &str| request.headers()[name].to_str().unwrap().to_owned();
//! assert_eq!(
//!     header("signature-input"),
//!     format!(
//!         r#"sig=("@method" "@authority" "@path" "content-type" "content-digest" "signature-key");created={created}"#
//!     ),
//! );
//! assert!(header("signature").starts_with("sig=:"));
//! assert!(header("signature-key").starts_with(r#"sig=jwt;jwt="eyJ"#));
//! assert!(header("content-digest").starts_with("sha-256=:"));
//! # Ok(())
//! # }
//! ```
//!
//! An agent that calls a resource; the resource may ask for a person token, an auth token,
//! or a person's consent, which the client obtains before it answers:
//!
//! ```no_run
//! use aauth_client::{AAuthClient, AgentKey};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let key = AgentKey::load_or_generate("/home/me/.omniagent/aauth/agent.jwk".as_ref())?;
//! let client = AAuthClient::builder(key, "https://agents.example".parse()?)
//!     .agent_token_cache("/home/me/.omniagent/aauth/agent-token.json".into())
//!     .on_interaction(|url, code| eprintln!("open {url}?code={code} to approve"))
//!     .build()?;
//! let response = client.http_client().get("https://api.example/documents").send().await?;
//! println!("{}", response.status());
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod client;
mod digest;
mod enroll;
mod error;
mod interaction;
mod jwt;
mod key;
mod metadata;
mod requirement;
mod signing;
mod tokens;

pub use crate::client::{AAuthClient, AAuthClientBuilder, AAuthMiddleware, AgentIdentity};
pub use crate::digest::content_digest;
pub use crate::error::{Error, Step};
pub use crate::jwt::{Audience, Claims, Confirmation, Jwt, JwtHeader, TokenKind};
pub use crate::key::AgentKey;
pub use crate::metadata::Role;
pub use crate::requirement::{AAUTH_REQUIREMENT, Requirement, RequirementError};
pub use crate::signing::{SIGNATURE_LABEL, SignatureKey, sign_request, signature_base, signature_base_with_params};
