//! Layouts and walking: skill folders, folders of skills, hidden folders, depth, symlinks.

use super::*;

#[test]
fn a_folder_of_skills_and_a_skill_folder_both_load() {
    let root = fixtures().join("discovery/layouts");
    let discovery = discover(&dirs([root.clone()]));
    // `beta/examples` lies below a skill folder, where discovery does not look.
    assert_eq!(names(&discovery), ["alpha", "beta", "gamma"]);
    assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
    let gamma = &discovery.skills[2];
    assert_eq!(gamma.origin, Origin::Dir);
    assert_eq!(gamma.skill.path, root.join("group/gamma/SKILL.md"));
    assert_eq!(gamma.skill.dir.as_deref(), Some(root.join("group/gamma").as_path()));

    let discovery = discover(&dirs([root.join("alpha")]));
    assert_eq!(names(&discovery), ["alpha"]);
    assert_eq!(discovery.skills[0].skill.path, root.join("alpha/SKILL.md"));
}

#[test]
fn dot_folders_and_node_modules_are_skipped() {
    let discovery = discover(&dirs([fixtures().join("discovery/hidden")]));
    assert_eq!(names(&discovery), ["visible"]);
    assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
}

#[test]
fn skills_are_found_down_to_six_levels() {
    let discovery = discover(&dirs([fixtures().join("discovery/deep")]));
    assert_eq!(names(&discovery), ["six"]);
}

#[cfg(unix)]
#[test]
fn a_symlinked_skill_folder_is_followed() {
    let temp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(fixtures().join("discovery/layouts/alpha"), temp.path().join("linked")).unwrap();
    write(&temp.path().join("own/SKILL.md"), skill_text("own"));
    let discovery = discover(&dirs([temp.path().to_owned()]));
    assert_eq!(names(&discovery), ["alpha", "own"]);
    assert_eq!(discovery.skills[0].skill.path, temp.path().join("linked/SKILL.md"));
    assert_eq!(discovery.skills[0].skill.description, "A skill directly in the skills folder.");
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_ends_and_loads_each_skill_once() {
    let temp = tempfile::tempdir().unwrap();
    let root = temp.path();
    write(&root.join("a/b/inner/SKILL.md"), skill_text("inner"));
    write(&root.join("a/skill/SKILL.md"), skill_text("skill"));
    // `a/b/up` leads back to `a`, and `a/b/root` to the top.
    std::os::unix::fs::symlink(root.join("a"), root.join("a/b/up")).unwrap();
    std::os::unix::fs::symlink(root, root.join("a/b/root")).unwrap();
    let discovery = discover(&dirs([root.to_owned(), root.join("a")]));
    assert_eq!(names(&discovery), ["inner", "skill"]);
    assert!(discovery.skills.iter().all(|found| found.shadows.is_empty()));
    assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
}

/// A skill may be called `hooks` or `scripts`: in a folder of skills those are skills,
/// not a skill's own folders.
#[test]
fn skills_named_like_a_skills_own_folders_are_found() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["hooks", "scripts"] {
        std::fs::create_dir(dir.path().join(name)).unwrap();
        std::fs::write(dir.path().join(name).join("SKILL.md"), format!("---\ndescription: {name}\n---\n")).unwrap();
    }
    let sources = skill_markdown::Sources { dirs: vec![dir.path().to_owned()], ..skill_markdown::Sources::default() };
    let names: Vec<String> =
        skill_markdown::discover(&sources).skills.into_iter().map(|found| found.skill.name).collect();
    assert_eq!(names, ["hooks", "scripts"]);
}
