//! The person server: its metadata, person tokens at `/person`, auth tokens at `/token`
//! (at once, or after an interaction or a clarification, polled at `/pending/{id}`), and
//! the person's own pages at `/interact`.

use std::collections::HashMap;
use std::sync::Arc;

use aauth_client::{Claims, Jwt, TokenKind};
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use httpsig::prelude::{AlgorithmName, PublicKey, VerifyingKey as _};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::responses::{body_json, json_response, pending, problem, token_kind};
use crate::verify::Verified;
use crate::{Consent, Decision, HarnessState, PsPending, now};

pub(crate) async fn metadata(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ps.metadata");
    let id = &state.ps_id;
    json_response(
        StatusCode::OK,
        json!({"issuer": id, "jwks_uri": format!("{id}/jwks.json"), "person_token_endpoint": format!("{id}/person"),
            "auth_token_endpoint": format!("{id}/token"), "interaction_endpoint": format!("{id}/interaction")}),
    )
}

/// The directed person identifier this PS gives the person behind `agent_sub` at a resource.
fn directed_sub(agent_sub: &str, resource: &str) -> String {
    URL_SAFE_NO_PAD.encode(&Sha256::digest(format!("{agent_sub} {resource}"))[..12])
}

pub(crate) async fn person_token(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    let Some((TokenKind::Agent, agent)) = verified.token.clone() else {
        return agent_token_required();
    };
    let body = body_json(request).await.unwrap_or(Value::Null);
    state.ps_requests.lock().unwrap().push(("person", body.clone()));
    let Some(resource) = body["resource"].as_str().map(str::to_owned) else {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "no resource");
    };
    state.count("ps.person_token");
    let now = now();
    let mut claims = json!({"iss": state.ps_id, "dwk": "aauth-person.json", "aud": resource,
        "sub": directed_sub(agent.sub.as_deref().unwrap(), &resource), "cnf": {"jwk": verified.jwk},
        "jti": format!("pt-{}", state.next_id()), "iat": now, "exp": now + 3600});
    // The mission the agent names goes in its person token (protocol -11).
    if let Some(mission) = body["mission_s256"].as_str() {
        claims["mission_s256"] = json!(mission);
    }
    let token = state.issue(&state.ps_key, "ps-1", TokenKind::Person, claims);
    json_response(StatusCode::OK, json!({"person_token": token, "expires_in": 3600}))
}

/// A request to the person server not signed with an agent token: `401` with
/// `Signature-Error` (protocol -11 removed `invalid_agent_token`).
fn agent_token_required() -> Response {
    let mut response = problem(StatusCode::UNAUTHORIZED, "invalid_jwt", "an agent token is required");
    response.headers_mut().insert("signature-error", axum::http::HeaderValue::from_static("error=invalid_jwt"));
    response
}

/// Verifies the `resource_token` and `presented_token` of an auth token request or an
/// updated request (protocol -11): the resource's signature, audience and binding, and the
/// presented token is the one whose `jti` the resource token names. The resource token's
/// claims, or the refusal.
fn verify_pair(state: &HarnessState, verified: &Verified, body: &Value) -> Result<Claims, Box<Response>> {
    let (Some(resource_token), Some(presented_token)) =
        (body["resource_token"].as_str(), body["presented_token"].as_str())
    else {
        return Err(Box::new(problem(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "resource_token and presented_token are required",
        )));
    };
    let (signing_input, signature) = resource_token.rsplit_once('.').unwrap();
    let resource_x = URL_SAFE_NO_PAD.decode(state.resource_key.public_jwk()["x"].as_str().unwrap()).unwrap();
    let resource_key = PublicKey::from_bytes(&AlgorithmName::Ed25519, &resource_x).unwrap();
    if resource_key.verify(signing_input.as_bytes(), &URL_SAFE_NO_PAD.decode(signature).unwrap()).is_err() {
        return Err(Box::new(problem(StatusCode::BAD_REQUEST, "invalid_resource_token", "bad signature")));
    }
    let claims = Jwt::decode(resource_token, TokenKind::Resource).unwrap().claims;
    if claims.aud.as_ref().and_then(|aud| aud.single()) != Some(&state.ps_id)
        || claims.agent_jkt.as_deref() != Some(&verified.jkt)
    {
        return Err(Box::new(problem(StatusCode::BAD_REQUEST, "invalid_resource_token", "not for this PS or agent")));
    }
    let presented_jti = presented_token
        .split('.')
        .nth(1)
        .and_then(|claims| URL_SAFE_NO_PAD.decode(claims).ok())
        .and_then(|claims| serde_json::from_slice::<Value>(&claims).ok())
        .and_then(|claims| claims["jti"].as_str().map(str::to_owned));
    if presented_jti.is_none() || presented_jti != claims.presented_jti {
        return Err(Box::new(problem(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "presented_token is not the token presented",
        )));
    }
    Ok(claims)
}

/// The auth token the person server issues for the resource token `claims` to the agent
/// of `verified`.
fn issue_auth_token(state: &HarnessState, verified: &Verified, claims: &Claims, lifetime: u64) -> String {
    let now = now();
    state.issue(
        &state.ps_key,
        "ps-1",
        TokenKind::Auth,
        json!({"iss": state.ps_id, "dwk": "aauth-person.json", "aud": claims.iss, "jti": format!("au-{}", state.next_id()),
            "ps": state.ps_id, "sub": claims.sub, "cnf": {"jwk": verified.jwk}, "scope": claims.scope,
            "iat": now, "exp": now + lifetime}),
    )
}

pub(crate) async fn auth_token(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if token_kind(&verified) != Some(TokenKind::Agent) {
        return agent_token_required();
    }
    let body = body_json(request).await.unwrap_or(Value::Null);
    state.ps_requests.lock().unwrap().push(("auth", body.clone()));
    let injected = state.scenario.lock().unwrap().auth_token_errors.pop_front();
    if let Some(error) = injected {
        state.count(&format!("ps.{error}"));
        let status = if error == "as_unreachable" { StatusCode::BAD_GATEWAY } else { StatusCode::BAD_REQUEST };
        let mut response = problem(status, error, "as the test asked");
        response.headers_mut().insert("retry-after", axum::http::HeaderValue::from_static("0"));
        return response;
    }
    let claims = match verify_pair(&state, &verified, &body) {
        Ok(claims) => claims,
        Err(refusal) => return *refusal,
    };
    state.count("ps.auth_token");
    let scenario = state.scenario();
    let lifetime = scenario.auth_token_lifetime;
    let auth_token = issue_auth_token(&state, &verified, &claims, lifetime);
    let consent = scenario.consent;
    if consent == Consent::Immediate {
        return json_response(StatusCode::OK, json!({"auth_token": auth_token, "expires_in": lifetime}));
    }
    let id = state.next_id();
    let code = format!("{:04X}-{:04X}", 0xA1B2 + id, 0xC3D4 + id);
    state.ps_pending.lock().unwrap().insert(
        id.to_string(),
        PsPending {
            owner_jkt: verified.jkt.clone(),
            code: code.clone(),
            decision: Decision::Waiting,
            clarification: consent == Consent::Clarification,
            auth_token,
            expires_in: lifetime,
            done: false,
        },
    );
    ps_pending_answer(&state, &id.to_string(), consent == Consent::Clarification, &code)
}

fn ps_pending_answer(state: &HarnessState, id: &str, clarification: bool, code: &str) -> Response {
    let location = format!("/pending/{id}");
    if clarification {
        pending(
            &location,
            Some("requirement=clarification".to_owned()),
            json!({"status": "pending", "clarification": "Why do you need to read my data?", "timeout": 120}),
        )
    } else {
        pending(
            &location,
            Some(format!(r#"requirement=interaction; url="{}/interact"; code="{code}""#, state.ps_id)),
            json!({"status": "pending"}),
        )
    }
}

pub(crate) async fn poll(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    state.count("ps.poll");
    let answer = {
        let mut scenario = state.scenario.lock().unwrap();
        if scenario.slow_downs > 0 {
            scenario.slow_downs -= 1;
            drop(scenario);
            state.count("ps.slow_down");
            Some(problem(StatusCode::TOO_MANY_REQUESTS, "slow_down", "poll less often"))
        } else {
            None
        }
    };
    let response = answer.unwrap_or_else(|| {
        let mut pending = state.ps_pending.lock().unwrap();
        let Some(entry) = pending.get_mut(&id) else {
            return problem(StatusCode::GONE, "invalid_code", "no such pending request");
        };
        if entry.owner_jkt != verified.jkt || token_kind(&verified) != Some(TokenKind::Agent) {
            return problem(StatusCode::FORBIDDEN, "denied", "not the requesting agent");
        }
        if entry.done {
            return problem(StatusCode::GONE, "invalid_code", "already completed");
        }
        if state.scenario().poll_revoked {
            entry.done = true;
            return problem(StatusCode::FORBIDDEN, "revoked", "the person token was revoked");
        }
        match entry.decision {
            Decision::Waiting => ps_pending_answer(&state, &id, entry.clarification, &entry.code),
            Decision::Approved => {
                entry.done = true;
                json_response(StatusCode::OK, json!({"auth_token": entry.auth_token, "expires_in": entry.expires_in}))
            }
            Decision::Denied => {
                entry.done = true;
                problem(StatusCode::FORBIDDEN, "denied", "The user declined the request.")
            }
            Decision::Expired => {
                entry.done = true;
                problem(StatusCode::REQUEST_TIMEOUT, "expired", "The request timed out.")
            }
        }
    });
    state.ps_polls.send_modify(|polls| *polls += 1);
    response
}

pub(crate) async fn clarification_response(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let body = body_json(request).await.unwrap_or(Value::Null);
    // An updated request replaces the pending one: its resource token and the token it
    // was issued against are verified as an auth token request's are (protocol -11).
    let updated = match body["action"].as_str() {
        Some("clarification_response") => None,
        Some("updated_request") => match verify_pair(&state, &verified, &body) {
            Ok(claims) => Some(claims),
            Err(refusal) => return *refusal,
        },
        _ => return problem(StatusCode::BAD_REQUEST, "invalid_request", "missing or unknown action"),
    };
    let answer = match &updated {
        None => match body["clarification_response"].as_str() {
            Some(answer) => answer.to_owned(),
            None => return problem(StatusCode::BAD_REQUEST, "invalid_request", "no clarification_response"),
        },
        Some(_) => body["justification"].as_str().unwrap_or_default().to_owned(),
    };
    let mut pending = state.ps_pending.lock().unwrap();
    let Some(entry) = pending.get_mut(&id).filter(|entry| entry.owner_jkt == verified.jkt) else {
        return problem(StatusCode::GONE, "invalid_code", "no such pending request");
    };
    if let Some(claims) = updated {
        state.count("ps.updated_request");
        state.ps_requests.lock().unwrap().push(("updated", body.clone()));
        entry.auth_token = issue_auth_token(&state, &verified, &claims, entry.expires_in);
    } else {
        state.count("ps.clarification_response");
    }
    state.clarification_answers.lock().unwrap().push(answer);
    entry.decision = Decision::Approved;
    json_response(StatusCode::ACCEPTED, json!({"status": "pending"}))
}

pub(crate) async fn withdraw(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    Path(id): Path<String>,
) -> Response {
    let mut pending = state.ps_pending.lock().unwrap();
    if pending.get(&id).is_some_and(|entry| entry.owner_jkt == verified.jkt) {
        pending.remove(&id);
        state.count("ps.withdrawn");
    }
    Response::builder().status(StatusCode::NO_CONTENT).body(Body::empty()).unwrap()
}

/// The `interaction_endpoint`: an agent relays an interaction a resource asks for; the
/// person server "reaches the person" (records it, for the test to act on) and answers a
/// pending `202`, or `424 interaction_unavailable` when the scenario says so.
pub(crate) async fn relay(
    State(state): State<Arc<HarnessState>>,
    axum::Extension(verified): axum::Extension<Verified>,
    request: Request,
) -> Response {
    if token_kind(&verified) != Some(TokenKind::Agent) {
        return agent_token_required();
    }
    let body = body_json(request).await.unwrap_or(Value::Null);
    if state.scenario().interaction_unavailable {
        state.count("ps.interaction_unavailable");
        return problem(StatusCode::FAILED_DEPENDENCY, "interaction_unavailable", "no channel to the person");
    }
    if body["type"] != "interaction" || body["url"].as_str().is_none() || body["code"].as_str().is_none() {
        return problem(StatusCode::BAD_REQUEST, "invalid_request", "type interaction with url and code expected");
    }
    state.count("ps.relay");
    state.relayed.lock().unwrap().push(body);
    pending(&format!("/relay/{}", state.next_id()), None, json!({"status": "pending"}))
}

pub(crate) async fn interaction_page(State(state): State<Arc<HarnessState>>) -> Response {
    state.count("ps.interaction_page");
    Response::builder().status(StatusCode::OK).body(Body::from("enter your code")).unwrap()
}

/// The person's decision, posted from their browser: `code=…&decision=approve|deny|expire`.
pub(crate) async fn interaction_decision(State(state): State<Arc<HarnessState>>, request: Request) -> Response {
    let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap();
    let form: HashMap<String, String> = url::form_urlencoded::parse(&body).into_owned().collect();
    let decision = match form.get("decision").map(String::as_str) {
        Some("approve") => Decision::Approved,
        Some("deny") => Decision::Denied,
        Some("expire") => Decision::Expired,
        _ => return problem(StatusCode::BAD_REQUEST, "invalid_request", "no decision"),
    };
    // Codes compare without hyphens and case-insensitively.
    let normalize = |code: &str| code.replace('-', "").to_ascii_uppercase();
    let code = normalize(form.get("code").map(String::as_str).unwrap_or_default());
    let mut pending = state.ps_pending.lock().unwrap();
    let Some(entry) = pending.values_mut().find(|entry| normalize(&entry.code) == code) else {
        return problem(StatusCode::GONE, "invalid_code", "unknown code");
    };
    state.count("ps.interaction_decision");
    entry.decision = decision;
    Response::builder().status(StatusCode::OK).body(Body::from("thank you")).unwrap()
}
