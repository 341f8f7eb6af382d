//! Tool names: `[A-Za-z0-9_-]`, at most 64 characters, unique within a document.

use std::collections::HashSet;

pub use skill_core::MAX_TOOL_NAME_LEN;
use skill_core::{sanitize_tool_name, shorten_tool_name};

/// The tool name for an operation: its `operationId`, else `{method}_{path}`, with
/// characters outside `[A-Za-z0-9_-]` as `_`, shortened to 64 characters when longer.
///
/// The shortening is skill-core's (`shorten_tool_name`): stable, and distinct for names
/// that share a prefix.
pub fn operation_tool_name(operation_id: Option<&str>, method: &str, path: &str) -> String {
    match operation_id.map(str::trim).filter(|id| !id.is_empty()) {
        Some(id) => shorten_tool_name(id, sanitize_tool_name(id)),
        None => {
            let full = format!("{method}_{path}");
            let mut name = method.to_ascii_lowercase();
            name.push('_');
            let mut last_was_underscore = true;
            for c in path.chars().filter(|c| !matches!(c, '{' | '}')) {
                let c = if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' };
                if c == '_' && last_was_underscore {
                    continue;
                }
                last_was_underscore = c == '_';
                name.push(c);
            }
            let name = name.trim_end_matches('_').to_owned();
            shorten_tool_name(&full, name)
        }
    }
}

/// Makes `names` unique in place, in order: the first of equal names keeps it, the next
/// ones get `_2`, `_3`, ... (cutting the name so it stays within `max_len`), skipping any
/// name already taken.
pub(crate) fn make_unique(names: &mut [String], max_len: usize) {
    let mut taken: HashSet<String> = names.iter().cloned().collect();
    let mut seen = HashSet::new();
    for name in names.iter_mut() {
        if seen.insert(name.clone()) {
            continue;
        }
        let mut n = 2;
        let unique = loop {
            let suffix = format!("_{n}");
            let mut keep = max_len.saturating_sub(suffix.len()).min(name.len());
            while !name.is_char_boundary(keep) {
                keep -= 1;
            }
            let candidate = format!("{}{suffix}", &name[..keep]);
            if !taken.contains(&candidate) {
                break candidate;
            }
            n += 1;
        };
        taken.insert(unique.clone());
        seen.insert(unique.clone());
        *name = unique;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_from_the_operation_id_else_method_and_path() {
        let check = |id: Option<&str>, method: &str, path: &str, expect: &str| {
            assert_eq!(operation_tool_name(id, method, path), expect);
        };
        check(Some("repos/get-content"), "get", "/x", "repos_get-content");
        check(Some("café.list"), "get", "/x", "caf__list");
        check(Some("  "), "get", "/users/{id}/repos", "get_users_id_repos");
        check(None, "delete", "/a.b/{c}/", "delete_a_b_c");
        check(None, "get", "/", "get");
    }

    #[test]
    fn long_names_are_bounded_stable_and_distinct() {
        let a = operation_tool_name(Some(&format!("{}_a", "get".repeat(30))), "get", "/");
        let b = operation_tool_name(Some(&format!("{}_b", "get".repeat(30))), "get", "/");
        assert_eq!((a.len(), b.len()), (64, 64));
        assert_ne!(a, b);
        assert_eq!(a, operation_tool_name(Some(&format!("{}_a", "get".repeat(30))), "post", "/other"));
        assert_eq!(&a[55..], "-8352ccb2");
        let by_path = operation_tool_name(None, "get", &"/segment".repeat(10));
        assert_eq!(by_path.len(), 64);
    }

    #[test]
    fn duplicates_get_numbered_suffixes_in_order() {
        let check = |names: &[&str], expect: &[&str]| {
            let mut names: Vec<String> = names.iter().map(|name| name.to_string()).collect();
            make_unique(&mut names, 64);
            assert_eq!(names, expect);
        };
        check(&["a", "b", "a", "a"], &["a", "b", "a_2", "a_3"]);
        check(&["a", "a", "a_2"], &["a", "a_3", "a_2"]);
        let long = "x".repeat(64);
        let mut names = vec![long.clone(), long];
        make_unique(&mut names, 64);
        assert_eq!(names[1], format!("{}_2", "x".repeat(62)));
    }
}
