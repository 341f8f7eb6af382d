//! Deferred responses (protocol draft, "Deferred Responses"): reading a `202`'s `Location`
//! and `Retry-After`, the polling interval, and the problem details of terminal answers.

use std::time::Duration;

use reqwest::header::{HeaderMap, LOCATION, RETRY_AFTER};
use serde::Deserialize;
use url::{Host, Url};

use crate::Error;
use crate::error::url_for_errors;

/// The polling interval when a `202` has no `Retry-After`.
pub(crate) const DEFAULT_RETRY_AFTER: Duration = Duration::from_secs(5);
/// What each `429` (`slow_down`) adds to the interval.
pub(crate) const SLOW_DOWN: Duration = Duration::from_secs(5);
/// The longest wait between two polls, whatever the server says: an hour. A server that
/// wants the agent to come back later than that gets polled sooner; one that sends a
/// `Retry-After` beyond reason (`18446744073709551615`) neither overflows the arithmetic
/// nor parks the request for ever.
pub(crate) const MAX_POLL_INTERVAL: Duration = Duration::from_secs(3600);

/// When to poll next: the server's `Retry-After` (5 s without one), plus 5 s for every
/// `429 slow_down` so far (linear backoff, as RFC 8628 §3.5), at most
/// [`MAX_POLL_INTERVAL`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PollSchedule {
    base: Duration,
    slow_down: Duration,
}

impl PollSchedule {
    /// The schedule after the first `202`.
    pub(crate) fn new(retry_after: Option<Duration>) -> Self {
        Self { base: retry_after.unwrap_or(DEFAULT_RETRY_AFTER), slow_down: Duration::ZERO }
    }

    /// Another pending answer (`202`, or `503` with its own `Retry-After`).
    pub(crate) fn pending(&mut self, retry_after: Option<Duration>) {
        self.base = retry_after.unwrap_or(DEFAULT_RETRY_AFTER);
    }

    /// A `429`: slow down by 5 s more, and follow its `Retry-After` when it has one.
    pub(crate) fn slow_down(&mut self, retry_after: Option<Duration>) {
        self.slow_down = self.slow_down.saturating_add(SLOW_DOWN).min(MAX_POLL_INTERVAL);
        if let Some(retry_after) = retry_after {
            self.base = retry_after;
        }
    }

    /// How long to wait before the next poll: at most [`MAX_POLL_INTERVAL`].
    pub(crate) fn delay(&self) -> Duration {
        self.base.saturating_add(self.slow_down).min(MAX_POLL_INTERVAL)
    }
}

/// `Retry-After` as delay-seconds; an HTTP date or garbage counts as absent.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    value.parse::<u64>().ok().map(Duration::from_secs)
}

/// The pending URL of a `202` to `request_url`: `Location`, resolved against the request
/// URL, which must stay on the same origin (protocol draft, "Pending Response").
pub(crate) fn pending_location(request_url: &Url, headers: &HeaderMap) -> Result<Url, Error> {
    let invalid = |reason: String| Error::PendingLocation { url: url_for_errors(request_url), reason };
    let Some(location) = headers.get(LOCATION) else {
        return Err(invalid("the 202 has no Location header".to_owned()));
    };
    let location = location.to_str().map_err(|_| invalid("Location is not visible ASCII".to_owned()))?;
    let resolved = request_url.join(location).map_err(|error| invalid(format!("Location `{location}`: {error}")))?;
    if resolved.origin() != request_url.origin() {
        return Err(invalid(format!("Location `{}` is not on the origin of the request", url_for_errors(&resolved))));
    }
    Ok(resolved)
}

/// Checks an interaction URL before it goes to the person: `https`, no query or fragment
/// (protocol draft, "Interaction Required"); `http` on a loopback address when allowed.
pub(crate) fn check_interaction_url(
    request_url: &Url,
    interaction_url: &Url,
    allow_http_loopback: bool,
) -> Result<(), Error> {
    let invalid = |reason: &'static str| Error::InvalidInteractionUrl {
        url: url_for_errors(request_url),
        interaction_url: url_for_errors(interaction_url),
        reason,
    };
    let loopback = match interaction_url.host() {
        Some(Host::Ipv4(address)) => address == std::net::Ipv4Addr::LOCALHOST,
        Some(Host::Ipv6(address)) => address == std::net::Ipv6Addr::LOCALHOST,
        _ => false,
    };
    match interaction_url.scheme() {
        "https" => {}
        "http" if allow_http_loopback && loopback => {}
        _ => return Err(invalid("it is not https")),
    }
    if interaction_url.query().is_some() || interaction_url.fragment().is_some() {
        return Err(invalid("it has a query or fragment"));
    }
    Ok(())
}

/// The `error` and `detail` members of an `application/problem+json` body (RFC 9457, as
/// the draft's "Error Response Format" uses it), with control characters removed so a
/// server's text cannot rewrite the terminal it is shown on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Problem {
    pub(crate) error: Option<String>,
    pub(crate) detail: Option<String>,
    /// `mission_terminated`'s reason (`expired`, `revoked`, …).
    pub(crate) termination_reason: Option<String>,
}

impl Problem {
    pub(crate) fn from_body(body: &[u8]) -> Self {
        #[derive(Deserialize)]
        struct Raw {
            error: Option<String>,
            detail: Option<String>,
            termination_reason: Option<String>,
        }
        let Ok(raw) = serde_json::from_slice::<Raw>(body) else { return Self::default() };
        Self {
            error: raw.error.map(|text| printable(&text, 64)),
            detail: raw.detail.map(|text| printable(&text, 300)),
            termination_reason: raw.termination_reason.map(|text| printable(&text, 64)),
        }
    }
}

/// `text` without control characters, cut to `limit` characters.
pub(crate) fn printable(text: &str, limit: usize) -> String {
    let mut out: String = text.chars().map(|c| if c.is_control() { ' ' } else { c }).take(limit).collect();
    if text.chars().count() > limit {
        out.push('…');
    }
    out
}

/// The body of a `202 requirement=clarification`.
#[derive(Debug, Deserialize)]
pub(crate) struct ClarificationBody {
    pub(crate) clarification: String,
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(reqwest::header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn schedule_follows_retry_after_and_adds_five_seconds_per_slow_down() {
        let mut schedule = PollSchedule::new(None);
        assert_eq!(schedule.delay(), Duration::from_secs(5));
        schedule.pending(Some(Duration::ZERO));
        assert_eq!(schedule.delay(), Duration::ZERO);
        schedule.slow_down(None);
        assert_eq!(schedule.delay(), Duration::from_secs(5));
        schedule.slow_down(Some(Duration::from_secs(2)));
        assert_eq!(schedule.delay(), Duration::from_secs(12));
        // The slow-down stays for the rest of the polling, whatever Retry-After says.
        schedule.pending(Some(Duration::from_secs(1)));
        assert_eq!(schedule.delay(), Duration::from_secs(11));
        schedule.pending(None);
        assert_eq!(schedule.delay(), Duration::from_secs(15));
        assert_eq!(PollSchedule::new(Some(Duration::from_secs(30))).delay(), Duration::from_secs(30));
    }

    /// `Retry-After: 18446744073709551615`, alone or with slow-downs on top, neither
    /// overflows nor waits longer than an hour.
    #[test]
    fn huge_retry_after_is_capped_at_an_hour() {
        let huge = retry_after(&headers(&[(RETRY_AFTER, "18446744073709551615")]));
        assert_eq!(huge, Some(Duration::from_secs(u64::MAX)));
        let mut schedule = PollSchedule::new(huge);
        assert_eq!(schedule.delay(), MAX_POLL_INTERVAL);
        schedule.slow_down(huge);
        assert_eq!(schedule.delay(), MAX_POLL_INTERVAL);
        schedule.pending(huge);
        for _ in 0..1000 {
            schedule.slow_down(None);
        }
        assert_eq!(schedule.delay(), MAX_POLL_INTERVAL);
        // The slow-downs alone are capped too, and a sane Retry-After after them is kept.
        let mut schedule = PollSchedule::new(Some(Duration::ZERO));
        for _ in 0..1000 {
            schedule.slow_down(None);
        }
        assert_eq!(schedule.delay(), MAX_POLL_INTERVAL);
        assert_eq!(MAX_POLL_INTERVAL, Duration::from_secs(3600));
    }

    #[test]
    fn retry_after_in_seconds_only() {
        assert_eq!(retry_after(&headers(&[(RETRY_AFTER, "0")])), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers(&[(RETRY_AFTER, " 7 ")])), Some(Duration::from_secs(7)));
        assert_eq!(retry_after(&headers(&[(RETRY_AFTER, "Wed, 21 Oct 2015 07:28:00 GMT")])), None);
        assert_eq!(retry_after(&headers(&[(RETRY_AFTER, "-1")])), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn location_resolves_and_stays_on_the_origin() {
        let request = Url::parse("https://r.example/api/items?x=1").unwrap();
        let at = |value: &str| pending_location(&request, &headers(&[(LOCATION, value)]));
        assert_eq!(at("/pending/abc").unwrap().as_str(), "https://r.example/pending/abc");
        assert_eq!(at("pending/abc").unwrap().as_str(), "https://r.example/api/pending/abc");
        assert_eq!(at("https://r.example/p/1").unwrap().as_str(), "https://r.example/p/1");
        for value in ["https://other.example/p/1", "http://r.example/p/1", "https://r.example:8443/p"] {
            let error = at(value).unwrap_err().to_string();
            assert!(error.contains("not on the origin"), "{value}: {error}");
        }
        let error = pending_location(&request, &HeaderMap::new()).unwrap_err().to_string();
        assert_eq!(
            error,
            "https://r.example/api/items: a 202 pending response without a usable Location: the 202 has no Location header"
        );
    }

    #[test]
    fn interaction_urls_are_https_without_query() {
        let request = Url::parse("https://r.example/x").unwrap();
        let check = |text: &str, loopback| check_interaction_url(&request, &Url::parse(text).unwrap(), loopback);
        check("https://ps.example/interact", false).unwrap();
        check("http://127.0.0.1:9/interact", true).unwrap();
        assert!(check("http://127.0.0.1:9/interact", false).is_err());
        assert!(check("http://ps.example/interact", true).is_err());
        assert!(check("https://ps.example/interact?code=1", false).unwrap_err().to_string().contains("query"));
        assert!(check("javascript:alert(1)", true).is_err());
    }

    #[test]
    fn problem_details_are_read_and_made_printable() {
        let problem = Problem::from_body(br#"{"error":"denied","detail":"The user\u001b[31m declined."}"#);
        assert_eq!(problem.error.as_deref(), Some("denied"));
        assert_eq!(problem.detail.as_deref(), Some("The user [31m declined."));
        assert_eq!(Problem::from_body(b"<html>"), Problem::default());
        assert_eq!(printable(&"a".repeat(10), 4), "aaaa…");
    }
}
