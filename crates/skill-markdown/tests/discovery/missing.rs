//! What a `Missing` says about the requirements a skill lacks.

use super::*;

#[test]
fn missing_explains_itself() {
    let secret_only = Missing { secrets: strings(&["TOKEN"]), ..Missing::default() };
    assert_eq!(secret_only.reason(), "missing secret TOKEN");
    assert!(!secret_only.is_empty());
    let everything = Missing {
        bins: strings(&["jq", "gh"]),
        any_bins: strings(&["claude", "codex"]),
        env: strings(&["UNSET"]),
        os: strings(&["darwin"]),
        secrets: strings(&["TOKEN", "WEBHOOK_URL"]),
    };
    assert_eq!(
        everything.reason(),
        "missing bins jq, gh; missing any of bins claude, codex; missing env UNSET; runs only on darwin; \
         missing secret TOKEN; missing secret WEBHOOK_URL"
    );
    assert_eq!(Missing::default().reason(), "");
    assert!(Missing::default().is_empty());
}
