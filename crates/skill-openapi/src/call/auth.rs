//! Authentication: the credentials given, matched to the document's security schemes
//! (`components.securitySchemes`), and which of them each operation's requests carry.
//!
//! Secret values stay in [`SecretString`]s and in header values marked sensitive; no
//! `Debug` output or error here holds one.

use std::fmt;

use base64::Engine;
use reqwest::header::{AUTHORIZATION, HeaderName, HeaderValue};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use skill_core::{ExposeSecret, SecretString};

use crate::Error;
use crate::document::{Document, DocumentOrigin};
use crate::reference::{DocId, Resolver};

mod requirements;

pub(in crate::call) use self::requirements::select;
pub(crate) use self::requirements::{DeclaredSchemes, Requirements, read_requirements};

/// Where an API key goes: an `apiKey` security scheme's `in`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApiKeyLocation {
    /// A request header.
    Header,
    /// A query parameter.
    Query,
    /// A cookie.
    Cookie,
}

impl ApiKeyLocation {
    /// The name the spec uses (`"header"`, `"query"`, `"cookie"`).
    pub fn as_str(self) -> &'static str {
        match self {
            ApiKeyLocation::Header => "header",
            ApiKeyLocation::Query => "query",
            ApiKeyLocation::Cookie => "cookie",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        [ApiKeyLocation::Header, ApiKeyLocation::Query, ApiKeyLocation::Cookie]
            .into_iter()
            .find(|location| location.as_str() == name)
    }
}

impl fmt::Display for ApiKeyLocation {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// A credential for an API's calls. Its `Debug` output shows no secret.
#[derive(Clone)]
#[non_exhaustive]
pub enum Credential {
    /// An API key, for an `apiKey` security scheme. `name` and `location` may be left out
    /// when the document's schemes settle them (exactly one `apiKey` scheme fits).
    ApiKey {
        /// The key.
        value: SecretString,
        /// The header, query parameter or cookie name.
        name: Option<String>,
        /// Where it goes.
        location: Option<ApiKeyLocation>,
    },
    /// A token sent as `Authorization: Bearer <token>`, for an `http` scheme `bearer`, and
    /// for `oauth2` and `openIdConnect` schemes, whose access tokens are sent so.
    Bearer {
        /// The token.
        token: SecretString,
    },
    /// A user name and password sent as `Authorization: Basic …` (RFC 7617), for an `http`
    /// scheme `basic`.
    Basic {
        /// The user name.
        username: String,
        /// The password.
        password: SecretString,
    },
}

impl Credential {
    /// What the credential is, for messages.
    fn kind(&self) -> &'static str {
        match self {
            Credential::ApiKey { .. } => "API key",
            Credential::Bearer { .. } => "bearer token",
            Credential::Basic { .. } => "basic credential",
        }
    }
}

impl fmt::Debug for Credential {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Credential::ApiKey { name, location, .. } => formatter
                .debug_struct("ApiKey")
                .field("value", &Redacted)
                .field("name", name)
                .field("location", location)
                .finish(),
            Credential::Bearer { .. } => formatter.debug_struct("Bearer").field("token", &Redacted).finish(),
            Credential::Basic { username, .. } => {
                formatter.debug_struct("Basic").field("username", username).field("password", &Redacted).finish()
            }
        }
    }
}

/// Stands for a secret in `Debug` output.
struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("[redacted]")
    }
}

/// A credential ready for requests: where it goes, and the schemes it stands for.
#[derive(Clone)]
pub(super) struct PlacedCredential {
    pub(super) placement: Placement,
    /// The security schemes it satisfies; empty when the document defines none, and it
    /// then goes with every request.
    schemes: Vec<String>,
}

impl fmt::Debug for PlacedCredential {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let placement = match &self.placement {
            Placement::Header { name, .. } => format!("header {name}"),
            Placement::Query { name, .. } => format!("query {name}"),
            Placement::Cookie { name, .. } => format!("cookie {name}"),
        };
        formatter.debug_struct("Credential").field("in", &placement).field("schemes", &self.schemes).finish()
    }
}

/// Where a credential goes in a request.
#[derive(Clone)]
pub(super) enum Placement {
    /// A header, its value marked sensitive.
    Header { name: HeaderName, value: HeaderValue },
    /// A query parameter.
    Query { name: String, value: SecretString },
    /// A cookie.
    Cookie { name: String, value: SecretString },
}

/// A document's security scheme, as far as credentials care.
#[derive(Debug)]
struct Scheme {
    name: String,
    kind: SchemeKind,
}

#[derive(Debug)]
enum SchemeKind {
    ApiKey {
        name: String,
        location: ApiKeyLocation,
    },
    Bearer,
    Basic,
    /// Any other type, or an `apiKey` or `http` scheme this crate cannot send.
    Other(String),
}

impl fmt::Display for Scheme {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            SchemeKind::ApiKey { name, location } => write!(formatter, "`{}` (apiKey, {location} `{name}`)", self.name),
            SchemeKind::Bearer => write!(formatter, "`{}` (bearer)", self.name),
            SchemeKind::Basic => write!(formatter, "`{}` (http basic)", self.name),
            SchemeKind::Other(kind) => write!(formatter, "`{}` ({kind})", self.name),
        }
    }
}

/// The credentials placed, and whether the document defines security schemes at all.
pub(super) fn place_credentials(
    document: &Document,
    resolver: &mut Resolver,
    credentials: Vec<Credential>,
) -> Result<(Vec<PlacedCredential>, bool), Error> {
    let origin = document.origin();
    let schemes = read_schemes(document, resolver)?;
    let placed =
        credentials.into_iter().map(|credential| place(origin, &schemes, credential)).collect::<Result<Vec<_>, _>>()?;
    Ok((placed, !schemes.is_empty()))
}

fn read_schemes(document: &Document, resolver: &mut Resolver) -> Result<Vec<Scheme>, Error> {
    let Some(declared) = document.root().pointer("/components/securitySchemes").and_then(Value::as_object) else {
        return Ok(Vec::new());
    };
    let mut schemes = Vec::with_capacity(declared.len());
    for (name, raw) in declared {
        let (_, scheme) = resolver.resolve_object(DocId::ROOT, raw)?;
        let text = |key: &str| scheme.get(key).and_then(Value::as_str);
        let kind = match text("type") {
            Some("apiKey") => match (text("name"), text("in").and_then(ApiKeyLocation::from_name)) {
                (Some(key_name), Some(location)) => SchemeKind::ApiKey { name: key_name.to_owned(), location },
                _ => SchemeKind::Other("apiKey without a usable `name` and `in`".to_owned()),
            },
            Some("http") => match text("scheme").map(str::to_ascii_lowercase).as_deref() {
                Some("bearer") => SchemeKind::Bearer,
                Some("basic") => SchemeKind::Basic,
                other => SchemeKind::Other(format!("http {}", other.unwrap_or("without a scheme"))),
            },
            Some("oauth2" | "openIdConnect") => SchemeKind::Bearer,
            other => SchemeKind::Other(other.unwrap_or("no type").to_owned()),
        };
        schemes.push(Scheme { name: name.clone(), kind });
    }
    Ok(schemes)
}

fn place(origin: &DocumentOrigin, schemes: &[Scheme], credential: Credential) -> Result<PlacedCredential, Error> {
    let kind = credential.kind();
    let invalid = |reason: &str| Error::InvalidCredential {
        document: origin.clone(),
        credential: kind,
        reason: reason.to_owned(),
    };
    let no_scheme = || Error::CredentialMatchesNoScheme {
        document: origin.clone(),
        credential: kind,
        schemes: schemes.iter().map(ToString::to_string).collect(),
    };
    let matching = |fits: &dyn Fn(&SchemeKind) -> bool| -> Vec<String> {
        schemes.iter().filter(|scheme| fits(&scheme.kind)).map(|scheme| scheme.name.clone()).collect()
    };
    let (placement, matched) = match credential {
        Credential::Bearer { token } => {
            let value = sensitive_header(&format!("Bearer {}", token.expose_secret()))
                .ok_or_else(|| invalid("it holds characters a header value cannot hold"))?;
            (Placement::Header { name: AUTHORIZATION, value }, matching(&|kind| matches!(kind, SchemeKind::Bearer)))
        }
        Credential::Basic { username, password } => {
            if username.contains(':') {
                return Err(invalid("the user name holds a `:`, which basic authentication cannot carry"));
            }
            let pair = format!("{username}:{}", password.expose_secret());
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            let value = sensitive_header(&format!("Basic {encoded}"))
                .ok_or_else(|| invalid("it holds characters a header value cannot hold"))?;
            (Placement::Header { name: AUTHORIZATION, value }, matching(&|kind| matches!(kind, SchemeKind::Basic)))
        }
        Credential::ApiKey { value, name, location } => {
            let fitting: Vec<&Scheme> = schemes
                .iter()
                .filter(|scheme| match &scheme.kind {
                    SchemeKind::ApiKey { name: scheme_name, location: scheme_location } => {
                        let name_fits = name.as_deref().is_none_or(|name| match scheme_location {
                            ApiKeyLocation::Header => name.eq_ignore_ascii_case(scheme_name),
                            ApiKeyLocation::Query | ApiKeyLocation::Cookie => name == scheme_name,
                        });
                        name_fits && location.is_none_or(|location| location == *scheme_location)
                    }
                    _ => false,
                })
                .collect();
            let placements: Vec<(&str, ApiKeyLocation)> = fitting
                .iter()
                .filter_map(|scheme| match &scheme.kind {
                    SchemeKind::ApiKey { name, location } => Some((name.as_str(), *location)),
                    _ => None,
                })
                .collect();
            let (key_name, key_location) = match (&name, location, placements.first()) {
                // Without schemes, the credential says it all, or nothing settles it.
                (Some(name), Some(location), _) if schemes.is_empty() => (name.clone(), location),
                _ if schemes.is_empty() => {
                    return Err(Error::ApiKeyPlacement {
                        document: origin.clone(),
                        reason: "the document defines no security schemes".to_owned(),
                    });
                }
                (_, _, None) => return Err(no_scheme()),
                (_, _, Some(&(first_name, first_location))) => {
                    // Several schemes may fit when they agree on where the key goes.
                    if placements.iter().any(|&(other_name, other_location)| {
                        other_location != first_location
                            || (other_location == ApiKeyLocation::Header
                                && !other_name.eq_ignore_ascii_case(first_name))
                            || (other_location != ApiKeyLocation::Header && other_name != first_name)
                    }) {
                        let listed: Vec<String> = fitting.iter().map(ToString::to_string).collect();
                        return Err(Error::ApiKeyPlacement {
                            document: origin.clone(),
                            reason: format!("several apiKey schemes fit: {}", listed.join(", ")),
                        });
                    }
                    (first_name.to_owned(), first_location)
                }
            };
            let placement = match key_location {
                ApiKeyLocation::Header => {
                    let header_name = HeaderName::from_bytes(key_name.as_bytes())
                        .map_err(|_| invalid(&format!("`{key_name}` is not a header name")))?;
                    let header_value = sensitive_header(value.expose_secret())
                        .ok_or_else(|| invalid("it holds characters a header value cannot hold"))?;
                    Placement::Header { name: header_name, value: header_value }
                }
                ApiKeyLocation::Query => Placement::Query { name: key_name, value },
                ApiKeyLocation::Cookie => {
                    if !value.expose_secret().bytes().all(is_cookie_octet) {
                        return Err(invalid("it holds characters a cookie value cannot hold"));
                    }
                    Placement::Cookie { name: key_name, value }
                }
            };
            (placement, fitting.iter().map(|scheme| scheme.name.clone()).collect())
        }
    };
    if !schemes.is_empty() && matched.is_empty() {
        return Err(no_scheme());
    }
    Ok(PlacedCredential { placement, schemes: matched })
}

fn sensitive_header(text: &str) -> Option<HeaderValue> {
    let mut value = HeaderValue::from_str(text).ok()?;
    value.set_sensitive(true);
    Some(value)
}

/// RFC 6265 §4.1.1 `cookie-octet`.
pub(super) fn is_cookie_octet(byte: u8) -> bool {
    matches!(byte, 0x21 | 0x23..=0x2B | 0x2D..=0x3A | 0x3C..=0x5B | 0x5D..=0x7E)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    pub(super) fn schemes_of(root: Value) -> (Document, Resolver) {
        let document = Document::from_value("/specs/api.json", root).unwrap();
        let resolver = Resolver::new(&document);
        (document, resolver)
    }

    fn place_one(components: Value, credential: Credential) -> Result<PlacedCredential, String> {
        let (document, mut resolver) = schemes_of(json!({"openapi": "3.1.0", "components": components}));
        place_credentials(&document, &mut resolver, vec![credential])
            .map(|(mut placed, _)| placed.remove(0))
            .map_err(|error| error.to_string())
    }

    pub(super) fn key(name: Option<&str>, location: Option<ApiKeyLocation>) -> Credential {
        Credential::ApiKey { value: "k3y".into(), name: name.map(str::to_owned), location }
    }

    pub(super) fn placed_at(placed: &PlacedCredential) -> String {
        match &placed.placement {
            Placement::Header { name, .. } => format!("header {name}"),
            Placement::Query { name, .. } => format!("query {name}"),
            Placement::Cookie { name, .. } => format!("cookie {name}"),
        }
    }

    #[test]
    fn api_keys_take_name_and_location_from_the_one_scheme_that_fits() {
        let two = json!({"securitySchemes": {
            "headerKey": {"type": "apiKey", "name": "X-API-Key", "in": "header"},
            "queryKey": {"type": "apiKey", "name": "api_key", "in": "query"},
            "bearer": {"type": "http", "scheme": "Bearer"}
        }});
        let placed = place_one(two.clone(), key(None, Some(ApiKeyLocation::Query))).unwrap();
        assert_eq!(
            (placed_at(&placed), placed.schemes.clone()),
            ("query api_key".to_owned(), vec!["queryKey".to_owned()])
        );
        let placed = place_one(two.clone(), key(Some("x-api-key"), None)).unwrap();
        assert_eq!(placed_at(&placed), "header x-api-key");
        assert_eq!(
            place_one(two.clone(), key(None, None)).unwrap_err(),
            "the API key for /specs/api.json needs its name and location set: several apiKey schemes fit: \
             `headerKey` (apiKey, header `X-API-Key`), `queryKey` (apiKey, query `api_key`)"
        );
        assert_eq!(
            place_one(two, key(None, Some(ApiKeyLocation::Cookie))).unwrap_err(),
            "the API key matches no security scheme of /specs/api.json (it defines \
             `headerKey` (apiKey, header `X-API-Key`), `queryKey` (apiKey, query `api_key`), `bearer` (bearer)), \
             so it would never be sent"
        );
        assert_eq!(
            place_one(json!({}), key(Some("X-Key"), None)).unwrap_err(),
            "the API key for /specs/api.json needs its name and location set: the document defines no security schemes"
        );
        let placed = place_one(json!({}), key(Some("session"), Some(ApiKeyLocation::Cookie))).unwrap();
        assert_eq!((placed_at(&placed), placed.schemes.len()), ("cookie session".to_owned(), 0));
    }

    #[test]
    fn bearer_fits_http_bearer_oauth2_and_openid_connect_and_basic_fits_basic() {
        let components = json!({"securitySchemes": {
            "oauth": {"type": "oauth2", "flows": {}},
            "oidc": {"$ref": "#/components/x-oidc"},
            "key": {"type": "apiKey", "name": "k", "in": "header"}
        }, "x-oidc": {"type": "openIdConnect", "openIdConnectUrl": "https://example.com"}});
        let placed = place_one(components.clone(), Credential::Bearer { token: "t".into() }).unwrap();
        assert_eq!(placed.schemes, ["oauth", "oidc"]);
        let error = place_one(components, Credential::Basic { username: "u".into(), password: "p".into() });
        assert!(error.unwrap_err().starts_with("the basic credential matches no security scheme"));
        let error = place_one(json!({}), Credential::Basic { username: "a:b".into(), password: "p".into() });
        assert_eq!(
            error.unwrap_err(),
            "the basic credential for /specs/api.json cannot be sent: the user name holds a `:`, which basic authentication cannot carry"
        );
        let error = place_one(json!({}), Credential::Bearer { token: "line\nbreak".into() });
        assert_eq!(
            error.unwrap_err(),
            "the bearer token for /specs/api.json cannot be sent: it holds characters a header value cannot hold"
        );
    }

    #[test]
    fn debug_output_holds_no_secret() {
        let credentials = [
            key(Some("X-Key"), Some(ApiKeyLocation::Header)),
            Credential::Bearer { token: "k3y".into() },
            Credential::Basic { username: "user".into(), password: "k3y".into() },
        ];
        for credential in credentials {
            let shown = format!("{credential:?}");
            assert!(!shown.contains("k3y") && shown.contains("[redacted]"), "{shown}");
            let placed = place_one(json!({}), credential).unwrap();
            let shown = format!("{placed:?}");
            assert!(!shown.contains("k3y"), "{shown}");
        }
    }
}
