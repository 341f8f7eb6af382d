//! The file and its folder: encoding, line ends, delimiters, names, hooks and scripts.

use super::*;

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
