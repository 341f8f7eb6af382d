//! How the client gets its tokens: the agent token (enrollment and refresh at the agent
//! provider), the person and auth tokens (from the person server, after what the shared
//! state holds), and the shared state written back.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, UNIX_EPOCH};

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue};
use reqwest::{Method, Request, StatusCode};
use skill_core::{ExposeSecret as _, SecretString};
use url::Url;

use super::clarification::Updating;
use super::requirements::{Channel, Pending, Presented, Rounds, error_from_response};
use super::{AgentIdentity, Inner, now};
use crate::enroll::{self, AgentToken, Enrollment};
use crate::error::{Step, url_for_errors};
use crate::interaction::{self, Problem};
use crate::jwt::TokenKind;
use crate::metadata::{self, PersonServerMetadata, Role, ServerId};
use crate::shared_tokens::{Owner, ResourceTokens};
use crate::signing::{SignatureKey, sign_request};
use crate::tokens::{self, CachedToken, PresentedToken, RequestHints};
use crate::{Error, created, exchange};

/// How long the agent lets the person server wait before deferring an auth token request
/// (`Prefer: wait=45`, as in the draft's token request).
const PREFER_WAIT: Duration = Duration::from_secs(45);

impl Inner {
    /// The agent token: the cached one while fresh; else renewed (refresh before it
    /// expires, a new enrollment after).
    pub(super) async fn agent_token(&self) -> Result<AgentToken, Error> {
        if let Some(token) = self.agent.lock().await.as_ref()
            && tokens::fresh(token.expires_at, now())
        {
            return Ok(token.clone());
        }
        // Another process may have enrolled or refreshed meanwhile. The file is read before
        // the lock is taken again, so that no request waits for another's file work.
        let cached = match &self.shared {
            Some(shared) => shared.agent_token(&self.agent_provider, &self.key).await?,
            None => None,
        };
        let mut current = self.agent.lock().await;
        let now = now();
        if let Some(token) = current.as_ref()
            && tokens::fresh(token.expires_at, now)
        {
            // Renewed by another request while this one read the file.
            return Ok(token.clone());
        }
        if let Some(cached) = cached {
            if tokens::fresh(cached.expires_at, now) {
                *current = Some(cached.clone());
                return Ok(cached);
            }
            if current.as_ref().is_none_or(|token| cached.expires_at > token.expires_at) {
                *current = Some(cached);
            }
        }
        let enrollment = match current.as_ref() {
            Some(token) if now < token.expires_at => Enrollment::Refresh,
            _ => Enrollment::Bootstrap,
        };
        let token = self.obtain_agent_token(enrollment, now).await?;
        self.keep_agent_token(current, token).await
    }

    /// A new agent token from the agent provider.
    pub(super) async fn obtain_agent_token(&self, enrollment: Enrollment, now: u64) -> Result<AgentToken, Error> {
        if let Some(local) = &self.self_hosted {
            let person_server = self.person_server.as_ref();
            let token = crate::self_hosted::agent_token(&self.agent_provider, local, &self.key, person_server, now);
            tracing::debug!(agent_id = %token.agent_id, "self-issued agent token");
            return Ok(token);
        }
        // The provider's metadata is read only for a URL that is not configured.
        let needed = match enrollment {
            Enrollment::Bootstrap => self.enrollment.enroll.is_none(),
            Enrollment::Refresh => self.enrollment.enroll.is_none() || self.enrollment.refresh.is_none(),
        };
        let metadata = if needed {
            Some(
                metadata::agent_provider(
                    &self.http,
                    self.exchange_timeout,
                    &self.agent_provider,
                    self.allow_http_loopback,
                )
                .await?,
            )
        } else {
            None
        };
        let endpoints = enroll::endpoints(&self.enrollment, metadata.as_ref());
        let token = enroll::request_agent_token(
            &self.http,
            self.exchange_timeout,
            &self.key,
            &self.agent_provider,
            &endpoints,
            self.person_server.as_ref(),
            enrollment,
            now,
            self.shared.as_deref(),
        )
        .await?;
        tracing::debug!(agent_id = %token.agent_id, ?enrollment, "agent token obtained");
        Ok(token)
    }

    /// Puts the agent token just obtained in `current` (the locked agent token), releases
    /// the lock, and writes the token to the cache file: the requests that waited use it
    /// meanwhile. A token that cannot be written is not kept, as if it had not been
    /// obtained: the next request tries again, and reports why it cannot.
    pub(super) async fn keep_agent_token(
        &self,
        mut current: tokio::sync::MutexGuard<'_, Option<AgentToken>>,
        token: AgentToken,
    ) -> Result<AgentToken, Error> {
        let previous = current.replace(token.clone());
        drop(current);
        let Some(shared) = &self.shared else { return Ok(token) };
        if let Err(error) = shared.keep_agent_token(&self.agent_provider, &self.key, &token).await {
            let mut current = self.agent.lock().await;
            if current.as_ref().is_some_and(|held| held.token.expose_secret() == token.token.expose_secret()) {
                *current = previous;
            }
            return Err(error);
        }
        Ok(token)
    }

    pub(super) fn identity(&self, token: &AgentToken) -> AgentIdentity {
        AgentIdentity {
            agent_id: token.agent_id.clone(),
            thumbprint: self.key.thumbprint(),
            expires_at: UNIX_EPOCH + Duration::from_secs(token.expires_at),
            person_server: match &self.person_server {
                Some(configured) => Some(configured.url()),
                None => enroll::person_server_url(token),
            },
        }
    }

    /// The person server for a requirement from `url`: the configured one, else the agent
    /// token's `ps`.
    pub(super) fn person_server_for(
        &self,
        agent: &AgentToken,
        url: &Url,
        requirement: &'static str,
    ) -> Result<ServerId, Error> {
        if let Some(configured) = &self.person_server {
            return Ok(configured.clone());
        }
        enroll::person_server_id(agent, self.allow_http_loopback)?
            .ok_or_else(|| Error::NoPersonServer { url: url_for_errors(url), requirement })
    }

    pub(super) async fn person_server_metadata(&self, person_server: &ServerId) -> Result<PersonServerMetadata, Error> {
        let mut known = self.person_metadata.lock().await;
        if let Some(metadata) = known.get(person_server) {
            return Ok(metadata.clone());
        }
        let metadata =
            metadata::person_server(&self.http, self.exchange_timeout, person_server, self.allow_http_loopback).await?;
        known.insert(person_server.clone(), metadata.clone());
        Ok(metadata)
    }

    /// A person token for the resource of `url`: a cached one unless it is `refused`,
    /// else a new one from the person server.
    pub(super) async fn person_token(&self, url: &Url, refused: Option<&SecretString>) -> Result<CachedToken, Error> {
        let resource = ServerId::of(Role::Resource, url, self.allow_http_loopback)?;
        let agent = self.agent_token().await?;
        let person_server = self.person_server_for(&agent, url, "person-token")?;
        // Another process may have left one since the request began (read before the lock,
        // so that no request waits for another's file work). After a refusal the person
        // server is asked: a token from elsewhere may be refused just the same.
        let shared = match refused {
            None => self.shared_tokens(&resource, &person_server, now()).await?.person,
            Some(_) => None,
        };
        let shared = shared.filter(|token| self.fits_mission(token));
        let lock = {
            let mut locks = self.person_token_locks.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            locks.entry(resource.as_str().to_owned()).or_default().clone()
        };
        let serialized = lock.lock().await;
        if let Some(cached) = self.tokens.get(resource.as_str(), TokenKind::Person, now())
            && refused.is_none_or(|refused| refused.expose_secret() != cached.token.expose_secret())
        {
            // Another request got one while this one waited.
            return Ok(cached);
        }
        if let Some(refused) = refused {
            self.tokens.forget(resource.as_str(), TokenKind::Person, refused);
        }
        if let Some(shared) = shared {
            self.tokens.insert(resource.as_str(), TokenKind::Person, shared.clone());
            return Ok(shared);
        }
        let metadata = self.person_server_metadata(&person_server).await?;
        let endpoint = &metadata.person_token_endpoint;
        let body = tokens::person_token_request_body(&resource, &self.request_hints());
        let answer = self.call_person_server(Step::PersonToken, endpoint, body, &agent, None).await?;
        let (token, expires_in) = tokens::token_from_response(Step::PersonToken, endpoint, &answer, "person_token")?;
        let person = tokens::check_person_token(token, expires_in, &resource, &person_server, &self.key, now())?;
        self.tokens.insert(resource.as_str(), TokenKind::Person, person.clone());
        // The requests that waited take it from memory; the file is written after.
        drop(serialized);
        self.share_tokens(&resource, &person_server).await;
        Ok(person)
    }

    /// An auth token for the resource of `url`, in exchange for its `resource_token`
    /// after checking it against the token `presented` to the resource, which goes along
    /// as `presented_token`.
    pub(super) async fn auth_token(
        &self,
        url: &Url,
        resource_token: &SecretString,
        presented: &Presented,
    ) -> Result<CachedToken, Error> {
        let resource = ServerId::of(Role::Resource, url, self.allow_http_loopback)?;
        let agent = self.agent_token().await?;
        let person_server = self.person_server_for(&agent, url, "auth-token")?;
        let shown = PresentedToken { kind: presented.kind, token: &presented.token };
        let checked =
            tokens::check_resource_token(resource_token, &resource, &person_server, &shown, &self.key, now())?;
        let metadata = self.person_server_metadata(&person_server).await?;
        let endpoint = &metadata.auth_token_endpoint;
        let mut hints = self.request_hints();
        hints.mission_s256 = None;
        let body = tokens::auth_token_request_body(resource_token, &checked, &presented.token, &hints);
        let updating = Updating { resource_url: url, resource: &resource, person_server: &person_server, presented };
        let answer = self.call_person_server(Step::AuthToken, endpoint, body, &agent, Some(&updating)).await?;
        let (token, expires_in) = tokens::token_from_response(Step::AuthToken, endpoint, &answer, "auth_token")?;
        let auth = tokens::check_auth_token(token, expires_in, &resource, &checked, &self.key, now())?;
        self.tokens.insert(resource.as_str(), TokenKind::Auth, auth.clone());
        self.share_tokens(&resource, &person_server).await;
        Ok(auth)
    }

    /// Whether a person token another process left was issued under this client's mission
    /// (its `mission_s256` claim), or under none when the client has none: person tokens
    /// are kept per mission (protocol -11), and one of an ended mission is refused.
    pub(super) fn fits_mission(&self, token: &CachedToken) -> bool {
        let claim = crate::jwt::Jwt::decode(token.token.expose_secret(), TokenKind::Person)
            .ok()
            .and_then(|jwt| jwt.claims.other.get("mission_s256").and_then(|value| value.as_str().map(str::to_owned)));
        claim == self.hints.mission_s256
    }

    /// The capabilities, hints and mission of this client's token requests.
    pub(super) fn request_hints(&self) -> RequestHints {
        RequestHints { capabilities: self.capabilities(), ..self.hints.clone() }
    }

    /// A new agent token in place of `revoked`, which a server refused as revoked; the
    /// one another request got meanwhile if it is not `revoked`.
    pub(super) async fn renew_agent_token(&self, revoked: &SecretString) -> Result<AgentToken, Error> {
        let current = self.agent.lock().await;
        if let Some(token) = current.as_ref()
            && token.token.expose_secret() != revoked.expose_secret()
            && tokens::fresh(token.expires_at, now())
        {
            return Ok(token.clone());
        }
        let token = self.obtain_agent_token(Enrollment::Refresh, now()).await?;
        self.keep_agent_token(current, token).await
    }

    /// The person server known without any exchange: the configured one, else the `ps` of
    /// the agent token in memory or in its cache file (taken into memory).
    pub(super) async fn known_person_server(&self) -> Result<Option<ServerId>, Error> {
        if let Some(configured) = &self.person_server {
            return Ok(Some(configured.clone()));
        }
        let person_server =
            |agent: &AgentToken| enroll::person_server_id(agent, self.allow_http_loopback).ok().flatten();
        if let Some(agent) = self.agent.lock().await.as_ref() {
            return Ok(person_server(agent));
        }
        let Some(shared) = &self.shared else { return Ok(None) };
        let cached = shared.agent_token(&self.agent_provider, &self.key).await?;
        let mut current = self.agent.lock().await;
        if current.is_none() {
            *current = cached;
        }
        Ok(current.as_ref().and_then(person_server))
    }

    /// The owner of the tokens of `resource` from `person_server`: this agent.
    fn owner<'a>(&'a self, resource: &'a ServerId, person_server: &'a ServerId) -> Owner<'a> {
        Owner { provider: &self.agent_provider, key: &self.key, resource, person_server }
    }

    /// The fresh, checked person and auth tokens the shared state holds for `resource`
    /// from `person_server`; none without shared state.
    pub(super) async fn shared_tokens(
        &self,
        resource: &ServerId,
        person_server: &ServerId,
        now: u64,
    ) -> Result<ResourceTokens, Error> {
        let Some(shared) = &self.shared else { return Ok(ResourceTokens::default()) };
        shared.resource_tokens(self.owner(resource, person_server), now).await
    }

    /// Writes the tokens this client holds for `resource` to the shared state, keeping a
    /// token of the other kind that another process left there when this client holds
    /// none. A failure is logged: the token obtained is still used.
    pub(super) async fn share_tokens(&self, resource: &ServerId, person_server: &ServerId) {
        let Some(shared) = &self.shared else { return };
        let now = now();
        let held = ResourceTokens {
            person: self.tokens.get(resource.as_str(), TokenKind::Person, now),
            auth: self.tokens.get(resource.as_str(), TokenKind::Auth, now),
        };
        if let Err(error) = shared.keep_resource_tokens(self.owner(resource, person_server), held, now).await {
            tracing::warn!(%error, "the person and auth tokens were not written to the token cache");
        }
    }

    /// POSTs `body` to a person server endpoint, signed with the agent token, follows a
    /// pending answer to its end, and returns the final `200` body. An auth token request
    /// (`updating` set) lets the person server wait 45 s before deferring
    /// (`Prefer: wait=45`), and its clarification may be answered with an updated request.
    ///
    /// The future is boxed: a pending answer may, through an auth token exchange, lead
    /// here again, and a boxed `Send` future ends that cycle of types.
    pub(super) fn call_person_server<'a>(
        &'a self,
        step: Step,
        endpoint: &'a Url,
        body: String,
        agent: &'a AgentToken,
        updating: Option<&'a Updating<'a>>,
    ) -> Pin<Box<dyn Future<Output = Result<Vec<u8>, Error>> + Send + 'a>> {
        Box::pin(async move {
            let mut request = Request::new(Method::POST, endpoint.clone());
            let headers = request.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
            let mut timeout = self.exchange_timeout;
            if updating.is_some() {
                // As in the draft's token request: the agent is willing to wait 45 s for a
                // direct answer before the server defers.
                headers.insert(HeaderName::from_static("prefer"), HeaderValue::from_static("wait=45"));
                timeout = timeout.saturating_add(PREFER_WAIT);
            }
            *request.body_mut() = Some(body.into());
            // The exchange is bounded; the polling of a deferred answer is not.
            *request.timeout_mut() = Some(timeout);
            let created = created::created_for(&self.key, &request, self.shared.as_deref()).await?;
            sign_request(&self.key, &mut request, &SignatureKey::Jwt(agent.token.clone()), created)?;
            let mut channel = Channel::Direct(&self.http);
            let mut response = channel.send(request, step).await?;
            if response.status() == StatusCode::ACCEPTED {
                let mut rounds = Rounds { used: 0, max: self.max_rounds, url: url_for_errors(endpoint) };
                let presented = Presented { kind: TokenKind::Agent, token: agent.token.clone(), obtained_now: false };
                let context = updating.map_or(Pending::Exchange, Pending::AuthTokenRequest);
                response =
                    self.follow_pending(&mut channel, endpoint, response, presented, context, &mut rounds).await?;
            }
            if response.status() == StatusCode::BAD_GATEWAY {
                let retry_after = interaction::retry_after(response.headers());
                let problem = Problem::from_body(&exchange::read_error_body(response).await);
                if problem.error.as_deref() == Some("as_unreachable") {
                    return Err(Error::AccessServerUnreachable {
                        url: url_for_errors(endpoint),
                        detail: problem.detail,
                        retry_after,
                    });
                }
                return Err(Error::HttpStatus {
                    step,
                    url: url_for_errors(endpoint),
                    status: 502,
                    error: problem.error,
                    detail: problem.detail,
                });
            }
            if response.status() != StatusCode::OK {
                return Err(error_from_response(step, endpoint, response).await);
            }
            exchange::read_body(step, endpoint, response).await
        })
    }
}
