//! Interaction relayed through the person server (protocol -11, "Relaying Through the
//! Person Server"): when a server other than the person server asks the person to act,
//! the agent first offers the interaction to its person server's `interaction_endpoint`,
//! which may reach the person through a channel of its own (a session, an app). A
//! person server that cannot answers `424 interaction_unavailable`, and the agent directs
//! the person itself (`on_interaction`).
//!
//! The relay's own pending answer is not polled: when the interaction is hosted by the
//! server that asked for it, that server's pending URL is the one that says the
//! interaction is over (protocol -11, "Interaction Response"), and the client polls it
//! until a final answer whichever way the person got there.

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use reqwest::{Method, Request};
use url::Url;

use super::Inner;
use super::requirements::error_from_response;
use crate::error::{Step, url_for_errors};
use crate::interaction::Problem;
use crate::signing::{SignatureKey, sign_request};
use crate::{Error, created, exchange};

impl Inner {
    /// Offers the interaction `url` and `code`, which the pending request at `location`
    /// asks for, to the person server's `interaction_endpoint`: `true` when the person
    /// server took it (`200` or `202`), `false` when there is nothing to relay to (no
    /// person server known, none with an `interaction_endpoint`, or the interaction is the
    /// person server's own) or it answered `424 interaction_unavailable`. Any other answer
    /// is an error.
    pub(super) async fn relay_interaction(&self, location: &Url, url: &Url, code: &str) -> Result<bool, Error> {
        let Some(person_server) = self.known_person_server().await? else { return Ok(false) };
        if location.origin() == person_server.url().origin() {
            return Ok(false);
        }
        let metadata = self.person_server_metadata(&person_server).await?;
        let Some(endpoint) = metadata.interaction_endpoint else { return Ok(false) };
        let agent = self.agent_token().await?;
        let mut body = serde_json::json!({"type": "interaction", "url": url.as_str(), "code": code});
        if let Some(mission) = &self.hints.mission_s256 {
            body["mission_s256"] = serde_json::json!(mission);
        }
        let mut request = Request::new(Method::POST, endpoint.clone());
        let headers = request.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        *request.body_mut() = Some(body.to_string().into());
        *request.timeout_mut() = Some(self.exchange_timeout);
        let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
        sign_request(&self.key, &mut request, &SignatureKey::Jwt(agent.token), created)?;
        let response =
            self.http.execute(request).await.map_err(|source| Error::http(Step::Interaction, &endpoint, source))?;
        match response.status().as_u16() {
            200 | 202 => {
                tracing::info!(
                    pending = %url_for_errors(location),
                    person_server = %person_server.as_str(),
                    "the interaction was relayed to the person through the person server"
                );
                Ok(true)
            }
            424 => {
                let problem = Problem::from_body(&exchange::read_error_body(response).await);
                tracing::info!(
                    person_server = %person_server.as_str(),
                    error = ?problem.error,
                    "the person server cannot relay the interaction; the agent directs the person itself"
                );
                Ok(false)
            }
            _ => Err(error_from_response(Step::Interaction, &endpoint, response).await),
        }
    }
}
