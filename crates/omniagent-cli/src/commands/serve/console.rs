//! The console (`serve.console: true`): pages at `/console` on the HTTP gateway, for its
//! admins only (`serve.clients.<name>.admin: true`, or an OAuth identity whose token holds
//! the scope `omniagent:admin`). A browser signs in by pasting its token once; it then
//! holds an `HttpOnly`, `SameSite=Strict` session cookie kept here with an expiry. A
//! script may send `Authorization: Bearer` on each read instead. Everyone else gets 403.
//!
//! The pages are rendered here from templates compiled into the binary ([`pages`]),
//! with their style and their one small script embedded; every form works without the
//! script and carries the session's CSRF token. The data comes from the same calls the
//! CLI makes: the gateway's running agents, their `withheld()` and `approve()` (with
//! `tools approve`'s choice of items), `tools review`'s changed fields, and the report of
//! the [`PolicyState`] every client's agent counts in.

mod pages;
mod sessions;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use axum::body::Bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use omniagent_host::audit::{AuditFilter, read_recent, rfc3339_millis, scan_recent};
use omniagent_host::{Home, PolicyState};
use skill_core::Agent;
use skill_mcp::Health;
use skill_mcp::server::{Gateway, PageRoutes, TokenCheck};

use self::pages::{CallCounts, CallsPage, ClientRow, ItemRow, Overview, ReviewPage, ToolsPage, UpstreamRow};
use self::sessions::{SIGN_IN_COOKIE, Sessions, Signed};
use super::{Sections, SharedConfig};

/// The upstream servers' health handles, by client, then by server: each agent the
/// gateway makes gives its own ([`omniagent_host::Person::on_upstream`]), replacing those
/// of the client's agent before.
#[derive(Clone, Default)]
pub(crate) struct Upstreams(Arc<Mutex<BTreeMap<String, BTreeMap<String, Health>>>>);

impl Upstreams {
    /// What the agent of `client` calls with each MCP server it starts.
    pub(crate) fn recorder(&self, client: &str) -> omniagent_host::OnUpstream {
        let (upstreams, client) = (self.clone(), client.to_owned());
        // The agent made afresh starts with none of the old one's servers.
        upstreams.lock().insert(client.clone(), BTreeMap::new());
        Arc::new(move |server: &str, health: Health| {
            upstreams.lock().entry(client.clone()).or_default().insert(server.to_owned(), health);
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, BTreeMap<String, Health>>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// What the console's pages read.
struct Console {
    gateway: Gateway,
    config: SharedConfig,
    home: Home,
    sections: Sections,
    upstreams: Upstreams,
    /// What every client's agent's policy has done.
    policy: PolicyState,
    sessions: Sessions,
    tokens: TokenCheck,
}

/// The console's routes, for [`skill_mcp::server::HttpOptions::pages`].
pub(crate) fn routes(
    gateway: Gateway,
    config: SharedConfig,
    home: Home,
    sections: Sections,
    upstreams: Upstreams,
    policy_state: PolicyState,
) -> PageRoutes {
    PageRoutes(Arc::new(move |tokens: TokenCheck| {
        let console = Arc::new(Console {
            gateway: gateway.clone(),
            config: Arc::clone(&config),
            home: home.clone(),
            sections: sections.clone(),
            upstreams: upstreams.clone(),
            policy: policy_state.clone(),
            sessions: Sessions::default(),
            tokens,
        });
        axum::Router::new()
            .route("/console", get(overview))
            .route("/console/tools", get(tools))
            .route("/console/tools/review", get(review))
            .route("/console/tools/approve", post(approve))
            .route("/console/calls", get(calls))
            .route("/console/policy", get(policy))
            .route("/console/signin", get(sign_in_form).post(sign_in))
            .route("/console/signout", post(sign_out))
            .route("/console/assets/console.css", get(|| async { asset("text/css", pages::STYLE) }))
            .route("/console/assets/console.js", get(|| async { asset("text/javascript", pages::SCRIPT) }))
            .route("/console/assets/favicon.svg", get(|| async { asset("image/svg+xml", pages::ICON) }))
            .with_state(console)
    }))
}

/// Who is looking: an admin signed in (with the session's CSRF token), or one who sent
/// an admin's bearer token (no session, so no form).
struct Admin {
    client: String,
    csrf: Option<String>,
}

impl Console {
    /// The admin `headers` name (by session cookie or bearer token), or the 403 for anyone
    /// else.
    async fn admin(&self, headers: &HeaderMap) -> Result<Admin, Response> {
        if let Some(Signed { client, admin_scope, csrf }) =
            sessions::cookie(headers, sessions::SESSION_COOKIE).and_then(|id| self.sessions.get(&id))
            && self.is_admin(&client, admin_scope)
        {
            return Ok(Admin { client, csrf: Some(csrf) });
        }
        let bearer = headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' ').filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer")))
            .map(|(_, token)| token.trim());
        if let Some(token) = bearer
            && let Some(holder) = self.tokens.holder(token).await
            && self.is_admin(&holder.client, holder.admin_scope)
        {
            return Ok(Admin { client: holder.client, csrf: None });
        }
        Err(refused("the console is for the gateway's admins: sign in with an admin's token"))
    }

    /// Whether `client` may use the console: a static client marked `admin: true` in the
    /// config as it is now, or an OAuth identity whose token held the admin scope.
    fn is_admin(&self, client: &str, admin_scope: bool) -> bool {
        let config = Arc::clone(&self.config.read().unwrap_or_else(PoisonError::into_inner));
        match config.serve().clients.get(client) {
            Some(settings) => settings.admin,
            None => admin_scope && client.starts_with(&skill_mcp::server::client_name("")),
        }
    }

    /// The running agent of `client`, else the first running one.
    fn agent(&self, client: Option<&str>) -> Option<(String, Agent)> {
        let mut running = self.gateway.running_agents();
        let index = client.and_then(|client| running.iter().position(|(name, _)| name == client)).unwrap_or(0);
        (index < running.len()).then(|| running.swap_remove(index))
    }

    fn overview(&self) -> Overview {
        let config = Arc::clone(&self.config.read().unwrap_or_else(PoisonError::into_inner));
        let running: BTreeMap<String, Agent> = self.gateway.running_agents().into_iter().collect();
        let mut names: Vec<String> = self.sections.clients.keys().cloned().collect();
        names.extend(self.sections.oauth.client_names().map(str::to_owned));
        names.extend(running.keys().filter(|name| !self.sections.clients.contains_key(*name)).cloned());
        names.sort();
        names.dedup();
        let mut withheld: Vec<String> = Vec::new();
        let clients = names
            .into_iter()
            .map(|name| {
                let agent = running.get(&name);
                if let Some(agent) = agent {
                    withheld.extend(agent.withheld().into_iter().map(|item| item.name));
                }
                ClientRow {
                    agent: self.sections.of(&name).ok().flatten().map(str::to_owned),
                    admin: self.sections.clients.get(&name).is_some_and(|client| client.admin),
                    tools: agent.map(|agent| agent.tools().len()),
                    withheld: agent.map(|agent| agent.withheld().len()),
                    name,
                }
            })
            .collect();
        withheld.sort();
        withheld.dedup();
        let healths: Vec<(String, String, Health)> = self
            .upstreams
            .lock()
            .iter()
            .flat_map(|(client, servers)| {
                servers.iter().map(move |(server, health)| (client.clone(), server.clone(), health.clone()))
            })
            .collect();
        let upstreams = healths
            .into_iter()
            .map(|(client, server, health)| {
                let sandbox = self
                    .sections
                    .agent_config(&config, &client)
                    .ok()
                    .and_then(|agent| agent.sandboxes().into_iter().find(|(name, _)| *name == server))
                    .map_or_else(|| "none (a url server)".to_owned(), |(_, sandbox)| sandbox.to_string());
                UpstreamRow { client, server, health: health.now(), sandbox }
            })
            .collect();
        Overview { clients, upstreams, withheld: withheld.len(), calls: self.calls_of_the_last_hour() }
    }

    /// The audit file the gateway's calls go to: the top level's `observability.audit`
    /// (an agent's own setting is not followed); `None` without one.
    fn audit_file(&self) -> Option<PathBuf> {
        let config = Arc::clone(&self.config.read().unwrap_or_else(PoisonError::into_inner));
        omniagent_host::audit::audit_file(&config.for_agent(None).ok()?, &self.home)
    }

    /// What the audit says of the last hour (at most [`COUNTED_CALLS`] lines of it):
    /// `None` without an audit file, or why it cannot be read.
    fn last_hour(&self) -> Option<Result<LastHour, String>> {
        let file = self.audit_file()?;
        let since = rfc3339_millis(SystemTime::now() - Duration::from_secs(3600));
        let mut hour = LastHour::default();
        let scanned = scan_recent(&file, |brief| {
            if *brief.time < *since {
                return false;
            }
            hour.calls += 1;
            hour.errors += usize::from(brief.outcome == "error");
            hour.calls < COUNTED_CALLS
        });
        Some(scanned.map(|()| hour).map_err(|error| error.to_string()))
    }

    /// How many calls the audit has of the last hour, and how many of them failed
    /// (outcome `error`).
    fn calls_of_the_last_hour(&self) -> Option<CallCounts> {
        Some(match self.last_hour()? {
            Ok(hour) => {
                CallCounts { calls: hour.calls, errors: hour.errors, more: hour.calls == COUNTED_CALLS, error: None }
            }
            Err(error) => CallCounts { error: Some(error), ..CallCounts::default() },
        })
    }
}

/// The last hour of the audit, counted.
#[derive(Default)]
struct LastHour {
    calls: usize,
    /// Those whose outcome is `error`.
    errors: usize,
}

/// The most audit lines the overview reads to count the last hour's calls.
const COUNTED_CALLS: usize = 10_000;

/// The most audit lines the calls page shows.
const SHOWN_CALLS: usize = 200;

async fn overview(State(console): State<Arc<Console>>, headers: HeaderMap) -> Response {
    match console.admin(&headers).await {
        Ok(admin) => page(StatusCode::OK, pages::overview(&admin.view(), &console.overview())),
        Err(refusal) => refusal,
    }
}

async fn tools(State(console): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    let query = query(&uri);
    let clients: Vec<String> = console.gateway.running_agents().into_iter().map(|(name, _)| name).collect();
    let Some((client, agent)) = console.agent(query.get("client").map(String::as_str)) else {
        return page(StatusCode::OK, pages::tools(&admin.view(), &ToolsPage::default()));
    };
    let modes = {
        let config = Arc::clone(&console.config.read().unwrap_or_else(PoisonError::into_inner));
        console.sections.agent_config(&config, &client).map(|config| omniagent_host::pinned_modes(&config))
    }
    .unwrap_or_default();
    let trust_of = |skill: &str| match modes.get(skill) {
        Some(skill_core::TrustMode::Approved) => "approved",
        Some(_) => "pinned",
        None => "not pinned",
    };
    let mut skills: BTreeMap<String, Vec<ItemRow>> = BTreeMap::new();
    for tool in agent.tools() {
        let skill = tool.source().skill.clone();
        let trust = trust_of(&skill);
        let row = ItemRow::offered(tool.name(), "tool", tool.description(), trust);
        skills.entry(skill).or_default().push(row);
    }
    for prompt in agent.prompts() {
        let description = prompt.info().description.clone().unwrap_or_default();
        let trust = trust_of(prompt.skill());
        skills.entry(prompt.skill().to_owned()).or_default().push(ItemRow::offered(
            prompt.name(),
            "prompt",
            &description,
            trust,
        ));
    }
    for template in agent.resource_templates() {
        let description = template.description.clone().unwrap_or_default();
        let row = ItemRow::offered(&template.uri_template, "resource template", &description, "");
        skills.entry("(resource templates)".to_owned()).or_default().push(row);
    }
    for item in agent.withheld() {
        skills.entry(item.skill.clone()).or_default().push(ItemRow::withheld(&item));
    }
    let view = ToolsPage { client: Some(client), clients, skills, approved: query.get("approved").cloned() };
    page(StatusCode::OK, pages::tools(&admin.view(), &view))
}

async fn review(State(console): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    let query = query(&uri);
    let name = query.get("name").cloned().unwrap_or_default();
    let Some((client, agent)) = console.agent(query.get("client").map(String::as_str)) else {
        return not_found("no client's agent is running");
    };
    let Some(item) = agent.withheld().into_iter().find(|item| item.name == name) else {
        return not_found("nothing by this name is withheld (it may have been approved)");
    };
    let view = ReviewPage { client, changes: crate::render::changes(&item), item };
    page(StatusCode::OK, pages::review(&admin.view(), &view))
}

/// Approves one withheld item by name, as `tools approve NAME` does, in the agent of the
/// form's client: the trust records it, and every agent following the lock offers it.
async fn approve(State(console): State<Arc<Console>>, headers: HeaderMap, body: Bytes) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    let form = form(&body);
    if let Err(refusal) = checked_csrf(&admin, &form) {
        return refusal;
    }
    let name = form.get("name").cloned().unwrap_or_default();
    let Some((client, agent)) = console.agent(form.get("client").map(String::as_str)) else {
        return not_found("no client's agent is running");
    };
    let chosen = match super::super::tools::choose(&agent, std::slice::from_ref(&name), None, false) {
        Ok(chosen) => chosen,
        Err(message) => return (StatusCode::BAD_REQUEST, message).into_response(),
    };
    if let Err(error) = agent.approve(&chosen) {
        tracing::error!("the console could not approve {name}: {error}");
        return (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response();
    }
    tracing::info!(admin = %admin.client, "approved {name} from the console");
    let to = format!("/console/tools?client={}&approved={}", encoded(&client), encoded(&name));
    see_other(&to, None)
}

/// The calls page: the latest lines of the audit (`observability.audit`), filtered by
/// client, tool and outcome as the query says, newest first.
async fn calls(State(console): State<Arc<Console>>, headers: HeaderMap, uri: Uri) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    let query = query(&uri);
    let chosen = |key: &str| query.get(key).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty());
    let mut filter = AuditFilter::default();
    filter.client = chosen("client");
    filter.item = chosen("tool");
    filter.outcome = chosen("outcome");
    let mut clients: Vec<String> = console.sections.clients.keys().cloned().collect();
    clients.extend(console.sections.oauth.client_names().map(str::to_owned));
    let file = console.audit_file();
    let (records, error) = match file.as_deref().map(|file| read_recent(file, SHOWN_CALLS, &filter)) {
        Some(Ok(records)) => (records, None),
        Some(Err(error)) => (Vec::new(), Some(error.to_string())),
        None => (Vec::new(), None),
    };
    let view = CallsPage { file, clients, filter, records, error };
    page(StatusCode::OK, pages::calls(&admin.view(), &view))
}

/// The policy page: the top level's rules and rate limits (`policy:`), with each rule's
/// hits and each client's bucket, as every client's agent counted them.
async fn policy(State(console): State<Arc<Console>>, headers: HeaderMap) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    let top = {
        let config = Arc::clone(&console.config.read().unwrap_or_else(PoisonError::into_inner));
        config.for_agent(None)
    };
    let report = match top {
        Ok(top) => console.policy.report(&top).await,
        Err(_) => omniagent_host::PolicyReport::default(),
    };
    page(StatusCode::OK, pages::policy(&admin.view(), &report))
}

/// The sign-in form, with a CSRF token of its own, kept in a short-lived cookie (there is
/// no session yet to keep it in).
async fn sign_in_form() -> Response {
    let token = sessions::random_token();
    let mut response = page(StatusCode::OK, pages::sign_in(&token, None));
    set_cookie(&mut response, SIGN_IN_COOKIE, &token, sessions::SIGN_IN_TTL.as_secs());
    response
}

/// Signs in with a pasted token: an admin's opens a session (its cookie set, the form's
/// token cookie cleared); anyone else's is refused with 403.
async fn sign_in(State(console): State<Arc<Console>>, request: Request) -> Response {
    let headers = request.headers().clone();
    let Ok(body) = axum::body::to_bytes(request.into_body(), 64 * 1024).await else {
        return (StatusCode::PAYLOAD_TOO_LARGE, "the form is too large").into_response();
    };
    let form = form(&body);
    let expected = sessions::cookie(&headers, SIGN_IN_COOKIE);
    let given = form.get("csrf").map(String::as_str);
    if !expected.as_deref().zip(given).is_some_and(|(expected, given)| sessions::same(expected, given)) {
        return refused("the form's CSRF token is missing or wrong: load the sign-in page again");
    }
    let token = form.get("token").map(|token| token.trim()).unwrap_or_default();
    let holder = if token.is_empty() { None } else { console.tokens.holder(token).await };
    let Some(holder) = holder.filter(|holder| console.is_admin(&holder.client, holder.admin_scope)) else {
        let again = sessions::random_token();
        let mut response = page(
            StatusCode::FORBIDDEN,
            pages::sign_in(&again, Some("this token is not an admin's: the console is for the gateway's admins")),
        );
        set_cookie(&mut response, SIGN_IN_COOKIE, &again, sessions::SIGN_IN_TTL.as_secs());
        return response;
    };
    tracing::info!(admin = %holder.client, "signed in to the console");
    let id = console.sessions.open(holder.client, holder.admin_scope);
    let mut response = see_other("/console", Some((sessions::SESSION_COOKIE, &id, sessions::SESSION_TTL.as_secs())));
    set_cookie(&mut response, SIGN_IN_COOKIE, "", 0);
    response
}

async fn sign_out(State(console): State<Arc<Console>>, headers: HeaderMap, body: Bytes) -> Response {
    let admin = match console.admin(&headers).await {
        Ok(admin) => admin,
        Err(refusal) => return refusal,
    };
    if let Err(refusal) = checked_csrf(&admin, &form(&body)) {
        return refusal;
    }
    if let Some(id) = sessions::cookie(&headers, sessions::SESSION_COOKIE) {
        console.sessions.close(&id);
    }
    see_other("/console/signin", Some((sessions::SESSION_COOKIE, "", 0)))
}

impl Admin {
    fn view(&self) -> pages::Viewer<'_> {
        pages::Viewer { client: &self.client, csrf: self.csrf.as_deref() }
    }
}

/// Refuses a form without the session's CSRF token (a bearer token's reader has no
/// session, so it posts no form).
#[expect(clippy::result_large_err, reason = "the error is the response itself")]
fn checked_csrf(admin: &Admin, form: &BTreeMap<String, String>) -> Result<(), Response> {
    let given = form.get("csrf").map(String::as_str);
    match (admin.csrf.as_deref(), given) {
        (Some(expected), Some(given)) if sessions::same(expected, given) => Ok(()),
        _ => Err(refused("the form's CSRF token is missing or wrong: load the page again")),
    }
}

fn query(uri: &Uri) -> BTreeMap<String, String> {
    form(uri.query().unwrap_or_default().as_bytes())
}

fn form(body: &[u8]) -> BTreeMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// The headers every console answer has: never cached, never framed, no script or style
/// from anywhere but the console itself.
fn secured(mut response: Response) -> Response {
    let headers = response.headers_mut();
    let set = [
        (header::CACHE_CONTROL, "no-store"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; connect-src 'self'; \
             form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
    ];
    for (name, value) in set {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

fn page(status: StatusCode, markup: maud::Markup) -> Response {
    let html = [(header::CONTENT_TYPE, "text/html; charset=utf-8")];
    secured((status, html, markup.into_string()).into_response())
}

fn asset(content_type: &'static str, text: &'static str) -> Response {
    secured(([(header::CONTENT_TYPE, content_type)], text).into_response())
}

fn refused(text: &str) -> Response {
    page(StatusCode::FORBIDDEN, pages::refused(text))
}

fn not_found(text: &str) -> Response {
    page(StatusCode::NOT_FOUND, pages::refused(text))
}

/// A 303 to `to`, setting a cookie when given.
fn see_other(to: &str, cookie: Option<(&str, &str, u64)>) -> Response {
    let mut response = secured((StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response());
    if let Some((name, value, max_age)) = cookie {
        set_cookie(&mut response, name, value, max_age);
    }
    response
}

/// Sets the console cookie `name`: for the console's paths only, never sent by another
/// site's page, never read by a script.
fn set_cookie(response: &mut Response, name: &str, value: &str, max_age: u64) {
    let cookie = format!("{name}={value}; Path=/console; Max-Age={max_age}; HttpOnly; SameSite=Strict");
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, value);
    }
}
