//! The rules for a ref in a fetched spec: the URL it names, resolved against its
//! document's, must be http(s), on the spec's origin and under the folder of the spec's
//! URL (see the parent module's doc).

use url::Url;

use crate::Error;
use crate::document::DocumentOrigin;

/// Why a ref in a fetched document is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlRefRefusal {
    /// It resolves to a URL that is not http(s): `file:`, another scheme.
    NotHttp,
    /// It resolves to an http(s) URL on another origin, or outside the spec's folder.
    OutsideScope,
    /// It does not resolve to a URL at all.
    Malformed,
}

impl UrlRefRefusal {
    /// The error for `reference`, written in `document`.
    pub(crate) fn into_error(self, reference: &str, document: &DocumentOrigin) -> Error {
        let (reference, document) = (reference.to_owned(), document.clone());
        match self {
            UrlRefRefusal::NotHttp => Error::RefNotHttp { reference, document },
            UrlRefRefusal::OutsideScope => Error::RefOutsideSpecFolder { reference, document },
            UrlRefRefusal::Malformed => Error::RefNotFound { reference, document },
        }
    }
}

/// The URL that the document part of a ref (the part before `#`) names, when written in the
/// fetched document at `document`, for a spec whose URL folder is `scope`.
///
/// The ref is resolved against `document` (`Url::join`, which also removes `.` and `..`
/// segments, encoded or not), whatever its form: relative (`common.yaml`, `../x.yaml`),
/// root-relative (`/x.yaml`), network-path (`//host/x.yaml`) or absolute. The result must be
/// http(s) ([`UrlRefRefusal::NotHttp`] otherwise: `file:///etc/passwd`, `C:/x.yaml`), on
/// `scope`'s origin, and under its path, with no encoded `/` or `\` that a server might
/// decode into a way out ([`UrlRefRefusal::OutsideScope`] otherwise).
pub(crate) fn url_ref_target(document_part: &str, document: &Url, scope: &Url) -> Result<Url, UrlRefRefusal> {
    let target = document.join(document_part).map_err(|_| UrlRefRefusal::Malformed)?;
    if !matches!(target.scheme(), "http" | "https") {
        return Err(UrlRefRefusal::NotHttp);
    }
    if !is_under(&target, scope) {
        return Err(UrlRefRefusal::OutsideScope);
    }
    Ok(target)
}

/// The folder a URL is in: its path up to the last `/`, without query or fragment.
pub(crate) fn folder_of(url: &Url) -> Url {
    let mut folder = url.clone();
    let end = url.path().rfind('/').map_or(0, |slash| slash + 1);
    folder.set_path(&url.path()[..end]);
    folder.set_query(None);
    folder.set_fragment(None);
    folder
}

/// Whether `url` is on the origin (scheme, host, port) of the folder `scope` and its path
/// is under the folder's path, without an encoded slash or backslash.
fn is_under(url: &Url, scope: &Url) -> bool {
    let path = url.path();
    let encoded_separator = ["%2f", "%5c"].iter().any(|encoded| path.to_ascii_lowercase().contains(encoded));
    url.scheme() == scope.scheme()
        && url.host() == scope.host()
        && url.port_or_known_default() == scope.port_or_known_default()
        && path.starts_with(scope.path())
        && !encoded_separator
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn every_url_ref_resolves_against_its_document_and_stays_in_the_spec_folder() {
        let spec = url("http://host/specs/api.yaml?version=2");
        let scope = folder_of(&spec);
        assert_eq!(scope.as_str(), "http://host/specs/");
        let check = |document_part: &str, expect: Result<&str, UrlRefRefusal>| {
            let found = url_ref_target(document_part, &spec, &scope);
            assert_eq!(found.as_ref().map(Url::as_str).map_err(|refusal| *refusal), expect, "{document_part}");
        };
        // Relative refs resolve against the document.
        check("common.yaml", Ok("http://host/specs/common.yaml"));
        check("./v1/../params.json", Ok("http://host/specs/params.json"));
        check("v1/pets%20list.yaml?raw=1", Ok("http://host/specs/v1/pets%20list.yaml?raw=1"));
        // Root-relative and absolute refs that land in the folder are the same documents.
        check("/specs/common.yaml", Ok("http://host/specs/common.yaml"));
        check("HTTP://HOST:80/specs/common.yaml", Ok("http://host/specs/common.yaml"));
        // Nothing may leave the folder, however it is written.
        for outside in [
            "../secret.yaml",
            "v1/../../secret.yaml",
            "%2e%2e/secret.yaml",
            ".%2E/secret.yaml",
            "..\\secret.yaml",
            "/x.yaml",
            "/etc/passwd",
            "../specs-private/x.yaml",
            "v1%2F..%2F..%2Fsecret.yaml",
            "v1%5c..%5c..%5csecret.yaml",
        ] {
            check(outside, Err(UrlRefRefusal::OutsideScope));
        }
        // Nor go to another origin: another host, port or scheme, whatever the path.
        for other_origin in [
            "http://127.0.0.1/specs/x.yaml",
            "http://169.254.169.254/latest/meta-data/",
            "http://10.0.0.1/specs/x.yaml",
            "https://host/specs/x.yaml",
            "http://host:8080/specs/x.yaml",
            "//other.example/specs/x.yaml",
            "\\\\server\\specs\\x.yaml",
            "https://other.example/lib/types.yaml",
        ] {
            check(other_origin, Err(UrlRefRefusal::OutsideScope));
        }
        // Anything that is not http(s) is refused as such.
        for not_http in [
            "file:///etc/passwd",
            "FILE:/etc/passwd",
            "C:/Windows/win.ini",
            "ftp://host/specs/a.yaml",
            "urn:example:schema",
        ] {
            check(not_http, Err(UrlRefRefusal::NotHttp));
        }
    }

    #[test]
    fn refs_of_a_referenced_document_keep_to_the_spec_folder_too() {
        let scope = url("https://host/specs/");
        let nested = url("https://host/specs/v1/types.yaml");
        assert_eq!(
            url_ref_target("../common.yaml", &nested, &scope).map(String::from),
            Ok("https://host/specs/common.yaml".to_owned())
        );
        assert_eq!(url_ref_target("../../x.yaml", &nested, &scope), Err(UrlRefRefusal::OutsideScope));
        // The spec URL's user info goes with relative refs; an absolute ref needs none, and
        // gets none added.
        let spec = url("https://user:pw@host/specs/api.yaml");
        let found = url_ref_target("common.yaml", &spec, &folder_of(&spec)).unwrap();
        assert_eq!(found.as_str(), "https://user:pw@host/specs/common.yaml");
        assert_eq!(
            url_ref_target("https://host/specs/common.yaml", &spec, &folder_of(&spec)).map(String::from),
            Ok("https://host/specs/common.yaml".to_owned())
        );
    }
}
