//! A SKILL.md file, frontmatter and body: parsing never panics, and a skill that parses
//! has a name and keeps within the file's size limit.
#![no_main]

use std::path::PathBuf;

use libfuzzer_sys::fuzz_target;
use skill_markdown::{Location, MAX_SKILL_FILE_BYTES, parse_bytes};

fuzz_target!(|bytes: &[u8]| {
    let location = Location {
        path: PathBuf::from("/skills/fuzzed/SKILL.md"),
        dir: Some(PathBuf::from("/skills/fuzzed")),
        dir_name: "fuzzed".to_owned(),
        has_hooks: false,
        has_scripts: false,
    };
    match parse_bytes(bytes, location) {
        Ok(skill) => {
            assert!(bytes.len() <= MAX_SKILL_FILE_BYTES);
            assert!(!skill.name.is_empty(), "a parsed skill has a name");
        }
        Err(error) => assert!(error.line >= 1, "an error names a line: {error:?}"),
    }
});
