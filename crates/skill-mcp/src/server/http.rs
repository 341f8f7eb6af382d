//! The gateway over streamable HTTP: rmcp's service at `/mcp`, behind a bearer-token
//! check that names the client (a static token's, else an OAuth identity's: see
//! [`super::resource_server`]), with Host and Origin allowlists against DNS rebinding.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use sha2::{Digest, Sha256};
use skill_core::{ExposeSecret, SecretString};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use super::Gateway;
use super::resource_server::{OAuthOptions, Refusal, ResourceServer};
use super::traced::Served;
use crate::CALLERS_HEADER;

mod connections;
mod in_flight;

/// The largest request body the gateway reads.
const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// A client allowed to call over HTTP: its name (which picks its agent) and its token.
#[derive(Debug, Clone)]
pub struct HttpClient {
    /// The client's name, as the gateway's [`super::AgentFactory`] receives it; it has
    /// no `:` (names with one are OAuth identities', see [`super::client_name`]).
    pub name: String,
    /// The bearer token it must send.
    pub token: SecretString,
}

/// How the HTTP server admits requests.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Host names (and addresses) requests may name in `Host`, and browsers' `Origin`
    /// may have; empty: loopback names only.
    pub allowed_hosts: Vec<String>,
    /// Who may call; empty: anyone who can reach the address (the caller keeps that to
    /// loopback).
    pub clients: Vec<HttpClient>,
    /// Where 2025-11-25 sessions are kept so that every replica can restore them; `None`:
    /// in this process only.
    #[cfg(feature = "redis")]
    pub sessions: Option<Arc<super::RedisSessionStore>>,
    /// OAuth access tokens admitted beside the clients' tokens.
    pub oauth: Option<OAuthOptions>,
    /// This process's mark among a request's callers (its [`CALLERS_HEADER`]): a request
    /// that carries it comes from this very process, through one of its own agents' MCP
    /// servers, and would wait on itself; it is refused with 508 Loop Detected.
    pub own_caller: Option<String>,
    /// Pages served beside `/mcp` (the console), which check tokens themselves: no bearer
    /// token is asked of them, and only the `Host` names above are allowed.
    pub pages: Option<PageRoutes>,
    /// Routes served with no token asked and any `Host`: health probes and metrics
    /// scrapes, which come by address (a kubelet's, Prometheus's) and carry no token.
    pub open_routes: Option<axum::Router>,
}

/// Makes the routes of pages served beside `/mcp` ([`HttpOptions::pages`]), given how to
/// tell whose a token is.
#[derive(Clone)]
pub struct PageRoutes(pub Arc<dyn Fn(TokenCheck) -> axum::Router + Send + Sync>);

impl std::fmt::Debug for PageRoutes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PageRoutes")
    }
}

/// Tells whose a token is, as `/mcp` would: for pages that take a token pasted by a
/// person (the console's sign-in) rather than a bearer header.
#[derive(Clone)]
pub struct TokenCheck {
    tokens: Arc<Tokens>,
}

/// Whose a token is ([`TokenCheck::holder`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenHolder {
    /// The client: a static client's name, or an OAuth identity's ([`super::client_name`]).
    pub client: String,
    /// Whether it is an OAuth access token that holds the scope
    /// [`super::ADMIN_SCOPE`] (a static client is an admin by its config).
    pub admin_scope: bool,
}

impl std::fmt::Debug for TokenCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenCheck").field("clients", &self.tokens.clients.len()).finish_non_exhaustive()
    }
}

impl TokenCheck {
    /// The holder of `token`: the static client whose token it is, else the OAuth
    /// identity it proves; `None` for any other token.
    pub async fn holder(&self, token: &str) -> Option<TokenHolder> {
        if let Some(client) = self.tokens.client_of(token) {
            return Some(TokenHolder { client: client.to_owned(), admin_scope: false });
        }
        let admitted = self.tokens.oauth.as_ref()?.admit(token).await.ok()?;
        Some(TokenHolder { client: admitted.client, admin_scope: admitted.admin })
    }
}

/// The authenticated client of a request, put into its extensions for the gateway.
#[derive(Debug, Clone)]
pub(super) struct ClientName(pub(super) String);

/// The claims of the OAuth access token a request was admitted with, put into its
/// extensions for the policy's rules.
#[derive(Debug, Clone)]
pub(super) struct ClientClaims(pub(super) Arc<serde_json::Map<String, serde_json::Value>>);

/// The clients' tokens as SHA-256 digests: compared in constant time, whatever the
/// lengths; and the resource server, for the other tokens.
struct Tokens {
    clients: Vec<([u8; 32], String)>,
    oauth: Option<Arc<ResourceServer>>,
}

impl Tokens {
    fn client_of(&self, token: &str) -> Option<&str> {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let mut found = None;
        // Every entry is compared, so the time does not tell which one matched.
        for (expected, name) in &self.clients {
            if bool::from(expected.ct_eq(&digest)) {
                found = Some(name.as_str());
            }
        }
        found
    }
}

/// Serves `gateway` on `listener` at `/mcp` until `stop` is cancelled; open streams end
/// then, and the server waits for the requests in flight. A client name with a `:` is
/// refused at once (`InvalidInput`).
pub async fn serve_http(
    gateway: Gateway,
    listener: tokio::net::TcpListener,
    options: HttpOptions,
    stop: CancellationToken,
) -> std::io::Result<()> {
    if let Some(client) = options.clients.iter().find(|client| client.name.contains(':')) {
        let message = format!("the HTTP client name `{}` has a `:`, which only OAuth identities' have", client.name);
        return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, message));
    }
    let mut hosts = options.allowed_hosts;
    if hosts.is_empty() {
        hosts = ["localhost", "127.0.0.1", "::1"].map(str::to_owned).to_vec();
    }
    let origins: Vec<String> = hosts
        .iter()
        .flat_map(|host| {
            let host = if host.contains(':') { format!("[{host}]") } else { host.clone() };
            [format!("http://{host}:*"), format!("https://{host}:*")]
        })
        .collect();
    // At the stop, listening streams end and the requests in flight are answered; only
    // then do the sessions end (rmcp drops what a session still had to answer).
    let (sessions_end, in_flight) = (CancellationToken::new(), in_flight::InFlight::default());
    tokio::spawn({
        let (stop, sessions_end, in_flight, gateway) =
            (stop.clone(), sessions_end.clone(), in_flight.clone(), gateway.clone());
        async move {
            stop.cancelled().await;
            gateway.inner.stopping.cancel();
            in_flight.idle().await;
            sessions_end.cancel();
        }
    });
    #[cfg_attr(not(feature = "redis"), expect(unused_mut))]
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_allowed_origins(origins)
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_REQUEST_BYTES)
        .with_cancellation_token(sessions_end.clone());
    #[cfg_attr(not(feature = "redis"), expect(unused_mut))]
    let mut sessions = LocalSessionManager::default();
    #[cfg(feature = "redis")]
    if let Some(store) = &options.sessions {
        super::session_store::share(store, &mut config, &mut sessions);
    }
    let handler = gateway.clone();
    let service = StreamableHttpService::new(move || Ok(Served(handler.clone())), Arc::new(sessions), config);
    let tokens = Arc::new(Tokens {
        clients: options
            .clients
            .iter()
            .map(|client| (Sha256::digest(client.token.expose_secret().as_bytes()).into(), client.name.clone()))
            .collect(),
        oauth: options.oauth.map(|oauth| Arc::new(ResourceServer::new(oauth))),
    });
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn(ended_sessions_answer_no_content))
        .layer(axum::middleware::from_fn_with_state(in_flight, in_flight::track));
    #[cfg(feature = "redis")]
    let app = match options.sessions {
        Some(store) => app.layer(axum::middleware::from_fn_with_state(store, super::session_store::refresh_sessions)),
        None => app,
    };
    let mut app = app.layer(axum::middleware::from_fn_with_state(Arc::clone(&tokens), authenticate));
    if let Some(mark) = options.own_caller {
        app = app.layer(axum::middleware::from_fn_with_state(Arc::<str>::from(mark), refuse_own_calls));
    }
    if let Some(pages) = options.pages {
        let routes = (pages.0)(TokenCheck { tokens: Arc::clone(&tokens) });
        let allowed: Arc<[String]> = hosts.into();
        app = app.merge(routes.layer(axum::middleware::from_fn_with_state(allowed, allowed_host_only)));
    }
    if let Some(routes) = options.open_routes {
        app = app.merge(routes);
    }
    if let Some(oauth) = tokens.oauth.clone() {
        // The protected-resource metadata (RFC 9728) needs no token.
        let metadata = move || {
            let oauth = Arc::clone(&oauth);
            async move { oauth.metadata() }
        };
        app = app
            .route("/.well-known/oauth-protected-resource", axum::routing::get(metadata.clone()))
            .route("/.well-known/oauth-protected-resource/mcp", axum::routing::get(metadata));
    }
    connections::serve(listener, app, connections::HEADER_READ_TIMEOUT, stop).await;
    Ok(())
}

/// Answers the end of a session (`DELETE /mcp`) with 204 No Content where rmcp answers 202
/// Accepted: the session is closed by then, and the Python SDK takes any answer but 200
/// and 204 for a failure, warning about it at the end of every session.
async fn ended_sessions_answer_no_content(request: Request, next: Next) -> Response {
    let delete = request.method() == axum::http::Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Refuses (403) a request whose `Host` names none of `hosts`, as rmcp does for `/mcp`:
/// against DNS rebinding, where a page of another site reaches a loopback address under
/// its own name.
async fn allowed_host_only(State(hosts): State<Arc<[String]>>, request: Request, next: Next) -> Response {
    let host = request.headers().get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(bracketed) => bracketed.split_once(']').map_or(bracketed, |(name, _)| name),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    if !hosts.iter().any(|allowed| allowed.eq_ignore_ascii_case(name)) {
        return (StatusCode::FORBIDDEN, "this host name is not one of `serve.allowed_hosts`").into_response();
    }
    next.run(request).await
}

/// Refuses a request whose callers (its [`CALLERS_HEADER`]) hold `mark`, this process's:
/// the gateway reached through its own MCP servers.
async fn refuse_own_calls(State(mark): State<Arc<str>>, request: Request, next: Next) -> Response {
    let callers = request.headers().get(CALLERS_HEADER).and_then(|value| value.to_str().ok());
    let own = callers
        .and_then(|callers| serde_json::from_str::<Vec<String>>(callers).ok())
        .is_some_and(|callers| callers.iter().any(|caller| **caller == *mark));
    if own {
        let text = "this request comes from this gateway itself, through an MCP server of its own config \
                    whose `url` is the gateway's: it would wait on itself";
        return (StatusCode::LOOP_DETECTED, text).into_response();
    }
    next.run(request).await
}

/// Admits a request whose bearer token is a client's, naming that client, or an OAuth
/// access token, naming its identity; any request when neither is configured; else
/// answers 401 (or 403).
async fn authenticate(State(tokens): State<Arc<Tokens>>, mut request: Request, next: Next) -> Response {
    if tokens.clients.is_empty() && tokens.oauth.is_none() {
        return next.run(request).await;
    }
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.split_once(' ').filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")))
        .map(|(_, token)| token.trim().to_owned());
    let presented = presented.as_deref();
    let client = match (presented.and_then(|token| tokens.client_of(token)), &tokens.oauth) {
        (Some(client), _) => Some(client.to_owned()),
        (None, Some(oauth)) => match presented {
            Some(token) => match oauth.admit(token).await {
                Ok(admitted) => {
                    request.extensions_mut().insert(ClientClaims(admitted.claims));
                    Some(admitted.client)
                }
                Err(refusal) => return oauth.refuse(&refusal),
            },
            None => return oauth.refuse(&Refusal::NoToken),
        },
        (None, None) => None,
    };
    match client {
        Some(client) => {
            request.extensions_mut().insert(ClientName(client));
            next.run(request).await
        }
        None => unknown_client(presented.is_some()),
    }
}

/// The 401 for a request that is no client's: a bearer token that is none of theirs is an
/// `invalid_token`; a request without one gets the bare challenge, with no error code
/// (RFC 6750 §3.1: the client may not know that the server needs authentication).
fn unknown_client(token_presented: bool) -> Response {
    let (challenge, text) = if token_presented {
        (
            r#"Bearer realm="omniagent", error="invalid_token""#,
            "the bearer token is not one of this MCP server's clients",
        )
    } else {
        (r#"Bearer realm="omniagent""#, "this MCP server needs `Authorization: Bearer <token>`")
    };
    let mut response = (StatusCode::UNAUTHORIZED, text).into_response();
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_name_their_client_only() {
        let digest = |token: &str| Sha256::digest(token.as_bytes()).into();
        let tokens = Tokens {
            clients: vec![(digest("alpha-token"), "alice".to_owned()), (digest("beta"), "bob".to_owned())],
            oauth: None,
        };
        assert_eq!(tokens.client_of("alpha-token"), Some("alice"));
        assert_eq!(tokens.client_of("beta"), Some("bob"));
        assert_eq!(tokens.client_of("alpha-toke"), None);
        assert_eq!(tokens.client_of(""), None);
    }

    #[test]
    fn only_a_wrong_token_is_challenged_with_an_error_code() {
        let challenge = |token_presented| {
            let response = unknown_client(token_presented);
            let header = response.headers().get(header::WWW_AUTHENTICATE).unwrap().to_str().unwrap().to_owned();
            (response.status().as_u16(), header)
        };
        assert_eq!(challenge(false), (401, r#"Bearer realm="omniagent""#.to_owned()));
        assert_eq!(challenge(true), (401, r#"Bearer realm="omniagent", error="invalid_token""#.to_owned()));
    }

    #[tokio::test]
    async fn a_static_client_cannot_take_an_oauth_identitys_name() {
        let factory: super::super::AgentFactory =
            Arc::new(|_| Box::pin(async { Err("no agent in this test".to_owned()) }));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client =
            HttpClient { name: super::super::client_name("alice"), token: SecretString::from("token".to_owned()) };
        let options = HttpOptions { clients: vec![client], ..HttpOptions::default() };
        let refused = serve_http(Gateway::new(factory, None), listener, options, CancellationToken::new()).await;
        assert_eq!(refused.unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
    }
}
