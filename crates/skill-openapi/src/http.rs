//! What the crate's two HTTP clients (the one fetching documents and the plain one for
//! calls) share: the TLS crypto provider, the `User-Agent`, and how a reqwest error or a
//! status becomes text.

/// The `User-Agent` of both clients: this crate and its version.
pub(crate) const USER_AGENT: &str = concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION"));

/// rustls needs one crypto provider per process; `ring` is the one this crate builds
/// with. A provider installed earlier (by the host) is kept.
pub(crate) fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Why a request failed: reqwest's message without its URL (whose user info or query may
/// hold a credential; callers name the URL themselves, redacted), then each cause's
/// message, outermost first, each once (a cause often repeats its own cause's text).
pub(crate) fn reqwest_reason(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut messages = vec![error.to_string()];
    let mut cause = std::error::Error::source(&error);
    while let Some(error) = cause {
        let message = error.to_string();
        if !messages.iter().any(|earlier| earlier.contains(&message)) {
            messages.push(message);
        }
        cause = error.source();
    }
    messages.join(": ")
}

/// An HTTP status with its reason phrase, such as `404 Not Found`.
pub(crate) fn status_text(status: u16) -> String {
    match reqwest::StatusCode::from_u16(status).ok().and_then(|status| status.canonical_reason()) {
        Some(reason) => format!("{status} {reason}"),
        None => status.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_carry_their_reason_phrase() {
        assert_eq!(status_text(404), "404 Not Found");
        assert_eq!(status_text(308), "308 Permanent Redirect");
        assert_eq!(status_text(599), "599");
    }

    #[tokio::test]
    async fn a_reqwest_error_names_its_causes_once_and_never_its_url() {
        install_crypto_provider();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let client = reqwest::Client::builder().user_agent(USER_AGENT).build().unwrap();
        let url = format!("http://user:pw@127.0.0.1:{port}/spec.json?key=s3cret");
        let error = client.get(&url).send().await.unwrap_err();
        let reason = reqwest_reason(error);
        assert!(!reason.contains("s3cret") && !reason.contains("pw@"), "{reason}");
        assert!(reason.to_ascii_lowercase().contains("refused"), "{reason}");
        let parts: Vec<&str> = reason.split(": ").collect();
        for (index, part) in parts.iter().enumerate() {
            assert!(!parts[..index].iter().any(|earlier| earlier.contains(part)), "{part} repeats in {reason}");
        }
    }
}
