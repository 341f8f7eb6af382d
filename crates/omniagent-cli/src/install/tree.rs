//! A skill's files on disk: the caps every source is held to ([`Limits`], counted by a
//! [`Budget`]), copying a folder and checking a checkout under them, finding the skill's
//! root, and the SHA-256 of every file.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use super::error::{EntryProblem, InstallError};
use base16ct::lower::encode_string as hex;

/// The caps on what one install may bring.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Bytes of file content, all files together.
    pub(crate) max_bytes: u64,
    /// Files and folders.
    pub(crate) max_entries: u64,
}

impl Limits {
    /// 64 MiB in at most 10,000 files and folders: far more than a skill needs (the Agent
    /// Skills guide asks for a body under 500 lines), far less than a bomb expands to.
    pub(crate) const DEFAULT: Self = Self { max_bytes: 64 * 1024 * 1024, max_entries: 10_000 };
}

/// What one install has used of its [`Limits`] so far.
#[derive(Debug)]
pub(crate) struct Budget<'a> {
    limits: Limits,
    /// The source, for errors.
    what: &'a str,
    bytes: u64,
    entries: u64,
}

impl<'a> Budget<'a> {
    pub(crate) fn new(limits: Limits, what: &'a str) -> Self {
        Self { limits, what, bytes: 0, entries: 0 }
    }

    /// The source, as errors name it.
    pub(crate) fn what(&self) -> &'a str {
        self.what
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    /// Counts one more file or folder.
    pub(crate) fn entry(&mut self) -> Result<(), InstallError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(InstallError::TooManyEntries {
                source_text: self.what.to_owned(),
                cap: self.limits.max_entries,
            });
        }
        Ok(())
    }

    /// Counts `n_bytes` a file says it has, before any is written.
    pub(crate) fn declare(&mut self, n_bytes: u64) -> Result<(), InstallError> {
        if self.bytes.saturating_add(n_bytes) > self.limits.max_bytes {
            return Err(self.too_large());
        }
        Ok(())
    }

    fn too_large(&self) -> InstallError {
        InstallError::TooLarge { source_text: self.what.to_owned(), cap: self.limits.max_bytes }
    }

    /// Copies `reader` into a new file `path` (which must not exist), counting the bytes
    /// as they come, whatever the file said its size was. Executable for its owner when
    /// `executable`, never more than 0755.
    pub(crate) fn write_file(
        &mut self,
        reader: &mut dyn Read,
        path: &Path,
        executable: bool,
    ) -> Result<(), InstallError> {
        let io_error = |error| InstallError::Io { path: path.to_owned(), error };
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, if executable { 0o755 } else { 0o644 });
        #[cfg(not(unix))]
        let _ = executable;
        let mut file = options.open(path).map_err(io_error)?;
        let room = self.limits.max_bytes - self.bytes;
        let written = std::io::copy(&mut reader.take(room + 1), &mut file)
            .map_err(|error| InstallError::Read { source_text: self.what.to_owned(), message: error.to_string() })?;
        if written > room {
            return Err(self.too_large());
        }
        self.bytes += written;
        file.flush().map_err(io_error)
    }
}

/// `path` as an archive entry names it, checked: relative, no `..`, no root or drive.
/// `Ok(None)` for the archive's own top (`./`).
pub(crate) fn entry_path(name: &Path) -> Result<Option<PathBuf>, EntryProblem> {
    let mut clean = PathBuf::new();
    for component in name.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir => return Err(EntryProblem::ParentDir),
            Component::RootDir | Component::Prefix(_) => return Err(EntryProblem::Absolute),
        }
    }
    Ok((!clean.as_os_str().is_empty()).then_some(clean))
}

/// Copies the folder `from` into `to` (which must not exist) under `budget`: regular files
/// and folders only (a link or a device is refused, never followed); a top-level `.git`
/// is left out.
pub(crate) fn copy_folder(from: &Path, to: &Path, budget: &mut Budget<'_>) -> Result<(), InstallError> {
    walk(from, &mut |relative, kind| {
        let target = to.join(relative);
        match kind {
            Kind::Dir => {
                budget.entry()?;
                fs::create_dir(&target).map_err(|error| InstallError::Io { path: target, error })
            }
            Kind::File { executable, len } => {
                budget.entry()?;
                budget.declare(len)?;
                let source = from.join(relative);
                let mut file = fs::File::open(&source).map_err(|error| InstallError::Io { path: source, error })?;
                budget.write_file(&mut file, &target, executable)
            }
        }
    })
}

/// Checks a folder written by someone else (a git checkout) against `budget`: regular
/// files and folders only, within the caps; a top-level `.git` is not counted.
pub(crate) fn check_folder(folder: &Path, budget: &mut Budget<'_>) -> Result<(), InstallError> {
    walk(folder, &mut |_, kind| match kind {
        Kind::Dir => budget.entry(),
        Kind::File { len, .. } => {
            budget.entry()?;
            budget.declare(len)?;
            budget.bytes += len;
            Ok(())
        }
    })
}

/// What [`walk`] meets.
enum Kind {
    Dir,
    File { executable: bool, len: u64 },
}

/// Calls `visit` with every folder (before what it holds, the top itself as `""`) and
/// regular file under `top`, by path relative to it, in name order; anything else is
/// refused. A top-level `.git` is skipped.
fn walk(top: &Path, visit: &mut dyn FnMut(&Path, Kind) -> Result<(), InstallError>) -> Result<(), InstallError> {
    fn inner(
        top: &Path,
        relative: &Path,
        visit: &mut dyn FnMut(&Path, Kind) -> Result<(), InstallError>,
    ) -> Result<(), InstallError> {
        let folder = top.join(relative);
        visit(relative, Kind::Dir)?;
        let read_error = |error| InstallError::Io { path: folder.clone(), error };
        let mut names = Vec::new();
        for entry in fs::read_dir(&folder).map_err(read_error)? {
            names.push(entry.map_err(read_error)?.file_name());
        }
        names.sort();
        for name in names {
            if relative.as_os_str().is_empty() && name == ".git" {
                continue;
            }
            let child = relative.join(&name);
            let path = top.join(&child);
            let metadata =
                fs::symlink_metadata(&path).map_err(|error| InstallError::Io { path: path.clone(), error })?;
            let kind = metadata.file_type();
            if kind.is_dir() {
                inner(top, &child, visit)?;
            } else if kind.is_file() {
                visit(&child, Kind::File { executable: is_executable(&metadata), len: metadata.len() })?;
            } else {
                let problem = if kind.is_symlink() { EntryProblem::Link } else { EntryProblem::Special };
                return Err(InstallError::UnsafeEntry {
                    source_text: top.display().to_string(),
                    entry: slashed(&child),
                    problem,
                });
            }
        }
        Ok(())
    }
    inner(top, Path::new(""), visit)
}

#[cfg(unix)]
fn is_executable(metadata: &fs::Metadata) -> bool {
    std::os::unix::fs::PermissionsExt::mode(&metadata.permissions()) & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &fs::Metadata) -> bool {
    false
}

/// The skill's folder in what a source brought: `content` itself when it has a `SKILL.md`,
/// else its one top folder when that has one. Failing that, the error lists the skill
/// folders deeper inside, which `--path` can pick.
pub(crate) fn skill_root(content: &Path, source_text: &str) -> Result<PathBuf, InstallError> {
    if content.join("SKILL.md").is_file() {
        return Ok(content.to_owned());
    }
    if let Some(folder) = single_top_folder(content)?
        && folder.join("SKILL.md").is_file()
    {
        return Ok(folder);
    }
    Err(InstallError::NoSkillFile { source_text: source_text.to_owned(), found: skill_folders(content) })
}

/// The one folder `content` holds, when it holds nothing else (as archives often wrap
/// what they hold: GitHub's `REPO-REF/`).
pub(crate) fn single_top_folder(content: &Path) -> Result<Option<PathBuf>, InstallError> {
    let io_error = |error| InstallError::Io { path: content.to_owned(), error };
    let entries: Vec<fs::DirEntry> =
        fs::read_dir(content).map_err(io_error)?.collect::<Result<_, _>>().map_err(io_error)?;
    Ok(match entries.as_slice() {
        [only] if fs::symlink_metadata(only.path()).is_ok_and(|metadata| metadata.is_dir()) => Some(only.path()),
        _ => None,
    })
}

/// How deep below a source's top [`skill_folders`] looks (`skills/team/pdf` is 3).
const SKILL_SEARCH_DEPTH: usize = 4;

/// The folders under `top` (not `top` itself) that hold a `SKILL.md`, `/`-separated, in
/// name order; hidden folders and links are passed over, and a skill's own subfolders
/// are not searched.
fn skill_folders(top: &Path) -> Vec<String> {
    fn search(top: &Path, relative: &Path, found: &mut Vec<String>) {
        let Ok(entries) = fs::read_dir(top.join(relative)) else { return };
        let mut names: Vec<_> = entries.filter_map(Result::ok).map(|entry| entry.file_name()).collect();
        names.sort();
        for name in names.into_iter().filter(|name| !name.to_string_lossy().starts_with('.')) {
            let child = relative.join(&name);
            if !fs::symlink_metadata(top.join(&child)).is_ok_and(|metadata| metadata.is_dir()) {
                continue;
            }
            if top.join(&child).join("SKILL.md").is_file() {
                found.push(slashed(&child));
            } else if child.components().count() < SKILL_SEARCH_DEPTH {
                search(top, &child, found);
            }
        }
    }
    let mut found = Vec::new();
    search(top, Path::new(""), &mut found);
    found
}

/// The skill folder `subfolder` (checked by [`entry_path`]) of `top`: a [`folder`] with a
/// `SKILL.md` in it.
pub(crate) fn subfolder(top: &Path, subfolder: &Path, source_text: &str) -> Result<PathBuf, InstallError> {
    let folder = self::folder(top, subfolder, source_text)?;
    if !folder.join("SKILL.md").is_file() {
        return Err(InstallError::NoSkillAtPath {
            source_text: source_text.to_owned(),
            path: slashed(subfolder),
            problem: "has no SKILL.md",
        });
    }
    Ok(folder)
}

/// The folder `subfolder` (checked by [`entry_path`]) of `top`: every step a real folder,
/// never a link.
pub(crate) fn folder(top: &Path, subfolder: &Path, source_text: &str) -> Result<PathBuf, InstallError> {
    let refused = |problem| InstallError::NoSkillAtPath {
        source_text: source_text.to_owned(),
        path: slashed(subfolder),
        problem,
    };
    let mut folder = top.to_owned();
    for part in subfolder.components() {
        folder.push(part);
        match fs::symlink_metadata(&folder) {
            Ok(metadata) if metadata.is_symlink() => return Err(refused("is a link, and links are refused")),
            Ok(metadata) if metadata.is_dir() => {}
            Ok(_) => return Err(refused("is not a folder")),
            Err(_) => return Err(refused("is not in it")),
        }
    }
    Ok(folder)
}

/// The SHA-256 (hex) of every file under `top`, by `/`-separated relative path. Links are
/// never followed: one counts as a file whose content is `symlink:` and its target, so
/// that a file replaced by a link shows as changed. Folders count only through their
/// files.
pub(crate) fn digests(top: &Path) -> Result<BTreeMap<String, String>, InstallError> {
    let mut found = BTreeMap::new();
    digest_folder(top, Path::new(""), &mut found)?;
    Ok(found)
}

/// The SHA-256 (hex) of one file.
pub(crate) fn file_digest(path: &Path) -> Result<String, InstallError> {
    let mut file = fs::File::open(path).map_err(|error| InstallError::Io { path: path.to_owned(), error })?;
    let mut hasher = Sha256::new();
    hash_reader(&mut file, &mut hasher).map_err(|error| InstallError::Io { path: path.to_owned(), error })?;
    Ok(hex(&hasher.finalize()))
}

fn hash_reader(reader: &mut dyn Read, hasher: &mut Sha256) -> std::io::Result<()> {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let n_read = reader.read(&mut buffer)?;
        if n_read == 0 {
            return Ok(());
        }
        hasher.update(&buffer[..n_read]);
    }
}

fn digest_folder(top: &Path, relative: &Path, found: &mut BTreeMap<String, String>) -> Result<(), InstallError> {
    let folder = top.join(relative);
    let read_error = |error| InstallError::Io { path: folder.clone(), error };
    for entry in fs::read_dir(&folder).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let child = relative.join(entry.file_name());
        let path = top.join(&child);
        let io_error = |error| InstallError::Io { path: path.clone(), error };
        let kind = entry.file_type().map_err(io_error)?;
        if kind.is_dir() {
            digest_folder(top, &child, found)?;
            continue;
        }
        let mut hasher = Sha256::new();
        if kind.is_symlink() {
            hasher.update(b"symlink:");
            hasher.update(fs::read_link(&path).map_err(io_error)?.as_os_str().as_encoded_bytes());
        } else if kind.is_file() {
            let mut file = fs::File::open(&path).map_err(io_error)?;
            hash_reader(&mut file, &mut hasher).map_err(io_error)?;
        } else {
            hasher.update(b"special");
        }
        found.insert(slashed(&child), hex(&hasher.finalize()));
    }
    Ok(())
}

/// `path` with `/` between its parts, as the lock file names files on every platform.
pub(crate) fn slashed(path: &Path) -> String {
    let parts: Vec<String> = path.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_paths_stay_inside() {
        let check = |name: &str| entry_path(Path::new(name));
        assert_eq!(check("a/b.md"), Ok(Some(PathBuf::from("a/b.md"))));
        assert_eq!(check("./a/./b.md"), Ok(Some(PathBuf::from("a/b.md"))));
        assert_eq!(check("./"), Ok(None));
        assert_eq!(check("../evil"), Err(EntryProblem::ParentDir));
        assert_eq!(check("a/../../evil"), Err(EntryProblem::ParentDir));
        assert_eq!(check("/etc/passwd"), Err(EntryProblem::Absolute));
    }

    #[test]
    fn skill_folders_are_found_four_levels_down_outside_hidden_folders() {
        let top = tempfile::tempdir().unwrap();
        for folder in ["a", "a/nested", "x/y/z/deep", "x/y/z/w/too-deep", ".hidden/h", "b"] {
            fs::create_dir_all(top.path().join(folder)).unwrap();
            fs::write(top.path().join(folder).join("SKILL.md"), "---\n").unwrap();
        }
        fs::create_dir_all(top.path().join("empty/none")).unwrap();
        assert_eq!(skill_folders(top.path()), ["a", "b", "x/y/z/deep"], "a skill's own folders are not searched");
        let error = skill_root(top.path(), "src").unwrap_err();
        assert!(matches!(&error, InstallError::NoSkillFile { found, .. } if found.len() == 3), "{error:?}");
    }

    #[test]
    fn a_folder_copy_keeps_to_the_caps_and_refuses_links() {
        let from = tempfile::tempdir().unwrap();
        fs::write(from.path().join("SKILL.md"), "0123456789").unwrap();
        fs::create_dir(from.path().join(".git")).unwrap();
        fs::write(from.path().join(".git/HEAD"), "ref: x").unwrap();
        fs::create_dir(from.path().join("docs")).unwrap();
        fs::write(from.path().join("docs/a.md"), "abc").unwrap();

        let copy = |limits: Limits| {
            let to = tempfile::tempdir().unwrap();
            let target = to.path().join("copy");
            let result = copy_folder(from.path(), &target, &mut Budget::new(limits, "src"));
            (result.map(|()| digests(&target).unwrap()), to)
        };
        let (copied, _to) = copy(Limits::DEFAULT);
        assert_eq!(copied.unwrap().keys().collect::<Vec<_>>(), ["SKILL.md", "docs/a.md"]);

        let (refused, _to) = copy(Limits { max_bytes: 12, max_entries: 100 });
        assert_eq!(refused.unwrap_err().to_string(), "src: the skill is larger than the cap of 12 bytes");
        let (refused, _to) = copy(Limits { max_bytes: 100, max_entries: 2 });
        assert_eq!(refused.unwrap_err().to_string(), "src: the skill has more than the cap of 2 files and folders");

        #[cfg(unix)]
        {
            std::os::unix::fs::symlink("/etc/passwd", from.path().join("docs/link")).unwrap();
            let (refused, _to) = copy(Limits::DEFAULT);
            assert_eq!(
                refused.unwrap_err().to_string(),
                format!(
                    "{}: docs/link: links are refused (a skill is regular files and folders)",
                    from.path().display()
                )
            );
        }
    }

    #[test]
    fn the_root_is_the_top_or_its_single_folder() {
        let content = tempfile::tempdir().unwrap();
        assert!(matches!(skill_root(content.path(), "x"), Err(InstallError::NoSkillFile { .. })));
        fs::create_dir(content.path().join("hello")).unwrap();
        fs::write(content.path().join("hello/SKILL.md"), "").unwrap();
        assert_eq!(skill_root(content.path(), "x").unwrap(), content.path().join("hello"));
        fs::write(content.path().join("README.md"), "").unwrap();
        assert!(matches!(skill_root(content.path(), "x"), Err(InstallError::NoSkillFile { .. })));
        fs::write(content.path().join("SKILL.md"), "").unwrap();
        assert_eq!(skill_root(content.path(), "x").unwrap(), content.path());
    }

    #[test]
    fn digests_are_sha256_hex() {
        let top = tempfile::tempdir().unwrap();
        fs::write(top.path().join("abc"), "abc").unwrap();
        assert_eq!(
            digests(top.path()).unwrap()["abc"],
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
