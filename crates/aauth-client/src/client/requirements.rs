//! The caller's requests: each signed with the best token held, and the requirements
//! its resource answers with satisfied (tokens, pending answers polled at `Location`,
//! interaction, clarification), within the request's rounds.

use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Request, Response};
use reqwest_middleware::Next;
use skill_core::{ExposeSecret as _, SecretString};
use url::Url;

use super::clarification::Updating;
use super::{Inner, now};
use crate::error::{Step, url_for_errors};
use crate::interaction::{self, PollSchedule, Problem};
use crate::jwt::TokenKind;
use crate::metadata::{Role, ServerId};
use crate::requirement::{AAUTH_REQUIREMENT, Requirement, RequirementError};
use crate::signing::{SignatureKey, sign_request};
use crate::{Error, created, exchange};

/// The request header an agent declares what it can handle in (protocol draft,
/// "AAuth-Capabilities Request Header").
const AAUTH_CAPABILITIES: HeaderName = HeaderName::from_static("aauth-capabilities");
/// The response header naming a signature failure (Signature-Key draft).
const SIGNATURE_ERROR: &str = "signature-error";

/// Where requests go: through the rest of the middleware stack (the caller's request and
/// its polls), or straight to the client (agent provider and person server).
pub(super) enum Channel<'a> {
    Direct(&'a reqwest::Client),
    Next { next: Next<'a>, extensions: &'a mut http::Extensions },
}

impl Channel<'_> {
    pub(super) async fn send(&mut self, request: Request, step: Step) -> Result<Response, Error> {
        let url = request.url().clone();
        match self {
            Channel::Direct(client) => client.execute(request).await.map_err(|source| Error::http(step, &url, source)),
            Channel::Next { next, extensions } => {
                next.clone().run(request, extensions).await.map_err(|source| Error::http(step, &url, source))
            }
        }
    }
}

/// The token a request presents, and whether it was obtained for this very request.
pub(super) struct Presented {
    pub(super) kind: TokenKind,
    pub(super) token: SecretString,
    pub(super) obtained_now: bool,
}

/// What a pending request is, for what its answers may ask.
pub(super) enum Pending<'a> {
    /// The caller's request to this URL: a deferred `auth-token` requirement may arrive.
    Resource(&'a Url),
    /// An auth token request at the person server: a clarification may be answered with
    /// an updated request.
    AuthTokenRequest(&'a Updating<'a>),
    /// Another exchange with the person server.
    Exchange,
}

/// The requirement rounds one request has used.
pub(super) struct Rounds {
    pub(super) used: usize,
    pub(super) max: usize,
    pub(super) url: String,
}

impl Rounds {
    pub(super) fn take(&mut self, requirement: &'static str) -> Result<(), Error> {
        self.used += 1;
        if self.used > self.max {
            return Err(Error::TooManyRounds { url: self.url.clone(), rounds: self.max, last: requirement });
        }
        Ok(())
    }
}

/// How long to wait before calling a resource again after `as_unreachable` without a
/// `Retry-After`.
const AS_UNREACHABLE_BACKOFF: Duration = Duration::from_secs(5);

impl Inner {
    /// Sends the caller's request, satisfying the requirements its resource answers with.
    pub(super) async fn execute(&self, request: Request, channel: &mut Channel<'_>) -> Result<Response, Error> {
        let url = request.url().clone();
        let shown_url = url_for_errors(&url);
        if request.try_clone().is_none() {
            return Err(Error::StreamingBody { method: request.method().to_string(), url: shown_url });
        }
        let mut rounds = Rounds { used: 0, max: self.max_rounds, url: shown_url.clone() };
        let mut presented = self.best_token(&url).await?;
        // How far this machine's clock is ahead of the resource's, once it said
        // `clock_skew`: the retry is signed with the resource's time.
        let mut skew: Option<u64> = None;
        // Whether the resource was called again once after `as_unreachable`.
        let mut unreachable_retried = false;
        loop {
            let mut attempt = request.try_clone().expect("the body was checked to be in memory");
            if let Some(capabilities) = self.capabilities_header() {
                attempt.headers_mut().insert(AAUTH_CAPABILITIES, capabilities);
            }
            let created = created::created_for(&self.key, &attempt, self.shared.as_deref()).await?;
            let created = created.saturating_sub(skew.unwrap_or(0));
            sign_request(&self.key, &mut attempt, &SignatureKey::Jwt(presented.token.clone()), created)?;
            let response = channel.send(attempt, Step::Request).await?;
            let status = response.status().as_u16();
            if !matches!(status, 401 | 402 | 202) {
                return Ok(response);
            }
            let requirement = requirement_of(&url, &response)?;
            if status == 401 {
                match signature_error_of(&response).as_deref() {
                    // Signature-Key -09: the token presented was revoked; a fresh one of
                    // its kind (for an auth token, a fresh person token: protocol -11).
                    Some("revoked_jwt") => {
                        rounds.take("revoked_jwt")?;
                        presented = self.replace_revoked(&url, presented).await?;
                        continue;
                    }
                    // The server's clock is behind `created` or a token's `iat`: a fresh
                    // token would carry the same skew, so none is fetched; the request is
                    // signed once more with the server's time, judged from its `Date`.
                    Some("clock_skew") => {
                        let behind = server_behind_by(&response, now());
                        if skew.is_some() || behind.is_none() {
                            return Err(Error::ClockSkew { url: shown_url, skew: behind.or(skew) });
                        }
                        rounds.take("clock_skew")?;
                        skew = behind;
                        continue;
                    }
                    _ => {}
                }
            }
            let Some(requirement) = requirement else {
                return Ok(response);
            };
            if !requirement.allowed_with(status) {
                return Err(Error::RequirementStatus { url: shown_url, requirement: requirement.name(), status });
            }
            tracing::debug!(url = %shown_url, status, requirement = requirement.name(), "AAuth requirement");
            if status == 202 {
                // A pending answer: the resource holds the call, and its result comes at
                // `Location`; the requirement is handled (and counted) there.
                return self
                    .follow_pending(channel, &url, response, presented, Pending::Resource(&url), &mut rounds)
                    .await;
            }
            rounds.take(requirement.name())?;
            presented = match requirement {
                Requirement::AgentToken => {
                    if presented.kind == TokenKind::Agent {
                        return Err(Error::RequirementNotMet { url: shown_url, requirement: "agent-token" });
                    }
                    let agent = self.agent_token().await?;
                    Presented { kind: TokenKind::Agent, token: agent.token, obtained_now: false }
                }
                Requirement::PersonToken => {
                    if presented.kind == TokenKind::Person && presented.obtained_now {
                        return Err(Error::RequirementNotMet { url: shown_url, requirement: "person-token" });
                    }
                    let refused = (presented.kind == TokenKind::Person).then_some(&presented.token);
                    let person = self.person_token(&url, refused).await?;
                    Presented { kind: TokenKind::Person, token: person.token, obtained_now: true }
                }
                Requirement::AuthToken { resource_token } => {
                    match self.auth_token(&url, &resource_token, &presented).await {
                        Ok(auth) => Presented { kind: TokenKind::Auth, token: auth.token, obtained_now: true },
                        Err(error) => {
                            self.after_refused_exchange(&url, presented, error, &mut unreachable_retried).await?
                        }
                    }
                }
                other => {
                    return Err(Error::RequirementStatus { url: shown_url, requirement: other.name(), status });
                }
            };
        }
    }

    /// What to present next after the person server refused to exchange a resource token
    /// (protocol -11, "Auth Token Request" errors): for `expired_presented_token` and
    /// `revoked_presented_token` a fresh person token, with which the resource issues a
    /// fresh resource token; for `revoked_resource_token` the same token again, so that the
    /// resource issues another (the refused one is never resubmitted); for
    /// `as_unreachable`, the same after a backoff (`Retry-After`, else 5 s), once per
    /// request. Any other refusal is the request's error.
    async fn after_refused_exchange(
        &self,
        url: &Url,
        presented: Presented,
        error: Error,
        unreachable_retried: &mut bool,
    ) -> Result<Presented, Error> {
        if let Error::AccessServerUnreachable { retry_after, .. } = &error
            && !std::mem::replace(unreachable_retried, true)
        {
            let wait = retry_after.unwrap_or(AS_UNREACHABLE_BACKOFF).min(interaction::MAX_POLL_INTERVAL);
            tracing::info!(url = %url_for_errors(url), ?wait, "the access server was unreachable; calling the resource again");
            tokio::time::sleep(wait).await;
            return Ok(presented);
        }
        match error.error_code() {
            Some("expired_presented_token" | "revoked_presented_token") => {
                tracing::info!(url = %url_for_errors(url), "the presented token was refused; getting a fresh person token");
                self.forget_resource_tokens(url, &presented);
                let person = self.person_token(url, Some(&presented.token)).await?;
                Ok(Presented { kind: TokenKind::Person, token: person.token, obtained_now: true })
            }
            Some("revoked_resource_token") => Ok(Presented { obtained_now: false, ..presented }),
            _ => Err(error),
        }
    }

    /// A fresh token to replace `revoked`, which the resource refused with
    /// `Signature-Error: revoked_jwt`: a new agent token from the agent provider, or for a
    /// person or auth token a new person token (the auth token's authorization goes with
    /// it: the resource issues a fresh resource token for the new person token).
    async fn replace_revoked(&self, url: &Url, revoked: Presented) -> Result<Presented, Error> {
        tracing::info!(url = %url_for_errors(url), token = %revoked.kind, "the token presented was revoked");
        if revoked.kind == TokenKind::Agent {
            let agent = self.renew_agent_token(&revoked.token).await?;
            return Ok(Presented { kind: TokenKind::Agent, token: agent.token, obtained_now: true });
        }
        self.forget_resource_tokens(url, &revoked);
        let refused = self.tokens.get(&url.origin().ascii_serialization(), TokenKind::Person, 0).map(|held| held.token);
        let person = self.person_token(url, Some(refused.as_ref().unwrap_or(&revoked.token))).await?;
        Ok(Presented { kind: TokenKind::Person, token: person.token, obtained_now: true })
    }

    /// Forgets, in memory, the auth token of the resource of `url`, and `refused` when it
    /// is its person token.
    fn forget_resource_tokens(&self, url: &Url, refused: &Presented) {
        let resource = url.origin().ascii_serialization();
        if let Some(auth) = self.tokens.get(&resource, TokenKind::Auth, 0) {
            self.tokens.forget(&resource, TokenKind::Auth, &auth.token);
        }
        self.tokens.forget(&resource, refused.kind, &refused.token);
    }

    /// The token to present first to the resource of `url`: auth, else person, else
    /// agent; in memory, else left in the token cache by another process.
    async fn best_token(&self, url: &Url) -> Result<Presented, Error> {
        let now = now();
        let resource = url.origin().ascii_serialization();
        if self.shared.is_some()
            && self.tokens.get(&resource, TokenKind::Auth, now).is_none()
            && let Ok(resource_id) = ServerId::of(Role::Resource, url, self.allow_http_loopback)
            && let Some(person_server) = self.known_person_server().await?
        {
            let shared = self.shared_tokens(&resource_id, &person_server, now).await?;
            for (kind, token) in [(TokenKind::Auth, shared.auth), (TokenKind::Person, shared.person)] {
                if let Some(token) = token
                    && self.tokens.get(&resource, kind, now).is_none()
                    && (kind != TokenKind::Person || self.fits_mission(&token))
                {
                    self.tokens.insert(&resource, kind, token);
                }
            }
        }
        for kind in [TokenKind::Auth, TokenKind::Person] {
            if let Some(cached) = self.tokens.get(&resource, kind, now) {
                return Ok(Presented { kind, token: cached.token, obtained_now: false });
            }
        }
        let agent = self.agent_token().await?;
        Ok(Presented { kind: TokenKind::Agent, token: agent.token, obtained_now: false })
    }

    /// `AAuth-Capabilities` for the callbacks that are set.
    fn capabilities_header(&self) -> Option<HeaderValue> {
        let capabilities = self.capabilities();
        (!capabilities.is_empty()).then(|| HeaderValue::from_str(&capabilities.join(", ")).expect("tokens are ASCII"))
    }

    pub(super) fn capabilities(&self) -> Vec<&'static str> {
        let mut capabilities = Vec::new();
        if self.on_interaction.is_some() {
            capabilities.push("interaction");
        }
        if self.on_clarification.is_some() {
            capabilities.push("clarification");
        }
        capabilities
    }

    /// Follows a `202`: handles its requirement, then polls `Location` with signed GETs
    /// until a final answer. `presented` is what the request presented, which the polls
    /// present too until an auth token replaces it.
    pub(super) async fn follow_pending(
        &self,
        channel: &mut Channel<'_>,
        request_url: &Url,
        first: Response,
        presented: Presented,
        context: Pending<'_>,
        rounds: &mut Rounds,
    ) -> Result<Response, Error> {
        let (resource_url, updating) = match context {
            Pending::Resource(url) => (Some(url), None),
            Pending::AuthTokenRequest(updating) => (None, Some(updating)),
            Pending::Exchange => (None, None),
        };
        let mut token = presented.token.clone();
        let location = interaction::pending_location(request_url, first.headers())?;
        let mut schedule = PollSchedule::new(interaction::retry_after(first.headers()));
        let mut announced: Option<(Url, String)> = None;
        let mut exchanged: Option<SecretString> = None;
        let mut pending = Some(first);
        loop {
            if let Some(response) = pending.take() {
                match (requirement_of(&location, &response)?, resource_url) {
                    (None | Some(Requirement::Approval), _) => {}
                    (Some(Requirement::Interaction { url, code }), _) => {
                        interaction::check_interaction_url(&location, &url, self.allow_http_loopback)?;
                        // Every pending answer may repeat the requirement: tell the person once,
                        // through the person server when it takes the interaction, else
                        // through the callback.
                        if announced.as_ref() != Some(&(url.clone(), code.clone())) {
                            let relayed = match self.relay_interaction(&location, &url, &code).await {
                                Ok(relayed) => relayed,
                                Err(error) if self.on_interaction.is_some() => {
                                    tracing::warn!(%error, "the interaction was not relayed; the agent directs the person");
                                    false
                                }
                                Err(error) => {
                                    self.withdraw(channel, &location, &token).await;
                                    return Err(error);
                                }
                            };
                            if !relayed {
                                let Some(callback) = &self.on_interaction else {
                                    self.withdraw(channel, &location, &token).await;
                                    return Err(Error::InteractionUnhandled {
                                        url: url_for_errors(&location),
                                        interaction_url: url_for_errors(&url),
                                        code,
                                    });
                                };
                                tracing::info!(
                                    pending = %url_for_errors(&location),
                                    interaction = %url_for_errors(&url),
                                    "a person must act"
                                );
                                callback(&url, &code);
                            }
                            announced = Some((url, code));
                        }
                    }
                    (Some(Requirement::Clarification), _) => {
                        rounds.take("clarification")?;
                        self.clarify(channel, &location, response, &token, updating).await?;
                    }
                    (Some(Requirement::AuthToken { resource_token }), Some(resource_url)) => {
                        // Deferred delivery: exchange the resource token once, then present
                        // the auth token at the pending URL. A fresh resource token (the
                        // first expired) is exchanged again.
                        let already = exchanged
                            .as_ref()
                            .is_some_and(|done| done.expose_secret() == resource_token.expose_secret());
                        if !already {
                            rounds.take("auth-token")?;
                            token = self.auth_token(resource_url, &resource_token, &presented).await?.token;
                            exchanged = Some(resource_token);
                        }
                    }
                    (Some(other), _) => {
                        return Err(Error::RequirementStatus {
                            url: url_for_errors(&location),
                            requirement: other.name(),
                            status: 202,
                        });
                    }
                }
            }
            tokio::time::sleep(schedule.delay()).await;
            let mut poll = Request::new(Method::GET, location.clone());
            let created = created::created_for(&self.key, &poll, self.shared.as_deref()).await?;
            sign_request(&self.key, &mut poll, &SignatureKey::Jwt(token.clone()), created)?;
            let response = channel.send(poll, Step::Poll).await?;
            match response.status().as_u16() {
                202 => {
                    schedule.pending(interaction::retry_after(response.headers()));
                    pending = Some(response);
                }
                429 => schedule.slow_down(interaction::retry_after(response.headers())),
                503 => schedule.pending(interaction::retry_after(response.headers())),
                403 | 408 | 410 | 500 => return Err(terminal_error(&location, response).await),
                _ => return Ok(response),
            }
        }
    }

    /// Withdraws a pending request (a signed `DELETE` of its URL), as far as the server
    /// lets it: the error the caller gets is the reason for withdrawing, not this.
    pub(super) async fn withdraw(&self, channel: &mut Channel<'_>, location: &Url, token: &SecretString) {
        let mut request = Request::new(Method::DELETE, location.clone());
        let created = match created::created_for(&self.key, &request, self.shared.as_deref()).await {
            Ok(created) => created,
            Err(error) => {
                tracing::debug!(pending = %url_for_errors(location), %error, "the pending request cannot be withdrawn");
                return;
            }
        };
        if sign_request(&self.key, &mut request, &SignatureKey::Jwt(token.clone()), created).is_ok()
            && let Err(error) = channel.send(request, Step::Poll).await
        {
            tracing::debug!(pending = %url_for_errors(location), %error, "withdrawing the pending request failed");
        }
    }
}

/// The requirement a response carries, if any.
pub(super) fn requirement_of(url: &Url, response: &Response) -> Result<Option<Requirement>, Error> {
    let Some(value) = response.headers().get(AAUTH_REQUIREMENT) else { return Ok(None) };
    let value = value.to_str().map_err(|_| Error::Requirement {
        url: url_for_errors(url),
        problem: RequirementError::Malformed("not visible ASCII".to_owned()),
    })?;
    Requirement::parse(value).map(Some).map_err(|problem| Error::Requirement { url: url_for_errors(url), problem })
}

/// The error code of a `Signature-Error` header (Signature-Key -09: a Dictionary whose
/// `error` member is a Token), or the header's text when it is not one.
fn signature_error_of(response: &Response) -> Option<String> {
    let value = response.headers().get(SIGNATURE_ERROR)?.to_str().ok()?;
    let code =
        sfv::Parser::new(value).parse::<sfv::Dictionary>().ok().and_then(|dictionary| match dictionary.get("error") {
            Some(sfv::ListEntry::Item(item)) => match &item.bare_item {
                sfv::BareItem::Token(token) => Some(token.as_str().to_owned()),
                sfv::BareItem::String(text) => Some(text.as_str().to_owned()),
                _ => None,
            },
            _ => None,
        });
    Some(code.unwrap_or_else(|| value.trim().to_owned()))
}

/// How many seconds the server's clock is behind `now`, from the response's `Date`; none
/// without a usable `Date`, or when the server is not behind.
fn server_behind_by(response: &Response, now: u64) -> Option<u64> {
    let date = response.headers().get(reqwest::header::DATE)?.to_str().ok()?;
    let date = httpdate::parse_http_date(date).ok()?.duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
    now.checked_sub(date).filter(|behind| *behind > 0)
}

/// The error for a terminal poll answer: `403` denied or abandoned, `408` expired, `410`
/// gone, anything else as its status.
async fn terminal_error(location: &Url, response: Response) -> Error {
    let status = response.status().as_u16();
    let problem = Problem::from_body(&exchange::read_error_body(response).await);
    let url = url_for_errors(location);
    match status {
        403 if problem.error.as_deref() == Some("revoked") => Error::Revoked { url, detail: problem.detail },
        403 => {
            Error::Denied { url, error: problem.error.unwrap_or_else(|| "denied".to_owned()), detail: problem.detail }
        }
        408 => Error::Expired { url, detail: problem.detail },
        410 => Error::Gone { url, detail: problem.detail },
        _ => Error::HttpStatus { step: Step::Poll, url, status, error: problem.error, detail: problem.detail },
    }
}

/// The error for an unexpected answer: its status, the problem details of its body, or
/// its `Signature-Error` when the body has none.
pub(super) async fn error_from_response(step: Step, url: &Url, response: Response) -> Error {
    let status = response.status().as_u16();
    let signature_error = response
        .headers()
        .get(SIGNATURE_ERROR)
        .and_then(|value| value.to_str().ok())
        .map(|value| interaction::printable(value, 100));
    let body = exchange::read_error_body(response).await;
    match Error::status(step, url, status, &body) {
        Error::HttpStatus { step, url, status, error: None, detail } => {
            Error::HttpStatus { step, url, status, error: signature_error, detail }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        let mut builder = http::Response::builder().status(status);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        Response::from(builder.body(body.to_owned()).unwrap())
    }

    #[tokio::test]
    async fn terminal_poll_answers_become_typed_errors() {
        let location = Url::parse("https://ps.example/pending/1").unwrap();
        let problem = |error: &str| format!(r#"{{"error":"{error}","detail":"why"}}"#);
        let denied = terminal_error(&location, response(403, &[], &problem("abandoned"))).await;
        assert!(
            matches!(&denied, Error::Denied { error, detail: Some(detail), .. } if error == "abandoned" && detail == "why"),
            "{denied:?}"
        );
        assert_eq!(denied.to_string(), "https://ps.example/pending/1: the request was refused (abandoned): why");
        let denied = terminal_error(&location, response(403, &[], "")).await;
        assert!(matches!(&denied, Error::Denied { error, detail: None, .. } if error == "denied"), "{denied:?}");
        let expired = terminal_error(&location, response(408, &[], &problem("expired"))).await;
        assert!(matches!(expired, Error::Expired { .. }), "{expired:?}");
        let gone = terminal_error(&location, response(410, &[], &problem("invalid_code"))).await;
        assert_eq!(gone.to_string(), "https://ps.example/pending/1: the pending request is gone: why");
        let failed = terminal_error(&location, response(500, &[], &problem("server_error"))).await;
        assert!(
            matches!(&failed, Error::HttpStatus { step: Step::Poll, status: 500, error: Some(error), .. } if error == "server_error"),
            "{failed:?}"
        );
    }

    #[tokio::test]
    async fn unexpected_answers_carry_their_problem_or_signature_error() {
        let url = Url::parse("https://ps.example/token").unwrap();
        let error = error_from_response(
            Step::AuthToken,
            &url,
            response(401, &[("signature-error", "error=invalid_signature")], "not json"),
        )
        .await;
        assert_eq!(
            error.to_string(),
            "requesting an auth token: https://ps.example/token answered 401 (error=invalid_signature)"
        );
        let error = error_from_response(
            Step::PersonToken,
            &url,
            response(400, &[], r#"{"error":"invalid_request","detail":"no resource"}"#),
        )
        .await;
        assert_eq!(
            error.to_string(),
            "requesting a person token: https://ps.example/token answered 400 (invalid_request): no resource"
        );
    }

    #[tokio::test]
    async fn transport_errors_keep_the_query_out() {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = Url::parse("http://user:pw@127.0.0.1:1/items?api_key=secret").unwrap();
        let refused = reqwest::Client::new().get(url.clone()).send().await.unwrap_err();
        assert!(format!("{refused:?}").contains("secret"), "reqwest itself keeps the URL: {refused:?}");
        let error = Error::http(Step::Request, &url, refused);
        let shown = format!("{error} {error:?} {:?}", std::error::Error::source(&error));
        assert!(!shown.contains("secret") && !shown.contains("pw@"), "{shown}");
        assert!(shown.contains("sending the request: request to http://127.0.0.1:1/items failed"), "{shown}");
    }

    #[test]
    fn rounds_are_bounded() {
        let mut rounds = Rounds { used: 0, max: 2, url: "https://r.example/x".to_owned() };
        rounds.take("person-token").unwrap();
        rounds.take("auth-token").unwrap();
        let error = rounds.take("auth-token").unwrap_err();
        assert_eq!(
            error.to_string(),
            "https://r.example/x: more than 2 AAuth requirement rounds for one request (the last asked for `auth-token`)"
        );
    }
}
