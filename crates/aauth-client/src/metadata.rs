//! Server identifiers and the metadata documents at `/.well-known/aauth-agent.json` and
//! `/.well-known/aauth-person.json`.
//!
//! A server identifier is `https://host`: no port, path, query or fragment (protocol draft,
//! "Server Identifiers"). For local testing, `allow_http_loopback` also accepts `http` and a
//! port, for the loopback addresses `127.0.0.1` and `[::1]` only. A metadata document's
//! `issuer` must equal the identifier it was fetched from, byte for byte.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;
use url::{Host, Url};

use crate::error::{Step, url_for_errors};
use crate::{Error, exchange};

/// The agent provider's metadata document.
pub(crate) const AGENT_METADATA: &str = "aauth-agent.json";
/// The person server's metadata document.
pub(crate) const PERSON_METADATA: &str = "aauth-person.json";
/// A resource's metadata document, which resource tokens name in `dwk`.
pub(crate) const RESOURCE_METADATA: &str = "aauth-resource.json";

/// Which server a URL or document belongs to, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// The agent provider, which issues agent tokens.
    AgentProvider,
    /// The person server, which issues person and auth tokens.
    PersonServer,
    /// The resource the agent calls.
    Resource,
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::AgentProvider => "agent provider",
            Self::PersonServer => "person server",
            Self::Resource => "resource",
        })
    }
}

/// A checked server identifier: `https://host`, or with `allow_http_loopback`
/// `http(s)://127.0.0.1[:port]` / `http(s)://[::1][:port]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct ServerId {
    /// The identifier as issuers write it (the URL's origin, no trailing slash).
    text: String,
}

impl ServerId {
    /// Checks that `url` is a server identifier (a trailing `/` path, as `Url` always
    /// writes one, is allowed).
    pub(crate) fn parse(role: Role, url: &Url, allow_http_loopback: bool) -> Result<Self, Error> {
        let invalid = |reason: &'static str| Error::InvalidServerIdentifier { role, url: url_for_errors(url), reason };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(invalid("it carries credentials"));
        }
        if url.query().is_some() || url.fragment().is_some() {
            return Err(invalid("it has a query or fragment"));
        }
        if !matches!(url.path(), "" | "/") {
            return Err(invalid("it has a path; a server identifier is scheme and host only"));
        }
        Self::from_origin(role, url, allow_http_loopback)
    }

    /// The identifier of the server that serves `url` (its origin), checked by the same
    /// rules; the path and query of `url` do not matter.
    pub(crate) fn of(role: Role, url: &Url, allow_http_loopback: bool) -> Result<Self, Error> {
        Self::from_origin(role, url, allow_http_loopback)
    }

    fn from_origin(role: Role, url: &Url, allow_http_loopback: bool) -> Result<Self, Error> {
        let invalid = |reason: &'static str| Error::InvalidServerIdentifier { role, url: origin_text(url), reason };
        let loopback = allow_http_loopback && is_loopback(url);
        match url.scheme() {
            "https" => {}
            "http" if loopback => {}
            "http" => {
                return Err(invalid(if allow_http_loopback {
                    "it is http: only 127.0.0.1 and [::1] may use http (allow_http_loopback)"
                } else {
                    "it is not https (allow_http_loopback permits http on 127.0.0.1 and [::1])"
                }));
            }
            _ => return Err(invalid("it is not https")),
        }
        if url.host().is_none() {
            return Err(invalid("it has no host"));
        }
        if url.port().is_some() && !loopback {
            return Err(invalid("it has a port; a server identifier is scheme and host only"));
        }
        Ok(Self { text: origin_text(url) })
    }

    /// The identifier, e.g. `https://ps.example`.
    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    /// The identifier as a URL (with the `/` path `Url` always has).
    pub(crate) fn url(&self) -> Url {
        Url::parse(&self.text).expect("a checked server identifier is a URL")
    }

    /// Where the identifier's `document` lives: `{identifier}/.well-known/{document}`.
    pub(crate) fn well_known(&self, document: &str) -> Url {
        Url::parse(&format!("{}/.well-known/{document}", self.text)).expect("a checked server identifier is a URL")
    }
}

impl fmt::Display for ServerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

fn origin_text(url: &Url) -> String {
    url.origin().ascii_serialization()
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(Host::Ipv4(address)) => address == std::net::Ipv4Addr::LOCALHOST,
        Some(Host::Ipv6(address)) => address == std::net::Ipv6Addr::LOCALHOST,
        _ => false,
    }
}

/// Checks an endpoint URL from a metadata document: `https` (or loopback `http` when
/// allowed), no credentials, no query and no fragment (protocol draft, "Endpoint URLs").
pub(crate) fn endpoint(role: Role, field: &'static str, value: &str, allow_http_loopback: bool) -> Result<Url, Error> {
    let parsed = Url::parse(value);
    let shown = parsed.as_ref().map_or_else(|_| value.to_owned(), url_for_errors);
    let invalid = |reason: &'static str| Error::InvalidEndpoint { role, field, value: shown.clone(), reason };
    let url = parsed.map_err(|_| invalid("it is not an absolute URL"))?;
    if !url.username().is_empty() || url.password().is_some() {
        return Err(invalid("it carries credentials"));
    }
    match url.scheme() {
        "https" => {}
        "http" if allow_http_loopback && is_loopback(&url) => {}
        _ => return Err(invalid("it is not https")),
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(invalid("it has a query or fragment"));
    }
    Ok(url)
}

/// The agent provider's metadata, with the enrollment endpoints of the bootstrap note's
/// first revision, which a provider may still list (bootstrap -01 removed them: each
/// provider defines its own, which the agent is configured with).
#[derive(Debug, Clone)]
pub(crate) struct AgentProviderMetadata {
    /// Where a new agent gets its first agent token, when the provider lists it.
    pub(crate) bootstrap_endpoint: Option<Url>,
    /// Where an enrolled agent renews its agent token, when the provider offers it.
    pub(crate) refresh_endpoint: Option<Url>,
}

/// The person server's metadata.
#[derive(Debug, Clone)]
pub(crate) struct PersonServerMetadata {
    /// Where the agent asks for a person token for a resource.
    pub(crate) person_token_endpoint: Url,
    /// Where the agent exchanges a resource token for an auth token.
    pub(crate) auth_token_endpoint: Url,
    /// Where the agent proposes missions (optional in protocol -11).
    pub(crate) mission_endpoint: Option<Url>,
    /// Where the agent relays interactions to the person (optional).
    pub(crate) interaction_endpoint: Option<Url>,
}

#[derive(Deserialize)]
struct RawAgentProviderMetadata {
    issuer: Option<String>,
    bootstrap_endpoint: Option<String>,
    refresh_endpoint: Option<String>,
}

#[derive(Deserialize)]
struct RawPersonServerMetadata {
    issuer: Option<String>,
    person_token_endpoint: Option<String>,
    auth_token_endpoint: Option<String>,
    mission_endpoint: Option<String>,
    interaction_endpoint: Option<String>,
}

/// Fetches the agent provider's `/.well-known/aauth-agent.json`, within `timeout`.
pub(crate) async fn agent_provider(
    http: &reqwest::Client,
    timeout: Duration,
    id: &ServerId,
    allow_http_loopback: bool,
) -> Result<AgentProviderMetadata, Error> {
    let (url, raw): (Url, RawAgentProviderMetadata) =
        fetch(http, timeout, id, AGENT_METADATA, Step::AgentMetadata).await?;
    check_issuer(&url, id, raw.issuer.as_deref())?;
    let role = Role::AgentProvider;
    Ok(AgentProviderMetadata {
        bootstrap_endpoint: raw
            .bootstrap_endpoint
            .map(|value| endpoint(role, "bootstrap_endpoint", &value, allow_http_loopback))
            .transpose()?,
        refresh_endpoint: raw
            .refresh_endpoint
            .map(|value| endpoint(role, "refresh_endpoint", &value, allow_http_loopback))
            .transpose()?,
    })
}

/// Fetches the person server's `/.well-known/aauth-person.json`, within `timeout`.
pub(crate) async fn person_server(
    http: &reqwest::Client,
    timeout: Duration,
    id: &ServerId,
    allow_http_loopback: bool,
) -> Result<PersonServerMetadata, Error> {
    let (url, raw): (Url, RawPersonServerMetadata) =
        fetch(http, timeout, id, PERSON_METADATA, Step::PersonMetadata).await?;
    check_issuer(&url, id, raw.issuer.as_deref())?;
    let role = Role::PersonServer;
    let required = |field: &'static str, value: Option<String>| {
        let value = value.ok_or_else(|| Error::InvalidResponse {
            step: Step::PersonMetadata,
            url: url_for_errors(&url),
            reason: format!("no `{field}`"),
        })?;
        endpoint(role, field, &value, allow_http_loopback)
    };
    Ok(PersonServerMetadata {
        person_token_endpoint: required("person_token_endpoint", raw.person_token_endpoint)?,
        auth_token_endpoint: required("auth_token_endpoint", raw.auth_token_endpoint)?,
        mission_endpoint: raw
            .mission_endpoint
            .map(|value| endpoint(role, "mission_endpoint", &value, allow_http_loopback))
            .transpose()?,
        interaction_endpoint: raw
            .interaction_endpoint
            .map(|value| endpoint(role, "interaction_endpoint", &value, allow_http_loopback))
            .transpose()?,
    })
}

async fn fetch<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    timeout: Duration,
    id: &ServerId,
    document: &str,
    step: Step,
) -> Result<(Url, T), Error> {
    let url = id.well_known(document);
    let response = http
        .get(url.clone())
        .header(reqwest::header::ACCEPT, "application/json")
        .timeout(timeout)
        .send()
        .await
        .map_err(|source| Error::http(step, &url, source))?;
    let status = response.status();
    if !status.is_success() {
        return Err(Error::status(step, &url, status.as_u16(), &exchange::read_error_body(response).await));
    }
    let body = exchange::read_body(step, &url, response).await?;
    let parsed = serde_json::from_slice(&body).map_err(|error| Error::InvalidResponse {
        step,
        url: url_for_errors(&url),
        reason: format!("not a JSON metadata document ({error})"),
    })?;
    Ok((url, parsed))
}

fn check_issuer(url: &Url, id: &ServerId, issuer: Option<&str>) -> Result<(), Error> {
    match issuer {
        None => Err(Error::IssuerMissing { url: url_for_errors(url) }),
        Some(issuer) if issuer == id.as_str() => Ok(()),
        Some(issuer) => Err(Error::IssuerMismatch { url: url_for_errors(url), issuer: issuer.to_owned() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(text: &str, loopback: bool) -> Result<String, String> {
        let url = Url::parse(text).map_err(|error| error.to_string())?;
        ServerId::parse(Role::PersonServer, &url, loopback)
            .map(|id| id.as_str().to_owned())
            .map_err(|error| error.to_string())
    }

    #[test]
    fn https_host_only_identifiers() {
        assert_eq!(id("https://ps.example", false).unwrap(), "https://ps.example");
        assert_eq!(id("https://PS.Example/", false).unwrap(), "https://ps.example");
        assert_eq!(id("https://ps.example:443", false).unwrap(), "https://ps.example");
        assert_eq!(id("https://xn--nxasmq6b.example", false).unwrap(), "https://xn--nxasmq6b.example");
        for (text, reason) in [
            ("http://ps.example", "not https"),
            ("https://ps.example:8443", "has a port"),
            ("https://ps.example/v1", "has a path"),
            ("https://ps.example/?a=1", "query or fragment"),
            ("https://ps.example/#f", "query or fragment"),
            ("https://user@ps.example", "credentials"),
            ("ftp://ps.example", "not https"),
            ("http://127.0.0.1:8080", "allow_http_loopback permits"),
        ] {
            let error = id(text, false).unwrap_err();
            assert!(error.contains(reason), "{text}: {error}");
            assert!(error.starts_with("person server"), "{error}");
        }
    }

    #[test]
    fn loopback_relaxation_is_for_127_0_0_1_and_ipv6_loopback_only() {
        assert_eq!(id("http://127.0.0.1:8080", true).unwrap(), "http://127.0.0.1:8080");
        assert_eq!(id("http://[::1]:9/", true).unwrap(), "http://[::1]:9");
        assert_eq!(id("https://127.0.0.1:8443", true).unwrap(), "https://127.0.0.1:8443");
        for other in ["http://localhost:8080", "http://127.0.0.2:8080", "http://10.0.0.1", "http://[::2]:9"] {
            let origin = other.trim_end_matches('/');
            assert_eq!(
                id(other, true).unwrap_err(),
                format!(
                    "person server `{origin}` is not a valid server identifier: \
                     it is http: only 127.0.0.1 and [::1] may use http (allow_http_loopback)"
                )
            );
        }
        // Other hosts keep the https rules: no port.
        assert!(id("https://ps.example:8443", true).unwrap_err().contains("has a port"));
        assert!(id("https://127.0.0.2:8443", true).unwrap_err().contains("has a port"));
    }

    #[test]
    fn resource_identifier_is_the_origin_of_a_request_url() {
        let url = Url::parse("https://api.example/v1/items?page=2").unwrap();
        assert_eq!(ServerId::of(Role::Resource, &url, false).unwrap().as_str(), "https://api.example");
        let url = Url::parse("http://127.0.0.1:3000/items").unwrap();
        assert_eq!(ServerId::of(Role::Resource, &url, true).unwrap().as_str(), "http://127.0.0.1:3000");
        let error = ServerId::of(Role::Resource, &url, false).unwrap_err().to_string();
        assert_eq!(
            error,
            "resource `http://127.0.0.1:3000` is not a valid server identifier: \
             it is not https (allow_http_loopback permits http on 127.0.0.1 and [::1])"
        );
    }

    #[test]
    fn endpoints_are_https_without_query_or_fragment() {
        let check = |value: &str, loopback| endpoint(Role::PersonServer, "auth_token_endpoint", value, loopback);
        assert_eq!(check("https://ps.example/token", false).unwrap().as_str(), "https://ps.example/token");
        assert_eq!(check("http://127.0.0.1:1/token", true).unwrap().as_str(), "http://127.0.0.1:1/token");
        assert_eq!(check("http://[::1]:8080/v1/token", true).unwrap().as_str(), "http://[::1]:8080/v1/token");
        assert!(check("http://127.0.0.1:1/token", false).unwrap_err().to_string().contains("not https"));
        for (value, reason) in [
            ("http://ps.example/token", "not https"),
            ("https://ps.example/token?x=1", "query or fragment"),
            ("/token", "not an absolute URL"),
            ("https://user:secret@ps.example/token", "carries credentials"),
        ] {
            let error = check(value, false).unwrap_err().to_string();
            assert!(error.contains(reason) && error.contains("auth_token_endpoint"), "{value}: {error}");
            assert!(!error.contains("secret") && !error.contains("x=1"), "{error}");
        }
    }

    #[test]
    fn issuer_must_equal_the_identifier() {
        let id = ServerId::parse(Role::PersonServer, &Url::parse("https://ps.example").unwrap(), false).unwrap();
        let url = id.well_known(PERSON_METADATA);
        assert_eq!(url.as_str(), "https://ps.example/.well-known/aauth-person.json");
        check_issuer(&url, &id, Some("https://ps.example")).unwrap();
        assert!(matches!(check_issuer(&url, &id, None), Err(Error::IssuerMissing { .. })));
        for issuer in ["https://ps.example/", "https://PS.example", "https://evil.example"] {
            assert!(matches!(check_issuer(&url, &id, Some(issuer)), Err(Error::IssuerMismatch { .. })), "{issuer}");
        }
    }
}
