//! The AAuth flows end to end against the harness's agent provider, person server and
//! resource (`aauth-harness`), which verify every signature they receive.
//!
//! The helpers below, shared by the modules, build clients for a harness, look into
//! errors and issued tokens, and play the person; each module holds the tests of one
//! behaviour (and the helpers only its tests use).

use std::path::Path;
use std::sync::{Arc, Mutex};

use aauth_client::{AAuthClient, AgentKey, ClarificationAnswer, Error, SignatureKey, Step, TokenKind, sign_request};
use aauth_harness::{Consent, Harness};
use reqwest::header::{CONTENT_TYPE, HeaderValue};
use skill_core::SecretString;
use url::Url;

mod agent_token;
mod consent;
mod draft_11;
mod errors;
mod relay;
mod signatures;
mod token_cache;
mod token_dance;
mod trust;

/// A client for `harness` with a fresh key, its agent token cached under `dir`.
fn client(harness: &Harness, dir: &Path) -> AAuthClient {
    builder(harness, AgentKey::generate(), dir).build().unwrap()
}

fn builder(harness: &Harness, key: AgentKey, dir: &Path) -> aauth_client::AAuthClientBuilder {
    AAuthClient::builder(key, harness.ap.clone())
        .allow_http_loopback(true)
        .agent_token_cache_dir(dir.join("aauth/agent-tokens"))
}

fn data_url(harness: &Harness) -> Url {
    harness.resource.join("/data").unwrap()
}

fn aauth_error(error: &reqwest_middleware::Error) -> &Error {
    Error::from_middleware(error).unwrap_or_else(|| panic!("not an AAuth error: {error:?}"))
}

/// Nothing the servers issued appears in `text`.
fn assert_no_token(harness: &Harness, text: &str) {
    let issued = harness.issued_tokens();
    assert!(!issued.is_empty());
    for token in issued {
        assert!(!text.contains(&token), "a token leaked into: {text}");
        let signature = token.rsplit('.').next().unwrap();
        assert!(!text.contains(signature), "a token signature leaked into: {text}");
    }
}

/// Records interactions and plays the person: approves, denies or lets it expire.
fn on_interaction_channel()
-> (impl Fn(&Url, &str) + Send + Sync + 'static, tokio::sync::mpsc::UnboundedReceiver<(Url, String)>) {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel();
    (move |url: &Url, code: &str| sender.send((url.clone(), code.to_owned())).unwrap(), receiver)
}

/// The person, in their browser: opens `{url}?code={code}` and decides.
async fn person_decides(url: &Url, code: &str, decision: &str) {
    let browser = reqwest::Client::new();
    let mut page = url.clone();
    page.query_pairs_mut().append_pair("code", code);
    assert_eq!(browser.get(page).send().await.unwrap().status(), 200);
    let form = format!("code={code}&decision={decision}");
    let response = browser
        .post(url.clone())
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(form)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
}
