//! `$ref` resolution: JSON Pointers into the document itself, and into other files under
//! the spec's folder, each loaded once.
//!
//! A ref to another file is resolved against the folder of the document it is in. It must
//! stay under the folder of the spec the user named: absolute paths, `file:` URLs and
//! paths that climb out with `..` (or through a symbolic link) are refused with
//! [`Error::RefOutsideSpecFolder`]. http(s) refs are refused with
//! [`Error::RemoteRefNotSupported`] until fetching lands.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use percent_encoding::percent_decode_str;
use serde_json::Value;

use crate::Error;
use crate::document::{Document, read_value};

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

#[derive(Debug)]
struct LoadedDocument {
    path: PathBuf,
    /// The document's folder relative to the spec's folder, already checked to stay in it.
    relative_dir: PathBuf,
    value: Arc<Value>,
}

/// The documents loaded so far, the spec first.
#[derive(Debug)]
pub(crate) struct Resolver {
    spec_dir: PathBuf,
    docs: Vec<LoadedDocument>,
    by_relative_path: HashMap<PathBuf, DocId>,
}

impl Resolver {
    pub(crate) fn new(document: &Document) -> Self {
        // A spec named by a bare file name (`spec.yaml`) is in the current folder.
        let spec_dir = match document.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_owned(),
            _ => PathBuf::from("."),
        };
        let root = LoadedDocument {
            path: document.path.clone(),
            relative_dir: PathBuf::new(),
            value: Arc::clone(&document.root),
        };
        let file_name = document.path.file_name().map(PathBuf::from).unwrap_or_default();
        Resolver { spec_dir, docs: vec![root], by_relative_path: HashMap::from([(file_name, DocId::ROOT)]) }
    }

    /// The value of a loaded document, shared, so that it can be read while `self` loads more.
    pub(crate) fn document(&self, doc: DocId) -> Arc<Value> {
        Arc::clone(&self.docs[doc.0].value)
    }

    /// The file a loaded document was read from.
    pub(crate) fn path(&self, doc: DocId) -> &Path {
        &self.docs[doc.0].path
    }

    /// Where `reference`, written in document `from`, points; loads the file it names.
    pub(crate) fn locate(&mut self, from: DocId, reference: &str) -> Result<RefTarget, Error> {
        let (file_part, fragment) = reference.split_once('#').unwrap_or((reference, ""));
        let pointer = percent_decode_str(fragment).decode_utf8_lossy().into_owned();
        if !pointer.is_empty() && !pointer.starts_with('/') {
            // A plain-name fragment (`#foo`) is a JSON Schema anchor, which only schemas
            // with `$anchor` define; it is not looked up.
            return Err(self.not_found(from, reference));
        }
        if file_part.is_empty() {
            return Ok(RefTarget { doc: from, pointer });
        }
        let doc = self.load_file(from, reference, file_part)?;
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
    pub(crate) fn resolve_object(&mut self, from: DocId, value: &Value) -> Result<(DocId, Value), Error> {
        let mut doc = from;
        let mut current = value.clone();
        let mut seen = HashSet::new();
        while let Some(reference) = current.get("$ref").and_then(Value::as_str).map(str::to_owned) {
            let target = self.locate(doc, &reference)?;
            if !seen.insert(target.clone()) {
                return Err(Error::RefCycle { reference, document: self.path(doc).to_owned() });
            }
            current = self.lookup(doc, &reference, &target)?;
            doc = target.doc;
        }
        Ok((doc, current))
    }

    fn not_found(&self, from: DocId, reference: &str) -> Error {
        Error::RefNotFound { reference: reference.to_owned(), document: self.path(from).to_owned() }
    }

    /// Loads (once) the file `file_part` names, relative to document `from`.
    fn load_file(&mut self, from: DocId, reference: &str, file_part: &str) -> Result<DocId, Error> {
        let outside =
            || Error::RefOutsideSpecFolder { reference: reference.to_owned(), document: self.path(from).to_owned() };
        let lowercase = file_part.to_ascii_lowercase();
        if lowercase.starts_with("http://") || lowercase.starts_with("https://") {
            return Err(Error::RemoteRefNotSupported {
                reference: reference.to_owned(),
                document: self.path(from).to_owned(),
            });
        }
        if has_uri_scheme(file_part) {
            // `file:`, and any other scheme: only relative paths are allowed.
            return Err(outside());
        }
        let decoded = percent_decode_str(file_part).decode_utf8_lossy();
        let mut relative = self.docs[from.0].relative_dir.clone();
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
        self.docs.push(LoadedDocument { path, relative_dir, value: Arc::new(value) });
        self.by_relative_path.insert(relative, doc);
        Ok(doc)
    }
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
            resolver.resolve_object(DocId::ROOT, &json!({"$ref": "#/components/parameters/alias"})).unwrap();
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
            resolver.resolve_object(DocId::ROOT, &json!({"$ref": "./params/limit.yaml#/limit"})).unwrap();
        assert_eq!(value, json!({"name": "limit", "in": "query"}));
        assert!(resolver.path(doc).ends_with("shared.json"));
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
}
