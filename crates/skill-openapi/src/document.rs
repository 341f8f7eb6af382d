//! Loading an OpenAPI document: one file, JSON or YAML, read leniently into a
//! `serde_json::Value`, with its version checked.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;

use crate::Error;

/// The OpenAPI version line of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpecVersion {
    /// OpenAPI 3.0.x: schemas are an extended subset of JSON Schema draft 4 (`nullable`,
    /// boolean `exclusiveMinimum`), converted to JSON Schema 2020-12 for tool inputs.
    V3_0,
    /// OpenAPI 3.1.x: schemas are JSON Schema 2020-12.
    V3_1,
}

impl fmt::Display for SpecVersion {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            SpecVersion::V3_0 => "3.0",
            SpecVersion::V3_1 => "3.1",
        })
    }
}

/// An OpenAPI 3.0 or 3.1 document, as read from its file.
///
/// Nothing beyond the version is checked when loading: the parts a tool needs are read
/// when tools are built ([`Document::tools`](crate::Document::tools)), so a document that
/// is sloppy where no tool looks still loads.
#[derive(Debug, Clone)]
pub struct Document {
    pub(crate) path: PathBuf,
    pub(crate) version: SpecVersion,
    pub(crate) root: Arc<Value>,
}

impl Document {
    /// Reads the document at `path`: JSON for `.json`, YAML for `.yaml` and `.yml`, else
    /// JSON then YAML. Refuses Swagger 2.0 and versions other than 3.0.x and 3.1.x.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let root = read_value(path)?;
        Self::from_value(path, root)
    }

    /// A document already parsed, as if read from `path`: its refs to other files are
    /// resolved against `path`'s folder.
    pub fn from_value(path: impl Into<PathBuf>, root: Value) -> Result<Self, Error> {
        let path = path.into();
        let version = detect_version(&path, &root)?;
        Ok(Document { path, version, root: Arc::new(root) })
    }

    /// The file the document was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The document's OpenAPI version line.
    pub fn version(&self) -> SpecVersion {
        self.version
    }

    /// The whole document.
    pub fn root(&self) -> &Value {
        &self.root
    }
}

/// What `openapi` (or `swagger`) says, checked: 3.0.x and 3.1.x pass. A YAML document may
/// carry the version as a number (`openapi: 3.0`), which is accepted too.
fn detect_version(path: &Path, root: &Value) -> Result<SpecVersion, Error> {
    let Some(object) = root.as_object() else {
        return Err(Error::InvalidDocument { path: path.to_owned(), reason: "the document is not an object".into() });
    };
    if object.contains_key("swagger") {
        return Err(Error::Swagger2 { path: path.to_owned() });
    }
    let found = match object.get("openapi") {
        Some(Value::String(text)) => text.trim().to_owned(),
        Some(Value::Number(number)) => number.to_string(),
        Some(other) => other.to_string(),
        None => return Err(Error::UnsupportedVersion { path: path.to_owned(), found: None }),
    };
    let mut parts = found.split('.');
    match (parts.next(), parts.next()) {
        (Some("3"), Some("0")) => Ok(SpecVersion::V3_0),
        (Some("3"), Some("1")) => Ok(SpecVersion::V3_1),
        _ => Err(Error::UnsupportedVersion { path: path.to_owned(), found: Some(found) }),
    }
}

/// Reads a JSON or YAML file into a value, choosing the parser by extension.
pub(crate) fn read_value(path: &Path) -> Result<Value, Error> {
    let bytes = std::fs::read(path).map_err(|source| Error::Read { path: path.to_owned(), source })?;
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    let extension = path.extension().and_then(|extension| extension.to_str()).map(str::to_ascii_lowercase);
    let parse_error = |format, message: String| Error::Parse { path: path.to_owned(), format, message };
    match extension.as_deref() {
        Some("json") => parse_json(bytes).map_err(|message| parse_error("JSON", message)),
        Some("yaml" | "yml") => parse_yaml(bytes).map_err(|message| parse_error("YAML", message)),
        _ => parse_json(bytes).or_else(|json_message| {
            parse_yaml(bytes).map_err(|yaml_message| {
                parse_error("JSON or YAML", format!("as JSON: {json_message}; as YAML: {yaml_message}"))
            })
        }),
    }
}

fn parse_json(bytes: &[u8]) -> Result<Value, String> {
    serde_json::from_slice(bytes).map_err(|error| error.to_string())
}

/// YAML goes through `serde_yaml_ng::Value` first: YAML mappings may have non-string keys
/// (`200:` in `responses`), which become strings here as JSON requires, and merge keys
/// (`<<: *defaults`) are applied.
fn parse_yaml(bytes: &[u8]) -> Result<Value, String> {
    let mut yaml: serde_yaml_ng::Value = serde_yaml_ng::from_slice(bytes).map_err(|error| error.to_string())?;
    yaml.apply_merge().map_err(|error| error.to_string())?;
    yaml_to_json(yaml)
}

fn yaml_to_json(yaml: serde_yaml_ng::Value) -> Result<Value, String> {
    use serde_yaml_ng::Value as Yaml;
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Bool(flag) => Value::Bool(flag),
        Yaml::Number(number) => {
            if let Some(integer) = number.as_i64() {
                Value::from(integer)
            } else if let Some(integer) = number.as_u64() {
                Value::from(integer)
            } else {
                // NaN and infinities have no JSON form; they become null.
                number.as_f64().and_then(serde_json::Number::from_f64).map_or(Value::Null, Value::Number)
            }
        }
        Yaml::String(text) => Value::String(text),
        Yaml::Sequence(items) => Value::Array(items.into_iter().map(yaml_to_json).collect::<Result<_, _>>()?),
        Yaml::Mapping(mapping) => {
            let mut object = serde_json::Map::with_capacity(mapping.len());
            for (key, value) in mapping {
                let key = match key {
                    Yaml::String(text) => text,
                    Yaml::Number(number) => number.to_string(),
                    Yaml::Bool(flag) => flag.to_string(),
                    Yaml::Null => "null".to_owned(),
                    other => return Err(format!("unsupported mapping key {other:?}")),
                };
                object.insert(key, yaml_to_json(value)?);
            }
            Value::Object(object)
        }
        Yaml::Tagged(tagged) => yaml_to_json(tagged.value)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(name: &str, text: &str) -> Result<Document, Error> {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join(name);
        std::fs::write(&path, text).unwrap();
        Document::from_file(&path)
    }

    #[test]
    fn versions_are_detected_in_json_and_yaml() {
        let check =
            |name: &str, text: &str, expect: SpecVersion| assert_eq!(load(name, text).unwrap().version(), expect);
        check("a.json", r#"{"openapi": "3.0.3", "paths": {}}"#, SpecVersion::V3_0);
        check("a.yaml", "openapi: 3.1.0\npaths: {}\n", SpecVersion::V3_1);
        check("a.yml", "openapi: 3.0\n", SpecVersion::V3_0);
        // Without a telling extension: JSON first, then YAML; a BOM is skipped.
        check(
            "spec",
            "\u{feff}openapi: '3.1.1'\npaths:\n  /a:\n    get:\n      responses:\n        200: {}\n",
            SpecVersion::V3_1,
        );
        check("spec.txt", r#"{"openapi": "3.0.0"}"#, SpecVersion::V3_0);
    }

    #[test]
    fn yaml_numeric_keys_become_strings_and_merge_keys_apply() {
        let document =
            load("a.yaml", "openapi: 3.0.0\npaths:\n  /a:\n    get:\n      responses:\n        200: {}\n").unwrap();
        assert!(document.root().pointer("/paths/~1a/get/responses/200").is_some());
        let text = "openapi: 3.1.0\nx-base: &base {type: string}\ncomponents:\n  schemas:\n    Name:\n      <<: *base\n      maxLength: 9\n";
        let document = load("b.yaml", text).unwrap();
        assert_eq!(
            document.root()["components"]["schemas"]["Name"],
            serde_json::json!({"type": "string", "maxLength": 9})
        );
    }

    #[test]
    fn swagger_2_and_other_versions_are_refused_naming_the_file() {
        let error = load("petstore.json", r#"{"swagger": "2.0", "paths": {}}"#).unwrap_err();
        assert!(matches!(&error, Error::Swagger2 { path } if path.ends_with("petstore.json")), "{error:?}");
        assert!(error.to_string().contains("petstore.json is Swagger 2.0"), "{error}");

        let error = load("next.yaml", "openapi: 3.2.0\n").unwrap_err();
        assert!(
            matches!(&error, Error::UnsupportedVersion { found: Some(found), .. } if found == "3.2.0"),
            "{error:?}"
        );
        assert!(
            error.to_string().ends_with("next.yaml is not an OpenAPI 3.0 or 3.1 document (`openapi: 3.2.0`)"),
            "{error}"
        );

        let error = load("empty.json", "{}").unwrap_err();
        assert!(matches!(error, Error::UnsupportedVersion { found: None, .. }), "{error:?}");
    }

    #[test]
    fn unparsable_files_name_the_file_and_the_format() {
        let error = load("bad.json", "openapi: 3.0.0").unwrap_err();
        assert!(matches!(error, Error::Parse { format: "JSON", .. }), "{error:?}");
        let error = load("bad", "{ [").unwrap_err();
        assert!(error.to_string().contains("bad is not valid JSON or YAML"), "{error}");
        let error = Document::from_file("/nonexistent/spec.yaml").unwrap_err();
        assert!(matches!(error, Error::Read { .. }), "{error:?}");
    }
}
