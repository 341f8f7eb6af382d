//! Interaction relayed through the person server (protocol -11, "Relaying Through the
//! Person Server"): a resource's interaction goes to the person server's
//! `interaction_endpoint` first, the agent directs the person itself only after `424
//! interaction_unavailable`, and polling the resource's pending URL ends however the
//! interaction completed.

use super::*;

/// A harness whose resource asks the person to act at its own page.
async fn resource_asks_for_interaction(unavailable: bool) -> Harness {
    let harness = Harness::start().await;
    harness.set(|scenario| {
        scenario.resource_interaction = true;
        scenario.interaction_unavailable = unavailable;
    });
    harness
}

/// Waits until the person server has taken a relayed interaction, and returns its body.
async fn relayed(harness: &Harness) -> serde_json::Value {
    loop {
        if let Some(body) = harness.relayed_interactions().into_iter().next() {
            return body;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_resources_interaction_is_relayed_through_the_person_server() {
    let harness = resource_asks_for_interaction(false).await;
    let dir = tempfile::tempdir().unwrap();
    let (callback, mut interactions) = on_interaction_channel();
    let client = builder(&harness, AgentKey::generate(), dir.path())
        .on_interaction(callback)
        .mission("m-s256".into())
        .build()
        .unwrap();
    let request = client.http_client().get(data_url(&harness)).send();
    let person = async {
        let body = relayed(&harness).await;
        // The person, reached by the person server, acts at the resource's page.
        let url = Url::parse(body["url"].as_str().unwrap()).unwrap();
        person_decides(&url, body["code"].as_str().unwrap(), "approve").await;
        body
    };
    let (response, body) = tokio::join!(request, person);
    assert_eq!(response.unwrap().status(), 200);
    assert_eq!(body["type"], "interaction");
    assert_eq!(body["url"], format!("{}interact", harness.resource));
    assert_eq!(body["mission_s256"], "m-s256");
    // The person server took it: the agent did not direct the person itself.
    assert!(interactions.try_recv().is_err());
    assert_eq!(harness.count("ps.relay"), 1);
    assert_eq!(harness.count("resource.interaction_decision"), 1);
    assert_eq!(harness.count("resource.executed"), 1);
}

#[tokio::test]
async fn interaction_unavailable_falls_back_on_the_callback() {
    let harness = resource_asks_for_interaction(true).await;
    let dir = tempfile::tempdir().unwrap();
    let (callback, mut interactions) = on_interaction_channel();
    let client = builder(&harness, AgentKey::generate(), dir.path()).on_interaction(callback).build().unwrap();
    let request = client.http_client().get(data_url(&harness)).send();
    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        person_decides(&url, &code, "approve").await;
        url
    };
    let (response, url) = tokio::join!(request, person);
    assert_eq!(response.unwrap().status(), 200);
    assert_eq!(url.as_str(), format!("{}interact", harness.resource));
    assert_eq!(harness.count("ps.interaction_unavailable"), 1);
    assert_eq!(harness.count("ps.relay"), 0);
}

/// Without a callback, `424` leaves the agent no way to the person: a typed error, and
/// the resource's pending request is withdrawn.
#[tokio::test]
async fn interaction_unavailable_without_a_callback_is_a_typed_error() {
    let harness = resource_asks_for_interaction(true).await;
    let dir = tempfile::tempdir().unwrap();
    let error = client(&harness, dir.path()).http_client().get(data_url(&harness)).send().await.unwrap_err();
    let Error::InteractionUnhandled { interaction_url, .. } = aauth_error(&error) else { panic!("{error:?}") };
    assert_eq!(*interaction_url, format!("{}interact", harness.resource));
}

/// An agent with no way to the person of its own still gets through when the person
/// server relays, and the interaction completes without the person visiting the page
/// (out of band): the resource's pending URL says so, and polling ends there.
#[tokio::test]
async fn completion_out_of_band_ends_the_polling() {
    let harness = resource_asks_for_interaction(false).await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    let request = client.http_client().get(data_url(&harness)).send();
    let elsewhere = async {
        relayed(&harness).await;
        harness.complete_resource_interactions();
    };
    let (response, ()) = tokio::join!(request, elsewhere);
    let response = response.unwrap();
    assert_eq!(response.status(), 200);
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    assert_eq!(body["interaction"], true);
    assert_eq!(harness.count("resource.interaction_page"), 0);
    assert_eq!(harness.count("resource.executed"), 1);
}
