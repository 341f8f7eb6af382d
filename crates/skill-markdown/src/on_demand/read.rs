//! Which file of a skill's folder `skills__read` may give, and reading it.
//!
//! A model names a path; nothing it names may reach beyond the skill's folder or into the
//! agent's own files:
//!
//! - The path is checked as written, before the filesystem is touched: relative, no `..`,
//!   no hidden name (a component starting with `.`, so `.` itself too).
//! - Symbolic links resolved, it must still be in the folder (a link inside that stays
//!   inside is fine), with no hidden name under the folder.
//! - It may not be, or be under, a private path of the agent (its home but `skills/`,
//!   `file:` secrets, the config file), as given or once links are resolved.
//! - Only a regular file is read, opened without blocking (a FIFO swapped in cannot hang
//!   the call) and checked again once open; on Linux the path the kernel gives for the
//!   open descriptor is checked again too, so a link swapped in after the checks cannot
//!   lead out. At most [`MAX_READ_BYTES`] are read.

use std::io::Read as _;
use std::path::{Component, Path, PathBuf};

/// The most bytes `skills__read` gives of one file: 256 KiB.
pub(crate) const MAX_READ_BYTES: u64 = 256 * 1024;

/// Why a path is not read: said to the model as the tool's error result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refused {
    Absolute,
    ParentDir,
    Hidden,
    Outside,
    Private,
    NotFound,
    NotAFile,
    TooLarge { size: u64 },
    Unreadable(String),
}

impl Refused {
    /// The message for `path` of `skill`.
    pub(crate) fn message(&self, skill: &str, path: &str) -> String {
        match self {
            Refused::Absolute => {
                format!(
                    "`{path}` is refused: give a path relative to the folder of skill `{skill}`, not an absolute one"
                )
            }
            Refused::ParentDir => format!("`{path}` is refused: `..` may not appear in a path"),
            Refused::Hidden => format!("`{path}` is refused: hidden names (starting with `.`) are never read"),
            Refused::Outside => format!("`{path}` is refused: it leads outside the folder of skill `{skill}`"),
            Refused::Private => format!("`{path}` is refused: it is one of the agent's private files"),
            Refused::NotFound => format!("skill `{skill}` has no file `{path}`"),
            Refused::NotAFile => format!("`{path}` in skill `{skill}` is not a regular file"),
            Refused::TooLarge { size } => format!(
                "`{path}` is {size} bytes, over the limit of {MAX_READ_BYTES} bytes (256 KiB) that skills__read gives"
            ),
            Refused::Unreadable(error) => format!("`{path}` in skill `{skill}` cannot be read: {error}"),
        }
    }
}

/// The skill folder `folder` and the agent's private paths, symbolic links resolved once.
#[derive(Debug, Clone)]
pub(crate) struct Folder {
    /// The folder, links resolved.
    real: PathBuf,
    /// The private paths as given (made absolute) and, where they exist, links resolved.
    private: std::sync::Arc<[PathBuf]>,
}

impl Folder {
    pub(crate) fn new(folder: &Path, private: std::sync::Arc<[PathBuf]>) -> Self {
        Self { real: folder.canonicalize().unwrap_or_else(|_| folder.to_owned()), private }
    }

    /// The folder, links resolved.
    pub(crate) fn real(&self) -> &Path {
        &self.real
    }

    /// Whether `path` (absolute) is or is under one of the agent's private paths.
    pub(crate) fn is_private(&self, path: &Path) -> bool {
        self.private.iter().any(|private| path.starts_with(private))
    }

    /// The bytes of the file `written` (as the model gave it) in the folder.
    pub(crate) fn read(&self, written: &str) -> Result<Vec<u8>, Refused> {
        let relative = checked_as_written(written)?;
        let joined = self.real.join(&relative);
        if self.is_private(&joined) {
            return Err(Refused::Private);
        }
        let real = joined.canonicalize().map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => Refused::NotFound,
            _ => Refused::Unreadable(error.to_string()),
        })?;
        self.check_real(&real)?;
        let file = open_without_blocking(&real).map_err(|error| Refused::Unreadable(error.to_string()))?;
        self.check_real(&opened_path(&file, &real))?;
        let metadata = file.metadata().map_err(|error| Refused::Unreadable(error.to_string()))?;
        if !metadata.is_file() {
            return Err(Refused::NotAFile);
        }
        if metadata.len() > MAX_READ_BYTES {
            return Err(Refused::TooLarge { size: metadata.len() });
        }
        let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
        (&file)
            .take(MAX_READ_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|error| Refused::Unreadable(error.to_string()))?;
        if bytes.len() as u64 > MAX_READ_BYTES {
            // It grew past the limit since it was measured.
            let size = file.metadata().map_or(0, |now| now.len()).max(bytes.len() as u64);
            return Err(Refused::TooLarge { size });
        }
        Ok(bytes)
    }

    /// A path with links resolved: in the folder, no hidden name under it, not private.
    fn check_real(&self, real: &Path) -> Result<(), Refused> {
        let inside = real.strip_prefix(&self.real).map_err(|_| Refused::Outside)?;
        if inside.components().any(|component| component.as_os_str().as_encoded_bytes().starts_with(b".")) {
            return Err(Refused::Hidden);
        }
        if self.is_private(real) {
            return Err(Refused::Private);
        }
        Ok(())
    }
}

/// `written` as a relative path of plain names, checked without touching the filesystem.
fn checked_as_written(written: &str) -> Result<PathBuf, Refused> {
    let path = Path::new(written);
    if path.is_absolute() || path.has_root() {
        return Err(Refused::Absolute);
    }
    let mut relative = PathBuf::new();
    // Split on `/` by hand as well: `Path::components` folds away a `.` in the middle.
    for part in written.split('/').filter(|part| !part.is_empty()) {
        if part == ".." {
            return Err(Refused::ParentDir);
        }
        if part.starts_with('.') {
            return Err(Refused::Hidden);
        }
        relative.push(part);
    }
    if relative.components().any(|component| !matches!(component, Component::Normal(_))) {
        return Err(Refused::Absolute);
    }
    if relative.as_os_str().is_empty() {
        return Err(Refused::NotAFile);
    }
    Ok(relative)
}

/// `paths` made absolute, and beside each that exists, the same with links resolved.
pub(crate) fn resolved_private_paths(paths: impl IntoIterator<Item = PathBuf>) -> std::sync::Arc<[PathBuf]> {
    let mut resolved = Vec::new();
    for path in paths {
        let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
        if let Ok(real) = absolute.canonicalize()
            && real != absolute
        {
            resolved.push(real);
        }
        resolved.push(absolute);
    }
    resolved.into()
}

/// `path` opened for reading with `O_NONBLOCK`: opening a FIFO returns at once instead of
/// waiting for a writer; nothing changes for a regular file.
#[cfg(unix)]
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;

    let flags = nix::fcntl::OFlag::O_NONBLOCK.bits();
    std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)
}

/// `path` opened for reading if it is a regular file (no `O_NONBLOCK` here).
#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    std::fs::File::open(path)
}

/// The path `file` is open on as the kernel knows it (its `/proc/self/fd` link), else
/// `checked`, the path checked before opening.
#[cfg(target_os = "linux")]
fn opened_path(file: &std::fs::File, checked: &Path) -> PathBuf {
    use std::os::fd::AsRawFd as _;
    std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd())).unwrap_or_else(|_| checked.to_owned())
}

/// Elsewhere there is no portable way to ask: the path checked before opening.
#[cfg(not(target_os = "linux"))]
fn opened_path(_file: &std::fs::File, checked: &Path) -> PathBuf {
    checked.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_checked_as_written_first() {
        let check = |written: &str, expect: Result<&str, Refused>| {
            assert_eq!(checked_as_written(written), expect.map(PathBuf::from), "{written}");
        };
        check("scripts/run.sh", Ok("scripts/run.sh"));
        check("scripts//run.sh", Ok("scripts/run.sh"));
        check("/etc/passwd", Err(Refused::Absolute));
        check("../other/SKILL.md", Err(Refused::ParentDir));
        check("scripts/../../x", Err(Refused::ParentDir));
        check(".env", Err(Refused::Hidden));
        check("./SKILL.md", Err(Refused::Hidden));
        check("scripts/.cache/x", Err(Refused::Hidden));
        check("", Err(Refused::NotAFile));
    }

    #[test]
    fn links_out_hidden_targets_and_private_files_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let skill = root.path().join("hello");
        std::fs::create_dir_all(skill.join("docs")).unwrap();
        std::fs::create_dir_all(skill.join(".git")).unwrap();
        std::fs::write(skill.join("docs/a.md"), "a").unwrap();
        std::fs::write(skill.join(".git/config"), "hidden").unwrap();
        std::fs::write(skill.join("token.txt"), "s3cr3t").unwrap();
        std::fs::write(root.path().join("outside.txt"), "out").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.path().join("outside.txt"), skill.join("out")).unwrap();
            std::os::unix::fs::symlink(skill.join("docs/a.md"), skill.join("in")).unwrap();
            std::os::unix::fs::symlink(skill.join(".git/config"), skill.join("to-hidden")).unwrap();
        }
        let private = resolved_private_paths([skill.join("token.txt")]);
        let folder = Folder::new(&skill, private);
        assert_eq!(folder.read("docs/a.md"), Ok(b"a".to_vec()));
        assert_eq!(folder.read("token.txt"), Err(Refused::Private));
        assert_eq!(folder.read("docs"), Err(Refused::NotAFile));
        assert_eq!(folder.read("missing.md"), Err(Refused::NotFound));
        #[cfg(unix)]
        {
            assert_eq!(folder.read("in"), Ok(b"a".to_vec()), "a link that stays inside");
            assert_eq!(folder.read("out"), Err(Refused::Outside));
            assert_eq!(folder.read("to-hidden"), Err(Refused::Hidden));
        }
    }
}
