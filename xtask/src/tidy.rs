//! Checks that keep the tree honest: what ARCHITECTURE.md and the crate docs promise,
//! and the house rules that no compiler flag enforces.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    super::workspace_root()
}

fn crate_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/ exists")
        .map(|entry| entry.expect("a readable entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn rust_files(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable folder") {
        let path = entry.expect("a readable entry").path();
        if path.is_dir() && path.file_name().is_some_and(|name| name != "target") {
            rust_files(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

fn all_rust_files() -> Vec<PathBuf> {
    let mut found = Vec::new();
    for dir in ["crates", "xtask", "tests"] {
        rust_files(&root().join(dir), &mut found);
    }
    found
}

#[test]
fn architecture_md_has_a_section_per_crate() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md exists");
    for name in crate_names() {
        assert!(architecture.contains(&format!("### `{name}`")), "ARCHITECTURE.md has no `### `{name}`` section");
    }
}

#[test]
fn every_crate_opens_with_a_crate_doc() {
    for name in crate_names() {
        let src = root().join("crates").join(&name).join("src");
        let entry = if src.join("lib.rs").exists() { src.join("lib.rs") } else { src.join("main.rs") };
        let text = std::fs::read_to_string(&entry).expect("a crate entry file");
        assert!(text.starts_with("//!"), "{} does not start with a crate doc comment", entry.display());
    }
}

/// Test-support crates and the crate each one supports, which it may depend on (a test
/// harness drives that crate's API).
const TEST_SUPPORT: [(&str, &str); 2] = [("aauth-harness", "aauth-client"), ("mcp-conformance-client", "skill-mcp")];

#[test]
fn sibling_crates_depend_on_skill_core_only() {
    let siblings = ["skill-markdown", "skill-mcp", "skill-openapi", "aauth-client"];
    for name in crate_names().iter().filter(|name| *name != "omniagent-cli") {
        let manifest =
            std::fs::read_to_string(root().join("crates").join(name).join("Cargo.toml")).expect("a manifest");
        for sibling in siblings.iter().chain(&["skill-core", "omniagent-cli"]).filter(|sibling| *sibling != name) {
            let supported = TEST_SUPPORT.contains(&(name.as_str(), *sibling));
            let allowed = (*sibling == "skill-core" && name != "skill-core") || supported;
            let depends = manifest
                .lines()
                .any(|line| line.starts_with(&format!("{sibling} ")) || line.starts_with(&format!("{sibling}.")));
            assert!(allowed || !depends, "{name} depends on {sibling}");
        }
    }
}

#[test]
fn no_ignored_tests_stubs_or_debug_leftovers() {
    // Spelled in pieces so that this file does not match its own patterns.
    let banned = [concat!("#[", "ignore"), concat!("todo", "!("), concat!("unimplemented", "!("), concat!("dbg", "!(")];
    for path in all_rust_files() {
        let text = std::fs::read_to_string(&path).expect("a readable file");
        for (line_idx, line) in text.lines().enumerate() {
            for pattern in banned {
                assert!(!line.contains(pattern), "{}:{}: `{pattern}`", path.display(), line_idx + 1);
            }
            assert_eq!(line.trim_end(), line, "{}:{}: trailing whitespace", path.display(), line_idx + 1);
        }
    }
}
