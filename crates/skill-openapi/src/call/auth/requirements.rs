//! Security requirements: the `security` fields of a document read as alternatives of
//! scheme names, and the credentials a request carries for them.

use std::collections::HashSet;

use serde_json::Value;

use super::PlacedCredential;
use crate::document::Document;
use crate::reference::{DocId, Resolver};

/// Security requirements: alternatives, each the names of the schemes it needs together.
pub(crate) type Requirements = Vec<Vec<String>>;

/// What a document's `components.securitySchemes` say to the reading of requirements: the
/// names declared, and those of the schemes marked `deprecated` (OpenAPI 3.2).
#[derive(Debug, Default)]
pub(crate) struct DeclaredSchemes {
    names: HashSet<String>,
    deprecated: HashSet<String>,
}

impl DeclaredSchemes {
    /// The schemes of `document`; a scheme whose `$ref` cannot be followed counts as not
    /// deprecated (it fails where credentials are placed, [`place_credentials`](super::place_credentials)).
    pub(crate) fn read(document: &Document, resolver: &mut Resolver) -> Self {
        let mut declared = DeclaredSchemes::default();
        let Some(schemes) = document.root().pointer("/components/securitySchemes").and_then(Value::as_object) else {
            return declared;
        };
        for (name, raw) in schemes {
            declared.names.insert(name.clone());
            let deprecated = resolver
                .resolve_object(DocId::ROOT, raw)
                .is_ok_and(|(_, scheme)| scheme.get("deprecated") == Some(&Value::Bool(true)));
            if deprecated {
                declared.deprecated.insert(name.clone());
            }
        }
        declared
    }

    /// The component name a requirement's key stands for. OpenAPI 3.2 lets a key be a URI
    /// of a Security Scheme Object as well as a component name; a key that is a component
    /// name is that component, and a same-document URI of one
    /// (`#/components/securitySchemes/api_key`) is too. Any other URI (a scheme in another
    /// document) is kept as written: no credential is placed for it, so an alternative
    /// that needs it is never fully satisfied.
    fn component_name(&self, key: &str) -> String {
        if self.names.contains(key) {
            return key.to_owned();
        }
        let pointed =
            key.strip_prefix("#/components/securitySchemes/").filter(|token| !token.contains('/')).map(|token| {
                percent_encoding::percent_decode_str(token).decode_utf8_lossy().replace("~1", "/").replace("~0", "~")
            });
        match pointed {
            Some(name) if self.names.contains(&name) => name,
            _ => key.to_owned(),
        }
    }
}

/// A `security` field read, `None` when absent or not an array: each key as the component
/// name it stands for ([`DeclaredSchemes`]), and the alternatives that need a deprecated
/// scheme moved after the others (OpenAPI 3.2: consumers "SHOULD refrain from usage" of a
/// deprecated scheme), so that a request carries a current credential when it has one.
pub(crate) fn read_requirements(value: Option<&Value>, declared: &DeclaredSchemes) -> Option<Requirements> {
    let alternatives = value?.as_array()?;
    let mut requirements: Requirements = alternatives
        .iter()
        .map(|alternative| {
            alternative
                .as_object()
                .map_or_else(Vec::new, |schemes| schemes.keys().map(|key| declared.component_name(key)).collect())
        })
        .collect();
    requirements.sort_by_key(|alternative| alternative.iter().any(|scheme| declared.deprecated.contains(scheme)));
    Some(requirements)
}

/// The credentials a request carries, given the operation's effective security.
///
/// - `security: []` (no alternative): none.
/// - A document without security schemes, or one that defines schemes but says nowhere
///   (neither on the operation nor at the top) which apply: every credential. Real
///   documents often forget the top-level `security`, and credentials the user configured
///   are meant to be sent.
/// - Otherwise the first alternative whose schemes all have a credential (alternatives
///   that need nothing are tried last, so optional auth is still sent), else the first
///   with some; the credentials for its schemes.
pub(in crate::call) fn select<'c>(
    credentials: &'c [PlacedCredential],
    schemes_defined: bool,
    requirements: Option<&Requirements>,
) -> Vec<&'c PlacedCredential> {
    if requirements.is_some_and(Vec::is_empty) {
        return Vec::new();
    }
    let Some(alternatives) = requirements.filter(|_| schemes_defined) else { return credentials.iter().collect() };
    let covered = |scheme: &String| credentials.iter().any(|credential| credential.schemes.contains(scheme));
    let needing: Vec<&Vec<String>> = alternatives.iter().filter(|alternative| !alternative.is_empty()).collect();
    let chosen = needing
        .iter()
        .find(|alternative| alternative.iter().all(covered))
        .or_else(|| needing.iter().find(|alternative| alternative.iter().any(covered)));
    let Some(chosen) = chosen else { return Vec::new() };
    credentials.iter().filter(|credential| credential.schemes.iter().any(|scheme| chosen.contains(scheme))).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::tests::{key, placed_at, schemes_of};
    use super::super::{Credential, place_credentials};
    use super::*;

    #[test]
    fn the_first_satisfiable_alternative_is_chosen() {
        let components = json!({"securitySchemes": {
            "a": {"type": "apiKey", "name": "A", "in": "header"},
            "b": {"type": "apiKey", "name": "B", "in": "header"},
            "bearer": {"type": "http", "scheme": "bearer"}
        }});
        let (document, mut resolver) = schemes_of(json!({"openapi": "3.1.0", "components": components}));
        let declared = DeclaredSchemes::read(&document, &mut resolver);
        let (credentials, defined) = place_credentials(
            &document,
            &mut resolver,
            vec![key(Some("A"), None), Credential::Bearer { token: "t".into() }],
        )
        .unwrap();
        assert!(defined);
        let chosen = |security: Value| -> Vec<String> {
            select(&credentials, defined, read_requirements(Some(&security), &declared).as_ref())
                .iter()
                .map(|c| placed_at(c))
                .collect()
        };
        assert_eq!(chosen(json!([{"a": [], "b": []}, {"bearer": []}])), ["header authorization"]);
        assert_eq!(chosen(json!([{}, {"a": []}])), ["header a"]);
        assert_eq!(chosen(json!([{"a": [], "b": []}])), ["header a"]);
        assert_eq!(chosen(json!([{"b": []}])), Vec::<String>::new());
        assert_eq!(chosen(json!([])), Vec::<String>::new());
        assert_eq!(select(&credentials, defined, None).len(), 2, "no `security` anywhere: every credential");
        assert_eq!(select(&credentials, false, None).len(), 2);
        assert!(select(&credentials, false, Some(&Vec::new())).is_empty());
    }

    #[test]
    fn schemes_named_by_uri_and_deprecated_schemes_openapi_3_2() {
        let components = json!({"securitySchemes": {
            "old key": {"type": "apiKey", "name": "X-Old-Key", "in": "header", "deprecated": true},
            "a/b": {"type": "mutualTLS"},
            "bearer": {"type": "http", "scheme": "bearer", "deprecated": false}
        }});
        let (document, mut resolver) = schemes_of(json!({"openapi": "3.2.0", "components": components}));
        let declared = DeclaredSchemes::read(&document, &mut resolver);
        let (credentials, defined) = place_credentials(
            &document,
            &mut resolver,
            vec![key(None, None), Credential::Bearer { token: "t".into() }],
        )
        .unwrap();
        let chosen = |security: Value| -> Vec<String> {
            select(&credentials, defined, read_requirements(Some(&security), &declared).as_ref())
                .iter()
                .map(|c| placed_at(c))
                .collect()
        };
        // Both credentials are at hand: the deprecated scheme's alternative comes last.
        assert_eq!(chosen(json!([{"old key": []}, {"bearer": []}])), ["header authorization"]);
        // Only the deprecated one fits: it is still sent.
        assert_eq!(chosen(json!([{"old key": []}, {"other": []}])), ["header x-old-key"]);
        // A same-document URI is the component it points to (escaped as a JSON Pointer
        // and as a URI fragment); a URI into another document is no scheme of this one.
        assert_eq!(chosen(json!([{"#/components/securitySchemes/old%20key": []}])), ["header x-old-key"]);
        assert_eq!(
            read_requirements(Some(&json!([{"#/components/securitySchemes/a~1b": ["read"]}])), &declared),
            Some(vec![vec!["a/b".to_owned()]])
        );
        assert_eq!(chosen(json!([{"other.yaml#/components/securitySchemes/bearer": []}])), Vec::<String>::new());
        assert_eq!(chosen(json!([{"#/components/securitySchemes/bearer": []}])), ["header authorization"]);
    }
}
