//! Discovery, precedence, filters, requirement checks and prompt injection. Committed
//! fixtures live under `tests/fixtures/skills`. Temporary folders cover what cannot be
//! committed: large, non-UTF-8 and unreadable files, FIFOs, and symlinks. Requirements are
//! checked against an [`Environment`] built for each test, never the process's own.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use skill_core::{ExposeSecret, SecretString, Secrets};
use skill_markdown::{
    Discovery, Environment, LoadedSkill, MAX_SKILL_FILE_BYTES, Missing, Origin, PromptConfig, SkillsConfig, Skipped,
    Sources, discover, inject_into_prompt, load,
};

const PACK: &str = "omniagent-skills";
const HEADER: &str = "# Skills\n\nThe skills below are instructions for specific tasks. When a task matches a \
skill, follow it. Each skill is one `<skill>` element: its `location` is the skill's folder, and paths in the \
skill are relative to that folder; a skill without a location is built in and has no files.";
const CANARY: &str = "canary-secret-5b1e";

fn fixtures() -> PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/skills")).canonicalize().unwrap()
}

fn dirs<const N: usize>(dirs: [PathBuf; N]) -> Sources {
    Sources { dirs: dirs.into(), ..Sources::default() }
}

fn names(discovery: &Discovery) -> Vec<&str> {
    discovery.skills.iter().map(|found| found.skill.name.as_str()).collect()
}

fn write(path: &Path, contents: impl AsRef<[u8]>) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

fn skill_text(name: &str) -> String {
    format!("---\nname: {name}\ndescription: The {name} skill.\n---\nBody.\n")
}

fn skipped(path: PathBuf, line: Option<usize>, reason: &str) -> Skipped {
    Skipped { path, line, reason: reason.to_owned() }
}

// Files that cannot be used.

#[test]
fn unusable_files_are_skipped_with_line_and_reason_and_their_neighbours_load() {
    let root = fixtures().join("skipped");
    let discovery = discover(&dirs([root.clone()]));
    assert_eq!(names(&discovery), ["valid"]);
    assert_eq!(
        discovery.skipped,
        [
            skipped(root.join("empty-description/SKILL.md"), Some(1), "the frontmatter has no `description`"),
            skipped(root.join("no-description/SKILL.md"), Some(1), "the frontmatter has no `description`"),
            skipped(
                root.join("no-frontmatter/SKILL.md"),
                Some(1),
                "no frontmatter: the file must start with a `---` line",
            ),
            skipped(root.join("unclosed/SKILL.md"), Some(1), "the frontmatter has no closing `---` line"),
        ]
    );
}

#[test]
fn a_file_larger_than_the_limit_is_skipped() {
    let temp = tempfile::tempdir().unwrap();
    let padded = |name: &str, size: usize| {
        let mut text = skill_text(name);
        text.push_str(&"x".repeat(size - text.len()));
        text
    };
    write(&temp.path().join("at-limit/SKILL.md"), padded("at-limit", MAX_SKILL_FILE_BYTES));
    write(&temp.path().join("too-big/SKILL.md"), padded("too-big", MAX_SKILL_FILE_BYTES + 1));
    let discovery = discover(&dirs([temp.path().to_owned()]));
    assert_eq!(names(&discovery), ["at-limit"]);
    assert_eq!(
        discovery.skipped,
        [skipped(
            temp.path().join("too-big/SKILL.md"),
            Some(1),
            "the file is 262145 bytes, more than the 262144 a SKILL.md may have",
        )]
    );
}

/// 1 TiB, all of it a hole: only a read bounded by the limit gets past it (reading it all
/// would take hours, and reserving room for it fails).
#[test]
fn a_huge_sparse_file_is_skipped_by_its_size_without_being_read() {
    let temp = tempfile::tempdir().unwrap();
    let huge = temp.path().join("huge/SKILL.md");
    write(&huge, skill_text("huge"));
    std::fs::OpenOptions::new().write(true).open(&huge).unwrap().set_len(1 << 40).unwrap();
    write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
    let discovery = discover(&dirs([temp.path().to_owned()]));
    assert_eq!(names(&discovery), ["valid"]);
    assert_eq!(
        discovery.skipped,
        [skipped(huge, Some(1), "the file is 1099511627776 bytes, more than the 262144 a SKILL.md may have")]
    );
}

/// A FIFO has no end and no writer: discovery must not wait on it. Discovery runs on a
/// thread of its own so that a hang fails the test rather than stalling it.
#[cfg(unix)]
#[test]
fn a_fifo_named_skill_md_is_skipped_without_waiting_for_a_writer() {
    let temp = tempfile::tempdir().unwrap();
    let fifo = temp.path().join("fifo/SKILL.md");
    std::fs::create_dir(fifo.parent().unwrap()).unwrap();
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
    let (sender, receiver) = std::sync::mpsc::channel();
    let sources = dirs([temp.path().to_owned()]);
    std::thread::spawn(move || {
        // The receiver is gone only once the test has failed.
        let _ = sender.send(discover(&sources));
    });
    let discovery = receiver.recv_timeout(std::time::Duration::from_secs(10)).expect("discovery ends");
    assert_eq!(names(&discovery), ["valid"]);
    assert_eq!(discovery.skipped, [skipped(fifo, None, "not a regular file")]);
}

#[test]
fn a_file_that_is_not_utf8_is_skipped_at_the_line_of_the_bad_byte() {
    for line_end in ["\n", "\r\n", "\r"] {
        let temp = tempfile::tempdir().unwrap();
        // Latin-1 `é` (0xE9) on line 3.
        let bytes =
            [b"---", line_end.as_bytes(), b"name: latin1", line_end.as_bytes(), b"description: caf\xe9"].concat();
        write(&temp.path().join("latin1/SKILL.md"), [&bytes[..], b"\n---\nBody.\n"].concat());
        write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
        let discovery = discover(&dirs([temp.path().to_owned()]));
        assert_eq!(names(&discovery), ["valid"], "{line_end:?}");
        assert_eq!(
            discovery.skipped,
            [skipped(temp.path().join("latin1/SKILL.md"), Some(3), "the file is not UTF-8")],
            "{line_end:?}"
        );
    }
}

#[cfg(unix)]
#[test]
fn a_file_without_read_permission_is_skipped_unless_running_as_root() {
    use std::os::unix::fs::PermissionsExt;

    let temp = tempfile::tempdir().unwrap();
    let locked = temp.path().join("locked/SKILL.md");
    write(&locked, skill_text("locked"));
    write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads a file whatever its mode: then the skill simply loads.
    let readable = std::fs::File::open(&locked).is_ok();
    let discovery = discover(&dirs([temp.path().to_owned()]));
    if readable {
        assert_eq!(names(&discovery), ["locked", "valid"]);
        assert!(discovery.skipped.is_empty(), "{:?}", discovery.skipped);
    } else {
        assert_eq!(names(&discovery), ["valid"]);
        assert_eq!(discovery.skipped.len(), 1, "{:?}", discovery.skipped);
        assert_eq!(discovery.skipped[0].path, locked);
        assert_eq!(discovery.skipped[0].line, None);
        assert!(discovery.skipped[0].reason.starts_with("cannot read: "), "{:?}", discovery.skipped);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// `/proc/self/mem` is a regular file that even root cannot read from offset 0 (that
/// address is never mapped): the one read error every user gets.
#[cfg(target_os = "linux")]
#[test]
fn a_file_that_fails_to_read_is_skipped() {
    let temp = tempfile::tempdir().unwrap();
    let unreadable = temp.path().join("unreadable/SKILL.md");
    std::fs::create_dir(unreadable.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/proc/self/mem", &unreadable).unwrap();
    write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
    let discovery = discover(&dirs([temp.path().to_owned()]));
    assert_eq!(names(&discovery), ["valid"]);
    assert_eq!(discovery.skipped, [skipped(unreadable, None, "cannot read: Input/output error (os error 5)")]);
}

#[test]
fn a_skill_md_that_is_not_a_regular_file_is_skipped() {
    let temp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(temp.path().join("folder/SKILL.md")).unwrap();
    write(&temp.path().join("folder/SKILL.md/SKILL.md"), skill_text("inside"));
    write(&temp.path().join("valid/SKILL.md"), skill_text("valid"));
    let mut expected_skipped = vec![skipped(temp.path().join("folder/SKILL.md"), None, "not a regular file")];
    #[cfg(unix)]
    {
        let broken = temp.path().join("broken-link/SKILL.md");
        std::fs::create_dir(broken.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(temp.path().join("nowhere"), &broken).unwrap();
        expected_skipped.insert(0, skipped(broken, None, "not a regular file"));
    }
    let discovery = discover(&dirs([temp.path().to_owned()]));
    assert_eq!(names(&discovery), ["valid"]);
    assert_eq!(discovery.skipped, expected_skipped);
}

#[test]
fn many_skills_keep_the_walk_order_and_every_skip() {
    // Enough files for discovery to read and parse them on several threads.
    let temp = tempfile::tempdir().unwrap();
    let n_skills = 300;
    for skill_idx in 0..n_skills {
        let name = format!("skill-{skill_idx:03}");
        let text = if skill_idx % 50 == 7 { "no frontmatter\n".to_owned() } else { skill_text(&name) };
        write(&temp.path().join(&name).join("SKILL.md"), text);
    }
    let discovery = discover(&dirs([temp.path().to_owned()]));
    let bad = [7, 57, 107, 157, 207, 257];
    let expected_names: Vec<String> = (0..n_skills)
        .filter(|skill_idx| !bad.contains(skill_idx))
        .map(|skill_idx| format!("skill-{skill_idx:03}"))
        .collect();
    assert_eq!(names(&discovery), expected_names);
    let expected_skipped: Vec<Skipped> = bad
        .iter()
        .map(|skill_idx| {
            let path = temp.path().join(format!("skill-{skill_idx:03}/SKILL.md"));
            skipped(path, Some(1), "no frontmatter: the file must start with a `---` line")
        })
        .collect();
    assert_eq!(discovery.skipped, expected_skipped);
}

// Layouts and walking.

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

// Precedence.

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

// Filters.

#[test]
fn load_applies_includes_then_excludes() {
    let sources = Sources {
        packs: vec![PACK.to_owned()],
        dirs: vec![fixtures().join("discovery/first"), fixtures().join("discovery/second")],
        ..Sources::default()
    };
    let environment = Environment::new(HashMap::new(), "linux");
    let check = |config: SkillsConfig, expect: &[&str]| {
        let set = load(&sources, &config, &environment, &BTreeMap::new());
        let loaded: Vec<&str> = set.skills.iter().map(|loaded| loaded.skill.name.as_str()).collect();
        assert_eq!(loaded, expect, "{config:?}");
    };
    check(SkillsConfig::default(), &["git", "http-apis", "omniagent", "shared", "only-second"]);
    check(
        SkillsConfig { includes: strings(&["shared", "git", "nothing"]), ..SkillsConfig::default() },
        &["git", "shared"],
    );
    check(
        SkillsConfig { excludes: strings(&["git", "only-second"]), ..SkillsConfig::default() },
        &["http-apis", "omniagent", "shared"],
    );
    check(
        SkillsConfig { includes: strings(&["git", "shared"]), excludes: strings(&["git"]), ..SkillsConfig::default() },
        &["shared"],
    );
    check(
        SkillsConfig {
            includes: strings(&["git", "shared"]),
            disabled: strings(&["shared"]),
            ..SkillsConfig::default()
        },
        &["git"],
    );
}

// Requirements.

fn secrets(pairs: &[(&str, &str)]) -> Secrets {
    pairs.iter().map(|(name, value)| ((*name).to_owned(), SecretString::from(*value))).collect()
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// Bins are told apart by their permission bits, which only Unix has.
#[cfg(unix)]
mod requirements {
    use std::ffi::OsString;
    use std::os::unix::fs::PermissionsExt;

    use skill_markdown::{Location, MarkdownSkill, parse};

    use super::*;

    /// A skill whose `metadata` (OmniAgent's shape, as JSON) is `manifest`.
    fn skill_with(manifest: &str) -> MarkdownSkill {
        let text = format!("---\nname: probe\ndescription: Checks requirements.\nmetadata: {manifest}\n---\nBody.\n");
        let location = Location {
            path: "probe/SKILL.md".into(),
            dir: None,
            dir_name: "probe".to_owned(),
            has_hooks: false,
            has_scripts: false,
        };
        parse(&text, location).unwrap()
    }

    /// A PATH of an empty folder and a folder holding `present` (executable),
    /// `not-executable` (a plain file) and `a-folder` (a folder), and three variables.
    fn environment(temp: &Path, os: &'static str) -> Environment {
        let bin = temp.join("bin");
        write(&bin.join("present"), "#!/bin/sh\n");
        std::fs::set_permissions(bin.join("present"), std::fs::Permissions::from_mode(0o755)).unwrap();
        write(&bin.join("not-executable"), "#!/bin/sh\n");
        std::fs::set_permissions(bin.join("not-executable"), std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::create_dir(bin.join("a-folder")).unwrap();
        std::fs::create_dir(temp.join("empty")).unwrap();
        let path = std::env::join_paths([temp.join("empty"), bin]).unwrap();
        let vars: HashMap<String, OsString> =
            [("PATH".to_owned(), path), ("SET".to_owned(), OsString::from("1")), ("EMPTY".to_owned(), OsString::new())]
                .into_iter()
                .collect();
        Environment::new(vars, os)
    }

    #[test]
    fn requirements_are_checked_against_the_given_environment() {
        let temp = tempfile::tempdir().unwrap();
        let linux = environment(temp.path(), "linux");
        let check = |manifest: &str, bound: Secrets, expect: Missing| {
            assert_eq!(linux.missing(&skill_with(manifest), &bound), expect, "{manifest}");
        };
        let none = Secrets::new;

        check(r#"{"requires": {"bins": ["present"]}}"#, none(), Missing::default());
        // Only a regular executable file counts.
        check(
            r#"{"requires": {"bins": ["present", "not-executable", "a-folder", "absent"]}}"#,
            none(),
            Missing { bins: strings(&["not-executable", "a-folder", "absent"]), ..Missing::default() },
        );
        check(r#"{"requires": {"anyBins": ["absent", "present"]}}"#, none(), Missing::default());
        check(
            r#"{"requires": {"anyBins": ["absent", "a-folder"]}}"#,
            none(),
            Missing { any_bins: strings(&["absent", "a-folder"]), ..Missing::default() },
        );
        check(
            r#"{"requires": {"env": ["SET", "EMPTY", "UNSET"]}}"#,
            none(),
            Missing { env: strings(&["EMPTY", "UNSET"]), ..Missing::default() },
        );
        check(r#"{"os": ["linux", "darwin"]}"#, none(), Missing::default());
        check(
            r#"{"os": ["macos", "windows"]}"#,
            none(),
            Missing { os: strings(&["darwin", "win32"]), ..Missing::default() },
        );
        // `always` skips bins, anyBins and env, but not the platform nor the secrets.
        check(
            r#"{"always": true, "os": ["darwin"], "requires": {"bins": ["absent"], "anyBins": ["absent"], "env": ["UNSET"], "secrets": ["TOKEN"]}}"#,
            none(),
            Missing { os: strings(&["darwin"]), secrets: strings(&["TOKEN"]), ..Missing::default() },
        );
        check(
            r#"{"requires": {"secrets": ["TOKEN"]}}"#,
            none(),
            Missing { secrets: strings(&["TOKEN"]), ..Missing::default() },
        );
        check(r#"{"requires": {"secrets": ["TOKEN"]}}"#, secrets(&[("TOKEN", CANARY)]), Missing::default());
        // A bound secret reaches the scripts as the variable of its name.
        check(r#"{"requires": {"env": ["TOKEN"]}}"#, secrets(&[("TOKEN", CANARY)]), Missing::default());
        // An empty value binds nothing.
        check(
            r#"{"requires": {"env": ["TOKEN"], "secrets": ["TOKEN"]}}"#,
            secrets(&[("TOKEN", "")]),
            Missing { env: strings(&["TOKEN"]), secrets: strings(&["TOKEN"]), ..Missing::default() },
        );

        let darwin = environment(&temp.path().join("darwin"), "darwin");
        assert_eq!(darwin.missing(&skill_with(r#"{"os": ["macos"]}"#), &Secrets::new()), Missing::default());
    }
}

#[test]
fn missing_explains_itself() {
    let secret_only = Missing { secrets: strings(&["TOKEN"]), ..Missing::default() };
    assert_eq!(secret_only.reason(), "missing secret TOKEN");
    assert!(!secret_only.is_empty());
    let everything = Missing {
        bins: strings(&["jq", "gh"]),
        any_bins: strings(&["claude", "codex"]),
        env: strings(&["UNSET"]),
        os: strings(&["darwin"]),
        secrets: strings(&["TOKEN", "WEBHOOK_URL"]),
    };
    assert_eq!(
        everything.reason(),
        "missing bins jq, gh; missing any of bins claude, codex; missing env UNSET; runs only on darwin; \
         missing secret TOKEN; missing secret WEBHOOK_URL"
    );
    assert_eq!(Missing::default().reason(), "");
    assert!(Missing::default().is_empty());
}

// The prompt.

fn prompt_skills(bound: Secrets) -> Vec<LoadedSkill> {
    let sources = dirs([fixtures().join("prompt")]);
    let environment = Environment::new(HashMap::new(), "linux");
    let set = load(&sources, &SkillsConfig::default(), &environment, &BTreeMap::from([("deploy".to_owned(), bound)]));
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    set.skills
}

#[test]
fn the_prompt_gets_available_model_invocable_skills_in_order_up_to_the_limit() {
    let skills = prompt_skills(secrets(&[("DEPLOY_TOKEN", CANARY)]));
    let states: Vec<(&str, bool)> =
        skills.iter().map(|loaded| (loaded.skill.name.as_str(), loaded.available())).collect();
    assert_eq!(
        states,
        [("notes", true), ("hidden", true), ("needs-bin", false), ("deploy", true), ("plain", true), ("extra", true)]
    );
    assert_eq!(skills[2].missing.reason(), "missing bins omniagent-fixture-absent");

    let dir = fixtures().join("prompt");
    let notes = dir.join("a-notes").display().to_string();
    let deploy = dir.join("d-deploy").display().to_string();
    let plain = dir.join("e-plain").display().to_string();
    let extra = dir.join("f-extra").display().to_string();
    let three = PromptConfig { max_injected: 3, ..PromptConfig::default() };
    let prompt = inject_into_prompt("You are helpful.\n\n", &skills, &three);
    assert_eq!(
        prompt,
        format!(
            "You are helpful.\n\n{HEADER}\n\n\
             <skill name=\"notes\" location=\"{notes}\">\nAppend to `{notes}/notes.md`; read {notes}/README.md first.\n</skill>\n\n\
             <skill name=\"deploy\" location=\"{deploy}\">\nRun `{deploy}/scripts/deploy.sh`; it reads $DEPLOY_TOKEN.\n</skill>\n\n\
             <skill name=\"plain\" location=\"{plain}\">\nPlain instructions.\n</skill>\n"
        )
    );

    let everything = inject_into_prompt("", &skills, &PromptConfig::default());
    assert!(everything.starts_with(HEADER), "{everything}");
    assert!(
        everything.ends_with(&format!(
            "\n\n<skill name=\"plain\" location=\"{plain}\">\nPlain instructions.\n</skill>\n\n\
             <skill name=\"extra\" location=\"{extra}\">\nCut.\n</skill>\n"
        )),
        "{everything}"
    );
}

#[test]
fn the_prompt_never_holds_a_bound_secret() {
    let skills = prompt_skills(secrets(&[("DEPLOY_TOKEN", CANARY)]));
    let deploy = skills.iter().find(|loaded| loaded.skill.name == "deploy").unwrap();
    let script_env: Vec<(&str, &str)> =
        deploy.script_env().map(|(name, value)| (name, value.expose_secret())).collect();
    assert_eq!(script_env, [("DEPLOY_TOKEN", CANARY)]);
    let prompt = inject_into_prompt("System.", &skills, &PromptConfig::default());
    assert!(prompt.contains("<skill name=\"deploy\""), "{prompt}");
    assert!(!prompt.contains(CANARY), "{prompt}");
    assert!(!format!("{skills:?}").contains(CANARY));
}

#[test]
fn a_skill_missing_its_secret_stays_out_of_the_prompt() {
    let skills = prompt_skills(Secrets::new());
    let deploy = skills.iter().find(|loaded| loaded.skill.name == "deploy").unwrap();
    assert_eq!(deploy.missing.reason(), "missing env DEPLOY_TOKEN; missing secret DEPLOY_TOKEN");
    assert_eq!(deploy.script_env().count(), 0);
    let prompt = inject_into_prompt("System.", &skills, &PromptConfig::default());
    assert!(!prompt.contains("deploy"), "{prompt}");
}

#[test]
fn without_skills_to_offer_the_prompt_is_unchanged() {
    let skills = prompt_skills(Secrets::new());
    let unavailable: Vec<LoadedSkill> =
        skills.into_iter().filter(|loaded| !loaded.available() || loaded.skill.disable_model_invocation).collect();
    assert_eq!(unavailable.len(), 3);
    assert_eq!(inject_into_prompt("System.\n", &unavailable, &PromptConfig::default()), "System.\n");
    assert_eq!(
        inject_into_prompt("System.\n", &[], &PromptConfig { max_injected: 0, ..PromptConfig::default() }),
        "System.\n"
    );
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
