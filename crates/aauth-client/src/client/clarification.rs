//! Clarification (protocol -11, "Clarification Chat"): a question from the person server
//! while it holds a request, answered with a `clarification_response`, with an
//! `updated_request` (a new resource token, and the `presented_token` it was issued
//! against), or by withdrawing the request.

use reqwest::header::{CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Request, Response};
use skill_core::{ExposeSecret as _, SecretString};
use url::Url;

use super::requirements::{Channel, Presented, error_from_response, requirement_of};
use super::{Inner, now};
use crate::error::{Step, url_for_errors};
use crate::interaction::{self, ClarificationBody};
use crate::metadata::ServerId;
use crate::requirement::Requirement;
use crate::signing::{SignatureKey, sign_request};
use crate::tokens::{self, PresentedToken};
use crate::{Error, created, exchange};

/// A clarification question, as the callback of
/// [`on_clarification_answer`](super::AAuthClientBuilder::on_clarification_answer) sees it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Clarification<'a> {
    /// The question: Markdown from the server, untrusted, without control characters.
    pub question: &'a str,
    /// The URL of the request whose auth token the person server is asked for, when the
    /// question comes during an auth token request: an updated request goes to its
    /// resource.
    pub resource_request: Option<&'a Url>,
}

/// How the agent answers a clarification question (protocol -11, "Agent Response to
/// Clarification").
#[derive(Debug)]
pub enum ClarificationAnswer {
    /// A Markdown answer (`clarification_response`); the person server goes on.
    Respond(String),
    /// Replaces the pending auth token request with another (`updated_request`): the
    /// client sends `request` to the same resource, signed with the token it presented
    /// for the first, checks the resource token the resource answers with, and hands it
    /// to the person server with that token as `presented_token`. `justification` says
    /// why to the person. Only for a question during an auth token request
    /// ([`Clarification::resource_request`] is set).
    UpdatedRequest {
        /// The new request to the resource, typically asking for less (its body, if
        /// any, in memory).
        request: Box<Request>,
        /// Why the request changed, shown to the person.
        justification: Option<String>,
    },
    /// Withdraws the request (`DELETE` of the pending URL).
    Withdraw,
}

/// What an auth token request's clarification needs for an updated request: the
/// resource, the person server, and the token presented at the resource.
pub(super) struct Updating<'a> {
    pub(super) resource_url: &'a Url,
    pub(super) resource: &'a ServerId,
    pub(super) person_server: &'a ServerId,
    pub(super) presented: &'a Presented,
}

impl Inner {
    /// Answers a `202 requirement=clarification` through the callback (or withdraws the
    /// request): `{"action":"clarification_response",…}`, or `{"action":"updated_request",
    /// "resource_token":…,"presented_token":…}` (AG-25: `presented_token` is required).
    pub(super) async fn clarify(
        &self,
        channel: &mut Channel<'_>,
        location: &Url,
        response: Response,
        token: &SecretString,
        updating: Option<&Updating<'_>>,
    ) -> Result<(), Error> {
        let body = exchange::read_body(Step::Poll, location, response).await?;
        let question: ClarificationBody = serde_json::from_slice(&body).map_err(|_| Error::InvalidResponse {
            step: Step::Poll,
            url: url_for_errors(location),
            reason: "a clarification without a string `clarification` in its body".to_owned(),
        })?;
        let question = interaction::printable(&question.clarification, 2000);
        let Some(callback) = &self.on_clarification else {
            self.withdraw(channel, location, token).await;
            return Err(Error::ClarificationUnhandled { url: url_for_errors(location), question });
        };
        let asked =
            Clarification { question: &question, resource_request: updating.map(|updating| updating.resource_url) };
        let body = match callback(&asked) {
            ClarificationAnswer::Respond(answer) => {
                serde_json::json!({"action": "clarification_response", "clarification_response": answer})
            }
            ClarificationAnswer::UpdatedRequest { request, justification } => {
                let Some(updating) = updating else {
                    self.withdraw(channel, location, token).await;
                    return Err(Error::UpdatedRequest {
                        url: url_for_errors(location),
                        reason: "only a question during an auth token request takes one".to_owned(),
                    });
                };
                let resource_token = match self.updated_resource_token(*request, updating).await {
                    Ok(resource_token) => resource_token,
                    Err(error) => {
                        self.withdraw(channel, location, token).await;
                        return Err(error);
                    }
                };
                let mut body = serde_json::json!({"action": "updated_request",
                    "resource_token": resource_token.expose_secret(),
                    "presented_token": updating.presented.token.expose_secret()});
                if let Some(justification) = justification {
                    body["justification"] = serde_json::json!(justification);
                }
                body
            }
            ClarificationAnswer::Withdraw => {
                self.withdraw(channel, location, token).await;
                return Err(Error::ClarificationDeclined { url: url_for_errors(location) });
            }
        };
        let mut request = Request::new(Method::POST, location.clone());
        request.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        *request.body_mut() = Some(body.to_string().into());
        let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
        sign_request(&self.key, &mut request, &SignatureKey::Jwt(token.clone()), created)?;
        let response = channel.send(request, Step::Clarification).await?;
        if !response.status().is_success() {
            return Err(error_from_response(Step::Clarification, location, response).await);
        }
        Ok(())
    }

    /// The resource token the resource answers the updated `request` with: the request
    /// goes to the resource of the pending auth token request, signed with the token
    /// presented there, and must be answered with `requirement=auth-token`; the resource
    /// token is checked against that token as the first one was.
    async fn updated_resource_token(
        &self,
        mut request: Request,
        updating: &Updating<'_>,
    ) -> Result<SecretString, Error> {
        let url = request.url().clone();
        let invalid = |reason: String| Error::UpdatedRequest { url: url_for_errors(&url), reason };
        if url.origin() != updating.resource_url.origin() {
            return Err(invalid(format!(
                "it is not on the origin of {}, whose auth token is asked for",
                url_for_errors(updating.resource_url)
            )));
        }
        *request.timeout_mut() = Some(self.exchange_timeout);
        let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
        sign_request(&self.key, &mut request, &SignatureKey::Jwt(updating.presented.token.clone()), created)?;
        let response =
            self.http.execute(request).await.map_err(|source| Error::http(Step::Clarification, &url, source))?;
        let status = response.status().as_u16();
        let Some(Requirement::AuthToken { resource_token }) = requirement_of(&url, &response)? else {
            return Err(invalid(format!("the resource answered {status} without `requirement=auth-token`")));
        };
        let shown = PresentedToken { kind: updating.presented.kind, token: &updating.presented.token };
        tokens::check_resource_token(
            &resource_token,
            updating.resource,
            updating.person_server,
            &shown,
            &self.key,
            now(),
        )?;
        Ok(resource_token)
    }
}
