//! The agent token: its private cache file, shared by agents of other providers and keys,
//! and its renewal before it expires.

use super::*;

#[cfg(unix)]
#[tokio::test]
async fn agent_token_cache_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    client.enroll().await.unwrap();
    let path = client.agent_token_cache_file().unwrap();
    assert_eq!(path.parent().unwrap(), dir.path().join("aauth/agent-tokens"));
    assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(cached["agent_token"], harness.issued_tokens()[0]);
}

/// Agents with other agent providers or other keys share one cache folder: each finds its
/// own token there, and none re-enrolls because another one enrolled.
#[tokio::test]
async fn agents_with_other_providers_or_keys_share_the_cache_folder() {
    let (first, second) = (Harness::start().await, Harness::start().await);
    let dir = tempfile::tempdir().unwrap();
    let (key, other_key) = (AgentKey::generate(), AgentKey::generate());
    let setups = [(&first, &key), (&second, &key), (&first, &other_key)];
    let mut identities = Vec::new();
    for (harness, key) in setups {
        identities.push(builder(harness, key.clone(), dir.path()).build().unwrap().enroll().await.unwrap());
    }
    // Each setup again, as a later process would: its own cached token, no enrollment.
    for ((harness, key), identity) in setups.into_iter().zip(&identities) {
        let again = builder(harness, key.clone(), dir.path()).build().unwrap();
        assert_eq!(&again.agent_identity().await.unwrap(), identity);
    }
    assert_eq!((first.count("ap.bootstrap"), second.count("ap.bootstrap")), (2, 1));
    // Three token files (beside `.created`, where signature times are claimed).
    let files = std::fs::read_dir(dir.path().join("aauth/agent-tokens")).unwrap();
    assert_eq!(files.filter(|entry| entry.as_ref().unwrap().path().is_file()).count(), 3);
}

/// An agent token within 5 minutes of its expiry is renewed at `refresh_endpoint`, under
/// `jkt-jwt` (the harness's provider refuses a refresh signed otherwise).
#[tokio::test]
async fn agent_token_is_refreshed_before_it_expires() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let client = client(&harness, dir.path());
    harness.set(|scenario| scenario.agent_token_lifetime = 30);
    let first = client.enroll().await.unwrap();
    harness.set(|scenario| scenario.agent_token_lifetime = 3600);

    let renewed = client.agent_identity().await.unwrap();
    assert_eq!(harness.count("ap.refresh"), 1);
    assert_eq!(harness.count("ap.bootstrap"), 1);
    assert_eq!(renewed.agent_id, first.agent_id);
    assert!(renewed.expires_at > first.expires_at);
    // Now fresh: no further renewal.
    client.agent_identity().await.unwrap();
    assert_eq!(harness.count("ap.refresh"), 1);
}
