//! Splitting a `SKILL.md` into frontmatter and body, and reading the frontmatter: as
//! YAML, or line by line when YAML fails, as OpenClaw does.

use std::borrow::Cow;

use serde_json::{Map, Value};

/// Why a file has no usable frontmatter, and on which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SplitError {
    pub(crate) line: usize,
    pub(crate) reason: &'static str,
}

/// A `SKILL.md`'s two parts, line ends normalized to `\n`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split {
    pub(crate) frontmatter: String,
    pub(crate) body: String,
}

/// Strips a UTF-8 BOM, turns CRLF and CR into LF, and splits at the `---` lines (which
/// may carry trailing spaces).
pub(crate) fn split(text: &str) -> Result<Split, SplitError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Most files have LF line ends already: copy only those that do not.
    let text: Cow<'_, str> = if text.contains('\r') {
        Cow::Owned(text.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        Cow::Borrowed(text)
    };
    let is_delimiter = |line: &str| line.trim_end() == "---";
    let mut lines = text.split_inclusive('\n');
    let opening_len = match lines.next() {
        Some(first) if is_delimiter(first) => first.len(),
        _ => return Err(SplitError { line: 1, reason: "no frontmatter: the file must start with a `---` line" }),
    };
    let mut offset = opening_len;
    for line in lines {
        if is_delimiter(line) {
            let frontmatter = text[opening_len..offset].to_owned();
            let body = text[offset + line.len()..].trim_start_matches('\n').to_owned();
            return Ok(Split { frontmatter, body });
        }
        offset += line.len();
    }
    Err(SplitError { line: 1, reason: "the frontmatter has no closing `---` line" })
}

/// How the frontmatter was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// As YAML.
    Yaml,
    /// Line by line, because YAML failed (e.g. an unquoted `: ` in a value).
    Lines,
}

/// The frontmatter's top-level keys.
pub(crate) fn read(frontmatter: &str) -> (Map<String, Value>, Reading) {
    match serde_yaml_ng::from_str::<Value>(frontmatter) {
        Ok(Value::Object(map)) => (map, Reading::Yaml),
        _ => (read_lines(frontmatter), Reading::Lines),
    }
}

/// OpenClaw's fallback: `key: value` lines at the left margin; indented lines continue
/// the value before them (a multi-line JSON5 `metadata`, a block scalar). Each entry is
/// read as YAML on its own when it can be (see [`yaml_entry`]); otherwise its value is
/// text, with the quotes around a single-line value removed.
fn read_lines(frontmatter: &str) -> Map<String, Value> {
    let mut map = Map::new();
    let mut current: Option<(String, String, Vec<String>)> = None;
    for line in frontmatter.lines() {
        match top_level_pair(line) {
            Some((key, value)) => {
                if let Some(entry) = current.take() {
                    insert_line_value(&mut map, entry);
                }
                current = Some((key.to_owned(), value.to_owned(), Vec::new()));
            }
            None => {
                if let Some((_, _, continuation)) = &mut current {
                    continuation.push(line.to_owned());
                }
            }
        }
    }
    if let Some(entry) = current {
        insert_line_value(&mut map, entry);
    }
    map
}

fn top_level_pair(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    let is_key = !key.is_empty() && key.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '-');
    is_key.then(|| (key, value.trim()))
}

fn insert_line_value(map: &mut Map<String, Value>, (key, value, continuation): (String, String, Vec<String>)) {
    if let Some(value) = yaml_entry(&key, &value, &continuation) {
        map.insert(key, value);
        return;
    }
    let value = match value.as_str() {
        "|" | "|-" | "|+" | ">" | ">-" | ">+" => block_scalar(value.starts_with('|'), &continuation),
        _ if continuation.iter().all(|line| line.trim().is_empty()) => unquote(&value).to_owned(),
        _ => {
            let mut joined = value;
            for line in &continuation {
                joined.push('\n');
                joined.push_str(line);
            }
            joined.trim().to_owned()
        }
    };
    map.insert(key, Value::String(value));
}

/// One entry read alone as YAML. The frontmatter as a whole is not YAML, but usually
/// only one entry is to blame (an unquoted `: ` in `description`); the others keep their
/// nesting and types this way, above all a `metadata` written as an indented YAML block,
/// which as text would be lost.
fn yaml_entry(key: &str, value: &str, continuation: &[String]) -> Option<Value> {
    let entry = format!("{key}: {value}\n{}", continuation.join("\n"));
    match serde_yaml_ng::from_str::<Value>(&entry).ok()? {
        Value::Object(mut object) if object.len() == 1 => object.remove(key),
        _ => None,
    }
}

/// A `|` (literal) or `>` (folded) block, dedented by its first line's indent.
fn block_scalar(literal: bool, lines: &[String]) -> String {
    let indent =
        lines.iter().find(|line| !line.trim().is_empty()).map_or(0, |line| line.len() - line.trim_start().len());
    // A line indented less than the first loses its indent, never its text.
    let dedented: Vec<&str> = lines
        .iter()
        .map(|line| {
            let line_indent = line.len() - line.trim_start_matches([' ', '\t']).len();
            &line[line_indent.min(indent)..]
        })
        .collect();
    let text = if literal { dedented.join("\n") } else { dedented.join(" ") };
    text.trim().to_owned()
}

fn unquote(value: &str) -> &str {
    let quoted = value.len() >= 2
        && ((value.starts_with('"') && value.ends_with('"')) || (value.starts_with('\'') && value.ends_with('\'')));
    if quoted { &value[1..value.len() - 1] } else { value }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn splits_at_delimiters_whatever_the_line_ends() {
        let check = |text: &str| {
            let split = split(text).unwrap();
            assert_eq!(split, Split { frontmatter: "name: a\n".into(), body: "Body\nmore\n".into() }, "{text:?}");
        };
        check("---\nname: a\n---\nBody\nmore\n");
        check("\u{feff}---\r\nname: a\r\n---\r\n\r\nBody\r\nmore\r\n");
        check("---\rname: a\r---\rBody\rmore\r");
        check("---   \nname: a\n--- \t\nBody\nmore\n");
    }

    #[test]
    fn refuses_files_without_frontmatter() {
        assert_eq!(split("# Title\n").unwrap_err().reason, "no frontmatter: the file must start with a `---` line");
        assert_eq!(split("").unwrap_err().line, 1);
        assert_eq!(split("---\nname: a\n").unwrap_err().reason, "the frontmatter has no closing `---` line");
    }

    #[test]
    fn falls_back_to_lines_when_yaml_fails() {
        let (map, reading) = read(
            "name: discord\ndescription: Use when you need: messages, polls\nalways: true\nmetadata: {\"moltbot\":{\"emoji\":\"🎮\"}}\nnested:\n  openclaw:\n    bins:\n      - gh\n",
        );
        assert_eq!(reading, Reading::Lines);
        // Only the entry YAML rejects is text; the others are read as YAML one by one.
        assert_eq!(
            Value::Object(map),
            json!({
                "name": "discord",
                "description": "Use when you need: messages, polls",
                "always": true,
                "metadata": {"moltbot": {"emoji": "🎮"}},
                "nested": {"openclaw": {"bins": ["gh"]}},
            })
        );
    }

    #[test]
    fn line_reading_keeps_multi_line_values_and_block_scalars() {
        let (map, reading) = read(
            "description: a: b\nsummary: |-\n  one\n  two\nfolded: >\n  one\n  two\nragged: |\n    one\n  two\nmetadata:\n  {\n    // the manifest\n    \"openclaw\": {\"emoji\": \"🛠️\",},\n  }\nquoted: 'x'\n",
        );
        assert_eq!(reading, Reading::Lines);
        assert_eq!(map["summary"], json!("one\ntwo"));
        assert_eq!(map["folded"], json!("one two"));
        // YAML rejects a block whose later lines are indented less than its first.
        assert_eq!(map["ragged"], json!("one\ntwo"));
        // JSON5 with comments is not YAML: it stays text, for `metadata`'s JSON5 reading.
        assert_eq!(map["metadata"], json!("{\n    // the manifest\n    \"openclaw\": {\"emoji\": \"🛠️\",},\n  }"));
        assert_eq!(map["quoted"], json!("x"));
    }

    #[test]
    fn yaml_reading_keeps_types() {
        let (map, reading) = read("name: a\nalways: true\nmetadata:\n  openclaw:\n    requires:\n      bins: [gh]\n");
        assert_eq!(reading, Reading::Yaml);
        assert_eq!(
            Value::Object(map),
            json!({"name": "a", "always": true, "metadata": {"openclaw": {"requires": {"bins": ["gh"]}}}})
        );
    }
}
