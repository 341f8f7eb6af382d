//! `$ref` resolution: JSON Pointers into the document itself, and into other documents,
//! each loaded once.
//!
//! In a spec read from a file, a ref to another file is resolved against the folder of the
//! document it is in and read when first reached, under these rules, so that a spec cannot
//! copy a private file (a key, a token cache) into the tool schemas sent to a model:
//!
//! - It must stay under the folder of the spec the user named: absolute paths, `file:`
//!   URLs and paths that climb out with `..` (or through a symbolic link) are refused with
//!   [`Error::RefOutsideSpecFolder`]; http(s) refs with [`Error::RemoteRefNotSupported`].
//! - It must name a document: a file ending in `.json`, `.yaml` or `.yml`
//!   ([`Error::RefNotADocument`]).
//! - No folder or file on its way may be hidden (a name starting with `.`), as written or
//!   once symbolic links are resolved ([`Error::RefHidden`]).
//! - It may not name a file the host named private, nor enter such a folder
//!   ([`LoadOptions::with_private_path`](crate::LoadOptions::with_private_path)),
//!   checked on the real path, symbolic links resolved ([`Error::RefInPrivatePath`]).
//!
//! In a fetched spec, every ref is resolved against the URL of the document it is in
//! ([`url_ref_target`]) and the result must be an http(s) URL ([`Error::RefNotHttp`]
//! otherwise) on the spec's origin (scheme, host and port) under the folder of the spec's
//! URL ([`Error::RefOutsideSpecFolder`] otherwise): one rule, for relative and absolute refs
//! alike, so that a fetched spec cannot make the agent request another host (a cloud
//! metadata address, a private network) or another part of its own. Every document the refs
//! reach was fetched when the spec was loaded, so resolving does no I/O.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::Value;
use url::Url;

use crate::Error;
use crate::document::{Document, DocumentOrigin, Format, read_value};
use skill_core::redact::url as redacted;

mod fetched;

pub(crate) use fetched::{folder_of, url_ref_target};

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
pub(crate) struct FetchedDocument {
    /// Its URL, without fragment.
    pub(crate) url: Url,
    pub(crate) value: Arc<Value>,
}

/// The URL redacted: it may carry the spec URL's user info.
impl fmt::Debug for FetchedDocument {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_struct("FetchedDocument").field("url", &redacted(&self.url).as_str()).finish_non_exhaustive()
    }
}

/// What a loaded document's relative refs are resolved against.
#[derive(Debug)]
enum Base {
    /// A file: its folder relative to the spec's folder, already checked to stay in it.
    Folder(PathBuf),
    /// A fetched document: its URL.
    Url(Url),
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
    /// The paths (files and folders) no file ref may name or enter, symbolic links resolved.
    private_paths: Arc<[PathBuf]>,
    /// The folder of the spec's URL, for a fetched spec: every ref must stay under it.
    scope: Option<Url>,
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
                    private_paths: Arc::clone(&document.private_paths),
                    scope: None,
                    docs: vec![root],
                    by_relative_path: HashMap::from([(file_name, DocId::ROOT)]),
                    by_url: HashMap::new(),
                }
            }
            DocumentOrigin::Url(url) => {
                let url: &Url = url;
                let root = LoadedDocument {
                    origin: document.origin.clone(),
                    base: Base::Url(url.clone()),
                    value: Arc::clone(&document.root),
                };
                let mut docs = vec![root];
                let mut by_url = HashMap::from([(url.clone(), DocId::ROOT)]);
                for fetched in document.referenced.iter() {
                    by_url.insert(fetched.url.clone(), DocId(docs.len()));
                    docs.push(LoadedDocument {
                        origin: fetched.url.clone().into(),
                        base: Base::Url(fetched.url.clone()),
                        value: Arc::clone(&fetched.value),
                    });
                }
                Resolver {
                    spec_dir: PathBuf::new(),
                    private_paths: Arc::clone(&document.private_paths),
                    scope: Some(folder_of(url)),
                    docs,
                    by_relative_path: HashMap::new(),
                    by_url,
                }
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
            Base::Url(url) => {
                let Some(scope) = &self.scope else { return Err(self.not_found(from, reference)) };
                let target = url_ref_target(document_part, url, scope)
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
    /// relative to the spec's folder is `from_dir`, under the rules of the module doc.
    fn load_file(&mut self, from: DocId, from_dir: &Path, reference: &str, file_part: &str) -> Result<DocId, Error> {
        let (reference, document) = (reference.to_owned(), self.origin(from).clone());
        let outside = || Error::RefOutsideSpecFolder { reference: reference.clone(), document: document.clone() };
        let hidden = || Error::RefHidden { reference: reference.clone(), document: document.clone() };
        let not_a_document = || Error::RefNotADocument { reference: reference.clone(), document: document.clone() };
        let lowercase = file_part.to_ascii_lowercase();
        if lowercase.starts_with("http://") || lowercase.starts_with("https://") {
            return Err(Error::RemoteRefNotSupported { reference, document });
        }
        if has_uri_scheme(file_part) {
            // `file:`, and any other scheme: only relative paths are allowed.
            return Err(outside());
        }
        let decoded = percent_decode_str(file_part).decode_utf8_lossy();
        let mut relative = from_dir.to_owned();
        for component in Path::new(decoded.as_ref()).components() {
            match component {
                Component::Normal(part) if is_hidden(part) => return Err(hidden()),
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
        // A document loaded already (the spec itself, or a file that passed these checks).
        if let Some(&doc) = self.by_relative_path.get(&relative) {
            return Ok(doc);
        }
        if !names_a_document(&relative) {
            return Err(not_a_document());
        }
        let path = self.spec_dir.join(&relative);
        // The checks above cannot see symbolic links: the real path must pass them too.
        let real_path = path.canonicalize().map_err(|source| Error::Read { path: path.clone(), source })?;
        let real_dir =
            self.spec_dir.canonicalize().map_err(|source| Error::Read { path: self.spec_dir.clone(), source })?;
        let Ok(inside) = real_path.strip_prefix(&real_dir) else { return Err(outside()) };
        if inside.components().any(|component| is_hidden(component.as_os_str())) {
            return Err(hidden());
        }
        if !names_a_document(&real_path) {
            return Err(not_a_document());
        }
        // `starts_with` holds for the private path itself: a private file, or anything under
        // a private folder.
        if let Some(private) = self.private_paths.iter().find(|private| real_path.starts_with(private)) {
            return Err(Error::RefInPrivatePath { reference, document, path: private.clone() });
        }
        // The real path is read, the one checked, not one whose links might since have changed.
        let value = read_value(&real_path, &path)?;
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

/// A hidden file or folder: its name starts with `.`.
fn is_hidden(name: &OsStr) -> bool {
    name.as_encoded_bytes().starts_with(b".")
}

/// Whether `path`'s file name ends in `.json`, `.yaml` or `.yml` (any case).
fn names_a_document(path: &Path) -> bool {
    path.file_name().and_then(OsStr::to_str).and_then(Format::from_extension).is_some()
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

    #[test]
    fn file_refs_name_json_or_yaml_documents_only() {
        let folder = tempfile::tempdir().unwrap();
        let dir = folder.path();
        std::fs::write(dir.join("agent.jwk"), r#"{"kty": "OKP", "d": "private"}"#).unwrap();
        std::fs::write(dir.join("notes.txt"), r#"{"a": 1}"#).unwrap();
        std::fs::write(dir.join("params.YML"), "a: 1\n").unwrap();
        std::os::unix::fs::symlink(dir.join("agent.jwk"), dir.join("key.json")).unwrap();
        let mut resolver = spec_in(dir, json!({"openapi": "3.1.0"}));
        for reference in ["agent.jwk", "agent.jwk#/d", "notes.txt#/a", "key.json#/d", "params"] {
            let error = resolver.locate(DocId::ROOT, reference).unwrap_err();
            assert!(matches!(&error, Error::RefNotADocument { reference: r, .. } if r == reference), "{error:?}");
            assert_eq!(
                error.to_string(),
                format!(
                    "$ref `{reference}` in {} is refused: a spec may reference only .json, .yaml and .yml files",
                    dir.join("spec.json").display()
                )
            );
        }
        let target = resolver.locate(DocId::ROOT, "params.YML#/a").unwrap();
        assert_eq!(resolver.lookup(DocId::ROOT, "params.YML#/a", &target).unwrap(), json!(1));
    }

    #[test]
    fn file_refs_through_hidden_files_or_folders_are_refused() {
        let folder = tempfile::tempdir().unwrap();
        let dir = folder.path();
        std::fs::create_dir_all(dir.join(".secrets")).unwrap();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join(".secrets/token.json"), r#"{"token": "t0ken"}"#).unwrap();
        std::fs::write(dir.join(".env.json"), r#"{"token": "t0ken"}"#).unwrap();
        std::fs::write(dir.join("sub/ok.json"), r#"{"a": 1}"#).unwrap();
        std::os::unix::fs::symlink(dir.join(".secrets/token.json"), dir.join("visible.json")).unwrap();
        std::os::unix::fs::symlink(dir.join(".secrets"), dir.join("shared")).unwrap();
        let mut resolver = spec_in(dir, json!({"openapi": "3.1.0"}));
        for reference in [
            ".secrets/token.json#/token",
            ".env.json",
            "sub/../.env.json",
            "sub/%2Eenv.json",
            "visible.json",
            "shared/token.json",
        ] {
            let error = resolver.locate(DocId::ROOT, reference).unwrap_err();
            assert!(matches!(&error, Error::RefHidden { reference: r, .. } if r == reference), "{error:?}");
            assert!(
                error
                    .to_string()
                    .ends_with("is refused: it names a hidden file or folder (one whose name starts with `.`)"),
                "{error}"
            );
        }
        // `.` and `..` are no hidden names.
        resolver.locate(DocId::ROOT, "./sub/../sub/ok.json#/a").unwrap();
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    /// A fetched spec with the documents its refs reach, as `Document::from_url` leaves it.
    fn fetched_spec(root: Value, referenced: Vec<(&str, Value)>) -> Document {
        Document {
            origin: url("http://host/specs/api.json").into(),
            version: crate::SpecVersion::V3_1,
            root: Arc::new(root),
            referenced: referenced
                .into_iter()
                .map(|(at, value)| FetchedDocument { url: url(at), value: Arc::new(value) })
                .collect(),
            private_paths: Arc::from([]),
            from_swagger_2: false,
        }
    }

    #[test]
    fn refs_of_a_fetched_spec_are_found_among_the_fetched_documents() {
        let spec = fetched_spec(
            json!({"openapi": "3.1.0", "components": {"parameters": {"self": {"$ref": "api.json#/components/parameters/limit"}, "limit": {"$ref": "common/params.json#/limit"}}}}),
            vec![
                ("http://host/specs/common/params.json", json!({"limit": {"$ref": "../shared.json#/page"}})),
                ("http://host/specs/shared.json", json!({"page": {"name": "limit", "in": "query"}})),
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
