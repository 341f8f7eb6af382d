//! The parsing corpus: every folder of `tests/fixtures/skills/parsing` is one case, loaded
//! the way discovery loads it and compared, whole, with the skill it must give. Comparing
//! the whole [`MarkdownSkill`] means a case also fails when a field it does not mention
//! changes (an unexpected warning, a lost default).

use std::collections::BTreeMap;
use std::path::PathBuf;

use skill_markdown::{InstallKind, InstallSpec, MarkdownSkill, Requires, SecretDecl, Sources, discover};

const BODY: &str = "Body.\n";
const LINE_BY_LINE: &str = "the frontmatter is not valid YAML; it was read line by line";

fn fixture_dir(case: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/skills/parsing")).join(case)
}

/// The skill of fixture `case`: its folder, discovered as a folder that holds `SKILL.md`.
fn load(case: &str) -> MarkdownSkill {
    let discovery = discover(&Sources { dirs: vec![fixture_dir(case)], ..Sources::default() });
    assert!(discovery.skipped.is_empty(), "{case}: {:?}", discovery.skipped);
    let mut skills: Vec<MarkdownSkill> = discovery.skills.into_iter().map(|found| found.skill).collect();
    assert_eq!(skills.len(), 1, "{case}: {skills:?}");
    skills.remove(0)
}

/// What fixture `case` gives when its frontmatter sets only `name: {case}` and
/// `description`: every other field at its default.
fn expected(case: &str, description: &str, body: &str) -> MarkdownSkill {
    let dir = fixture_dir(case);
    MarkdownSkill {
        name: case.to_owned(),
        description: description.to_owned(),
        body: body.to_owned(),
        path: dir.join("SKILL.md"),
        dir: Some(dir),
        emoji: None,
        homepage: None,
        license: None,
        compatibility: None,
        allowed_tools: Vec::new(),
        metadata: BTreeMap::new(),
        user_invocable: true,
        disable_model_invocation: false,
        always: false,
        os: Vec::new(),
        primary_env: None,
        requires: Requires::default(),
        install: Vec::new(),
        has_hooks: false,
        has_scripts: false,
        warnings: Vec::new(),
    }
}

fn check(case: &str, expect: MarkdownSkill) {
    assert_eq!(load(case), expect, "{case}");
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn emoji(emoji: &str) -> Option<String> {
    Some(emoji.to_owned())
}

fn bins(bins: &[&str]) -> Requires {
    Requires { bins: strings(bins), ..Requires::default() }
}

fn spec(kind: InstallKind) -> InstallSpec {
    InstallSpec {
        kind,
        id: None,
        label: None,
        bins: Vec::new(),
        os: Vec::new(),
        formula: None,
        package: None,
        module: None,
        url: None,
    }
}

fn some(text: &str) -> Option<String> {
    Some(text.to_owned())
}

#[test]
fn plain_skill_has_every_default() {
    check(
        "plain",
        expected(
            "plain",
            "A minimal skill with only the two required fields.",
            "# Plain\n\nDo the simple thing, then stop.\n",
        ),
    );
}

#[test]
fn byte_order_mark_is_stripped() {
    check("bom", expected("bom", "Starts with a UTF-8 byte order mark.", "Body after the mark.\n"));
}

#[test]
fn crlf_line_ends_become_lf() {
    check(
        "crlf",
        MarkdownSkill {
            emoji: emoji("🪟"),
            ..expected("crlf", "Saved on Windows, with CRLF line ends.", "First line.\nSecond line.\n")
        },
    );
}

#[test]
fn cr_only_line_ends_become_lf() {
    check("cr-only", expected("cr-only", "Saved by an old Mac editor, CR only.", "Line one.\nLine two.\n"));
}

#[test]
fn delimiters_may_carry_trailing_blanks() {
    check(
        "delimiter-trailing-spaces",
        expected("delimiter-trailing-spaces", "Both delimiter lines carry trailing blanks.", BODY),
    );
}

#[test]
fn missing_name_falls_back_to_the_folder_name() {
    check("unnamed-skill", expected("unnamed-skill", "Has no name, so the folder names it.", BODY));
}

#[test]
fn unquoted_colon_in_description_is_read_line_by_line() {
    check(
        "colon-in-description",
        MarkdownSkill {
            emoji: emoji("💬"),
            user_invocable: false,
            requires: Requires { config: strings(&["channels.chat"]), ..Requires::default() },
            warnings: strings(&[LINE_BY_LINE]),
            ..expected(
                "colon-in-description",
                "Use when you need the chat service: send messages, start polls, or pin threads.",
                BODY,
            )
        },
    );
}

/// Regression: when the frontmatter was read line by line, a `metadata` written as an
/// indented YAML block was kept as text, failed as JSON5 and was dropped.
#[test]
fn line_by_line_reading_keeps_a_nested_yaml_metadata() {
    check(
        "colon-with-nested-metadata",
        MarkdownSkill {
            emoji: emoji("📬"),
            metadata: BTreeMap::from([("version".to_owned(), "1.4.0".to_owned())]),
            requires: bins(&["mailctl"]),
            warnings: strings(&[LINE_BY_LINE]),
            ..expected("colon-with-nested-metadata", "Mail: send, read and sort messages.", BODY)
        },
    );
}

#[test]
fn literal_block_scalar_keeps_line_breaks() {
    check(
        "block-literal",
        expected("block-literal", "Build apps against the model API.\nTRIGGER when the code imports its SDK.", BODY),
    );
}

#[test]
fn folded_block_scalar_joins_lines() {
    check("block-folded", expected("block-folded", "Folded lines become one line.\nA blank line keeps a break.", BODY));
}

#[test]
fn double_quoted_description_may_hold_colons() {
    check(
        "quoted-description",
        MarkdownSkill {
            license: some("Proprietary. See LICENSE.txt for the terms"),
            ..expected(
                "quoted-description",
                "Documents: create, edit and review them. Use `docgen` for: reports, letters.",
                BODY,
            )
        },
    );
}

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

#[test]
fn requires_lists_as_arrays() {
    check(
        "requires-arrays",
        MarkdownSkill {
            requires: Requires {
                bins: strings(&["git", "gh"]),
                any_bins: strings(&["claude", "codex"]),
                env: strings(&["GH_TOKEN"]),
                config: strings(&["channels.git"]),
                secrets: vec![SecretDecl { name: "GH_TOKEN".to_owned(), description: None }],
            },
            ..expected("requires-arrays", "Every requires list written as an array.", BODY)
        },
    );
}

#[test]
fn requires_lists_as_comma_separated_strings() {
    check(
        "requires-strings",
        MarkdownSkill {
            os: strings(&["darwin", "win32"]),
            requires: Requires {
                bins: strings(&["git", "gh"]),
                any_bins: strings(&["claude", "codex"]),
                env: strings(&["GH_TOKEN"]),
                config: strings(&["channels.git", "tools.shell"]),
                secrets: vec![
                    SecretDecl { name: "GH_TOKEN".to_owned(), description: None },
                    SecretDecl { name: "WEBHOOK_URL".to_owned(), description: None },
                ],
            },
            ..expected("requires-strings", "Every requires list written as a comma-separated string.", BODY)
        },
    );
}

/// The seven install specs of `install-kind` and `install-type`, in their order.
fn every_install_kind(download_url: &str, download_os: &[&str]) -> Vec<InstallSpec> {
    vec![
        InstallSpec { formula: some("jq"), ..spec(InstallKind::Brew) },
        InstallSpec { package: some("@scope/tool"), ..spec(InstallKind::Node) },
        InstallSpec { module: some("example.com/cmd/gotool@v1.2.0"), ..spec(InstallKind::Go) },
        InstallSpec { package: some("ruff"), ..spec(InstallKind::Uv) },
        InstallSpec { url: some(download_url), os: strings(download_os), ..spec(InstallKind::Download) },
        InstallSpec { package: some("jq"), ..spec(InstallKind::Apt) },
        InstallSpec { package: some("prettier"), ..spec(InstallKind::Npm) },
    ]
}

#[test]
fn install_specs_named_with_kind() {
    let mut install = every_install_kind("https://example.com/tool.tar.gz", &["darwin", "linux"]);
    install[0].id = some("brew");
    install[0].label = some("Install jq (brew)");
    let bins_of = [&["jq"][..], &["tool"], &["gotool"], &["ruff"], &[], &["jq"], &["prettier"]];
    for (spec, bins) in install.iter_mut().zip(bins_of) {
        spec.bins = strings(bins);
    }
    check(
        "install-kind",
        MarkdownSkill { install, ..expected("install-kind", "One install spec per kind, named with `kind`.", BODY) },
    );
}

#[test]
fn install_specs_named_with_type_in_any_case() {
    let mut install = every_install_kind("https://example.com/tool.zip", &["win32"]);
    install[2].module = some("example.com/cmd/gotool");
    check(
        "install-type",
        MarkdownSkill {
            install,
            ..expected("install-type", "One install spec per kind, named with `type`, in any case.", BODY)
        },
    );
}

#[test]
fn unusable_install_specs_are_dropped_with_a_warning_and_the_skill_kept() {
    check(
        "install-unknown",
        MarkdownSkill {
            requires: bins(&["fd"]),
            install: vec![InstallSpec { bins: strings(&["fd"]), formula: some("fd"), ..spec(InstallKind::Brew) }],
            warnings: strings(&["install spec 1: unknown kind `pip`; dropped", "install spec 2: no `kind`; dropped"]),
            ..expected("install-unknown", "Install specs that cannot be used are dropped; the skill stays.", BODY)
        },
    );
}

#[test]
fn agent_skills_fields() {
    check(
        "agent-skills",
        MarkdownSkill {
            license: some("Apache-2.0"),
            compatibility: some("Needs Python 3.11 and network access"),
            allowed_tools: strings(&["Bash(python:*)", "Read", "Write"]),
            metadata: BTreeMap::from([
                ("author".to_owned(), "example-org".to_owned()),
                ("revision".to_owned(), "3".to_owned()),
                ("version".to_owned(), "1.0".to_owned()),
            ]),
            ..expected("agent-skills", "Fill in PDF forms and pull tables out of them.", BODY)
        },
    );
}

#[test]
fn invocation_policy_platforms_and_primary_env() {
    check(
        "invocation",
        MarkdownSkill {
            homepage: some("https://example.com/invocation"),
            user_invocable: false,
            disable_model_invocation: true,
            always: true,
            os: strings(&["darwin", "linux", "win32"]),
            primary_env: some("INVOKE_KEY"),
            ..expected("invocation", "Invocation policy, platforms and the primary credential.", BODY)
        },
    );
}

#[test]
fn secrets_declared_by_name() {
    check(
        "secrets-names",
        MarkdownSkill {
            requires: Requires {
                secrets: vec![
                    SecretDecl { name: "TOKEN".to_owned(), description: None },
                    SecretDecl { name: "WEBHOOK_URL".to_owned(), description: None },
                ],
                ..Requires::default()
            },
            ..expected("secrets-names", "Declares its secrets by name.", BODY)
        },
    );
}

#[test]
fn secrets_declared_with_descriptions() {
    check(
        "secrets-described",
        MarkdownSkill {
            requires: Requires {
                secrets: vec![
                    SecretDecl { name: "TOKEN".to_owned(), description: some("API token with read scope") },
                    SecretDecl { name: "WEBHOOK_URL".to_owned(), description: None },
                ],
                ..Requires::default()
            },
            ..expected("secrets-described", "Declares its secrets with descriptions.", BODY)
        },
    );
}

#[test]
fn booleans_as_words_and_digits() {
    check(
        "booleans-a",
        MarkdownSkill {
            user_invocable: false,
            disable_model_invocation: true,
            always: true,
            ..expected("booleans-a", "Booleans as no, yes and on.", BODY)
        },
    );
    check(
        "booleans-b",
        MarkdownSkill {
            user_invocable: false,
            disable_model_invocation: true,
            always: true,
            ..expected("booleans-b", "Booleans as off, 1 and TRUE.", BODY)
        },
    );
    check(
        "booleans-c",
        MarkdownSkill {
            user_invocable: false,
            always: true,
            ..expected("booleans-c", "Booleans as 0 and Yes; an unknown word keeps the default.", BODY)
        },
    );
}

#[test]
fn hooks_and_scripts_folders_are_noticed() {
    check(
        "with-folders",
        MarkdownSkill {
            has_hooks: true,
            has_scripts: true,
            ..expected(
                "with-folders",
                "Ships hooks and scripts beside its SKILL.md.",
                "Run `{baseDir}/scripts/run.sh`.\n",
            )
        },
    );
}

#[test]
fn lower_case_skill_md_is_read() {
    check(
        "lowercase-file",
        MarkdownSkill {
            path: fixture_dir("lowercase-file").join("skill.md"),
            ..expected("lowercase-file", "The file is named skill.md, in lower case.", BODY)
        },
    );
}

#[test]
fn every_fixture_folder_has_a_case() {
    let cases = [
        "agent-skills",
        "block-folded",
        "block-literal",
        "bom",
        "booleans-a",
        "booleans-b",
        "booleans-c",
        "colon-in-description",
        "colon-with-nested-metadata",
        "cr-only",
        "crlf",
        "delimiter-trailing-spaces",
        "install-kind",
        "install-type",
        "install-unknown",
        "invocation",
        "lowercase-file",
        "metadata-flow-yaml",
        "metadata-json-line",
        "metadata-json-quoted",
        "metadata-json5-comments",
        "metadata-json5-multiline",
        "metadata-nested-yaml",
        "omniagent-shape",
        "plain",
        "quoted-description",
        "requires-arrays",
        "requires-strings",
        "secrets-described",
        "secrets-names",
        "unnamed-skill",
        "vendor-all-four",
        "vendor-clawdbot",
        "vendor-clawdis",
        "vendor-legacy-three",
        "vendor-moltbot",
        "vendor-moltbot-clawdis",
        "vendor-openclaw",
        "with-folders",
    ];
    let mut folders: Vec<String> = std::fs::read_dir(fixture_dir(""))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    folders.sort();
    assert_eq!(folders, cases);
}
