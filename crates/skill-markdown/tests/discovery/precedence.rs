//! Precedence: pack skills, folder skills that hide them, and sources that cannot be used.

use super::*;

#[test]
fn pack_skills_load_from_the_binary() {
    let discovery = discover(&Sources { packs: vec![PACK.to_owned()], ..Sources::default() });
    assert_eq!(names(&discovery), ["git", "http-apis", "omniagent"]);
    let git = &discovery.skills[0];
    assert_eq!(git.origin, Origin::Pack { pack: PACK.to_owned() });
    assert_eq!(git.skill.path, PathBuf::from("pack:omniagent-skills/git/SKILL.md"));
    assert_eq!(git.skill.dir, None);
    assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
}

#[test]
fn a_folder_skill_hides_a_pack_skill_and_the_first_folder_wins() {
    let first = fixtures().join("discovery/first");
    let second = fixtures().join("discovery/second");
    let discovery = discover(&Sources {
        packs: vec![PACK.to_owned()],
        dirs: vec![first.clone(), second.clone()],
        ..Sources::default()
    });
    // Each name keeps the place of its first candidate.
    assert_eq!(names(&discovery), ["git", "http-apis", "omniagent", "shared", "only-second"]);
    let by_name = |name: &str| discovery.skills.iter().find(|found| found.skill.name == name).unwrap();

    let git = by_name("git");
    assert_eq!(git.origin, Origin::Dir);
    assert_eq!(git.skill.path, first.join("git/SKILL.md"));
    assert_eq!(git.shadows, [PathBuf::from("pack:omniagent-skills/git/SKILL.md"), second.join("git/SKILL.md")]);

    let shared = by_name("shared");
    assert_eq!(shared.skill.description, "The first folder's shared skill.");
    assert_eq!(shared.shadows, [second.join("shared/SKILL.md")]);

    assert_eq!(by_name("http-apis").origin, Origin::Pack { pack: PACK.to_owned() });
    assert!(by_name("http-apis").shadows.is_empty());
    assert_eq!(by_name("only-second").skill.path, second.join("only-second/SKILL.md"));
    assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
}

#[test]
fn unknown_packs_and_missing_explicit_folders_are_reported() {
    let temp = tempfile::tempdir().unwrap();
    write(&temp.path().join("a-file"), "not a folder");
    let discovery = discover(&Sources {
        packs: vec![PACK.to_owned(), "no-such-pack".to_owned()],
        // A default folder that does not exist is passed over without a word.
        dirs: vec![temp.path().join("missing-default")],
        explicit_dirs: vec![temp.path().join("missing-explicit"), temp.path().join("a-file")],
        ..Sources::default()
    });
    assert_eq!(names(&discovery), ["git", "http-apis", "omniagent"]);
    assert_eq!(
        discovery.skipped,
        [
            skipped(
                PathBuf::from("pack:no-such-pack"),
                None,
                "unknown pack `no-such-pack` (this build has: omniagent-skills)",
            ),
            skipped(temp.path().join("missing-explicit"), None, "no such folder"),
            skipped(temp.path().join("a-file"), None, "not a folder"),
        ]
    );
}
