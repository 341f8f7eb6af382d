//! Files that cannot be used: each is skipped with a reason, and its neighbours load.

use super::*;

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
