//! `$ref` resolution: JSON Pointers into the document itself, and into other documents,
//! each loaded once.
//!
//! In a spec read from a file, a ref to another file is resolved against the folder of the
//! document it is in and read when first reached. It must stay under the folder of the
//! spec the user named: absolute paths, `file:` URLs and paths that climb out with `..`
//! (or through a symbolic link) are refused with [`Error::RefOutsideSpecFolder`]; http(s)
//! refs are refused with [`Error::RemoteRefNotSupported`].
//!
//! In a fetched spec, a ref is resolved against the URL of the document it is in
//! ([`url_ref_target`]); every document the refs reach was fetched when the spec was
//! loaded, so resolving does no I/O. Only http(s) is allowed ([`Error::RefNotHttp`]
//! otherwise), and a relative ref must stay under its document's scope: the folder of the
//! spec's URL, or for a document reached by an absolute URL outside that folder, its own
//! folder ([`Error::RefOutsideSpecFolder`] otherwise).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::Value;
use url::Url;

use crate::Error;
use crate::document::{Document, DocumentOrigin, read_value};

/// Which loaded document a value comes from: refs inside it are relative to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct DocId(usize);

impl DocId {
    /// The spec the user named.
    pub(crate) const ROOT: DocId = DocId(0);
}

/// Where a ref points: a document and a JSON Pointer in it (percent-decoded, `~0`/`~1`
/// still escaped, as `Value::pointer` takes it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct RefTarget {
    pub(crate) doc: DocId,
    pub(crate) pointer: String,
}

/// A document that a fetched spec's refs reach, fetched when the spec was loaded.
#[derive(Debug)]
pub(crate) struct FetchedDocument {
    /// Its URL, without fragment.
    pub(crate) url: Url,
    /// The folder its relative refs must stay under.
    pub(crate) scope: Url,
    pub(crate) value: Arc<Value>,
}

/// What a loaded document's relative refs are resolved against.
#[derive(Debug)]
enum Base {
    /// A file: its folder relative to the spec's folder, already checked to stay in it.
    Folder(PathBuf),
    /// A fetched document: its URL and the folder its relative refs must stay under.
    Url { url: Url, scope: Url },
}

#[derive(Debug)]
struct LoadedDocument {
    origin: DocumentOrigin,
    base: Base,
    value: Arc<Value>,
}

/// The documents loaded so far, the spec first.
#[derive(Debug)]
pub(crate) struct Resolver {
    /// The spec's folder, for a spec read from a file.
    spec_dir: PathBuf,
    docs: Vec<LoadedDocument>,
    by_relative_path: HashMap<PathBuf, DocId>,
    by_url: HashMap<Url, DocId>,
}

impl Resolver {
    pub(crate) fn new(document: &Document) -> Self {
        match &document.origin {
            DocumentOrigin::File(path) => {
                // A spec named by a bare file name (`spec.yaml`) is in the current folder.
                let spec_dir = match path.parent() {
                    Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
                    _ => PathBuf::from("."),
                };
                let root = LoadedDocument {
                    origin: document.origin.clone(),
                    base: Base::Folder(PathBuf::new()),
                    value: Arc::clone(&document.root),
                };
                let file_name = path.file_name().map(PathBuf::from).unwrap_or_default();
                Resolver {
                    spec_dir,
                    docs: vec![root],
                    by_relative_path: HashMap::from([(file_name, DocId::ROOT)]),
                    by_url: HashMap::new(),
                }
            }
            DocumentOrigin::Url(url) => {
                let url: &Url = url;
                let root = LoadedDocument {
                    origin: document.origin.clone(),
                    base: Base::Url { url: url.clone(), scope: folder_of(url) },
                    value: Arc::clone(&document.root),
                };
                let mut docs = vec![root];
                let mut by_url = HashMap::from([(url.clone(), DocId::ROOT)]);
                for fetched in document.referenced.iter() {
                    by_url.insert(fetched.url.clone(), DocId(docs.len()));
                    docs.push(LoadedDocument {
                        origin: fetched.url.clone().into(),
                        base: Base::Url { url: fetched.url.clone(), scope: fetched.scope.clone() },
                        value: Arc::clone(&fetched.value),
                    });
                }
                Resolver { spec_dir: PathBuf::new(), docs, by_relative_path: HashMap::new(), by_url }
            }
        }
    }

    /// The value of a loaded document, shared, so that it can be read while `self` loads more.
    pub(crate) fn document(&self, doc: DocId) -> Arc<Value> {
        Arc::clone(&self.docs[doc.0].value)
    }

    /// The file or URL a loaded document came from.
    pub(crate) fn origin(&self, doc: DocId) -> &DocumentOrigin {
        &self.docs[doc.0].origin
    }

    /// Where `reference`, written in document `from`, points; loads the file it names.
    pub(crate) fn locate(&mut self, from: DocId, reference: &str) -> Result<RefTarget, Error> {
        let (document_part, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let pointer = percent_decode_str(fragment).decode_utf8_lossy().into_owned();
        if !pointer.is_empty() && !pointer.starts_with('/') {
            // A plain-name fragment (`#foo`) is a JSON Schema anchor, which only schemas
            // with `$anchor` define; it is not looked up.
            return Err(self.not_found(from, reference));
        }
        if document_part.is_empty() {
            return Ok(RefTarget { doc: from, pointer });
        }
        let doc = match &self.docs[from.0].base {
            Base::Folder(from_dir) => {
                let from_dir = from_dir.clone();
                self.load_file(from, &from_dir, reference, document_part)?
            }
            Base::Url { url, scope } => {
                let (target, _) = url_ref_target(document_part, url, scope)
                    .map_err(|refusal| refusal.into_error(reference, self.origin(from)))?;
                // Every document the refs of a fetched spec reach was fetched with it.
                *self.by_url.get(&target).ok_or_else(|| self.not_found(from, reference))?
            }
        };
        Ok(RefTarget { doc, pointer })
    }

    /// The value `target` points to, and the document it is in.
    pub(crate) fn lookup(&self, from: DocId, reference: &str, target: &RefTarget) -> Result<Value, Error> {
        let document = &self.docs[target.doc.0].value;
        document.pointer(&target.pointer).cloned().ok_or_else(|| self.not_found(from, reference))
    }

    /// Follows `value`'s `$ref` (and the refs its target has, and so on) to an object that
    /// is not a ref, for the objects that are not schemas (parameters, request bodies, path
    /// items, headers). Returns it with the document it is in.
    /// A value without a `$ref` is borrowed, not copied: most path items and parameters
    /// have none, and copying them (examples and all) was a third of building GitHub's tools.
    pub(crate) fn resolve_object<'a>(
        &mut self,
        from: DocId,
        value: &'a Value,
    ) -> Result<(DocId, Cow<'a, Value>), Error> {
        if value.get("$ref").is_none() {
            return Ok((from, Cow::Borrowed(value)));
        }
        let mut doc = from;
        let mut current = value.clone();
        let mut seen = HashSet::new();
        while let Some(reference) = current.get("$ref").and_then(Value::as_str).map(str::to_owned) {
            let target = self.locate(doc, &reference)?;
            if !seen.insert(target.clone()) {
                return Err(Error::RefCycle { reference, document: self.origin(doc).clone() });
            }
            current = self.lookup(doc, &reference, &target)?;
            doc = target.doc;
        }
        Ok((doc, Cow::Owned(current)))
    }

    pub(crate) fn not_found(&self, from: DocId, reference: &str) -> Error {
        Error::RefNotFound { reference: reference.to_owned(), document: self.origin(from).clone() }
    }

    /// Loads (once) the file `file_part` names, relative to document `from`, whose folder
    /// relative to the spec's folder is `from_dir`.
    fn load_file(&mut self, from: DocId, from_dir: &Path, reference: &str, file_part: &str) -> Result<DocId, Error> {
        let outside =
            || Error::RefOutsideSpecFolder { reference: reference.to_owned(), document: self.origin(from).clone() };
        let lowercase = file_part.to_ascii_lowercase();
        if lowercase.starts_with("http://") || lowercase.starts_with("https://") {
            return Err(Error::RemoteRefNotSupported {
                reference: reference.to_owned(),
                document: self.origin(from).clone(),
            });
        }
        if has_uri_scheme(file_part) {
            // `file:`, and any other scheme: only relative paths are allowed.
            return Err(outside());
        }
        let decoded = percent_decode_str(file_part).decode_utf8_lossy();
        let mut relative = from_dir.to_owned();
        for component in Path::new(decoded.as_ref()).components() {
            match component {
                Component::Normal(part) => relative.push(part),
                Component::CurDir => {}
                Component::ParentDir => {
                    if !relative.pop() {
                        return Err(outside());
                    }
                }
                Component::RootDir | Component::Prefix(_) => return Err(outside()),
            }
        }
        if let Some(&doc) = self.by_relative_path.get(&relative) {
            return Ok(doc);
        }
        let path = self.spec_dir.join(&relative);
        // The lexical check above cannot see symbolic links: the real path must be inside
        // the real spec folder too.
        if let Ok(real_path) = path.canonicalize() {
            let inside = self.spec_dir.canonicalize().is_ok_and(|real_dir| real_path.starts_with(real_dir));
            if !inside {
                return Err(outside());
            }
        }
        let value = read_value(&path)?;
        let doc = DocId(self.docs.len());
        let relative_dir = relative.parent().map(Path::to_owned).unwrap_or_default();
        self.docs.push(LoadedDocument {
            origin: DocumentOrigin::File(path),
            base: Base::Folder(relative_dir),
            value: Arc::new(value),
        });
        self.by_relative_path.insert(relative, doc);
        Ok(doc)
    }
}

/// Why a ref in a fetched document is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UrlRefRefusal {
    /// Not http(s): a `file:` URL, another scheme, or an absolute (or network) path.
    NotHttp,
    /// A relative ref that climbs out of its document's scope.
    OutsideScope,
    /// A ref that does not resolve to a URL at all.
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
/// fetched document at `document` whose relative refs must stay under `scope`; with the
/// scope of the target's own relative refs.
///
/// An absolute http(s) URL may point anywhere; the document it reaches keeps `scope` if
/// it is under it, else its own folder becomes its scope. A relative ref is resolved
/// against `document` (`Url::join`, which also removes `.` and `..` segments, encoded
/// or not) and must stay under `scope`; it keeps `scope`. Anything else is refused: other
/// schemes (`file:`, `ftp:`, `C:`), absolute paths (`/etc/passwd`, `\\server`) and
/// network paths (`//host/x`), which in a file would name local files.
pub(crate) fn url_ref_target(document_part: &str, document: &Url, scope: &Url) -> Result<(Url, Url), UrlRefRefusal> {
    if document_part.starts_with(['/', '\\']) {
        return Err(UrlRefRefusal::NotHttp);
    }
    if has_uri_scheme(document_part) {
        let target = Url::parse(document_part).map_err(|_| UrlRefRefusal::NotHttp)?;
        if !matches!(target.scheme(), "http" | "https") {
            return Err(UrlRefRefusal::NotHttp);
        }
        let target_scope = if is_under(&target, scope) { scope.clone() } else { folder_of(&target) };
        return Ok((target, target_scope));
    }
    let target = document.join(document_part).map_err(|_| UrlRefRefusal::Malformed)?;
    if !is_under(&target, scope) {
        return Err(UrlRefRefusal::OutsideScope);
    }
    Ok((target, scope.clone()))
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

/// Whether `url` is on the same origin (scheme, credentials, host, port) as the folder
/// `scope` and its path is under the folder's path.
fn is_under(url: &Url, scope: &Url) -> bool {
    url.scheme() == scope.scheme()
        && url.username() == scope.username()
        && url.password() == scope.password()
        && url.host() == scope.host()
        && url.port_or_known_default() == scope.port_or_known_default()
        && url.path().starts_with(scope.path())
}

/// Whether `reference` starts with a URI scheme (`file:`, `urn:`, `C:` on Windows).
fn has_uri_scheme(reference: &str) -> bool {
    let Some((scheme, _)) = reference.split_once(':') else { return false };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|first| first.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn owned((doc, value): (DocId, Cow<'_, Value>)) -> (DocId, Value) {
        (doc, value.into_owned())
    }

    fn spec_in(folder: &Path, root: Value) -> Resolver {
        Resolver::new(&Document::from_value(folder.join("spec.json"), root).unwrap())
    }

    #[test]
    fn internal_pointers_are_unescaped() {
        let folder = tempfile::tempdir().unwrap();
        let root = json!({
            "openapi": "3.1.0",
            "paths": {"/a/{id}": {"get": {"x-y~z": 1}}},
            "components": {"parameters": {"p q": {"name": "q", "in": "query"}, "alias": {"$ref": "#/components/parameters/p%20q"}}}
        });
        let mut resolver = spec_in(folder.path(), root);
        let (doc, value) =
            resolver.resolve_object(DocId::ROOT, &json!({"$ref": "#/components/parameters/alias"})).map(owned).unwrap();
        assert_eq!((doc, value), (DocId::ROOT, json!({"name": "q", "in": "query"})));
        let target = resolver.locate(DocId::ROOT, "#/paths/~1a~1%7Bid%7D/get/x-y~0z").unwrap();
        assert_eq!(resolver.lookup(DocId::ROOT, "", &target).unwrap(), json!(1));
    }

    #[test]
    fn cycles_of_refs_are_an_error_not_a_hang() {
        let folder = tempfile::tempdir().unwrap();
        let root = json!({
            "openapi": "3.0.0",
            "components": {"parameters": {"a": {"$ref": "#/components/parameters/b"}, "b": {"$ref": "#/components/parameters/a"}}}
        });
        let mut resolver = spec_in(folder.path(), root);
        let error = resolver.resolve_object(DocId::ROOT, &json!({"$ref": "#/components/parameters/a"})).unwrap_err();
        assert!(matches!(error, Error::RefCycle { .. }), "{error:?}");
        let error = resolver.resolve_object(DocId::ROOT, &json!({"$ref": "#/components/parameters/none"})).unwrap_err();
        assert!(error.to_string().starts_with("$ref `#/components/parameters/none` in "), "{error}");
    }

    #[test]
    fn files_under_the_spec_folder_are_loaded_relative_to_their_document() {
        let folder = tempfile::tempdir().unwrap();
        std::fs::create_dir(folder.path().join("params")).unwrap();
        std::fs::write(folder.path().join("params/limit.yaml"), "limit:\n  $ref: '../shared.json#/page'\n").unwrap();
        std::fs::write(folder.path().join("shared.json"), r#"{"page": {"name": "limit", "in": "query"}}"#).unwrap();
        let mut resolver = spec_in(folder.path(), json!({"openapi": "3.1.0"}));
        let (doc, value) =
            resolver.resolve_object(DocId::ROOT, &json!({"$ref": "./params/limit.yaml#/limit"})).map(owned).unwrap();
        assert_eq!(value, json!({"name": "limit", "in": "query"}));
        assert!(resolver.origin(doc).path().is_some_and(|path| path.ends_with("shared.json")));
    }

    #[test]
    fn refs_out_of_the_spec_folder_are_refused_naming_the_ref() {
        let outer = tempfile::tempdir().unwrap();
        std::fs::write(outer.path().join("secret.yaml"), "a: 1\n").unwrap();
        let folder = outer.path().join("spec");
        std::fs::create_dir(&folder).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outer.path().join("secret.yaml"), folder.join("link.yaml")).unwrap();
        let mut resolver = spec_in(&folder, json!({"openapi": "3.1.0"}));
        let mut refused = vec!["../secret.yaml", "sub/../../secret.yaml", "/etc/passwd", "file:///etc/passwd#/a"];
        if cfg!(unix) {
            refused.push("link.yaml#/a");
        }
        for reference in refused {
            let error = resolver.locate(DocId::ROOT, reference).unwrap_err();
            assert!(matches!(&error, Error::RefOutsideSpecFolder { reference: r, .. } if r == reference), "{error:?}");
            assert!(error.to_string().starts_with(&format!("$ref `{reference}` in ")), "{error}");
        }
        let error = resolver.locate(DocId::ROOT, "https://example.com/a.yaml#/a").unwrap_err();
        assert!(matches!(error, Error::RemoteRefNotSupported { .. }), "{error:?}");
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn url_refs_resolve_against_their_document_and_stay_in_its_scope() {
        let spec = url("http://host/specs/api.yaml?version=2");
        let scope = folder_of(&spec);
        assert_eq!(scope.as_str(), "http://host/specs/");
        let check = |document_part: &str, expect: Result<(&str, &str), UrlRefRefusal>| {
            let found = url_ref_target(document_part, &spec, &scope);
            let found =
                found.as_ref().map(|(target, scope)| (target.as_str(), scope.as_str())).map_err(|refusal| *refusal);
            assert_eq!(found, expect, "{document_part}");
        };
        let specs = "http://host/specs/";
        // Relative refs resolve against the document and keep its scope.
        check("common.yaml", Ok(("http://host/specs/common.yaml", specs)));
        check("./v1/../params.json", Ok(("http://host/specs/params.json", specs)));
        check("v1/pets%20list.yaml?raw=1", Ok(("http://host/specs/v1/pets%20list.yaml?raw=1", specs)));
        // ... but never climb out of it, however `..` is written.
        for outside in
            ["../secret.yaml", "v1/../../secret.yaml", "%2e%2e/secret.yaml", ".%2E/secret.yaml", "..\\secret.yaml"]
        {
            check(outside, Err(UrlRefRefusal::OutsideScope));
        }
        // The scope is a folder: `specs-private` is not under `specs`.
        check("../specs-private/x.yaml", Err(UrlRefRefusal::OutsideScope));
        // Absolute http(s) URLs may point anywhere; outside the scope, their own folder
        // becomes the scope of their relative refs.
        check("HTTP://HOST:80/specs/common.yaml", Ok(("http://host/specs/common.yaml", specs)));
        check(
            "https://other.example/lib/types.yaml",
            Ok(("https://other.example/lib/types.yaml", "https://other.example/lib/")),
        );
        check("http://host:8080/specs/x.yaml", Ok(("http://host:8080/specs/x.yaml", "http://host:8080/specs/")));
        check(
            "http://host/specs-private/x.yaml",
            Ok(("http://host/specs-private/x.yaml", "http://host/specs-private/")),
        );
        // Anything that is not http(s), or that a file would read as a local path, is refused.
        for not_http in [
            "file:///etc/passwd",
            "FILE:/etc/passwd",
            "/etc/passwd",
            "//other.example/x.yaml",
            "\\\\server\\share\\x.yaml",
            "C:/Windows/win.ini",
            "ftp://host/specs/a.yaml",
            "urn:example:schema",
        ] {
            check(not_http, Err(UrlRefRefusal::NotHttp));
        }
    }

    #[test]
    fn a_document_reached_by_an_absolute_url_keeps_its_own_scope() {
        let library = url("https://other.example/lib/v1/types.yaml");
        let scope = url("https://other.example/lib/v1/");
        let (target, target_scope) = url_ref_target("money.yaml", &library, &scope).unwrap();
        assert_eq!((target.as_str(), &target_scope), ("https://other.example/lib/v1/money.yaml", &scope));
        assert_eq!(url_ref_target("../v2/money.yaml", &library, &scope), Err(UrlRefRefusal::OutsideScope));
    }

    /// A fetched spec with the documents its refs reach, as `Document::from_url` leaves it.
    fn fetched_spec(root: Value, referenced: Vec<(&str, &str, Value)>) -> Document {
        Document {
            origin: url("http://host/specs/api.json").into(),
            version: crate::SpecVersion::V3_1,
            root: Arc::new(root),
            referenced: referenced
                .into_iter()
                .map(|(at, scope, value)| FetchedDocument { url: url(at), scope: url(scope), value: Arc::new(value) })
                .collect(),
        }
    }

    #[test]
    fn refs_of_a_fetched_spec_are_found_among_the_fetched_documents() {
        let spec = fetched_spec(
            json!({"openapi": "3.1.0", "components": {"parameters": {"self": {"$ref": "api.json#/components/parameters/limit"}, "limit": {"$ref": "common/params.json#/limit"}}}}),
            vec![
                (
                    "http://host/specs/common/params.json",
                    "http://host/specs/",
                    json!({"limit": {"$ref": "../shared.json#/page"}}),
                ),
                (
                    "http://host/specs/shared.json",
                    "http://host/specs/",
                    json!({"page": {"name": "limit", "in": "query"}}),
                ),
            ],
        );
        let mut resolver = Resolver::new(&spec);
        let (doc, value) =
            resolver.resolve_object(DocId::ROOT, &json!({"$ref": "#/components/parameters/self"})).map(owned).unwrap();
        assert_eq!(value, json!({"name": "limit", "in": "query"}));
        assert_eq!(resolver.origin(doc), &DocumentOrigin::from(url("http://host/specs/shared.json")));
        // A ref back to the spec by its URL reaches the spec itself.
        assert_eq!(
            resolver.locate(DocId(1), "../api.json#/openapi").unwrap(),
            RefTarget { doc: DocId::ROOT, pointer: "/openapi".into() }
        );
    }

    #[test]
    fn refs_of_a_fetched_spec_that_break_the_rules_name_the_ref_and_the_document() {
        let mut resolver = Resolver::new(&fetched_spec(json!({"openapi": "3.1.0"}), vec![]));
        let error = resolver.locate(DocId::ROOT, "file:///etc/passwd#/a").unwrap_err();
        assert!(
            matches!(&error, Error::RefNotHttp { reference, .. } if reference == "file:///etc/passwd#/a"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "$ref `file:///etc/passwd#/a` in http://host/specs/api.json is refused: a fetched document may reference only http(s) URLs"
        );
        let error = resolver.locate(DocId::ROOT, "../secret.yaml").unwrap_err();
        assert!(matches!(error, Error::RefOutsideSpecFolder { .. }), "{error:?}");
        assert_eq!(
            error.to_string(),
            "$ref `../secret.yaml` in http://host/specs/api.json points outside the spec's folder"
        );
        let error = resolver.locate(DocId::ROOT, "missing.json#/a").unwrap_err();
        assert!(matches!(error, Error::RefNotFound { .. }), "{error:?}");
    }
}
