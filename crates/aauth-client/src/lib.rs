//! AAuth agent client: every HTTP request signed as an AAuth agent.
//!
//! [AAuth](https://github.com/dickhardt/AAuth) (draft-hardt-oauth-aauth-protocol) lets an
//! agent call APIs under its own identity and, when a resource asks for it, on behalf of
//! a person. Every request the agent sends carries an HTTP Message Signature (RFC 9421)
//! made with the agent's key, and a `Signature-Key` header
//! (draft-hardt-httpbis-signature-key) through which the server finds that key: inline
//! (`hwk`, only to enroll at the agent provider), in a naming JWT it signs (`jkt-jwt`, only
//! to refresh there), or inside a token whose `cnf.jwk` it is (`jwt`: the agent, person or
//! auth token).
//!
//! This crate is the agent side:
//! - [`AgentKey`]: the agent's Ed25519 or ES256 key, generated or kept in a JWK file
//!   readable only by its owner, with its RFC 7638 thumbprint;
//! - [`sign_request`]: signs a [`reqwest::Request`] under the AAuth profile: label `sig`,
//!   covering `@method`, `@authority`, `@path`, `signature-key`, plus `content-type` and
//!   `content-digest` (RFC 9530, SHA-256) with a body and `authorization` when present;
//!   `created` and nothing else as parameters. Signing is deterministic (Ed25519, or
//!   ES256 with RFC 6979 nonces).
//!   [`signature_base`] and [`signature_base_with_params`] show the exact bytes signed;
//! - [`AAuthClient`]: enrollment at the agent provider (its configured issuance URL, or
//!   the metadata's `bootstrap_endpoint`; then its refresh URL before the agent token
//!   expires), or self-hosted (its own agent tokens), missions ([`AAuthClient::propose_mission`]), and
//!   [`AAuthClient::http_client`], a
//!   `reqwest_middleware` client that signs every request with the agent, person or auth
//!   token and satisfies `AAuth-Requirement` answers: person token and auth token from the
//!   person server, deferred `202` delivery, interaction (`on_interaction`), approval and
//!   clarification (`on_clarification`, or `on_clarification_answer` for an updated
//!   request), polling `Location` as the draft says;
//! - caching: the agent token, and the person and auth tokens per resource, are used until
//!   5 minutes before they expire (protocol -11). With a cache folder
//!   ([`agent_token_cache_dir`](AAuthClientBuilder::agent_token_cache_dir)) other processes
//!   with the same agent provider and key reuse them: the agent token in a 0600 file per
//!   provider and key, the person and auth tokens in a 0600 file per provider, key and
//!   resource, each read back only after the checks a new token passes (`typ`, bound to
//!   this key, audience, issuer, expiry) and ignored (then replaced) when corrupt,
//!   another agent's, expired or readable by others. One process per command (the
//!   `omniagent` CLI) then does not ask the person server, or the person, again while the
//!   tokens last. With the `redis` feature they can be kept in a Redis server instead
//!   (`AAuthClientBuilder::state_in_redis`, feature `redis`), the same entries under
//!   `omniagent:aauth:…` keys read back with the same checks, so that replicas on several
//!   machines share one enrollment and one approval;
//! - [`Requirement`] and [`Jwt`]: the `AAuth-Requirement` header, and decoding the tokens
//!   with the checks an agent makes on them.
//!
//! Every failure is an [`Error`] naming its step and URL (without user info, query or
//! fragment, which may carry secrets); keys, tokens and the Redis URL never appear in
//! errors, logs or `Debug` output.
//!
//! # Features
//!
//! - `redis` (off by default): `AAuthClientBuilder::state_in_redis`, on the `redis`
//!   crate's tokio `ConnectionManager`.
//!
//! # Secrets
//!
//! The key's private half lives in the [`AgentKey`] and in buffers the crate zeroizes
//! (reading and writing the key file). Tokens are held as
//! [`SecretString`](skill_core::SecretString), zeroized when dropped, and so are the
//! buffers the crate makes of them itself (the token cache files' text). The copies that
//! go on the wire, in `Signature-Key` headers and request bodies, belong to the HTTP
//! client and are not zeroized: a token is a bearer of nothing without the key's
//! signature, and it lives only as long as its `exp`.
//!
//! # Bounds
//!
//! - Connections time out after 10 s. The client's own exchanges (metadata, enrollment
//!   and refresh, person and auth token requests) time out after 30 s
//!   ([`AAuthClientBuilder::exchange_timeout`]), and the client reads at most 1 MiB of
//!   any answer it reads itself. The caller's requests, and the polling of pending
//!   requests, are bounded by the caller.
//! - Polls wait what `Retry-After` says, an hour at most.
//! - At most [`max_requirement_rounds`](AAuthClientBuilder::max_requirement_rounds)
//!   requirement rounds per request.
//! - Signing is deterministic and `created` has whole seconds; so that a verifier's
//!   replay cache (key, `created`, method, authority, path) never sees a tuple twice,
//!   state-changing requests wait for the next second rather than reuse one, within the
//!   process and among the processes sharing its token folder or Redis server (a second
//!   is claimed atomically there; a Redis that cannot be reached fails the request rather
//!   than risk a replay). Processes with the same key that share neither can still
//!   collide within a second.
//!
//! # Drafts
//!
//! draft-hardt-oauth-aauth-protocol -11 as tagged (`dickhardt/AAuth@178e9e6`),
//! draft-hardt-httpbis-signature-key -09 and draft-hardt-aauth-bootstrap -02; no -12
//! proposal is adopted. Interop is tested against the independent -11 servers on PyPI
//! (`introspection-aauth`, and `aauth` 0.5.0's building blocks). The agent's items of
//! the upgrade checklist (`upgrade-10-to-11/agent-and-agent-provider.md`):
//!
//! - Done: AG-01 (`person_token_endpoint`, `auth_token_endpoint`), AG-10 (person token
//!   request with `capabilities`, `login_hint`, `tenant`, `domain_hint`,
//!   `justification` and `mission_s256`), AG-11 (cached per resource and mission: a
//!   person token of another mission, or of none, is not presented), AG-12, AG-20,
//!   AG-21 (`presented_token` always), AG-22 (`iss`, `agent_jkt`, `ps`, `sub`,
//!   `presented_jti`, `exp`), AG-23, AG-24 (a resource token's `login_hint` passed on),
//!   AG-25 (an updated request, through [`AAuthClientBuilder::on_clarification_answer`],
//!   carries the `presented_token` its resource token was issued against), AG-26 (`401`
//!   and `202` delivery), AG-30 (no `AAuth-Mission`), AG-31 (the interaction endpoint, the
//!   only governance endpoint the agent calls, gets `mission_s256`), AG-32 (approval
//!   `{s256, mission, capabilities, person_tokens}`, `s256` verified), AG-33 (completion
//!   at `{mission_endpoint}/{s256}`), AG-34 ([`Error::MissionTerminated`] with its
//!   reason, [`Error::MissionNotFound`]), AG-35 ([`AAuthClient::update_mission`]), AG-36
//!   (`resources` in a proposal), AG-50, AG-51, AG-52, AG-60 (`revoked_jwt`: a fresh
//!   token of the kind, a fresh person token for an auth token; `clock_skew`: one retry
//!   signed with the server's time from `Date`, then [`Error::ClockSkew`]), AG-61
//!   (`expired_presented_token` and `revoked_presented_token`: a fresh person token;
//!   `revoked_resource_token`: never resubmitted; `as_unreachable`: once more after
//!   `Retry-After`; no `invalid_agent_token`), AG-62 ([`Error::Revoked`]), AG-63
//!   (polling goes on until a final answer, however the interaction completed: the
//!   resource's pending URL is the one polled, also when the person server relayed its
//!   interaction), AG-64 (the interaction endpoint gets `type: interaction`, with `url`,
//!   `code` and the `mission_s256`), AG-70 (tokens are refreshed 5 minutes before they
//!   expire, top down, and none is presented inside that margin; a person token is
//!   refreshed through the resource asking for it again), and the SHOULD of "Relaying
//!   Through the Person Server": a resource's interaction goes to the person server's
//!   `interaction_endpoint` first, and the agent directs the person itself
//!   (`on_interaction`) after `424 interaction_unavailable`, or when the person server
//!   lists no such endpoint. `iat` is required on every token and not judged against the
//!   agent's clock; `exp` has no skew; agent identifiers are never case-folded.
//! - Not applicable to this agent: AG-02 and AG-03 (optional): the agent reads no
//!   resource metadata and follows no `aauth-resource` link; it calls with the best token
//!   it holds and follows the `AAuth-Requirement` the resource answers with, which costs
//!   one round trip per resource before its tokens are cached, and is what an
//!   unrecognised `access_mode` means anyway. The permission and audit endpoints of AG-31
//!   are not called: the tools the agent calls are governed by its host (the gateway's
//!   trust and policy), not asked of the person server one by one; a call to them would
//!   carry `mission_s256` as the interaction endpoint's does. AG-40: the agent runs no
//!   sub-agents (one agent per key), so the parent-mediated flow has no party to run.
//! - Bootstrap -02: issuance with `hwk` (body covered) at a configured URL, refresh with
//!   `jkt-jwt` at a configured URL (the naming JWT, signed by the agent key, delegates to
//!   that same key: the agent keeps one key rather than rotate an ephemeral one, which
//!   would void every person and auth token it holds), answers `{agent_token,
//!   expires_in}`; self-hosted enrollment ([`AAuthClientBuilder::self_hosted`]: the
//!   agent publishes [`AAuthClient::self_hosted_documents`] on its own domain and issues
//!   its own agent tokens).
//!
//! # Not done
//!
//! - The signatures of the tokens the agent receives are not verified: not the agent
//!   token's, not the person and auth tokens', and not the resource token's against the
//!   resource's JWKS (`{iss}/.well-known/aauth-resource.json`). The agent checks what
//!   binds each token to itself and to the resource (`typ`, `cnf.jwk` with its `alg`,
//!   `agent_jkt`, `iss`, `aud`, `ps`, `sub`, `presented_jti`, `dwk`, `iat`, `exp`); the
//!   servers it presents the tokens to verify their signatures.
//! - Agent keys are Ed25519 or ES256 (P-256, [`KeyType`]); no other algorithm.
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
//!     .agent_token_cache_dir("/home/me/.omniagent/aauth/agent-tokens".into())
//!     .on_interaction(|url, code| eprintln!("open {url}?code={code} to approve"))
//!     .build()?;
//! let response = client.http_client().get("https://api.example/documents").send().await?;
//! println!("{}", response.status());
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod client;
mod created;
mod digest;
mod enroll;
mod error;
mod exchange;
mod interaction;
mod jwt;
mod key;
mod metadata;
mod private_file;
#[cfg(feature = "redis")]
mod redis_state;
mod requirement;
mod self_hosted;
mod shared_state;
mod shared_tokens;
mod signing;
mod tokens;

pub use crate::client::{
    AAuthClient, AAuthClientBuilder, AAuthMiddleware, AgentIdentity, Clarification, ClarificationAnswer, Mission,
};
pub use crate::digest::content_digest;
pub use crate::error::{Error, Step, url_for_errors};
pub use crate::jwt::{Audience, Claims, Confirmation, Jwt, JwtHeader, TokenKind};
pub use crate::key::{AgentKey, KeyType};
pub use crate::metadata::Role;
pub use crate::requirement::{AAUTH_REQUIREMENT, Requirement, RequirementError};
pub use crate::self_hosted::SelfHostedDocuments;
pub use crate::signing::{SIGNATURE_LABEL, SignatureKey, sign_request, signature_base, signature_base_with_params};
