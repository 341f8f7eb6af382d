//! The person and auth tokens cached for later processes: presented while fresh, kept in
//! a private file, and ignored when stale, foreign or tampered.

use super::*;

/// How much each step's count grew from `before` to `after` (steps that did not grow are
/// left out).
fn growth(
    before: &std::collections::BTreeMap<String, usize>,
    after: &std::collections::BTreeMap<String, usize>,
) -> Vec<(String, usize)> {
    after
        .iter()
        .filter_map(|(step, count)| {
            let grown = count - before.get(step).copied().unwrap_or(0);
            (grown > 0).then(|| (step.clone(), grown))
        })
        .collect()
}

fn steps(list: &[(&str, usize)]) -> Vec<(String, usize)> {
    list.iter().map(|(step, count)| ((*step).to_owned(), *count)).collect()
}

/// One request through the whole dance; the answer's `sub`.
async fn dance(client: &AAuthClient, harness: &Harness) -> serde_json::Value {
    let response = client.http_client().get(data_url(harness)).send().await.unwrap();
    assert_eq!(response.status(), 200, "{:?}", harness.counts());
    let body: serde_json::Value = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    body["sub"].clone()
}

/// The person and auth tokens are shared with later processes: a second client with the
/// same key and cache folder (as the next `omniagent` command would be) presents the auth
/// token the first obtained, and its request goes straight through.
#[tokio::test]
async fn a_later_process_presents_the_cached_auth_token() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let first = builder(&harness, key.clone(), dir.path()).build().unwrap();
    let sub = dance(&first, &harness).await;
    assert_eq!((harness.count("ps.person_token"), harness.count("ps.auth_token")), (1, 1));

    let before = harness.counts();
    let second = builder(&harness, key, dir.path()).build().unwrap();
    assert_eq!(dance(&second, &harness).await, sub);
    // One signed request, presenting the auth token: no enrollment, no metadata, no token
    // request, no other attempt at the resource.
    assert_eq!(growth(&before, &harness.counts()), steps(&[("resource.auth_token", 1), ("verified", 1)]));
    assert_no_token(&harness, &format!("{second:?}"));
}

/// The token cache file of a resource is private, beside the agent token's, and says
/// whose tokens it holds.
#[cfg(unix)]
#[tokio::test]
async fn resource_token_cache_file_is_private() {
    use std::os::unix::fs::PermissionsExt as _;
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let client = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&client, &harness).await;
    let path = client.resource_token_cache_file(&data_url(&harness)).unwrap();
    assert_eq!(path.parent(), client.agent_token_cache_file().unwrap().parent());
    assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777, 0o700);
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(cached["agent_provider"].as_str(), Some(harness.ap.as_str().trim_end_matches('/')));
    assert_eq!(cached["thumbprint"].as_str(), Some(key.thumbprint().as_str()));
    assert_eq!(cached["resource"].as_str(), Some(harness.resource.as_str().trim_end_matches('/')));
    assert_eq!(cached["person_server"].as_str(), Some(harness.ps.as_str().trim_end_matches('/')));
    let issued = harness.issued_tokens();
    for member in ["person_token", "auth_token"] {
        let token = cached[member]["token"].as_str().unwrap();
        assert!(issued.iter().any(|issued| issued == token), "{member}");
        assert!(cached[member]["expires_at"].as_u64().unwrap() > aauth_harness::now() + 3000, "{member}");
    }
    // Every file in the folder is private, and none is left over from writing (beside the
    // files is `.created`, where signature times are claimed).
    for entry in std::fs::read_dir(path.parent().unwrap()).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            assert_eq!(path.file_name().unwrap(), ".created");
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o700);
            continue;
        }
        assert_eq!(path.extension().and_then(|extension| extension.to_str()), Some("json"), "{}", path.display());
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600, "{}", path.display());
    }
}

/// A person who approved once is not asked again by the next process while the auth
/// token lasts.
#[tokio::test]
async fn a_later_process_does_not_ask_the_person_again() {
    let harness = Harness::start().await;
    harness.set(|scenario| scenario.consent = Consent::Interaction);
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let (callback, mut interactions) = on_interaction_channel();
    let first = builder(&harness, key.clone(), dir.path()).on_interaction(callback).build().unwrap();
    let request = first.http_client().get(data_url(&harness)).send();
    let person = async {
        let (url, code) = interactions.recv().await.unwrap();
        harness.wait_for_ps_polls(1).await;
        person_decides(&url, &code, "approve").await;
    };
    let (response, ()) = tokio::join!(request, person);
    assert_eq!(response.unwrap().status(), 200);
    assert_eq!(harness.count("ps.interaction_decision"), 1);

    let (callback, mut interactions) = on_interaction_channel();
    let second = builder(&harness, key, dir.path()).on_interaction(callback).build().unwrap();
    let response = second.http_client().get(data_url(&harness)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(interactions.try_recv().is_err(), "the person was asked again");
    assert_eq!((harness.count("ps.auth_token"), harness.count("ps.interaction_decision")), (1, 1));
    assert_eq!(harness.count("resource.auth_token"), 2);
}

/// An auth token in the cache that is no longer fresh (within 60 s of its expiry) is not
/// presented: the later process presents the cached person token and exchanges a new
/// resource token. A short-lived auth token is not kept for later processes at all.
#[tokio::test]
async fn a_cached_auth_token_near_its_expiry_is_not_used() {
    let harness = Harness::start().await;
    let dir = tempfile::tempdir().unwrap();
    let key = AgentKey::generate();
    let first = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&first, &harness).await;
    let path = first.resource_token_cache_file(&data_url(&harness)).unwrap();

    // The cached auth token said to be usable for 30 s more only (as an `expires_in` of 90
    // an hour ago would leave it): too close to its expiry to be presented.
    let mut cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    cached["auth_token"]["expires_at"] = serde_json::json!(aauth_harness::now() + 30);
    std::fs::write(&path, cached.to_string()).unwrap();
    // The person server now issues auth tokens that are stale as soon as they arrive.
    harness.set(|scenario| scenario.auth_token_lifetime = 30);
    let before = harness.counts();
    let second = builder(&harness, key.clone(), dir.path()).build().unwrap();
    dance(&second, &harness).await;
    // A new process reads the person server's metadata once.
    let expected = [
        ("ps.auth_token", 1),
        ("ps.metadata", 1),
        ("resource.auth_token", 1),
        ("resource.person_token", 1),
        // The request with the person token, the auth token request, the retry.
        ("verified", 3),
    ];
    assert_eq!(growth(&before, &harness.counts()), steps(&expected));

    // The 30 s auth token was used once, and not kept: the next process starts from the
    // person token again.
    let cached: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert!(cached.get("auth_token").is_none(), "{cached}");
    let before = harness.counts();
    let third = builder(&harness, key, dir.path()).build().unwrap();
    dance(&third, &harness).await;
    assert_eq!(growth(&before, &harness.counts()), steps(&expected));
    assert_eq!(harness.count("ps.person_token"), 1);
}

/// A cache file that is another agent's, or whose tokens are bound to another key, is
/// ignored: the client goes through the dance again (no token is presented that the
/// resource would refuse), and replaces the file with its own tokens.
#[tokio::test]
async fn foreign_or_tampered_cache_entries_are_ignored() {
    let harness = Harness::start().await;
    let (dir, other_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (key, other_key) = (AgentKey::generate(), AgentKey::generate());
    let ours = builder(&harness, key.clone(), dir.path()).build().unwrap();
    let theirs = builder(&harness, other_key, other_dir.path()).build().unwrap();
    dance(&ours, &harness).await;
    dance(&theirs, &harness).await;
    let path = ours.resource_token_cache_file(&data_url(&harness)).unwrap();
    let their_path = theirs.resource_token_cache_file(&data_url(&harness)).unwrap();
    let read = |path: &Path| serde_json::from_slice::<serde_json::Value>(&std::fs::read(path).unwrap()).unwrap();
    let write = |path: &Path, value: &serde_json::Value| std::fs::write(path, value.to_string()).unwrap();

    // Their whole file in our file's place: another key's tokens, by its own account.
    // Their tokens under our name: bound to their key all the same.
    let mut tampered = read(&path);
    for member in ["person_token", "auth_token"] {
        tampered[member] = read(&their_path)[member].clone();
    }
    for planted in [read(&their_path), tampered] {
        write(&path, &planted);
        let before = harness.counts();
        let again = builder(&harness, key.clone(), dir.path()).build().unwrap();
        dance(&again, &harness).await;
        let grown = growth(&before, &harness.counts());
        let expected = [
            ("ps.auth_token", 1),
            ("ps.metadata", 1),
            ("ps.person_token", 1),
            ("resource.agent_token", 1),
            ("resource.auth_token", 1),
            ("resource.person_token", 1),
            ("verified", 5),
        ];
        assert_eq!(grown, steps(&expected));
        // Replaced by tokens bound to our key.
        let replaced = read(&path);
        assert_eq!(replaced["thumbprint"].as_str(), Some(key.thumbprint().as_str()));
        for member in ["person_token", "auth_token"] {
            let token = replaced[member]["token"].as_str().unwrap();
            let kind = if member == "auth_token" { TokenKind::Auth } else { TokenKind::Person };
            let jwt = aauth_client::Jwt::decode(token, kind).unwrap();
            jwt.check_bound_to(&key).unwrap();
        }
    }
}
