//! The Agent Skills specification's rules, applied strictly (`omniagent skills validate`):
//! loading stays lenient, and this is the view of what a skill should fix to be portable.
//!
//! The rules are those of the specification (agentskills/agentskills
//! `docs/specification.mdx`): the frontmatter is a YAML mapping of six fields; `name` is 1
//! to 64 characters of `a-z`, `0-9` and `-`, with no `-` first, last or doubled, equal to
//! its folder's name; `description` 1 to 1,024 characters; `compatibility` 1 to 500;
//! `license` a string; `metadata` a map from strings to strings; `allowed-tools` a
//! space-separated string. Other properties belong under `metadata` ("Clients can use this
//! to store additional properties not defined by the Agent Skills spec"), so any other
//! top-level key is a violation. Characters are Unicode scalar values, as the
//! specification's reference library counts them.

mod key_lines;

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_yaml_ng::Value;

use crate::discover::{Unreadable, read_bounded, skill_files};
use crate::frontmatter;
use crate::parse::MAX_SKILL_FILE_BYTES;

/// The top-level fields the specification defines.
const AGENT_SKILLS_FIELDS: [&str; 6] = ["name", "description", "license", "compatibility", "metadata", "allowed-tools"];

const MAX_NAME_CHARS: usize = 64;
const MAX_DESCRIPTION_CHARS: usize = 1024;
const MAX_COMPATIBILITY_CHARS: usize = 500;

/// Which rule a [`Violation`] breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Rule {
    /// The file cannot be read as a skill file (missing, not a regular file, too large,
    /// not UTF-8), or a path given has no `SKILL.md`.
    File,
    /// No frontmatter between `---` lines at the start, or not a mapping.
    Frontmatter,
    /// The frontmatter is not valid YAML.
    Yaml,
    /// A top-level key the specification does not define.
    UnknownField,
    /// A required field is missing or empty.
    Required,
    /// A value of the wrong type (a list where a string belongs, a number in `metadata`).
    Type,
    /// Too long, or (`compatibility`) empty.
    Length,
    /// `name` has characters outside `a-z`, `0-9` and `-`.
    Characters,
    /// `name` starts or ends with `-`, or has `--`.
    Hyphens,
    /// `name` differs from its folder's name.
    FolderName,
}

impl Rule {
    /// The rule's name in `--json` output: `unknown-field`, `folder-name`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Rule::File => "file",
            Rule::Frontmatter => "frontmatter",
            Rule::Yaml => "yaml",
            Rule::UnknownField => "unknown-field",
            Rule::Required => "required",
            Rule::Type => "type",
            Rule::Length => "length",
            Rule::Characters => "characters",
            Rule::Hyphens => "hyphens",
            Rule::FolderName => "folder-name",
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// One broken rule, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Violation {
    /// The 1-based line of the file: the offending key's, line 1 for what concerns the
    /// whole frontmatter; `None` when the file could not be read.
    pub line: Option<usize>,
    /// The field (`name`, `metadata.version`, an unknown key), when one is to blame.
    pub field: Option<String>,
    /// The rule.
    pub rule: Rule,
    /// What is wrong, for people.
    pub message: String,
}

/// A `SKILL.md` (or a path given to validate) and what it breaks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValidatedFile {
    /// The file, or the path given when it holds none.
    pub path: PathBuf,
    /// The violations, by line; empty when the file follows every rule.
    pub violations: Vec<Violation>,
}

impl ValidatedFile {
    /// Whether the file follows every rule.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Validates every `SKILL.md` of `paths`, in order: a path is a `SKILL.md` (its folder is
/// the one it sits in), a skill folder, or a folder of skills, walked as discovery walks it.
/// With `explicit` (paths a person named), a path that does not exist or holds no
/// `SKILL.md` is a violation; otherwise (the default skill folders) it is passed over.
/// A file reached twice (the home's `skills/` is `./skills` when the home is the working
/// folder; a folder and a skill inside it) is validated once.
pub fn validate_paths(paths: &[PathBuf], explicit: bool) -> Vec<ValidatedFile> {
    let mut validated = Vec::new();
    let mut seen = HashSet::new();
    let mut first_time = |file: &Path| seen.insert(file.canonicalize().unwrap_or_else(|_| file.to_owned()));
    for path in paths {
        if explicit && path.is_file() {
            if first_time(path) {
                // `SKILL.md` alone sits in `.`, whose name `folder_name` finds.
                let dir = path.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
                validated.push(validate_file(dir, path));
            }
            continue;
        }
        let (files, skipped) = skill_files(std::slice::from_ref(path), explicit);
        for skipped in skipped {
            let violation = file_violation(skipped.line, skipped.reason);
            validated.push(ValidatedFile { path: skipped.path, violations: vec![violation] });
        }
        if explicit && files.is_empty() && path.is_dir() {
            let violation = file_violation(None, "no SKILL.md in this folder or below it".to_owned());
            validated.push(ValidatedFile { path: path.clone(), violations: vec![violation] });
        }
        validated.extend(files.iter().filter(|(_, file)| first_time(file)).map(|(dir, file)| validate_file(dir, file)));
    }
    validated
}

/// Validates the `SKILL.md` at `file`, whose skill folder is `dir`.
fn validate_file(dir: &Path, file: &Path) -> ValidatedFile {
    let violations = match read_bounded(file) {
        Ok(bytes) => validate_bytes(&bytes, &folder_name(dir)),
        Err(Unreadable::NotAFile) => vec![file_violation(None, "not a regular file".to_owned())],
        Err(Unreadable::TooLarge { size }) => vec![too_large(size)],
        Err(Unreadable::Io(error)) => vec![file_violation(None, format!("cannot read: {error}"))],
    };
    ValidatedFile { path: file.to_owned(), violations }
}

/// The name of `dir`, also when it is written as `.` or `..`.
fn folder_name(dir: &Path) -> String {
    if let Some(name) = dir.file_name() {
        return name.to_string_lossy().into_owned();
    }
    let canonical = dir.canonicalize().unwrap_or_default();
    canonical.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Validates a `SKILL.md` read as bytes; `folder_name` is its skill folder's name.
fn validate_bytes(bytes: &[u8], folder_name: &str) -> Vec<Violation> {
    if bytes.len() > MAX_SKILL_FILE_BYTES {
        return vec![too_large(bytes.len() as u64)];
    }
    match std::str::from_utf8(bytes) {
        Ok(text) => validate_text(text, folder_name),
        Err(error) => {
            let line = 1 + bytes[..error.valid_up_to()].iter().filter(|byte| **byte == b'\n').count();
            vec![file_violation(Some(line), "the file is not UTF-8".to_owned())]
        }
    }
}

/// Validates a `SKILL.md`'s text; `folder_name` is its skill folder's name.
fn validate_text(text: &str, folder_name: &str) -> Vec<Violation> {
    let mut violations = Violations::default();
    if text.starts_with('\u{feff}') {
        violations.push(
            Some(1),
            None,
            Rule::Frontmatter,
            "the file starts with a byte order mark, which hosts that look for `---` first (OpenClaw, \
             skills-ref) do not expect: save it as UTF-8 without one"
                .to_owned(),
        );
    }
    let split = match frontmatter::split(text) {
        Ok(split) => split,
        Err(error) => {
            violations.push(Some(error.line), None, Rule::Frontmatter, error.reason.to_owned());
            return violations.into_sorted();
        }
    };
    // The frontmatter's line 1 is the file's line 2, after the opening `---`.
    let file_line = |frontmatter_line: usize| frontmatter_line + 1;
    let top = match serde_yaml_ng::from_str::<Value>(&split.frontmatter) {
        Ok(Value::Mapping(top)) => top,
        Ok(Value::Null) => {
            violations.push(Some(1), None, Rule::Frontmatter, "the frontmatter is empty".to_owned());
            return violations.into_sorted();
        }
        Ok(other) => {
            let message = format!("the frontmatter must be a YAML mapping of fields, not {}", kind(&other));
            violations.push(Some(1), None, Rule::Frontmatter, message);
            return violations.into_sorted();
        }
        Err(error) => {
            // A repeated key is reported at the mapping's start: the repeat is what to fix.
            let repeated = key_lines::repeated(&split.frontmatter).filter(|_| error.to_string().contains("duplicate"));
            let line = repeated.or(error.location().map(|location| location.line())).map_or(1, file_line);
            let message = error.to_string();
            let message = match error.location() {
                Some(location) => {
                    message.replacen(&format!(" at line {} column {}", location.line(), location.column()), "", 1)
                }
                None => message,
            };
            violations.push(Some(line), None, Rule::Yaml, format!("the frontmatter is not valid YAML: {message}"));
            return violations.into_sorted();
        }
    };

    let key_lines = key_lines::top_level(&split.frontmatter);
    let line_of = |key: &str| Some(key_lines.get(key).map_or(1, |line| file_line(*line)));
    for key in top.keys() {
        match key.as_str() {
            Some(key) if AGENT_SKILLS_FIELDS.contains(&key) => {}
            Some(key) => violations.push(
                line_of(key),
                Some(key.to_owned()),
                Rule::UnknownField,
                format!(
                    "`{key}` is not an Agent Skills field (those are name, description, license, compatibility, \
                     metadata and allowed-tools); other properties belong under `metadata`"
                ),
            ),
            None => violations.push(
                Some(1),
                None,
                Rule::UnknownField,
                format!("the frontmatter key {} is not a field name", inline(key)),
            ),
        }
    }

    let field = |key: &str| top.get(key);
    check_name(field("name"), line_of("name"), folder_name, &mut violations);
    check_description(field("description"), line_of("description"), &mut violations);
    if let Some(value) = field("license") {
        check_string("license", value, line_of("license"), &mut violations);
    }
    if let Some(value) = field("compatibility") {
        check_compatibility(value, line_of("compatibility"), &mut violations);
    }
    if let Some(value) = field("metadata") {
        let metadata_line = key_lines.get("metadata").copied();
        let entry_line = |key: &str| {
            let nested = metadata_line.and_then(|line| key_lines::nested(&split.frontmatter, line, key));
            nested.or(metadata_line).map(file_line).or(Some(1))
        };
        check_metadata(value, line_of("metadata"), entry_line, &mut violations);
    }
    if let Some(value) = field("allowed-tools") {
        check_allowed_tools(value, line_of("allowed-tools"), &mut violations);
    }
    violations.into_sorted()
}

/// Violations as they are found, sorted by line at the end (stably: the order of the
/// checks stays within a line).
#[derive(Default)]
struct Violations(Vec<Violation>);

impl Violations {
    fn push(&mut self, line: Option<usize>, field: Option<String>, rule: Rule, message: String) {
        self.0.push(Violation { line, field, rule, message });
    }

    fn into_sorted(mut self) -> Vec<Violation> {
        self.0.sort_by_key(|violation| violation.line);
        self.0
    }
}

fn file_violation(line: Option<usize>, message: String) -> Violation {
    Violation { line, field: None, rule: Rule::File, message }
}

fn too_large(size: u64) -> Violation {
    file_violation(
        Some(1),
        format!("the file is {size} bytes, more than the {MAX_SKILL_FILE_BYTES} a SKILL.md may have"),
    )
}

/// What a value is, for messages: "a list", "a number", ….
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "empty",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A value written as YAML on one line, for messages.
fn inline(value: &Value) -> String {
    serde_yaml_ng::to_string(value).map_or_else(|_| "?".to_owned(), |text| text.trim_end().to_owned())
}

/// The text of a string field, or the violation that it is not one.
fn string_value<'a>(
    field: &str,
    value: &'a Value,
    line: Option<usize>,
    violations: &mut Violations,
) -> Option<&'a str> {
    match value {
        Value::String(text) => Some(text),
        Value::Null => {
            violations.push(line, Some(field.to_owned()), Rule::Type, format!("`{field}` is empty"));
            None
        }
        other => {
            let hint = if matches!(other, Value::Bool(_) | Value::Number(_)) { " (quote it)" } else { "" };
            let message = format!("`{field}` must be a string, not {}{hint}", kind(other));
            violations.push(line, Some(field.to_owned()), Rule::Type, message);
            None
        }
    }
}

fn check_string(field: &str, value: &Value, line: Option<usize>, violations: &mut Violations) {
    string_value(field, value, line, violations);
}

/// A required string field: present, a string, not blank. Its text, if so.
fn required_text<'a>(
    field: &str,
    value: Option<&'a Value>,
    line: Option<usize>,
    violations: &mut Violations,
) -> Option<&'a str> {
    let required = |violations: &mut Violations, message: String| {
        violations.push(line, Some(field.to_owned()), Rule::Required, message);
    };
    match value {
        None => {
            required(violations, format!("`{field}` is required"));
            None
        }
        Some(Value::Null) => {
            required(violations, format!("`{field}` is empty"));
            None
        }
        Some(value) => match string_value(field, value, line, violations)? {
            text if text.trim().is_empty() => {
                required(violations, format!("`{field}` is empty"));
                None
            }
            text => Some(text),
        },
    }
}

fn check_name(value: Option<&Value>, line: Option<usize>, folder_name: &str, violations: &mut Violations) {
    let Some(name) = required_text("name", value, line, violations) else { return };
    let mut push = |rule: Rule, message: String| violations.push(line, Some("name".to_owned()), rule, message);
    let n_chars = name.chars().count();
    if n_chars > MAX_NAME_CHARS {
        push(Rule::Length, format!("`name` has {n_chars} characters, more than {MAX_NAME_CHARS}"));
    }
    let mut listed: Vec<String> = Vec::new();
    for character in name.chars().filter(|character| !matches!(character, 'a'..='z' | '0'..='9' | '-')) {
        let shown = format!("{character:?}");
        if !listed.contains(&shown) {
            listed.push(shown);
        }
    }
    if !listed.is_empty() {
        push(
            Rule::Characters,
            format!("`name` may hold only lowercase a-z, digits and `-`, not {}", listed.join(", ")),
        );
    }
    if name.starts_with('-') || name.ends_with('-') {
        push(Rule::Hyphens, "`name` must not start or end with `-`".to_owned());
    }
    if name.contains("--") {
        push(Rule::Hyphens, "`name` must not contain `--`".to_owned());
    }
    if name != folder_name {
        push(Rule::FolderName, format!("`name` is `{name}` but its folder is `{folder_name}`: they must be equal"));
    }
}

fn check_description(value: Option<&Value>, line: Option<usize>, violations: &mut Violations) {
    let Some(description) = required_text("description", value, line, violations) else { return };
    let n_chars = description.chars().count();
    if n_chars > MAX_DESCRIPTION_CHARS {
        let message = format!("`description` has {n_chars} characters, more than 1,024");
        violations.push(line, Some("description".to_owned()), Rule::Length, message);
    }
}

fn check_compatibility(value: &Value, line: Option<usize>, violations: &mut Violations) {
    let empty = "`compatibility` is empty: it needs 1 to 500 characters, or leave it out";
    let text = match value {
        Value::Null => "",
        other => match string_value("compatibility", other, line, violations) {
            Some(text) => text,
            None => return,
        },
    };
    let n_chars = text.chars().count();
    if text.trim().is_empty() {
        violations.push(line, Some("compatibility".to_owned()), Rule::Length, empty.to_owned());
    } else if n_chars > MAX_COMPATIBILITY_CHARS {
        let message = format!("`compatibility` has {n_chars} characters, more than {MAX_COMPATIBILITY_CHARS}");
        violations.push(line, Some("compatibility".to_owned()), Rule::Length, message);
    }
}

fn check_metadata(
    value: &Value,
    line: Option<usize>,
    entry_line: impl Fn(&str) -> Option<usize>,
    violations: &mut Violations,
) {
    let Value::Mapping(entries) = value else {
        let message = match value {
            Value::Null => "`metadata` is empty: give it a map of strings, or leave it out".to_owned(),
            other => format!("`metadata` must be a map from strings to strings, not {}", kind(other)),
        };
        violations.push(line, Some("metadata".to_owned()), Rule::Type, message);
        return;
    };
    for (key, entry) in entries {
        let Some(key) = key.as_str() else {
            let message = format!("`metadata` keys must be strings, not {} ({})", kind(key), inline(key));
            violations.push(line, Some("metadata".to_owned()), Rule::Type, message);
            continue;
        };
        let field = format!("metadata.{key}");
        if !entry.is_string() {
            let hint = if matches!(entry, Value::Bool(_) | Value::Number(_)) { " (quote it)" } else { "" };
            let message = format!("`{field}` must be a string, not {}{hint}", kind(entry));
            violations.push(entry_line(key), Some(field), Rule::Type, message);
        }
    }
}

fn check_allowed_tools(value: &Value, line: Option<usize>, violations: &mut Violations) {
    if let Value::Sequence(_) = value {
        let message = "`allowed-tools` must be one space-separated string (`allowed-tools: Bash(git:*) Read`), \
                       not a list"
            .to_owned();
        violations.push(line, Some("allowed-tools".to_owned()), Rule::Type, message);
        return;
    }
    check_string("allowed-tools", value, line, violations);
}

#[cfg(test)]
mod tests;
