//! The manifest in `metadata`: the syntaxes it may be written in and the keys it may be under.

use super::*;

#[test]
fn metadata_as_nested_yaml_mapping() {
    check(
        "metadata-nested-yaml",
        MarkdownSkill {
            metadata: BTreeMap::from([("version".to_owned(), "2.1.0".to_owned())]),
            requires: bins(&["calctl"]),
            ..expected("metadata-nested-yaml", "Calendar: list, create and move events.", BODY)
        },
    );
}

#[test]
fn metadata_as_yaml_flow_mapping() {
    check(
        "metadata-flow-yaml",
        MarkdownSkill {
            emoji: emoji("🧮"),
            primary_env: some("CALC_KEY"),
            requires: Requires { bins: strings(&["bc"]), env: strings(&["CALC_KEY"]), ..Requires::default() },
            ..expected("metadata-flow-yaml", "Evaluate arithmetic with bc.", BODY)
        },
    );
}

#[test]
fn metadata_as_single_line_json() {
    check(
        "metadata-json-line",
        MarkdownSkill {
            emoji: emoji("🔑"),
            requires: bins(&["vaultctl"]),
            install: vec![InstallSpec {
                id: some("brew"),
                label: some("Install the vault CLI (brew)"),
                bins: strings(&["vaultctl"]),
                formula: some("vault-cli"),
                ..spec(InstallKind::Brew)
            }],
            ..expected("metadata-json-line", "Read secrets from a password vault with its CLI.", BODY)
        },
    );
}

#[test]
fn metadata_as_quoted_json_string() {
    check(
        "metadata-json-quoted",
        MarkdownSkill {
            emoji: emoji("📦"),
            os: strings(&["linux"]),
            requires: Requires { any_bins: strings(&["podman", "docker"]), ..Requires::default() },
            ..expected("metadata-json-quoted", "Run containers with whichever engine is installed.", BODY)
        },
    );
}

#[test]
fn metadata_as_multi_line_json5_with_trailing_commas() {
    check(
        "metadata-json5-multiline",
        MarkdownSkill {
            emoji: emoji("🗜️"),
            user_invocable: false,
            requires: bins(&["zip"]),
            ..expected("metadata-json5-multiline", "Package folders as zip archives.", BODY)
        },
    );
}

/// `//` comments make the whole frontmatter invalid YAML, so it is read line by line
/// (hence the warning): `metadata` as JSON5 text, every other entry as YAML on its own.
#[test]
fn metadata_as_multi_line_json5_with_comments() {
    check(
        "metadata-json5-comments",
        MarkdownSkill {
            emoji: emoji("🧩"),
            os: strings(&["linux", "darwin"]),
            requires: Requires { env: strings(&["PUZZLE_TOKEN"]), ..Requires::default() },
            warnings: strings(&[LINE_BY_LINE]),
            ..expected("metadata-json5-comments", "Solve puzzles through the puzzle API.", BODY)
        },
    );
}

#[test]
fn each_vendor_key_holds_a_manifest() {
    for key in ["openclaw", "clawdbot", "moltbot", "clawdis"] {
        let case = format!("vendor-{key}");
        check(
            &case,
            MarkdownSkill {
                emoji: emoji("🐾"),
                requires: bins(&[&format!("{key}-cli")]),
                ..expected(&case, &format!("Manifest under the {key} key."), BODY)
            },
        );
    }
}

#[test]
fn vendor_keys_are_tried_in_priority_order() {
    check(
        "vendor-all-four",
        MarkdownSkill {
            emoji: emoji("1"),
            ..expected("vendor-all-four", "All four vendor keys; openclaw wins wherever it is written.", BODY)
        },
    );
    check(
        "vendor-legacy-three",
        MarkdownSkill {
            emoji: emoji("2"),
            ..expected("vendor-legacy-three", "The three legacy keys; clawdbot wins.", BODY)
        },
    );
    check(
        "vendor-moltbot-clawdis",
        MarkdownSkill {
            emoji: emoji("3"),
            ..expected("vendor-moltbot-clawdis", "Two legacy keys; moltbot wins over clawdis.", BODY)
        },
    );
}

#[test]
fn omniagent_shape_has_the_manifest_directly_under_metadata() {
    check(
        "omniagent-shape",
        MarkdownSkill {
            emoji: emoji("🌿"),
            always: true,
            // The scalar entries of `metadata` are also its Agent Skills string map.
            metadata: BTreeMap::from([("always".to_owned(), "true".to_owned()), ("emoji".to_owned(), "🌿".to_owned())]),
            requires: bins(&["git"]),
            install: vec![InstallSpec { bins: strings(&["git"]), package: some("git"), ..spec(InstallKind::Apt) }],
            ..expected("omniagent-shape", "OmniAgent's own shape, with the manifest directly under metadata.", BODY)
        },
    );
}
