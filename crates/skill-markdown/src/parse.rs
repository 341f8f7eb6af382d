//! From a `SKILL.md`'s text to a [`MarkdownSkill`]: the field rules of OpenClaw,
//! ClawHub, Agent Skills and OmniAgent's own shape.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::frontmatter::{self, Reading};
use crate::skill::{InstallKind, InstallSpec, MarkdownSkill, Requires, SecretDecl};

/// The largest `SKILL.md` read (OpenClaw's limit too).
pub const MAX_SKILL_FILE_BYTES: usize = 256 * 1024;

/// The keys under `metadata` that hold a vendor's manifest, in the order they are tried.
const VENDOR_KEYS: [&str; 4] = ["openclaw", "clawdbot", "moltbot", "clawdis"];

/// Keys that mark `metadata` itself as a manifest (OmniAgent's shape).
const MANIFEST_KEYS: [&str; 6] = ["emoji", "requires", "install", "always", "os", "primaryEnv"];

/// Why a `SKILL.md` cannot be used, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct ParseError {
    /// The 1-based line the problem is on (1 for problems of the whole file).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

/// Where a `SKILL.md` sits, for the fields that come from its surroundings.
#[derive(Debug, Clone)]
pub struct Location {
    /// The file's path (or `pack:<pack>/<skill>/SKILL.md`).
    pub path: PathBuf,
    /// The skill folder, if on disk.
    pub dir: Option<PathBuf>,
    /// The folder's name: the skill's name when the frontmatter has none.
    pub dir_name: String,
    /// Whether the folder has `hooks/`.
    pub has_hooks: bool,
    /// Whether the folder has `scripts/`.
    pub has_scripts: bool,
}

/// Parses a `SKILL.md` read as bytes: checks size and encoding, then the text.
pub fn parse_bytes(bytes: &[u8], location: Location) -> Result<MarkdownSkill, ParseError> {
    if bytes.len() > MAX_SKILL_FILE_BYTES {
        return Err(ParseError {
            line: 1,
            reason: format!(
                "the file is {} bytes, more than the {MAX_SKILL_FILE_BYTES} a SKILL.md may have",
                bytes.len()
            ),
        });
    }
    let text = std::str::from_utf8(bytes).map_err(|error| {
        // Line ends as the frontmatter splitter reads them: LF, CRLF or a lone CR.
        let valid = &bytes[..error.valid_up_to()];
        let line_ends = valid
            .iter()
            .enumerate()
            .filter(|(byte_idx, byte)| **byte == b'\n' || (**byte == b'\r' && valid.get(byte_idx + 1) != Some(&b'\n')))
            .count();
        let line = 1 + line_ends;
        ParseError { line, reason: "the file is not UTF-8".to_owned() }
    })?;
    parse(text, location)
}

/// Parses a `SKILL.md`'s text.
pub fn parse(text: &str, location: Location) -> Result<MarkdownSkill, ParseError> {
    let split =
        frontmatter::split(text).map_err(|error| ParseError { line: error.line, reason: error.reason.to_owned() })?;
    let (top, reading) = frontmatter::read(&split.frontmatter);
    let mut warnings = Vec::new();
    if reading == Reading::Lines {
        warnings.push("the frontmatter is not valid YAML; it was read line by line".to_owned());
    }

    let description = top.get("description").and_then(text_of).unwrap_or_default();
    if description.is_empty() {
        return Err(ParseError { line: 1, reason: "the frontmatter has no `description`".to_owned() });
    }
    let name = top.get("name").and_then(text_of).filter(|name| !name.is_empty()).unwrap_or(location.dir_name);

    let metadata = metadata_object(top.get("metadata"), &mut warnings);
    let manifest = metadata.as_ref().and_then(|metadata| {
        VENDOR_KEYS
            .iter()
            .find_map(|key| metadata.get(*key).and_then(Value::as_object))
            .or_else(|| MANIFEST_KEYS.iter().any(|key| metadata.contains_key(*key)).then_some(metadata))
    });
    // A key is looked up in the manifest first, then at the top level (ClawHub's fallback,
    // and skills that put `user-invocable` in the wrong place).
    let field = |key: &str| manifest.and_then(|manifest| manifest.get(key)).or_else(|| top.get(key));

    Ok(MarkdownSkill {
        name,
        description,
        body: split.body,
        path: location.path,
        dir: location.dir,
        emoji: field("emoji").and_then(text_of).filter(|emoji| !emoji.is_empty()),
        homepage: field("homepage").and_then(text_of),
        license: top.get("license").and_then(text_of),
        compatibility: top.get("compatibility").and_then(text_of),
        allowed_tools: top.get("allowed-tools").map(words).unwrap_or_default(),
        metadata: metadata.as_ref().map(string_entries).unwrap_or_default(),
        user_invocable: field("user-invocable").and_then(boolean).unwrap_or(true),
        disable_model_invocation: field("disable-model-invocation").and_then(boolean).unwrap_or(false),
        always: field("always").and_then(boolean).unwrap_or(false),
        os: field("os").map(list).unwrap_or_default().iter().map(|os| normalize_os(os)).collect(),
        primary_env: field("primaryEnv").and_then(text_of),
        requires: field("requires").map(requires).unwrap_or_default(),
        install: field("install").map(|install| install_specs(install, &mut warnings)).unwrap_or_default(),
        has_hooks: location.has_hooks,
        has_scripts: location.has_scripts,
        warnings,
    })
}

/// `metadata` as an object: a YAML mapping, or a JSON or JSON5 string.
fn metadata_object(value: Option<&Value>, warnings: &mut Vec<String>) -> Option<Map<String, Value>> {
    match value? {
        Value::Object(map) => Some(map.clone()),
        Value::String(text) => match json5::from_str::<Value>(text) {
            Ok(Value::Object(map)) => Some(map),
            Ok(_) => {
                warnings.push("`metadata` is not an object; ignored".to_owned());
                None
            }
            Err(error) => {
                warnings.push(format!("`metadata` is not valid JSON5 ({error}); ignored"));
                None
            }
        },
        Value::Null => None,
        _ => {
            warnings.push("`metadata` is not an object; ignored".to_owned());
            None
        }
    }
}

/// A scalar as text; `None` for nulls, lists and objects.
fn text_of(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.trim().to_owned()),
        Value::Number(number) => Some(number.to_string()),
        Value::Bool(flag) => Some(flag.to_string()),
        _ => None,
    }
}

/// OpenClaw's boolean reading: `true/1/yes/on`, `false/0/no/off`; anything else is unset.
fn boolean(value: &Value) -> Option<bool> {
    match value {
        Value::Bool(flag) => Some(*flag),
        _ => match text_of(value)?.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" | "on" => Some(true),
            "false" | "0" | "no" | "off" => Some(false),
            _ => None,
        },
    }
}

/// A list given as an array or as a comma-separated string.
fn list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items.iter().filter_map(text_of).filter(|item| !item.is_empty()).collect(),
        _ => text_of(value)
            .map(|text| text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect())
            .unwrap_or_default(),
    }
}

/// A list given as an array or as a space-separated string (Agent Skills' `allowed-tools`).
fn words(value: &Value) -> Vec<String> {
    match value {
        Value::Array(_) => list(value),
        _ => text_of(value).map(|text| text.split_whitespace().map(str::to_owned).collect()).unwrap_or_default(),
    }
}

fn string_entries(metadata: &Map<String, Value>) -> BTreeMap<String, String> {
    metadata.iter().filter_map(|(key, value)| Some((key.clone(), text_of(value)?))).collect()
}

fn normalize_os(os: &str) -> String {
    match os.to_ascii_lowercase().as_str() {
        "macos" | "darwin" | "mac" | "osx" => "darwin".to_owned(),
        "windows" | "win32" | "win" => "win32".to_owned(),
        other => other.to_owned(),
    }
}

fn requires(value: &Value) -> Requires {
    let get = |key: &str| value.get(key).map(list).unwrap_or_default();
    Requires {
        bins: get("bins"),
        any_bins: get("anyBins"),
        env: get("env"),
        config: value
            .get("config")
            .and_then(Value::as_array)
            .map_or_else(|| get("config"), |items| items.iter().filter_map(Value::as_str).map(str::to_owned).collect()),
        secrets: value.get("secrets").map(secret_decls).unwrap_or_default(),
    }
}

fn secret_decls(value: &Value) -> Vec<SecretDecl> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|item| match item {
                Value::Object(fields) => Some(SecretDecl {
                    name: fields.get("name").and_then(text_of)?,
                    description: fields.get("description").and_then(text_of),
                }),
                _ => Some(SecretDecl { name: text_of(item)?, description: None }),
            })
            .filter(|secret| !secret.name.is_empty())
            .collect(),
        _ => list(value).into_iter().map(|name| SecretDecl { name, description: None }).collect(),
    }
}

fn install_specs(value: &Value, warnings: &mut Vec<String>) -> Vec<InstallSpec> {
    let Some(items) = value.as_array() else {
        warnings.push("`install` is not a list; ignored".to_owned());
        return Vec::new();
    };
    let mut specs = Vec::new();
    for (spec_idx, item) in items.iter().enumerate() {
        let text = |key: &str| item.get(key).and_then(text_of);
        let Some(kind_name) = text("kind").or_else(|| text("type")) else {
            warnings.push(format!("install spec {}: no `kind`; dropped", spec_idx + 1));
            continue;
        };
        let Some(kind) = InstallKind::from_name(&kind_name) else {
            warnings.push(format!("install spec {}: unknown kind `{kind_name}`; dropped", spec_idx + 1));
            continue;
        };
        specs.push(InstallSpec {
            kind,
            id: text("id"),
            label: text("label"),
            bins: item.get("bins").map(list).unwrap_or_default(),
            os: item.get("os").map(list).unwrap_or_default().iter().map(|os| normalize_os(os)).collect(),
            formula: text("formula").or_else(|| text("cask")),
            package: text("package"),
            module: text("module"),
            url: text("url"),
        });
    }
    specs
}
