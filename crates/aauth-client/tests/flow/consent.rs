//! The person's consent at the person server: interaction, denial, expiry, slow-down and
//! clarification, with and without the callbacks that handle them.

use super::*;

/// Runs a request that needs consent at the person server; the person decides after the
/// client has polled at least once.
async fn with_consent(
    decision: &str,
) -> (Harness, Result<reqwest::Response, reqwest_middleware::Error>, Vec<(Url, String)>) {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let (callback, mut interactions) = on_interaction_channel();
    let client = builder(&harness, AgentKey::generate(), dir.path()).on_interaction(callback).build().unwrap();
    let request = client.http_client().get(data_url(&harness)).send();
    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        harness.wait_for_ps_polls(1).await;
        person_decides(&url, &code, decision).await;
        (url, code)
    };
    let (result, seen) = tokio::join!(request, person);
    let mut announced = vec![seen];
    while let Ok(more) = interactions.try_recv() {
        announced.push(more);
    }
    (harness, result, announced)
}

#[tokio::test]
async fn interaction_code_reaches_the_callback_and_polling_runs_until_approved() {
    let (harness, result, announced) = with_consent("approve").await;
    let response = result.unwrap();
    assert_eq!(response.status(), 200);
    // One announcement, although every pending answer repeats the requirement.
    assert_eq!(announced.len(), 1, "{announced:?}");
    let (url, code) = &announced[0];
    assert_eq!(url.as_str(), format!("{}interact", harness.ps));
    assert_eq!(code.len(), 9);
    assert_eq!(harness.count("ps.interaction_decision"), 1);
    assert!(harness.count("ps.poll") >= 2, "{:?}", harness.counts());
    assert_eq!(harness.count("resource.auth_token"), 1);
}

#[tokio::test]
async fn denial_is_a_typed_error() {
    let (harness, result, _) = with_consent("deny").await;
    let error = result.unwrap_err();
    let Error::Denied { url, error: code, detail } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(code, "denied");
    assert_eq!(detail.as_deref(), Some("The user declined the request."));
    assert!(url.as_str().starts_with(&format!("{}pending/", harness.ps)), "{url}");
    assert_eq!(harness.count("resource.auth_token"), 0);
    assert_no_token(&harness, &format!("{error} {error:?}"));
}

#[tokio::test]
async fn expiry_is_a_typed_error() {
    let (harness, result, _) = with_consent("expire").await;
    let error = result.unwrap_err();
    assert!(matches!(aauth_error(&error), Error::Expired { .. }), "{error:?}");
    assert!(aauth_error(&error).to_string().contains("the pending request expired: The request timed out."));
    assert_eq!(harness.count("resource.auth_token"), 0);
}

/// A person server asking to slow down gets polls 5 s further apart, and the flow goes on.
#[tokio::test]
async fn slow_down_is_honoured() {
    let harness = Harness::start().await;
    harness.set(|scenario| {
        scenario.consent = Consent::Clarification;
        scenario.slow_downs = 1;
    });
    let dir = tempfile::tempdir().unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification(|_| Some("To summarize it.".to_owned()))
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(harness.count("ps.slow_down"), 1);
    assert_eq!(harness.count("ps.poll"), 2);
}

#[tokio::test]
async fn clarification_is_answered_through_the_callback() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let questions = Arc::new(Mutex::new(Vec::new()));
    let asked = questions.clone();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification(move |question| {
            asked.lock().unwrap().push(question.to_owned());
            Some("I need it to prepare your report.".to_owned())
        })
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(*questions.lock().unwrap(), ["Why do you need to read my data?"]);
    assert_eq!(harness.clarification_answers(), ["I need it to prepare your report."]);
    assert_eq!(harness.count("ps.clarification_response"), 1);
}

/// A clarification answered with an updated request (protocol -11, AG-25): the client asks
/// the resource again for less, presenting the person token it presented first, and hands
/// the person server the new resource token with that person token as `presented_token`;
/// the auth token it gets is for the reduced scope.
#[tokio::test]
async fn clarification_answered_with_an_updated_request_sends_presented_token() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let resources = Arc::new(Mutex::new(Vec::new()));
    let seen = resources.clone();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification_answer(move |asked| {
            let resource = asked.resource_request.unwrap().clone();
            seen.lock().unwrap().push((asked.question.to_owned(), resource.clone()));
            let mut reduced = resource;
            reduced.set_query(Some("scope=data.summary"));
            ClarificationAnswer::UpdatedRequest {
                request: Box::new(reqwest::Request::new(reqwest::Method::GET, reduced)),
                justification: Some("A summary is enough.".to_owned()),
            }
        })
        .build()
        .unwrap();
    let response = client.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["scope"], "data.summary", "{body}");
    assert_eq!(*resources.lock().unwrap(), [("Why do you need to read my data?".to_owned(), data_url(&harness))]);
    assert_eq!(harness.count("ps.updated_request"), 1);
    assert_eq!(harness.count("ps.clarification_response"), 0);
    assert_eq!(harness.clarification_answers(), ["A summary is enough."]);
    // The updated request names the person token presented for both resource tokens.
    let requests = harness.ps_requests();
    let (_, auth) = requests.iter().find(|(kind, _)| *kind == "auth").unwrap();
    let (_, updated) = requests.iter().find(|(kind, _)| *kind == "updated").unwrap();
    assert_eq!(updated["action"], "updated_request");
    assert_eq!(updated["presented_token"], auth["presented_token"]);
    assert_ne!(updated["resource_token"], auth["resource_token"]);
    assert_eq!(harness.count("resource.person_token"), 2);
}

/// An updated request is refused where it cannot replace the pending request: for a
/// resource other than the one whose auth token is asked for; the request is withdrawn.
#[tokio::test]
async fn an_updated_request_to_another_origin_is_refused_and_withdraws() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = harness.ps.join("/data").unwrap();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_clarification_answer(move |_| ClarificationAnswer::UpdatedRequest {
            request: Box::new(reqwest::Request::new(reqwest::Method::GET, elsewhere.clone())),
            justification: None,
        })
        .build()
        .unwrap();
    let error = client.http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::UpdatedRequest { reason, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert!(reason.contains("not on the origin"), "{reason}");
    assert_eq!(harness.count("ps.withdrawn"), 1);
    assert_eq!(harness.count("ps.updated_request"), 0);
}

#[tokio::test]
async fn clarification_without_a_callback_is_a_typed_error_and_withdraws() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Clarification);
    let dir = tempfile::tempdir().unwrap();
    let error = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::ClarificationUnhandled { question, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(question, "Why do you need to read my data?");
    assert_eq!(harness.count("ps.withdrawn"), 1);
}

#[tokio::test]
async fn interaction_without_a_callback_is_a_typed_error() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let error = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::InteractionUnhandled { code, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(code.len(), 9);
    assert_eq!(harness.count("ps.withdrawn"), 1);
}
