use super::*;

/// The violations of a `SKILL.md` with `frontmatter` in folder `pdf`, as
/// `line field rule` strings (field `-` when none).
fn found(frontmatter: &str) -> Vec<String> {
    found_in("pdf", &format!("---\n{frontmatter}---\nBody.\n"))
}

fn found_in(folder: &str, text: &str) -> Vec<String> {
    validate_text(text, folder)
        .iter()
        .map(|violation| {
            let line = violation.line.map_or("-".to_owned(), |line| line.to_string());
            format!("{line} {} {}", violation.field.as_deref().unwrap_or("-"), violation.rule)
        })
        .collect()
}

fn check(frontmatter: &str, expect: &[&str]) {
    assert_eq!(found(frontmatter), expect, "{frontmatter}");
}

const VALID: &str = "name: pdf\ndescription: Fill PDF forms.\n";

#[test]
fn a_skill_with_every_field_right_has_no_violation() {
    check(VALID, &[]);
    check(
        "name: pdf\ndescription: d\nlicense: Apache-2.0\ncompatibility: Needs qpdf\nmetadata:\n  author: me\n  version: \"1.0\"\nallowed-tools: Bash(git:*) Read\n",
        &[],
    );
    // Boundaries: 64, 1,024 and 500 characters, counted as characters, not bytes.
    let name = "a".repeat(64);
    assert_eq!(found_in(&name, &format!("---\nname: {name}\ndescription: d\n---\n")), Vec::<String>::new());
    check(&format!("name: pdf\ndescription: {}\n", "é".repeat(1024)), &[]);
    check(&format!("name: pdf\ndescription: d\ncompatibility: {}\n", "x".repeat(500)), &[]);
    check("name: pdf\ndescription: d\nmetadata: {author: me}\n", &[]);
}

#[test]
fn name_rules() {
    let name_check = |name: &str, expect: &[&str]| {
        let text = format!("---\nname: {name}\ndescription: d\n---\n");
        assert_eq!(found_in(name.trim_matches('"'), &text), expect, "{name}");
    };
    name_check("PDF-Processing", &["2 name characters"]);
    name_check("my_skill", &["2 name characters"]);
    name_check("café", &["2 name characters"]);
    name_check("\"-pdf\"", &["2 name hyphens"]);
    name_check("pdf-", &["2 name hyphens"]);
    name_check("pdf--processing", &["2 name hyphens"]);
    name_check(&"a".repeat(65), &["2 name length"]);
    check("name: other\ndescription: d\n", &["2 name folder-name"]);
    check("description: d\n", &["1 name required"]);
    check("name: \"\"\ndescription: d\n", &["2 name required"]);
    check("name:\ndescription: d\n", &["2 name required"]);
    check("name: [pdf]\ndescription: d\n", &["2 name type"]);
}

#[test]
fn name_messages_say_what_to_change() {
    let violations = validate_text("---\nname: My_Skill\ndescription: d\n---\n", "my-skill");
    let messages: Vec<&str> = violations.iter().map(|violation| violation.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`name` may hold only lowercase a-z, digits and `-`, not 'M', '_', 'S'",
            "`name` is `My_Skill` but its folder is `my-skill`: they must be equal",
        ]
    );
}

#[test]
fn description_compatibility_and_license_rules() {
    check("name: pdf\n", &["1 description required"]);
    check("name: pdf\ndescription: \"  \"\n", &["3 description required"]);
    check(&format!("name: pdf\ndescription: {}\n", "x".repeat(1025)), &["3 description length"]);
    check("name: pdf\ndescription: 42\n", &["3 description type"]);
    check(&format!("{VALID}compatibility: {}\n", "x".repeat(501)), &["4 compatibility length"]);
    check(&format!("{VALID}compatibility: \"\"\n"), &["4 compatibility length"]);
    check(&format!("{VALID}compatibility: [linux]\n"), &["4 compatibility type"]);
    check(&format!("{VALID}license: [MIT, Apache-2.0]\n"), &["4 license type"]);
}

#[test]
fn metadata_is_a_map_of_strings() {
    check(&format!("{VALID}metadata: text\n"), &["4 metadata type"]);
    check(&format!("{VALID}metadata:\n"), &["4 metadata type"]);
    check(
        &format!("{VALID}metadata:\n  author: me\n  version: 1.0\n  openclaw:\n    emoji: x\n  beta: true\n"),
        &["6 metadata.version type", "7 metadata.openclaw type", "9 metadata.beta type"],
    );
    // A flow mapping has no lines of its own: the entries are blamed on `metadata`'s line.
    check(&format!("{VALID}metadata: {{\"openclaw\": {{\"emoji\": \"x\"}}}}\n"), &["4 metadata.openclaw type"]);
    let violations = validate_text(&format!("---\n{VALID}metadata:\n  version: 1.0\n---\n"), "pdf");
    assert_eq!(violations[0].message, "`metadata.version` must be a string, not a number (quote it)");
}

#[test]
fn allowed_tools_is_one_space_separated_string() {
    check(&format!("{VALID}allowed-tools: Read\n"), &[]);
    check(&format!("{VALID}allowed-tools:\n  - Read\n  - Bash(git:*)\n"), &["4 allowed-tools type"]);
}

#[test]
fn every_unknown_top_level_key_is_named_on_its_line() {
    check(
        &format!("{VALID}homepage: https://example.com\n\"user-invocable\": true\nmetadata:\n  homepage: fine\n"),
        &["4 homepage unknown-field", "5 user-invocable unknown-field"],
    );
    let violations = validate_text(&format!("---\n{VALID}emoji: x\n---\n"), "pdf");
    assert_eq!(
        violations[0].message,
        "`emoji` is not an Agent Skills field (those are name, description, license, compatibility, metadata and \
         allowed-tools); other properties belong under `metadata`"
    );
}

#[test]
fn frontmatter_that_is_missing_or_not_yaml_stops_the_checks() {
    assert_eq!(found_in("pdf", "# Title\n"), ["1 - frontmatter"]);
    assert_eq!(found_in("pdf", "---\nname: pdf\n"), ["1 - frontmatter"]);
    assert_eq!(found_in("pdf", "---\n---\n"), ["1 - frontmatter"]);
    assert_eq!(found_in("pdf", "---\n- a\n- b\n---\n"), ["1 - frontmatter"]);
    // The unquoted `: ` that OpenClaw's line reader forgives, reported on its line.
    let text = "---\nname: pdf\ndescription: Use when: forms\n---\n";
    assert_eq!(found_in("pdf", text), ["3 - yaml"]);
    assert!(validate_text(text, "pdf")[0].message.starts_with("the frontmatter is not valid YAML: "));
    assert_eq!(found_in("pdf", "---\nname: pdf\nname: pdf\ndescription: d\n---\n"), ["3 - yaml"]);
}

#[test]
fn line_ends_and_the_byte_order_mark() {
    // CRLF and CR line ends keep their lines; a byte order mark is reported, and the rest checked.
    assert_eq!(found_in("pdf", "---\r\nname: pdf\r\ndescription: d\r\nx: 1\r\n---\r\n"), ["4 x unknown-field"]);
    assert_eq!(found_in("pdf", "---\rname: pdf\rdescription: d\rx: 1\r---\r"), ["4 x unknown-field"]);
    assert_eq!(found_in("pdf", "\u{feff}---\nname: pdf\ndescription: d\n---\n"), ["1 - frontmatter"]);
}

#[test]
fn bytes_that_are_not_a_skill_file() {
    let check_bytes = |bytes: &[u8], expect: &str| {
        let violations = validate_bytes(bytes, "pdf");
        assert_eq!(violations.len(), 1);
        assert_eq!((violations[0].rule, violations[0].message.as_str()), (Rule::File, expect));
    };
    check_bytes(b"---\nname: pdf\ndescription: \xff\n---\n", "the file is not UTF-8");
    assert_eq!(validate_bytes(b"---\nname: pdf\ndescription: \xff\n---\n", "pdf")[0].line, Some(3));
    check_bytes(
        &vec![b'x'; MAX_SKILL_FILE_BYTES + 1],
        "the file is 262145 bytes, more than the 262144 a SKILL.md may have",
    );
}

#[test]
fn paths_are_files_skill_folders_or_folders_of_skills() {
    let temp = tempfile::tempdir().unwrap();
    let write = |relative: &str, text: &str| {
        let path = temp.path().join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    };
    let good = write("skills/good/SKILL.md", "---\nname: good\ndescription: d\n---\n");
    let bad = write("skills/bad/SKILL.md", "---\nname: other\ndescription: d\n---\n");
    let empty = temp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let missing = temp.path().join("missing");

    let summary = |validated: Vec<ValidatedFile>| -> Vec<(PathBuf, Vec<Rule>)> {
        validated
            .into_iter()
            .map(|file| (file.path, file.violations.iter().map(|violation| violation.rule).collect()))
            .collect()
    };
    let folder_of_skills = vec![temp.path().join("skills")];
    assert_eq!(
        summary(validate_paths(&folder_of_skills, true)),
        [(bad.clone(), vec![Rule::FolderName]), (good.clone(), vec![])]
    );
    assert_eq!(summary(validate_paths(std::slice::from_ref(&good), true)), [(good.clone(), vec![])]);
    // Reached twice, validated once.
    let twice = vec![good.clone(), good.parent().unwrap().to_owned(), temp.path().join("skills/./good/SKILL.md")];
    assert_eq!(summary(validate_paths(&twice, true)), [(good.clone(), vec![])]);
    assert_eq!(summary(validate_paths(&[bad.parent().unwrap().to_owned()], true)), [(bad, vec![Rule::FolderName])]);
    assert_eq!(
        summary(validate_paths(&[empty.clone(), missing.clone()], true)),
        [(empty.clone(), vec![Rule::File]), (missing.clone(), vec![Rule::File])]
    );
    // Default folders that are absent or empty are passed over.
    assert_eq!(summary(validate_paths(&[empty, missing], false)), []);
}
