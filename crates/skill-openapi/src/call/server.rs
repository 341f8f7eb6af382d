//! Server URLs: the base URL given, else the first of the document's `servers`, its
//! variables replaced by their defaults and a relative URL resolved against the URL the
//! document was fetched from (OAS 3.1.1 §4.8.5, Server Object).

use serde_json::Value;
use url::Url;

use crate::Error;
use crate::document::DocumentOrigin;
use skill_core::redact::url_text as redacted_text;

/// The base URL the user gave: absolute, `http` or `https`.
pub(super) fn given_base_url(document: &DocumentOrigin, text: &str) -> Result<Url, Error> {
    let url = Url::parse(text).map_err(|error| invalid(document, text, error.to_string()))?;
    checked(document, text, url)
}

/// The URL of the first Server Object in `servers`, `None` when there is none (the field
/// is absent, not an array, or empty).
pub(super) fn first_server(
    document: &DocumentOrigin,
    document_url: Option<&Url>,
    servers: Option<&Value>,
) -> Result<Option<Url>, Error> {
    let Some(server) = servers.and_then(Value::as_array).and_then(|servers| servers.first()) else {
        return Ok(None);
    };
    let Some(written) = server.get("url").and_then(Value::as_str) else {
        return Err(Error::InvalidDocument {
            document: document.clone(),
            reason: "the first server has no `url`".to_owned(),
        });
    };
    let substituted = substitute_variables(document, written, server.get("variables"))?;
    resolve(document, document_url, written, &substituted).map(Some)
}

/// The spec's default when `servers` is absent or empty: `/`, relative to the document's
/// URL. A document read from a file has none, so a base URL must be given.
pub(super) fn default_server(document: &DocumentOrigin, document_url: Option<&Url>) -> Result<Url, Error> {
    match document_url {
        Some(url) => resolve(document, Some(url), "/", "/"),
        None => Err(Error::NoServer { document: document.clone() }),
    }
}

/// Replaces each `{name}` of `written` by the variable's `default`, which must be one of
/// its `enum` values when it has an `enum`.
fn substitute_variables(document: &DocumentOrigin, written: &str, variables: Option<&Value>) -> Result<String, Error> {
    let problem = |variable: &str, problem: String| Error::ServerVariable {
        document: document.clone(),
        url: redacted_text(written),
        variable: variable.to_owned(),
        problem,
    };
    let mut substituted = String::with_capacity(written.len());
    let mut rest = written;
    while let Some(open) = rest.find('{') {
        substituted.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            return Err(invalid(document, written, "a `{` has no closing `}`".to_owned()));
        };
        let name = &after[..close];
        let Some(variable) = variables.and_then(|variables| variables.get(name)) else {
            return Err(problem(name, "is not declared in the server's `variables`".to_owned()));
        };
        let Some(default) = variable.get("default").and_then(scalar_text) else {
            return Err(problem(name, "has no `default`".to_owned()));
        };
        if let Some(allowed) = variable.get("enum").and_then(Value::as_array).filter(|allowed| !allowed.is_empty()) {
            let allowed: Vec<String> = allowed.iter().filter_map(scalar_text).collect();
            if !allowed.contains(&default) {
                let listed: Vec<String> = allowed.iter().map(|value| format!("`{value}`")).collect();
                return Err(problem(
                    name,
                    format!("has the default `{default}`, which its `enum` ({}) does not list", listed.join(", ")),
                ));
            }
        }
        substituted.push_str(&default);
        rest = &after[close + 1..];
    }
    substituted.push_str(rest);
    Ok(substituted)
}

/// A variable's value as text: YAML documents may write `default: 8443`.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

fn resolve(document: &DocumentOrigin, document_url: Option<&Url>, written: &str, text: &str) -> Result<Url, Error> {
    let url = match Url::parse(text) {
        Ok(url) => url,
        Err(url::ParseError::RelativeUrlWithoutBase) => match document_url {
            Some(base) => base.join(text).map_err(|error| invalid(document, written, error.to_string()))?,
            None => return Err(Error::RelativeServerUrl { document: document.clone(), url: redacted_text(written) }),
        },
        Err(error) => return Err(invalid(document, written, error.to_string())),
    };
    checked(document, written, url)
}

fn checked(document: &DocumentOrigin, written: &str, mut url: Url) -> Result<Url, Error> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid(document, written, format!("`{}:` is not http or https", url.scheme())));
    }
    url.set_fragment(None);
    Ok(url)
}

fn invalid(document: &DocumentOrigin, url: &str, reason: String) -> Error {
    Error::InvalidServerUrl { document: document.clone(), url: redacted_text(url), reason }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use serde_json::json;

    use super::*;

    fn file() -> DocumentOrigin {
        DocumentOrigin::File(PathBuf::from("/specs/api.yaml"))
    }

    fn first(document_url: Option<&str>, servers: Value) -> Result<Option<String>, String> {
        let document_url = document_url.map(|url| Url::parse(url).unwrap());
        first_server(&file(), document_url.as_ref(), Some(&servers))
            .map(|url| url.map(String::from))
            .map_err(|error| error.to_string())
    }

    #[test]
    fn variables_take_their_defaults_checked_against_enum() {
        let servers = json!([{
            "url": "https://{region}.example.com:{port}/{base}",
            "variables": {
                "region": {"default": "eu", "enum": ["eu", "us"]},
                "port": {"default": 8443},
                "base": {"default": "v2"}
            }
        }, {"url": "https://ignored.example.com"}]);
        assert_eq!(first(None, servers), Ok(Some("https://eu.example.com:8443/v2".to_owned())));

        let servers = json!([{"url": "https://{region}.example.com", "variables": {"region": {"default": "ap", "enum": ["eu", "us"]}}}]);
        assert_eq!(
            first(None, servers),
            Err("server URL `https://{region}.example.com` of /specs/api.yaml: variable `region` has the default `ap`, \
                 which its `enum` (`eu`, `us`) does not list"
                .to_owned())
        );
        let servers = json!([{"url": "https://{region}.example.com"}]);
        assert_eq!(
            first(None, servers),
            Err("server URL `https://{region}.example.com` of /specs/api.yaml: variable `region` is not declared in the server's `variables`".to_owned())
        );
        let servers = json!([{"url": "https://{region}.example.com", "variables": {"region": {"enum": ["eu"]}}}]);
        assert!(first(None, servers).unwrap_err().ends_with("variable `region` has no `default`"));
    }

    #[test]
    fn relative_urls_resolve_against_the_document_url_only() {
        let servers = json!([{"url": "/v1"}]);
        assert_eq!(
            first(Some("https://api.example.com/specs/openapi.json"), servers.clone()),
            Ok(Some("https://api.example.com/v1".to_owned()))
        );
        assert_eq!(
            first(None, servers),
            Err("server URL `/v1` in /specs/api.yaml is relative, and a document read from a file has no URL to \
                 resolve it against"
                .to_owned())
        );
        let servers = json!([{"url": "v2/"}]);
        assert_eq!(
            first(Some("https://api.example.com/specs/openapi.json"), servers),
            Ok(Some("https://api.example.com/specs/v2/".to_owned()))
        );
        assert_eq!(first(None, json!([])), Ok(None));
        assert_eq!(
            first(None, json!([{"url": "ftp://example.com"}])).unwrap_err(),
            "server URL `ftp://example.com` of /specs/api.yaml cannot be used: `ftp:` is not http or https"
        );
    }

    #[test]
    fn the_default_server_needs_a_document_url() {
        let url = Url::parse("https://api.example.com/specs/openapi.json").unwrap();
        assert_eq!(default_server(&file(), Some(&url)).unwrap().as_str(), "https://api.example.com/");
        assert_eq!(default_server(&file(), None).unwrap_err().to_string(), "/specs/api.yaml has no `servers`");
        assert_eq!(
            given_base_url(&file(), "localhost:8080").unwrap_err().to_string(),
            "server URL `localhost:8080` of /specs/api.yaml cannot be used: `localhost:` is not http or https"
        );
    }
}
