//! Where a frontmatter's keys are: the YAML reader gives values without positions, so the
//! lines are found in the text. A top-level key of a block mapping starts at the left
//! margin (everything else in such a mapping is indented, or a comment), and an entry of
//! a nested block mapping is the first line of that block at the block's indent.

use std::collections::HashMap;

/// The 1-based line (in the frontmatter, whose first line is 1) of each top-level key;
/// the first line wins for a key written twice.
pub(super) fn top_level(frontmatter: &str) -> HashMap<String, usize> {
    let mut lines = HashMap::new();
    for (line_idx, line) in frontmatter.lines().enumerate() {
        if let Some(key) = key_at(line) {
            lines.entry(key).or_insert(line_idx + 1);
        }
    }
    lines
}

/// The line of the first top-level key written a second time, if one is.
pub(super) fn repeated(frontmatter: &str) -> Option<usize> {
    let mut seen = std::collections::HashSet::new();
    frontmatter
        .lines()
        .enumerate()
        .find_map(|(line_idx, line)| key_at(line).filter(|key| !seen.insert(key.clone())).map(|_| line_idx + 1))
}

/// The line of `key` inside the block mapping under the top-level key on `parent_line`:
/// the block is the indented lines below it, and its entries sit at the indent of its
/// first entry. `None` when the value is not such a block (a flow mapping, say).
pub(super) fn nested(frontmatter: &str, parent_line: usize, key: &str) -> Option<usize> {
    let mut indent = None;
    for (line_idx, line) in frontmatter.lines().enumerate().skip(parent_line) {
        let content = line.trim_start_matches(' ');
        if content.trim().is_empty() || content.starts_with('#') {
            continue;
        }
        let line_indent = line.len() - content.len();
        if line_indent == 0 {
            return None;
        }
        let block_indent = *indent.get_or_insert(line_indent);
        if line_indent == block_indent && key_at(content).as_deref() == Some(key) {
            return Some(line_idx + 1);
        }
    }
    None
}

/// The key a `key: value` line at the left margin starts with: plain, `"double"` or
/// `'single'` quoted.
fn key_at(line: &str) -> Option<String> {
    let (key, rest) = match line.chars().next()? {
        '"' => {
            let end = line[1..].find('"')? + 1;
            (line[1..end].to_owned(), &line[end + 1..])
        }
        '\'' => {
            let end = line[1..].find('\'')? + 1;
            (line[1..end].to_owned(), &line[end + 1..])
        }
        ' ' | '\t' | '#' | '-' | '{' | '[' | '?' => return None,
        _ => {
            let colon = line.char_indices().find_map(|(byte_idx, character)| {
                let after = &line[byte_idx + 1..];
                (character == ':' && (after.is_empty() || after.starts_with([' ', '\t']))).then_some(byte_idx)
            })?;
            (line[..colon].trim_end().to_owned(), &line[colon..])
        }
    };
    let after_colon = rest.trim_start_matches([' ', '\t']).strip_prefix(':')?;
    (after_colon.is_empty() || after_colon.starts_with([' ', '\t'])).then_some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_at_the_margin_are_found_in_every_quoting() {
        let check = |line: &str, expect: Option<&str>| assert_eq!(key_at(line).as_deref(), expect, "{line:?}");
        check("name: pdf", Some("name"));
        check("allowed-tools:", Some("allowed-tools"));
        check("\"homepage\": https://example.com", Some("homepage"));
        check("'odd key' : x", Some("odd key"));
        check("url: https://example.com:8080", Some("url"));
        check("  indented: no", None);
        check("# comment: no", None);
        check("- item: no", None);
        check("no colon here", None);
        check("http://example.com", None);
    }

    #[test]
    fn top_level_keys_skip_block_values_and_comments() {
        let frontmatter = "name: a\n# note: ignored\ndescription: |\n  text: not a key\nmetadata:\n  author: x\n";
        let lines = top_level(frontmatter);
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert_eq!((lines["name"], lines["description"], lines["metadata"]), (1, 3, 5));
        assert_eq!(repeated(frontmatter), None);
        assert_eq!(repeated("name: a\ndescription: b\n\"name\": c\n"), Some(3));
    }

    #[test]
    fn nested_entries_are_found_at_their_block_indent() {
        let frontmatter = "metadata:\n  author: x\n  openclaw:\n    emoji: y\n  emoji: z\nname: a\n  stray: no\n";
        assert_eq!(nested(frontmatter, 1, "author"), Some(2));
        assert_eq!(nested(frontmatter, 1, "openclaw"), Some(3));
        // `emoji` under `openclaw` is deeper than the block's entries: the one at line 5 is meant.
        assert_eq!(nested(frontmatter, 1, "emoji"), Some(5));
        // The block ends at the next top-level key.
        assert_eq!(nested(frontmatter, 1, "stray"), None);
        assert_eq!(nested("metadata: {a: b}\n", 1, "a"), None);
    }
}
