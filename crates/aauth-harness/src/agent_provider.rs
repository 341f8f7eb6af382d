//! The agent provider: its metadata, and agent tokens at `/bootstrap` (a key it does not
//! know yet, signed under `hwk`) and `/refresh` (an enrolled key, signed under `jkt-jwt`:
//! a naming JWT of the enrolled key delegating to the key that signs, as bootstrap -02's
//! two-key refresh is).

use std::sync::Arc;

use aauth_client::TokenKind;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::responses::{body_json, json_response, problem};
use crate::verify::Verified;
use crate::{HarnessState, now};

pub(crate) async fn metadata(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ap.metadata");
    let id = &state.ap_id;
    json_response(
        StatusCode::OK,
        json!({"issuer": id, "jwks_uri": format!("{id}/jwks.json"), "bootstrap_endpoint": format!("{id}/bootstrap"),
            "refresh_endpoint": format!("{id}/refresh")}),
    )
}

fn issue_agent_token(state: &HarnessState, verified: &Verified, agent_id: &str, ps: &str) -> Response {
    let now = now();
    let lifetime = state.scenario().agent_token_lifetime;
    let token = state.issue(
        &state.ap_key,
        "ap-1",
        TokenKind::Agent,
        json!({"iss": state.ap_id, "dwk": "aauth-agent.json", "sub": agent_id, "jti": format!("at-{}", state.next_id()),
            "iat": now, "exp": now + lifetime, "cnf": {"jwk": verified.jwk}, "ps": ps}),
    );
    json_response(StatusCode::OK, json!({"agent_token": token, "agent_id": agent_id, "expires_in": lifetime, "ps": ps}))
}

pub(crate) async fn bootstrap(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if verified.token.is_some() || verified.naming_jkt.is_some() {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "bootstrap is signed with hwk");
    }
    state.count("ap.bootstrap");
    let body = body_json(request).await.unwrap_or(json!({}));
    let ps = body["ps"].as_str().unwrap_or(&state.ps_id).to_owned();
    let agent_id = format!("aauth:agent{}@127.0.0.1", state.next_id());
    state.agents.lock().unwrap().insert(verified.jkt.clone(), agent_id.clone());
    issue_agent_token(&state, &verified, &agent_id, &ps)
}

pub(crate) async fn refresh(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    let Some(naming_jkt) = verified.naming_jkt.as_ref() else {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "refresh is signed with jkt-jwt");
    };
    // The enrollment is the naming key's; the new token is bound to the key it delegated to.
    let Some(agent_id) = state.agents.lock().unwrap().get(naming_jkt).cloned() else {
        return problem(StatusCode::BAD_REQUEST, "unknown_agent", "this key is not enrolled");
    };
    state.count("ap.refresh");
    let body = body_json(request).await.unwrap_or(json!({}));
    let ps = body["ps"].as_str().unwrap_or(&state.ps_id).to_owned();
    issue_agent_token(&state, &verified, &agent_id, &ps)
}
