//! The request's URL and headers: each parameter's value from its argument, serialized by
//! its style ([`ParameterSpec::serialize`]) or, for a parameter given by `content`, by its
//! media type; an `in: querystring` parameter (OpenAPI 3.2) as the query string its media
//! type gives ([`serialize_query_string`]); the path template filled (a path key's own
//! query kept, its fragment dropped: [`PathKey`]), the query pairs joined with `&` after
//! one `?`,
//! the cookies joined with `; ` into one `Cookie` header; then the credentials added.

use std::collections::HashMap;

use reqwest::header::{COOKIE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Map, Value};
use skill_core::{ExposeSecret, ToolError};
use url::Url;

use super::auth::{PlacedCredential, Placement, is_cookie_octet};
use crate::Error;
use crate::media_type::content_text;
use crate::operation::OperationTool;
use crate::serialize::{Location, ParameterSpec, SerializedParameter, serialize_query_string};
use skill_core::redact::url_text as redacted_text;

/// Where a request goes, and its headers (the body's aside). Messages and logs show the
/// URL redacted (`skill_core::redact::url`), as it may hold credentials.
#[derive(Debug)]
pub(super) struct Target {
    pub(super) url: Url,
    pub(super) headers: HeaderMap,
}

/// The URL and headers of a call of `tool` with `arguments`, against `base` (the server
/// URL), carrying `credentials`.
///
/// Arguments that cannot be sent (a required one missing, a value its style cannot
/// serialize, a header value with a line break) are one [`ToolError::InvalidArguments`]
/// listing each.
pub(super) fn build_target(
    tool: &OperationTool,
    arguments: &Map<String, Value>,
    base: &Url,
    credentials: &[&PlacedCredential],
) -> Result<Target, ToolError> {
    let mut problems = Vec::new();
    let mut path_values: HashMap<&str, String> = HashMap::new();
    let key = PathKey::split(&tool.path);
    if let Some(fragment) = key.fragment {
        tracing::debug!(tool = %tool.name, path = %tool.path, "the path key's fragment `#{fragment}` is not sent");
    }
    // A base URL's own query goes first, then the path key's own.
    let mut query: Vec<String> =
        [base.query(), key.query].into_iter().flatten().filter(|query| !query.is_empty()).map(str::to_owned).collect();
    let mut cookies = Vec::new();
    let mut headers = HeaderMap::new();

    for parameter in &tool.parameters {
        let spec = &parameter.spec;
        let Some(value) = arguments.get(&parameter.argument) else {
            if parameter.required {
                problems.push(format!(
                    "/{}: the {} parameter `{}` is required",
                    parameter.argument, spec.location, spec.name
                ));
            }
            continue;
        };
        if spec.location == Location::QueryString {
            let media_type = parameter.content_type.as_deref().unwrap_or("application/x-www-form-urlencoded");
            match serialize_query_string(&spec.name, value, media_type, &parameter.encodings) {
                Ok(text) if text.is_empty() => {}
                Ok(text) => query.push(text),
                Err(error) => problems.push(format!("/{}: {error}", parameter.argument)),
            }
            continue;
        }
        let serialized = match &parameter.content_type {
            Some(media_type) => content_based(spec, value, media_type),
            None => spec.serialize(value),
        };
        match serialized {
            Err(error) => problems.push(format!("/{}: {error}", parameter.argument)),
            Ok(SerializedParameter::Path(text)) => {
                path_values.insert(spec.name.as_str(), text);
            }
            Ok(SerializedParameter::Query(pairs)) => query.extend(pairs),
            Ok(SerializedParameter::Header(text)) => {
                let name = HeaderName::from_bytes(spec.name.as_bytes()).map_err(|_| {
                    ToolError::failed(format!("`{}`: `{}` is not a valid header name", tool.name, spec.name))
                })?;
                match HeaderValue::from_str(&text) {
                    Ok(value) => {
                        headers.append(name, value);
                    }
                    Err(_) => problems.push(format!(
                        "/{}: the value cannot be sent in the header `{}` (it holds a line break or another control \
                         character)",
                        parameter.argument, spec.name
                    )),
                }
            }
            Ok(SerializedParameter::Cookie(pairs)) => cookies.extend(pairs),
        }
    }

    let path = fill_path_template(tool, key.template, &path_values)?;
    problems.extend(dot_segment_problems(tool, &path, &path_values));

    let mut credential_cookie = false;
    for credential in credentials {
        match &credential.placement {
            Placement::Header { name, value } => {
                headers.insert(name.clone(), value.clone());
            }
            Placement::Query { name, value } => {
                let secret = Value::String(value.expose_secret().to_owned());
                if let Ok(SerializedParameter::Query(pairs)) =
                    ParameterSpec::new(name.clone(), Location::Query).serialize(&secret)
                {
                    query.extend(pairs);
                }
            }
            Placement::Cookie { name, value } => {
                cookies.push(format!("{name}={}", value.expose_secret()));
                credential_cookie = true;
            }
        }
    }
    if !cookies.is_empty() {
        match HeaderValue::from_str(&cookies.join("; ")) {
            Ok(mut value) => {
                value.set_sensitive(credential_cookie);
                headers.insert(COOKIE, value);
            }
            Err(_) => problems.push(
                "the Cookie header cannot hold the cookie values given (a line break or another control character)"
                    .to_owned(),
            ),
        }
    }
    if !problems.is_empty() {
        return Err(ToolError::InvalidArguments { tool: tool.name.clone(), problems });
    }

    let base_path = base.path().trim_end_matches('/');
    let mut text = format!("{}{base_path}{path}", &base[..url::Position::BeforePath]);
    if !query.is_empty() {
        text = format!("{text}?{}", query.join("&"));
    }
    let url = Url::parse(&text).map_err(|error| {
        ToolError::failed(format!("`{}`: {} is not a URL: {error}", tool.name, redacted_text(&text)))
    })?;
    Ok(Target { url, headers })
}

/// A parameter given by `content`: its value as its media type's text (JSON text for JSON
/// types, a string as is otherwise), percent-encoded in the path and query as a plain
/// string is, and as is in a header or cookie (OAS 3.1.1 Appendix D: `content` is how a
/// document gives a value already encoded). A cookie value must then be made of RFC 6265
/// cookie octets, optionally in double quotes: anything else (`;`, `,`, whitespace) could
/// end the cookie and add others, and is refused.
fn content_based(spec: &ParameterSpec, value: &Value, media_type: &str) -> Result<SerializedParameter, Error> {
    let text = content_text(value, media_type);
    match spec.location {
        Location::Header => Ok(SerializedParameter::Header(text)),
        Location::Cookie => match first_non_cookie_octet(&text) {
            Some(character) => Err(Error::CookieValueNotSafe { parameter: spec.name.clone(), character }),
            None => Ok(SerializedParameter::Cookie(vec![format!("{}={text}", spec.name)])),
        },
        location => ParameterSpec::new(spec.name.clone(), location).serialize(&Value::String(text)),
    }
}

/// The first character of a cookie value that RFC 6265 §4.1.1 does not allow:
/// `cookie-value = *cookie-octet / ( DQUOTE *cookie-octet DQUOTE )`, where a cookie-octet
/// is a visible ASCII character other than `"`, `,`, `;` and `\`.
fn first_non_cookie_octet(value: &str) -> Option<char> {
    let inner = value.strip_prefix('"').and_then(|rest| rest.strip_suffix('"')).unwrap_or(value);
    inner.chars().find(|&c| !u8::try_from(c).is_ok_and(is_cookie_octet))
}

/// A Paths Object key taken apart. The spec's keys are paths, but real documents put a
/// query in some (Azure's `/templeton/v1/jobs?op=LISTAFTERID`) and a fragment in others
/// (every AWS JSON-protocol document: `/#X-Amz-Target=Service.Operation`), and their
/// intent is plain: the query is sent with the arguments' (a second `?` would swallow the
/// first argument), and the fragment, which a request target never carries, is dropped
/// (AWS declares `X-Amz-Target` as a header parameter anyway), rather than putting the
/// arguments' query after it, where it would never be sent.
struct PathKey<'k> {
    /// The path template, before any `?` or `#`.
    template: &'k str,
    /// What follows the first `?` before the fragment, if any.
    query: Option<&'k str>,
    /// What follows the first `#`, if any.
    fragment: Option<&'k str>,
}

impl<'k> PathKey<'k> {
    fn split(key: &'k str) -> Self {
        let (before_fragment, fragment) = match key.split_once('#') {
            Some((before, fragment)) => (before, Some(fragment)),
            None => (key, None),
        };
        let (template, query) = match before_fragment.split_once('?') {
            Some((template, query)) => (template, Some(query)),
            None => (before_fragment, None),
        };
        PathKey { template, query, fragment }
    }
}

/// The path template with each `{name}` replaced by its parameter's serialized text.
/// A name that no path parameter declares is an error in the document; one that is
/// declared but has no text is already a problem (missing or not serializable).
fn fill_path_template(
    tool: &OperationTool,
    template: &str,
    values: &HashMap<&str, String>,
) -> Result<String, ToolError> {
    let mut path = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        path.push_str(&rest[..open]);
        let name = &after[..close];
        match values.get(name) {
            Some(text) => path.push_str(text),
            None => {
                let declared = tool
                    .parameters
                    .iter()
                    .any(|parameter| parameter.spec.location == Location::Path && parameter.spec.name == name);
                if !declared {
                    return Err(ToolError::failed(format!(
                        "`{}`: the path `{}` has `{{{name}}}`, which no path parameter fills",
                        tool.name, tool.path
                    )));
                }
            }
        }
        rest = &after[close + 1..];
    }
    path.push_str(rest);
    Ok(path)
}

/// `.` and `..` segments are removed from every URL (RFC 3986 §5.2.4; the WHATWG URL
/// parser does the same for `%2E`), so a value that makes one cannot be sent as written.
fn dot_segment_problems(tool: &OperationTool, path: &str, values: &HashMap<&str, String>) -> Vec<String> {
    let Some(segment) = path.split('/').find(|segment| matches!(*segment, "." | "..")) else { return Vec::new() };
    let mut problems: Vec<String> = tool
        .parameters
        .iter()
        .filter(|parameter| parameter.spec.location == Location::Path)
        .filter(|parameter| {
            values
                .get(parameter.spec.name.as_str())
                .is_some_and(|text| !text.is_empty() && text.bytes().all(|b| b == b'.'))
        })
        .map(|parameter| {
            format!(
                "/{}: the value makes the path segment `{segment}`, which URLs remove (RFC 3986 §5.2.4)",
                parameter.argument
            )
        })
        .collect();
    if problems.is_empty() {
        problems.push(format!("the path `{path}` has the segment `{segment}`, which URLs remove (RFC 3986 §5.2.4)"));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_keys_lose_their_fragment_and_keep_their_query() {
        let parts = |key| {
            let key = PathKey::split(key);
            (key.template, key.query, key.fragment)
        };
        assert_eq!(parts("/items/{id}"), ("/items/{id}", None, None));
        assert_eq!(parts("/templeton/v1/jobs?op=LISTAFTERID"), ("/templeton/v1/jobs", Some("op=LISTAFTERID"), None));
        assert_eq!(
            parts("/#X-Amz-Target=TrentService.ListKeys"),
            ("/", None, Some("X-Amz-Target=TrentService.ListKeys"))
        );
        // What follows a `#` is the fragment, a `?` in it included.
        assert_eq!(parts("/a?b=1#c?d=2"), ("/a", Some("b=1"), Some("c?d=2")));
    }

    #[test]
    fn only_cookie_octets_pass_as_a_content_cookie() {
        for safe in
            ["abc", "eyJhIjoxfQ==", "%7B%22a%22%3A1%7D", "\"quoted-value\"", "a!#$%&'()*+-./:<=>?@[]^_`{|}~", ""]
        {
            assert_eq!(first_non_cookie_octet(safe), None, "{safe}");
        }
        for (unsafe_value, first) in [
            ("x; session=evil", ';'),
            ("a,b", ','),
            ("a b", ' '),
            ("tab\there", '\t'),
            ("line\nbreak", '\n'),
            ("{\"a\":1}", '"'),
            ("back\\slash", '\\'),
            ("\"half", '"'),
            ("caf\u{e9}", '\u{e9}'),
            ("del\u{7f}", '\u{7f}'),
        ] {
            assert_eq!(first_non_cookie_octet(unsafe_value), Some(first), "{unsafe_value}");
        }
        let spec = ParameterSpec::new("prefs", Location::Cookie);
        let error = content_based(&spec, &Value::String("x; session=evil".into()), "text/plain").unwrap_err();
        assert!(
            matches!(&error, Error::CookieValueNotSafe { parameter, character: ';' } if parameter == "prefs"),
            "{error:?}"
        );
        assert_eq!(
            content_based(&spec, &Value::String("dark".into()), "text/plain").unwrap(),
            SerializedParameter::Cookie(vec!["prefs=dark".into()])
        );
    }
}
