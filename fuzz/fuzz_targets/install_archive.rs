//! An archive given to `skills install` (a `.zip`, or a `.tar.gz` when the first byte is
//! odd): whatever its bytes, the install never panics and writes nothing outside the
//! skills folder; a failed install leaves nothing in it, and one that succeeds leaves
//! exactly the files its lock entry lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use omniagent_host::Home;
use omniagent_host::install;

fuzz_target!(|bytes: &[u8]| {
    let Some((&kind, archive)) = bytes.split_first() else { return };
    let root = tempfile::tempdir().expect("a temporary folder");
    let name = if kind % 2 == 1 { "fuzzed.tar.gz" } else { "fuzzed.zip" };
    let source = root.path().join(name);
    std::fs::write(&source, archive).expect("a writable temporary folder");
    let home = Home::new(root.path().join("home"));
    let source_text = source.to_str().expect("a UTF-8 temporary path");
    match install::install(&home, source_text, None, None) {
        Ok(installed) => {
            assert!(installed.path.starts_with(root.path().join("home/skills")), "{installed:?}");
            let verified = install::verify(&home, Some(&installed.name)).expect("the install verifies");
            assert!(verified.iter().all(|skill| skill.changes.is_empty()), "{verified:?}");
        }
        Err(_) => {
            let skills = root.path().join("home/skills");
            let left = std::fs::read_dir(&skills).map(|entries| entries.count()).unwrap_or(0);
            assert_eq!(left, 0, "a failed install leaves nothing in {}", skills.display());
        }
    }
    let mut outside: Vec<String> = std::fs::read_dir(root.path())
        .expect("the temporary folder")
        .map(|entry| entry.expect("an entry").file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(outside, [name, "home"], "nothing written beside the skills folder's home");
});
