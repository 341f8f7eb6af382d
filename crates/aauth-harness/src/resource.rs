//! The resource: `/data` answers `401` with the requirement of the next token (agent,
//! person, then auth token), or holds the call for a deferred auth token, polled at
//! `/pending/{id}`; with an auth token it answers `200` with what it received.

use std::sync::Arc;

use aauth_client::{AgentKey, Claims, TokenKind};
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::json;

use crate::responses::{json_response, pending, problem, requirement};
use crate::verify::Verified;
use crate::{HarnessState, HeldCall, ResourceInteraction, now};

/// A resource token for the token `person` presented, for `scope`.
fn resource_token(state: &HarnessState, verified: &Verified, person: &Claims, scope: &str) -> String {
    let now = now();
    let scenario = state.scenario();
    let agent_jkt = if scenario.foreign_agent_jkt { AgentKey::generate().thumbprint() } else { verified.jkt.clone() };
    let mut claims = json!({"iss": state.resource_id, "dwk": "aauth-resource.json", "aud": state.ps_id,
        "jti": format!("rt-{}", state.next_id()), "ps": state.ps_id, "sub": person.sub,
        "presented_jti": person.jti, "agent_jkt": agent_jkt, "iat": now, "exp": now + 300, "scope": scope});
    if let Some(login_hint) = scenario.resource_login_hint {
        claims["login_hint"] = json!(login_hint);
    }
    state.issue(&state.resource_key, "resource-1", TokenKind::Resource, claims)
}

pub(crate) async fn data(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    let method = request.method().to_string();
    // `?scope=…` asks for another scope than `data.read` (an updated request asks for less).
    let scope = request
        .uri()
        .query()
        .and_then(|query| url::form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == "scope"))
        .map_or_else(|| "data.read".to_owned(), |(_, scope)| scope.into_owned());
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let body = String::from_utf8_lossy(&body).into_owned();
    let Some((kind, claims)) = verified.token.clone() else {
        return requirement(StatusCode::UNAUTHORIZED, "requirement=agent-token".to_owned());
    };
    let injected = state.scenario.lock().unwrap().resource_signature_errors.pop_front();
    if let Some(error) = injected {
        state.count(&format!("resource.{error}"));
        // For `clock_skew`, a server whose clock is 30 s behind the agent's.
        let behind = if error == "clock_skew" { 30 } else { 0 };
        let date = std::time::SystemTime::now() - std::time::Duration::from_secs(behind);
        return Response::builder()
            .status(StatusCode::UNAUTHORIZED)
            .header("signature-error", format!("error={error}"))
            .header(header::DATE, httpdate::fmt_http_date(date))
            .body(Body::empty())
            .unwrap();
    }
    let scenario = state.scenario();
    match kind {
        TokenKind::Agent if scenario.resource_interaction => {
            state.count("resource.interaction");
            let id = state.next_id();
            let code = format!("{:04X}-{:04X}", 0xB0B0 + id, 0xD0D0 + id);
            let interaction = ResourceInteraction { owner_jkt: verified.jkt.clone(), code, method, done: false };
            let answer = interaction_pending(&state, &id.to_string(), &interaction);
            state.interactions.lock().unwrap().insert(id.to_string(), interaction);
            answer
        }
        TokenKind::Agent => {
            state.count("resource.agent_token");
            requirement(StatusCode::UNAUTHORIZED, "requirement=person-token".to_owned())
        }
        TokenKind::Person => {
            if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.resource_id)
                || claims.iss.as_deref() != Some(&state.ps_id)
            {
                return problem(StatusCode::UNAUTHORIZED, "invalid_person_token", "wrong aud or iss");
            }
            state.count("resource.person_token");
            let token = resource_token(&state, &verified, &claims, &scope);
            let value = format!(r#"requirement=auth-token; resource-token="{token}""#);
            if scenario.deferred_auth {
                state.count("resource.deferred");
                let id = state.next_id().to_string();
                state.held.lock().unwrap().insert(
                    id.clone(),
                    HeldCall { owner_jkt: verified.jkt.clone(), resource_token: token, method, body, result: None },
                );
                return pending(&format!("/pending/{id}"), Some(value), json!({"status": "pending"}));
            }
            requirement(StatusCode::UNAUTHORIZED, value)
        }
        TokenKind::Auth => {
            if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.resource_id)
                || claims.iss.as_deref() != Some(&state.ps_id)
            {
                return problem(StatusCode::UNAUTHORIZED, "invalid_auth_token", "wrong aud or iss");
            }
            state.count("resource.auth_token");
            if scenario.endless_step_up {
                let token = resource_token(&state, &verified, &claims, &scope);
                return requirement(
                    StatusCode::UNAUTHORIZED,
                    format!(r#"requirement=auth-token; resource-token="{token}""#),
                );
            }
            json_response(
                StatusCode::OK,
                json!({"method": method, "body": body, "sub": claims.sub, "scope": claims.scope}),
            )
        }
        _ => problem(StatusCode::UNAUTHORIZED, "invalid_jwt", "unexpected token"),
    }
}

fn interaction_pending(state: &HarnessState, id: &str, interaction: &ResourceInteraction) -> Response {
    pending(
        &format!("/pending/{id}"),
        Some(format!(r#"requirement=interaction; url="{}/interact"; code="{}""#, state.resource_id, interaction.code)),
        json!({"status": "pending"}),
    )
}

pub(crate) async fn poll(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    state.count("resource.poll");
    if let Some(interaction) = state.interactions.lock().unwrap().get(&id) {
        if interaction.owner_jkt != verified.jkt {
            return problem(StatusCode::GONE, "invalid_code", "no such pending call");
        }
        if !interaction.done {
            return interaction_pending(&state, &id, interaction);
        }
        state.count("resource.executed");
        return json_response(StatusCode::OK, json!({"method": interaction.method, "interaction": true}));
    }
    let mut held = state.held.lock().unwrap();
    let Some(call) = held.get_mut(&id).filter(|call| call.owner_jkt == verified.jkt) else {
        return problem(StatusCode::GONE, "invalid_code", "no such pending call");
    };
    match verified.token {
        Some((TokenKind::Auth, claims))
            if claims.aud.as_ref().and_then(|aud| aud.single()) == Some(&state.resource_id) =>
        {
            // Executed once; a repeated presentation gets the same result.
            let result = call.result.get_or_insert_with(|| {
                state.count("resource.executed");
                json!({"method": call.method, "body": call.body, "sub": claims.sub, "held": true}).to_string()
            });
            Response::builder()
                .status(StatusCode::OK)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(result.clone()))
                .unwrap()
        }
        _ => pending(
            &format!("/pending/{id}"),
            Some(format!(r#"requirement=auth-token; resource-token="{}""#, call.resource_token)),
            json!({"status": "pending"}),
        ),
    }
}

pub(crate) async fn interaction_page(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("resource.interaction_page");
    Response::builder().status(StatusCode::OK).body(Body::from("enter your code")).unwrap()
}

/// The person's decision at the resource, from their browser: `code=…&decision=approve`.
pub(crate) async fn interaction_decision(State(state): State<Arc<HarnessState>>, request: Request) -> Response {
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let form: std::collections::HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let normalize = |code: &str| code.replace('-', "").to_ascii_uppercase();
    let code = normalize(form.get("code").map(String::as_str).unwrap_or_default());
    let mut interactions = state.interactions.lock().unwrap();
    let Some(interaction) = interactions.values_mut().find(|interaction| normalize(&interaction.code) == code) else {
        return problem(StatusCode::GONE, "invalid_code", "unknown code");
    };
    if form.get("decision").map(String::as_str) != Some("approve") {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "only approval is played here");
    }
    state.count("resource.interaction_decision");
    interaction.done = true;
    Response::builder().status(StatusCode::OK).body(Body::from("thank you")).unwrap()
}
