//! `requires`: its lists as arrays or comma-separated strings, and declared secrets.

use super::*;

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
