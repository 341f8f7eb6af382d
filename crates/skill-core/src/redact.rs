//! URLs as every skill shows them, in errors, logs, skill descriptions, `Debug` output and
//! `config show`: a URL may carry credentials in its user info (`https://user:password@host/`)
//! or in its query (`?api_key=…`), and neither may reach a message.
//!
//! [`url`] is the one rule: no user info, no fragment, and each query value replaced
//! by `REDACTED` (the names are kept, as they say which parameter was sent; a query
//! member without `=` may itself be a token, so it becomes `REDACTED` whole). The path is
//! kept: it says which document or operation is meant.
//!
//! ```
//! use skill_core::redact;
//!
//! assert_eq!(redact::url_text("https://me:pw@api.example.com/v1?key=s3cret"), "https://api.example.com/v1?key=REDACTED");
//! ```

use serde_json::Value;
use sha2::{Digest as _, Sha256};
use url::Url;

/// What replaces a value that may not be shown (a query value, a header's, a variable's).
pub const REDACTED: &str = "REDACTED";

/// `url` as it may be shown: see the module doc.
pub fn url(url: &Url) -> Url {
    let mut shown = url.clone();
    // Both fail only for URLs that cannot have user info (`mailto:`), which have none.
    let _ = shown.set_username("");
    let _ = shown.set_password(None);
    shown.set_fragment(None);
    let query = url.query().filter(|query| !query.is_empty()).map(redacted_query);
    shown.set_query(query.as_deref());
    shown
}

/// A URL as written (a config value, a `Location` header, a server URL from a document),
/// which may not parse, shown without its fragment: as written when it has no user info and
/// no query, else as [`url`] shows it when it parses; otherwise the text with what stands where
/// user info would (up to an `@` in the authority) removed and the query redacted alike.
pub fn url_text(text: &str) -> String {
    let text = text.split_once('#').map_or(text, |(text, _fragment)| text);
    if let Ok(url) = Url::parse(text) {
        if url.username().is_empty() && url.password().is_none() && url.query().is_none() {
            return text.to_owned();
        }
        return self::url(&url).to_string();
    }
    let (before_query, query) = match text.split_once('?') {
        Some((before, query)) => (before, Some(query)),
        None => (text, None),
    };
    // `scheme:`, then any slashes, then the authority (`http:user@host` parses as `http://user@host`).
    let scheme_end = match before_query.find(':') {
        Some(colon) if crate::secret::scheme_of(before_query).is_some() => colon + 1,
        _ => 0,
    };
    let rest = &before_query[scheme_end..];
    let after_slashes = rest.trim_start_matches(['/', '\\']);
    let has_authority = scheme_end > 0 || rest.len() - after_slashes.len() >= 2;
    let mut shown = before_query.to_owned();
    if has_authority {
        let authority_end = after_slashes.find(['/', '\\']).unwrap_or(after_slashes.len());
        if let Some(at) = after_slashes[..authority_end].rfind('@') {
            let kept = before_query.len() - after_slashes.len();
            shown = format!("{}{}", &before_query[..kept], &after_slashes[at + 1..]);
        }
    }
    if let Some(query) = query.filter(|query| !query.is_empty()) {
        shown.push('?');
        shown.push_str(&redacted_query(query));
    }
    shown
}

/// `value`'s digest, as an audit records arguments without showing them: `sha256:` and
/// the hex SHA-256 of its canonical JSON (object members sorted by key, no space), so
/// that equal arguments have one digest whatever order their members came in.
pub fn digest(value: &Value) -> String {
    let mut canonical = Vec::new();
    crate::trust::write_canonical(value, &mut canonical);
    format!("sha256:{}", crate::trust::hex(&Sha256::digest(&canonical)))
}

/// Whether an object key names a secret (`token`, `api_key`, `Authorization`,
/// `client_secret`, `password`, ...): its value is not shown where arguments are.
pub fn is_secret_key(key: &str) -> bool {
    const WORDS: [&str; 11] = [
        "token",
        "secret",
        "password",
        "passwd",
        "passphrase",
        "apikey",
        "authorization",
        "credential",
        "privatekey",
        "cookie",
        "signature",
    ];
    let folded: String = key.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect();
    WORDS.iter().any(|word| folded.contains(word))
}

/// `value` with the value of every object member whose key [names a
/// secret](is_secret_key) replaced by `REDACTED`, at any depth.
pub fn secret_keys(value: &Value) -> Value {
    match value {
        Value::Object(members) => Value::Object(
            members
                .iter()
                .map(|(key, member)| {
                    let shown =
                        if is_secret_key(key) { Value::String(REDACTED.to_owned()) } else { secret_keys(member) };
                    (key.clone(), shown)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(secret_keys).collect()),
        other => other.clone(),
    }
}

/// A query with each value replaced by `REDACTED`.
fn redacted_query(query: &str) -> String {
    query
        .split('&')
        .map(|member| match member.split_once('=') {
            Some((name, _)) => format!("{name}={REDACTED}"),
            None if member.is_empty() => String::new(),
            None => REDACTED.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(text: &str) -> String {
        url(&Url::parse(text).unwrap()).to_string()
    }

    #[test]
    fn user_info_fragments_and_query_values_are_never_shown() {
        assert_eq!(
            shown("https://user:pw@host:8443/specs/api.json?key=s3cret#/a"),
            "https://host:8443/specs/api.json?key=REDACTED"
        );
        assert_eq!(
            shown("http://token@host/a?x=1&flag&y=&z=a=b"),
            "http://host/a?x=REDACTED&REDACTED&y=REDACTED&z=REDACTED"
        );
        assert_eq!(shown("http://host/a?"), "http://host/a");
        assert_eq!(shown("http://host/plain.yaml"), "http://host/plain.yaml");
    }

    #[test]
    fn digests_ignore_member_order_and_secret_keys_are_redacted() {
        let a = serde_json::json!({"b": 1, "a": {"y": [1, "x"], "x": null}});
        let b = serde_json::json!({"a": {"x": null, "y": [1, "x"]}, "b": 1});
        assert_eq!(digest(&a), digest(&b));
        // sha256 of `{"a":{"x":null,"y":[1,"x"]},"b":1}`.
        assert_eq!(digest(&a), "sha256:07a4c1f8224e8bb7a349722dae0bf17479db3d1b8daee8f96bbe5c776b96be90");
        let arguments = serde_json::json!({
            "key": "city", "api_key": "k", "nested": [{"Authorization": "Bearer t", "X-Api-Key": "k2"}],
            "client_secret": "s", "access_token": "t", "tokens_used": 3, "note": "a token"
        });
        assert_eq!(
            secret_keys(&arguments),
            serde_json::json!({
                "key": "city", "api_key": "REDACTED", "nested": [{"Authorization": "REDACTED", "X-Api-Key": "REDACTED"}],
                "client_secret": "REDACTED", "access_token": "REDACTED", "tokens_used": "REDACTED", "note": "a token"
            })
        );
    }

    #[test]
    fn text_that_does_not_parse_is_redacted_alike() {
        assert_eq!(url_text("https://user:pw@host/x?key=s3cret"), "https://host/x?key=REDACTED");
        // Not URLs: an invalid port, a bracket never closed.
        assert_eq!(url_text("https://user:pw@host:99999/x?key=s3cret#f"), "https://host:99999/x?key=REDACTED");
        assert_eq!(url_text("http://a:b@[::1/api.yaml?t=1"), "http://[::1/api.yaml?t=REDACTED");
        // An `@` in the path is no user info.
        assert_eq!(url_text("http://host:x/users/@me"), "http://host:x/users/@me");
        assert_eq!(url_text("http:user:pw@host:99999/x"), "http:host:99999/x");
        assert_eq!(url_text("//user:pw@host:99999/x"), "//host:99999/x");
        // Without user info or query, a URL is shown as written.
        assert_eq!(url_text("/v1/{region}"), "/v1/{region}");
        assert_eq!(url_text("https://{region}.Example.com#top"), "https://{region}.Example.com");
        assert_eq!(url_text("http:user:pw@host/x"), "http://host/x");
    }
}
