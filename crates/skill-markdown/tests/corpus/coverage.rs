//! Every fixture folder of the corpus has a case.

use super::*;

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
