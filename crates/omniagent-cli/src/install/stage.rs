//! A source's skill put together before it is moved into place: [`fetch`] brings what a
//! source holds into a hidden staging folder beside the skills, under the caps, and
//! [`Fetched::skill`] names a skill in it and makes its lock entry.

use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use skill_markdown::Location;

use super::error::InstallError;
use super::lock::{self, LockEntry};
use super::source::Source;
use super::tree::{self, Budget, Limits};
use super::{archive, git};

/// A source's skill, put together in a staging folder, ready to be moved into place.
pub(super) struct Staged {
    /// What the source brought (shared by the skills `update` takes from one source); its
    /// staging folder is removed with whatever is left in it when the last one is dropped.
    pub(super) fetched: Rc<Fetched>,
    /// The skill's folder inside it.
    pub(super) root: PathBuf,
    /// The name its `SKILL.md` gives (or its folder's).
    pub(super) skill_name: String,
    /// What the lock file will say of it.
    pub(super) entry: LockEntry,
}

pub(super) fn staging_dir(skills_dir: &Path, prefix: &str) -> Result<tempfile::TempDir, InstallError> {
    // Hidden, so that discovery, which skips hidden folders, never sees a half-made skill.
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(skills_dir)
        .map_err(|error| InstallError::Io { path: skills_dir.to_owned(), error })
}

/// `--path` as a relative path inside the source; `None` for the source's top (`.`).
pub(super) fn checked_subfolder(path: &str) -> Result<Option<PathBuf>, InstallError> {
    tree::entry_path(Path::new(path)).map_err(|_| InstallError::BadPath { path: path.to_owned() })
}

/// Puts the skill of `source` (in its folder `subfolder`, when given) together in a
/// staging folder.
pub(super) fn stage(
    skills_dir: &Path,
    source: &Source,
    source_text: &str,
    subfolder: Option<&Path>,
) -> Result<Staged, InstallError> {
    let fetched = fetch(skills_dir, source, source_text, subfolder)?;
    let root = fetched.root(source, source_text, subfolder)?;
    let (skill_name, entry) = fetched.skill(source, source_text, &root, subfolder)?;
    Ok(Staged { fetched: Rc::new(fetched), root, skill_name, entry })
}

/// What a source brought, in a staging folder.
pub(super) struct Fetched {
    /// The staging folder; removed with whatever is left in it when dropped.
    pub(super) dir: tempfile::TempDir,
    /// Every file of the source (of only its skill folder, for a local folder and a
    /// subfolder), inside `dir`.
    pub(super) content: PathBuf,
    /// The commit a git source is at.
    commit: Option<String>,
    /// The SHA-256 of an archive source.
    archive_sha256: Option<String>,
}

/// Brings what `source` holds (of a local folder, only its folder `subfolder` when
/// given) into a new staging folder, under the caps.
pub(super) fn fetch(
    skills_dir: &Path,
    source: &Source,
    source_text: &str,
    subfolder: Option<&Path>,
) -> Result<Fetched, InstallError> {
    let dir = staging_dir(skills_dir, ".install-")?;
    let content = dir.path().join("content");
    let mut budget = Budget::new(Limits::DEFAULT, source_text);
    let mut commit = None;
    let mut archive_sha256 = None;
    let create_content = || fs::create_dir(&content).map_err(|error| InstallError::Io { path: content.clone(), error });
    match source {
        // Only the skill's folder is copied, not the rest of a repository beside it.
        Source::Folder(path) => {
            let from = match subfolder {
                Some(subfolder) => tree::subfolder(path, subfolder, source_text)?,
                None => path.clone(),
            };
            // A copy into a folder inside the source would copy itself without end.
            if skills_dir.canonicalize().is_ok_and(|skills_dir| skills_dir.starts_with(&from)) {
                let skills_dir = skills_dir.to_owned();
                return Err(InstallError::HoldsSkillsFolder { source_text: source_text.to_owned(), skills_dir });
            }
            tree::copy_folder(&from, &content, &mut budget)?;
        }
        Source::TarGz(path) => {
            create_content()?;
            archive_sha256 = Some(tree::file_digest(path)?);
            archive::extract_tar_gz(path, &content, &mut budget)?;
        }
        Source::Zip(path) => {
            create_content()?;
            archive_sha256 = Some(tree::file_digest(path)?);
            archive::extract_zip(path, &content, &mut budget)?;
        }
        Source::Git { url, reference } => {
            commit = Some(git::checkout(url, reference.as_deref(), &content)?);
            tree::check_folder(&content, &mut budget)?;
        }
    }
    Ok(Fetched { dir, content, commit, archive_sha256 })
}

impl Fetched {
    /// The skill's folder in what `source` brought: its folder `subfolder` (already the
    /// top, for a local folder), else its top or single top folder.
    pub(super) fn root(
        &self,
        source: &Source,
        source_text: &str,
        subfolder: Option<&Path>,
    ) -> Result<PathBuf, InstallError> {
        match subfolder {
            Some(subfolder) if !matches!(source, Source::Folder(_)) => {
                // In an archive that wraps everything in one folder (GitHub's
                // `REPO-REF/`), the subfolder may be named from inside that folder.
                let first = subfolder.components().next().map(|first| self.content.join(first));
                let top = match tree::single_top_folder(&self.content)? {
                    Some(top) if first.is_some_and(|first| !first.exists()) => top,
                    _ => self.content.clone(),
                };
                tree::subfolder(&top, subfolder, source_text)
            }
            _ => tree::skill_root(&self.content, source_text),
        }
    }

    /// The name and lock entry of the skill at `root` (inside `content`), the source's
    /// folder `subfolder`, if the source's top is not the skill's.
    pub(super) fn skill(
        &self,
        source: &Source,
        source_text: &str,
        root: &Path,
        subfolder: Option<&Path>,
    ) -> Result<(String, LockEntry), InstallError> {
        let last = |path: &Path| path.file_name().map(|name| name.to_string_lossy().into_owned());
        let folder_name = match root.strip_prefix(&self.content) {
            Ok(inner) if !inner.as_os_str().is_empty() => last(inner).unwrap_or_default(),
            _ => subfolder.and_then(last).unwrap_or_else(|| source.default_name()),
        };
        let skill_name = skill_name(root, &self.content, folder_name, source_text)?;
        let entry = LockEntry {
            source: source.location(),
            kind: source.kind(),
            reference: source.reference().map(str::to_owned),
            commit: self.commit.clone(),
            archive_sha256: self.archive_sha256.clone(),
            subfolder: subfolder.map(tree::slashed),
            installed_at: lock::now_rfc3339(),
            files: tree::digests(root)?,
        };
        Ok((skill_name, entry))
    }
}

/// The name the skill's `SKILL.md` gives, else `folder_name`; a file that is no skill is
/// refused with its line and reason.
fn skill_name(root: &Path, content: &Path, folder_name: String, source_text: &str) -> Result<String, InstallError> {
    let file = root.join("SKILL.md");
    let bytes = fs::read(&file).map_err(|error| InstallError::Io { path: file.clone(), error })?;
    let location = Location {
        path: file.clone(),
        dir: Some(root.to_owned()),
        dir_name: folder_name,
        has_hooks: root.join("hooks").is_dir(),
        has_scripts: root.join("scripts").is_dir(),
    };
    match skill_markdown::parse_bytes(&bytes, location) {
        Ok(skill) => Ok(skill.name),
        Err(error) => Err(InstallError::BadSkillFile {
            source_text: source_text.to_owned(),
            file: tree::slashed(file.strip_prefix(content).unwrap_or(&file)),
            line: error.line,
            reason: error.reason,
        }),
    }
}
