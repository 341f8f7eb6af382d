//! Files only their owner may read: the agent key and the token cache (agent, person and
//! auth tokens).
//!
//! Both are read and written the same way, on Unix:
//! - the folder holding the file is created with mode 0700 (and its missing parents with
//!   it); an existing folder its group or others can write is refused
//!   ([`Error::FolderPermissions`]), since whoever can write the folder can replace the
//!   file in it;
//! - a file is written in full to a new staging file next to it, opened with
//!   `create_new` (`O_CREAT | O_EXCL`: it never opens an existing file, and never follows
//!   a symbolic link) with mode 0600, flushed to disk, then moved into place: renamed over
//!   the old file (the token cache: the last writer wins), or hard-linked only if no file is there yet (the key,
//!   which must never be replaced). Readers see a whole file or none, and a file left over
//!   by someone else lends neither its content nor its mode;
//! - a file its group or others can read is reported as [`Contents::Exposed`], for the
//!   caller to refuse (the key) or to replace (the token cache).
//!
//! This is blocking file work: async callers run it through [`off_runtime`].

use std::fs::File;
use std::io::{ErrorKind, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use zeroize::Zeroizing;

use crate::Error;

/// Which private file, for the errors that name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The agent key's JWK file.
    AgentKey,
    /// The token cache: the agent token's file and the person and auth tokens' files.
    TokenCache,
}

impl Purpose {
    fn name(self) -> &'static str {
        match self {
            Purpose::AgentKey => "agent key",
            Purpose::TokenCache => "token cache",
        }
    }

    fn io(self, path: &Path, action: &'static str, error: std::io::Error) -> Error {
        let path = path.to_owned();
        match self {
            Purpose::AgentKey => Error::KeyFileIo { path, action, error },
            Purpose::TokenCache => Error::TokenCacheIo { path, action, error },
        }
    }
}

/// What [`read`] found.
pub(crate) enum Contents {
    /// No file.
    Missing,
    /// The file, readable by its owner only.
    Private(Zeroizing<String>),
    /// The file can be read by its group or by others (its permission bits); it was not read.
    Exposed(u32),
}

/// Reads the private file at `path`, after checking its folder and its mode.
pub(crate) fn read(purpose: Purpose, path: &Path) -> Result<Contents, Error> {
    check_folder(purpose, path)?;
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Contents::Missing),
        Err(source) => return Err(purpose.io(path, "read", source)),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        // The open file's own mode, so a file swapped in after the check cannot slip by.
        let mode = file.metadata().map_err(|source| purpose.io(path, "read", source))?.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Ok(Contents::Exposed(mode));
        }
    }
    let mut text = Zeroizing::new(String::new());
    file.read_to_string(&mut text).map_err(|source| purpose.io(path, "read", source))?;
    Ok(Contents::Private(text))
}

/// How [`write`] puts the new file in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Placement {
    /// Replace whatever is at the path (a rename: a symbolic link there is replaced, not
    /// followed).
    Replace,
    /// Only if nothing is at the path yet (a hard link).
    IfAbsent,
}

/// Writes `contents` to `path` as a private file; `false` when `placement` is
/// [`Placement::IfAbsent`] and a file was already there (it is left as it is).
pub(crate) fn write(purpose: Purpose, path: &Path, contents: &[u8], placement: Placement) -> Result<bool, Error> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    write_staged_as(purpose, path, contents, placement, || {
        let mut random = [0u8; 8];
        getrandom::fill(&mut random).map_err(|error| purpose.io(path, "write", std::io::Error::other(error)))?;
        Ok(staging_name(path, std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed), random))
    })
}

/// Runs `work`, which reads or writes the private file of `purpose` at `path`, on tokio's
/// blocking threads and waits for it: a slow disk (an `fsync`, a stalled network file
/// system) holds up this future only, never the thread of the async runtime that polls
/// it and every other task there. A panic in `work` is resumed here.
pub(crate) async fn off_runtime<T, F>(purpose: Purpose, path: &Path, work: F) -> Result<T, Error>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, Error> + Send + 'static,
{
    // Only a runtime shutting down cancels the work before it starts.
    skill_core::off_runtime(work)
        .await
        .unwrap_or_else(|stopped| Err(purpose.io(path, "finish its file work", stopped.into())))
}

/// [`write`], with the staging names taken from `next_name` until one is free.
fn write_staged_as(
    purpose: Purpose,
    path: &Path,
    contents: &[u8],
    placement: Placement,
    next_name: impl FnMut() -> Result<PathBuf, Error>,
) -> Result<bool, Error> {
    if let Some(folder) = folder_of(path) {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(folder).map_err(|source| purpose.io(folder, "create the folder", source))?;
    }
    check_folder(purpose, path)?;
    let staging = write_staging(purpose, contents, next_name)?;
    let placed = match placement {
        Placement::Replace => std::fs::rename(&staging, path).map(|()| true),
        Placement::IfAbsent => match std::fs::hard_link(&staging, path) {
            Err(error) if error.kind() == ErrorKind::AlreadyExists => Ok(false),
            linked => linked.map(|()| true),
        },
    };
    // After a rename there is nothing left; after a link, or a failure, the staging name
    // goes. Best effort: a leftover is 0600 and the error that matters is returned.
    let _ = std::fs::remove_file(&staging);
    placed.map_err(|source| purpose.io(path, "write", source))
}

/// The folder holding `path`, when the path names one.
fn folder_of(path: &Path) -> Option<&Path> {
    path.parent().filter(|parent| !parent.as_os_str().is_empty())
}

/// Refuses a folder its group or others can write; a missing folder holds no file to worry
/// about.
fn check_folder(purpose: Purpose, path: &Path) -> Result<(), Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let folder = folder_of(path).unwrap_or(Path::new("."));
        let metadata = match std::fs::metadata(folder) {
            Ok(metadata) => metadata,
            Err(error) if error.kind() == ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(purpose.io(folder, "read the folder", source)),
        };
        let mode = metadata.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(Error::FolderPermissions { purpose: purpose.name(), path: folder.to_owned(), mode });
        }
    }
    #[cfg(not(unix))]
    let _ = (purpose, path);
    Ok(())
}

/// The staging name of a write of `path`: hidden, beside it, and one no one else picks:
/// the writing process `pid`, the `count` of its writes, and `random` bits against a file
/// of the same name left by an earlier process with the same id.
fn staging_name(path: &Path, pid: u32, count: u64, random: [u8; 8]) -> PathBuf {
    let name = path.file_name().map(|name| name.to_string_lossy()).unwrap_or_default();
    let suffix: String = random.iter().map(|byte| format!("{byte:02x}")).collect();
    path.with_file_name(format!(".{name}.{pid}.{count}.{suffix}.tmp"))
}

/// Writes `contents` to a new staging file, 0600 on Unix, flushed to disk, under the first
/// name from `next_name` that no file has (five tries).
fn write_staging(
    purpose: Purpose,
    contents: &[u8],
    mut next_name: impl FnMut() -> Result<PathBuf, Error>,
) -> Result<PathBuf, Error> {
    let mut attempts = 0;
    loop {
        let staging = next_name()?;
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = match options.open(&staging) {
            Ok(file) => file,
            Err(error) if error.kind() == ErrorKind::AlreadyExists && attempts < 4 => {
                attempts += 1;
                continue;
            }
            Err(source) => return Err(purpose.io(&staging, "write", source)),
        };
        let written = file.write_all(contents).and_then(|()| file.sync_all());
        if let Err(source) = written {
            drop(file);
            let _ = std::fs::remove_file(&staging);
            return Err(purpose.io(&staging, "write", source));
        }
        return Ok(staging);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(folder: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(folder)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn text(contents: Contents) -> String {
        match contents {
            Contents::Private(text) => text.to_string(),
            Contents::Missing => panic!("missing"),
            Contents::Exposed(mode) => panic!("exposed {mode:o}"),
        }
    }

    #[test]
    fn replace_and_if_absent() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/file.json");
        assert!(matches!(read(Purpose::TokenCache, &path).unwrap(), Contents::Missing));
        assert!(write(Purpose::TokenCache, &path, b"one", Placement::Replace).unwrap());
        assert!(write(Purpose::TokenCache, &path, b"two", Placement::Replace).unwrap());
        assert_eq!(text(read(Purpose::TokenCache, &path).unwrap()), "two");
        assert!(!write(Purpose::AgentKey, &path, b"three", Placement::IfAbsent).unwrap());
        assert_eq!(text(read(Purpose::AgentKey, &path).unwrap()), "two");
        // No staging file is left behind.
        assert_eq!(names(path.parent().unwrap()), ["file.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn new_files_are_0600_in_0700_folders() {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("home/aauth/file.json");
        write(Purpose::TokenCache, &path, b"x", Placement::Replace).unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        assert_eq!(mode(&dir.path().join("home")), 0o700);
    }

    /// A file already at the path with a loose mode, or a symbolic link there, lends
    /// nothing to the new file: it is replaced by a new 0600 file, and the link's target
    /// is not written.
    #[cfg(unix)]
    #[test]
    fn replace_neither_keeps_a_mode_nor_follows_a_link() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("aauth");
        std::fs::create_dir(&folder).unwrap();
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o700)).unwrap();
        let path = folder.join("file.json");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(matches!(read(Purpose::TokenCache, &path).unwrap(), Contents::Exposed(0o644)));
        write(Purpose::TokenCache, &path, b"new", Placement::Replace).unwrap();
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(text(read(Purpose::TokenCache, &path).unwrap()), "new");

        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "untouched").unwrap();
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        write(Purpose::TokenCache, &path, b"secret", Placement::Replace).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert_eq!(text(read(Purpose::TokenCache, &path).unwrap()), "secret");
    }

    #[cfg(unix)]
    #[test]
    fn folders_others_can_write_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("shared");
        std::fs::create_dir(&folder).unwrap();
        let path = folder.join("agent.jwk");
        for mode in [0o770, 0o707, 0o777, 0o1777] {
            std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode)).unwrap();
            for error in [
                write(Purpose::AgentKey, &path, b"x", Placement::IfAbsent).unwrap_err(),
                read(Purpose::AgentKey, &path).err().unwrap(),
            ] {
                assert!(
                    matches!(&error, Error::FolderPermissions { purpose: "agent key", mode: m, path: p } if *m == mode && *p == folder),
                    "{error:?}"
                );
                assert!(error.to_string().contains(&folder.display().to_string()), "{error}");
            }
            assert!(!path.exists());
        }
        // Readable (not writable) by others is fine for a folder.
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(Purpose::AgentKey, &path, b"x", Placement::IfAbsent).unwrap();
    }

    /// A staging name taken by a leftover file (another process's, or a planted one) is
    /// never opened: the writer moves on to the next name, so the new file gets neither
    /// the leftover's content, nor its mode, nor its place, and the leftover stays as it
    /// was.
    #[cfg(unix)]
    #[test]
    fn a_staging_name_taken_by_a_leftover_is_skipped_and_the_result_is_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("file.json");
        // The names the writer would pick, in turn: the first is already taken.
        let taken = staging_name(&path, std::process::id(), 0, [0xab; 8]);
        let free = staging_name(&path, std::process::id(), 1, [0xcd; 8]);
        assert_eq!(
            taken.file_name().unwrap(),
            format!(".file.json.{}.0.abababababababab.tmp", std::process::id()).as_str()
        );
        std::fs::write(&taken, "someone else's").unwrap();
        std::fs::set_permissions(&taken, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut candidates = vec![free, taken.clone()];
        let mut tried = Vec::new();
        let next = || {
            let name = candidates.pop().unwrap();
            tried.push(name.clone());
            Ok(name)
        };
        assert!(write_staged_as(Purpose::TokenCache, &path, b"ours", Placement::Replace, next).unwrap());
        assert_eq!(tried.len(), 2, "the taken name was tried, then the next one");
        assert_eq!(text(read(Purpose::TokenCache, &path).unwrap()), "ours");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&taken).unwrap(), "someone else's");
        assert_eq!(std::fs::metadata(&taken).unwrap().permissions().mode() & 0o777, 0o644);
        // The free name was used, then moved into place: only the leftover is beside the file.
        let leftover = taken.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(names(dir.path()), [leftover, "file.json".to_owned()]);
    }

    /// When every name tried is taken (here a symbolic link to a file elsewhere, planted
    /// at the one name given), the write fails after five tries: nothing is written
    /// through the link, and no file appears at the path.
    #[cfg(unix)]
    #[test]
    fn a_writer_whose_every_staging_name_is_taken_fails_without_writing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("agent.jwk");
        let target = dir.path().join("elsewhere.txt");
        std::fs::write(&target, "untouched").unwrap();
        let taken = staging_name(&path, std::process::id(), 7, [0; 8]);
        std::os::unix::fs::symlink(&target, &taken).unwrap();
        let mut tries = 0;
        let next = || {
            tries += 1;
            Ok(taken.clone())
        };
        let error = write_staged_as(Purpose::AgentKey, &path, b"secret", Placement::IfAbsent, next).unwrap_err();
        assert_eq!(tries, 5);
        assert!(
            matches!(&error, Error::KeyFileIo { path: failed, action: "write", error }
                if *failed == taken && error.kind() == ErrorKind::AlreadyExists),
            "{error:?}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
        assert!(!path.exists());
    }

    /// The real names: hidden, beside the file, and different for each write.
    #[test]
    fn staging_names_are_hidden_siblings_that_differ() {
        let path = Path::new("/cache/aauth/file.json");
        let name = staging_name(path, 42, 3, [0, 1, 2, 3, 4, 5, 6, 255]);
        assert_eq!(name, Path::new("/cache/aauth/.file.json.42.3.00010203040506ff.tmp"));
        assert_ne!(staging_name(path, 42, 4, [0, 1, 2, 3, 4, 5, 6, 255]), name);
        assert_ne!(staging_name(path, 42, 3, [9, 1, 2, 3, 4, 5, 6, 255]), name);
    }

    /// File work runs on a blocking thread, not on the thread polling the future.
    #[tokio::test]
    async fn off_runtime_work_runs_on_a_blocking_thread() {
        let caller = std::thread::current().id();
        let path = Path::new("file.json");
        let worker = off_runtime(Purpose::TokenCache, path, || Ok(std::thread::current().id())).await.unwrap();
        assert_ne!(worker, caller);
        let error = off_runtime(Purpose::TokenCache, path, || -> Result<(), Error> {
            Err(Purpose::TokenCache.io(Path::new("file.json"), "write", std::io::Error::other("disk full")))
        })
        .await
        .unwrap_err();
        assert!(matches!(error, Error::TokenCacheIo { action: "write", .. }), "{error:?}");
        // The OS error is in the message, once: no `source` repeats it.
        assert_eq!(error.to_string(), "token cache file.json: cannot write: disk full");
        assert!(std::error::Error::source(&error).is_none());
    }
}
