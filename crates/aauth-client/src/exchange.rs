//! Bounds on the client's own exchanges: fetching metadata, enrolling and refreshing,
//! asking for person and auth tokens, and reading pending answers.
//!
//! - Every connection has a connect timeout ([`CONNECT_TIMEOUT`], 10 s).
//! - Each of the client's own requests (metadata, bootstrap and refresh, person and auth
//!   token requests) must be answered, body included, within the exchange timeout (30 s
//!   by default, [`AAuthClientBuilder::exchange_timeout`](crate::AAuthClientBuilder::exchange_timeout)).
//!   The caller's requests, and the polling of a pending request, have no timeout of the
//!   client's: the caller bounds them, and dropping the request stops the polling.
//! - The client reads at most [`MAX_BODY`] (1 MiB) of any answer it reads itself; the
//!   caller's responses are handed over unread.

use std::time::Duration;

use reqwest::Response;
use url::Url;

use crate::Error;
use crate::error::{Step, url_for_errors};

/// How long a connection may take to open.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one of the client's own exchanges may take, by default.
pub(crate) const DEFAULT_EXCHANGE_TIMEOUT: Duration = Duration::from_secs(30);
/// The most the client reads of an answer it reads itself, in bytes.
pub(crate) const MAX_BODY: usize = 1024 * 1024;

/// The body of `response`, at most [`MAX_BODY`] bytes ([`Error::ResponseTooLarge`] beyond).
pub(crate) async fn read_body(step: Step, url: &Url, response: Response) -> Result<Vec<u8>, Error> {
    read_at_most(step, url, response, MAX_BODY).await
}

async fn read_at_most(step: Step, url: &Url, mut response: Response, limit: usize) -> Result<Vec<u8>, Error> {
    let too_large = || Error::ResponseTooLarge { step, url: url_for_errors(url), limit };
    if response.content_length().is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|source| Error::http(step, url, source))? {
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// The body of an error answer, for its problem details: at most [`MAX_BODY`] bytes, and
/// empty when it cannot be read or is larger (the status alone then tells the error).
pub(crate) async fn read_error_body(response: Response) -> Vec<u8> {
    let url = response.url().clone();
    read_at_most(Step::Request, &url, response, MAX_BODY).await.unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn response(body: reqwest::Body) -> Response {
        Response::from(http::Response::builder().status(200).body(body).unwrap())
    }

    fn url() -> Url {
        Url::parse("https://user:pw@ap.example/.well-known/aauth-agent.json?x=1").unwrap()
    }

    #[tokio::test]
    async fn bodies_are_read_up_to_the_limit() {
        let body = read_at_most(Step::AgentMetadata, &url(), response("12345".into()), 5).await.unwrap();
        assert_eq!(body, b"12345");
        let error = read_at_most(Step::AgentMetadata, &url(), response("123456".into()), 5).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "fetching the agent provider metadata: https://ap.example/.well-known/aauth-agent.json answered with more than 5 bytes"
        );
        // Without a length announced, reading stops at the limit.
        let chunks = futures_util::stream::iter(["123", "456"].map(Ok::<_, std::io::Error>));
        let error = read_at_most(Step::AgentMetadata, &url(), response(reqwest::Body::wrap_stream(chunks)), 5)
            .await
            .unwrap_err();
        assert!(matches!(error, Error::ResponseTooLarge { limit: 5, .. }), "{error:?}");
    }

    #[tokio::test]
    async fn error_bodies_too_large_are_dropped() {
        assert_eq!(read_error_body(response("{}".into())).await, b"{}");
        assert!(read_error_body(response(vec![b' '; MAX_BODY + 1].into())).await.is_empty());
    }
}
