//! Frontmatter YAML: block and quoted scalars, booleans, and invalid YAML read line by line.

use super::*;

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
