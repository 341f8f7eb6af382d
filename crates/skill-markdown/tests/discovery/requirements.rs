//! Requirement checks against the environment each test builds.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;

use skill_markdown::{Location, MarkdownSkill, parse};

use super::*;

/// A skill whose `metadata` (OmniAgent's shape, as JSON) is `manifest`.
fn skill_with(manifest: &str) -> MarkdownSkill {
    let text = format!("---\nname: probe\ndescription: Checks requirements.\nmetadata: {manifest}\n---\nBody.\n");
    let location = Location {
        path: "probe/SKILL.md".into(),
        dir: None,
        dir_name: "probe".to_owned(),
        has_hooks: false,
        has_scripts: false,
    };
    parse(&text, location).unwrap()
}

/// A PATH of an empty folder and a folder holding `present` (executable),
/// `not-executable` (a plain file) and `a-folder` (a folder), and three variables.
fn environment(temp: &Path, os: &'static str) -> Environment {
    let bin = temp.join("bin");
    write(&bin.join("present"), "#!/bin/sh\n");
    std::fs::set_permissions(bin.join("present"), std::fs::Permissions::from_mode(0o755)).unwrap();
    write(&bin.join("not-executable"), "#!/bin/sh\n");
    std::fs::set_permissions(bin.join("not-executable"), std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::create_dir(bin.join("a-folder")).unwrap();
    std::fs::create_dir(temp.join("empty")).unwrap();
    let path = std::env::join_paths([temp.join("empty"), bin]).unwrap();
    let vars: HashMap<String, OsString> =
        [("PATH".to_owned(), path), ("SET".to_owned(), OsString::from("1")), ("EMPTY".to_owned(), OsString::new())]
            .into_iter()
            .collect();
    Environment::new(vars, os)
}

#[test]
fn requirements_are_checked_against_the_given_environment() {
    let temp = tempfile::tempdir().unwrap();
    let linux = environment(temp.path(), "linux");
    let check = |manifest: &str, bound: Secrets, expect: Missing| {
        assert_eq!(linux.missing(&skill_with(manifest), &bound), expect, "{manifest}");
    };
    let none = Secrets::new;

    check(r#"{"requires": {"bins": ["present"]}}"#, none(), Missing::default());
    // Only a regular executable file counts.
    check(
        r#"{"requires": {"bins": ["present", "not-executable", "a-folder", "absent"]}}"#,
        none(),
        Missing { bins: strings(&["not-executable", "a-folder", "absent"]), ..Missing::default() },
    );
    check(r#"{"requires": {"anyBins": ["absent", "present"]}}"#, none(), Missing::default());
    check(
        r#"{"requires": {"anyBins": ["absent", "a-folder"]}}"#,
        none(),
        Missing { any_bins: strings(&["absent", "a-folder"]), ..Missing::default() },
    );
    check(
        r#"{"requires": {"env": ["SET", "EMPTY", "UNSET"]}}"#,
        none(),
        Missing { env: strings(&["EMPTY", "UNSET"]), ..Missing::default() },
    );
    check(r#"{"os": ["linux", "darwin"]}"#, none(), Missing::default());
    check(
        r#"{"os": ["macos", "windows"]}"#,
        none(),
        Missing { os: strings(&["darwin", "win32"]), ..Missing::default() },
    );
    // `always` skips bins, anyBins and env, but not the platform nor the secrets.
    check(
        r#"{"always": true, "os": ["darwin"], "requires": {"bins": ["absent"], "anyBins": ["absent"], "env": ["UNSET"], "secrets": ["TOKEN"]}}"#,
        none(),
        Missing { os: strings(&["darwin"]), secrets: strings(&["TOKEN"]), ..Missing::default() },
    );
    check(
        r#"{"requires": {"secrets": ["TOKEN"]}}"#,
        none(),
        Missing { secrets: strings(&["TOKEN"]), ..Missing::default() },
    );
    check(r#"{"requires": {"secrets": ["TOKEN"]}}"#, secrets(&[("TOKEN", CANARY)]), Missing::default());
    // A bound secret reaches the scripts as the variable of its name.
    check(r#"{"requires": {"env": ["TOKEN"]}}"#, secrets(&[("TOKEN", CANARY)]), Missing::default());
    // An empty value binds nothing.
    check(
        r#"{"requires": {"env": ["TOKEN"], "secrets": ["TOKEN"]}}"#,
        secrets(&[("TOKEN", "")]),
        Missing { env: strings(&["TOKEN"]), secrets: strings(&["TOKEN"]), ..Missing::default() },
    );

    let darwin = environment(&temp.path().join("darwin"), "darwin");
    assert_eq!(darwin.missing(&skill_with(r#"{"os": ["macos"]}"#), &Secrets::new()), Missing::default());
}
