//! Installs you can verify: `omniagent skills install|verify|update|remove`.
//!
//! [`install`] brings a skill from a folder, a `.tar.gz` or `.zip` archive, or a git
//! repository (at an optional `#ref`) into `$OMNIAGENT_HOME/skills/<name>`, and records
//! it in `$OMNIAGENT_HOME/skills.lock`: the source, the ref and commit, the time, and the
//! SHA-256 of every file; from a source of several skills, one skill folder of it, or
//! each ([`install_all`]). [`verify`] compares the folders with the lock, [`update`]
//! reinstalls from the recorded source (keeping local edits unless forced), and
//! [`remove`] takes a skill out.
//!
//! Everything a source brings is put together in a hidden staging folder beside the
//! skills (so a rename moves it into place, and a failure leaves nothing), under caps on
//! size and file count. Archive entries must stay inside the skill's folder, and links of
//! any kind are refused, as in a copied folder or a checkout: a skill is regular files
//! and folders.

mod archive;
mod error;
mod git;
mod lock;
mod source;
mod stage;
mod tree;
mod update;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;

pub use self::error::{EntryProblem, InstallError};
use self::lock::Lock;
pub use self::lock::LockEntry;
use self::source::Source;
pub use self::source::SourceKind;
use self::stage::{checked_subfolder, fetch, stage, staging_dir};
pub use self::update::{Update, update};
use crate::Home;

/// A skill that was installed or updated.
#[derive(Debug, Clone, Serialize)]
pub struct Installed {
    /// Its name: its folder's under `skills/` and its key in the lock file.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// What the lock file now says of it.
    #[serde(flatten)]
    pub entry: LockEntry,
}

/// How a skill's files differ from what the lock file recorded, by relative path.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    /// Files whose content differs.
    pub changed: Vec<String>,
    /// Files the lock does not know.
    pub added: Vec<String>,
    /// Files the lock lists that are gone.
    pub removed: Vec<String>,
}

impl Changes {
    /// Whether nothing differs.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.added.is_empty() && self.removed.is_empty()
    }

    fn between(recorded: &BTreeMap<String, String>, found: &BTreeMap<String, String>) -> Self {
        let mut changes = Self::default();
        for (path, digest) in recorded {
            match found.get(path) {
                Some(now) if now == digest => {}
                Some(_) => changes.changed.push(path.clone()),
                None => changes.removed.push(path.clone()),
            }
        }
        changes.added = found.keys().filter(|path| !recorded.contains_key(*path)).cloned().collect();
        changes
    }
}

/// One installed skill checked against the lock file.
#[derive(Debug, Clone)]
pub struct Verification {
    /// The skill.
    pub name: String,
    /// Its folder.
    pub path: PathBuf,
    /// What the lock file says of it.
    pub entry: LockEntry,
    /// Whether its folder is gone (every file then counts as removed).
    pub missing: bool,
    /// What differs.
    pub changes: Changes,
}

/// Installs the skill `source` names (see the module doc), in its folder `subfolder` when
/// given, or the folder a repository's web page names (a repository of several skills),
/// as `name`, else as its frontmatter's name, else its folder's (or archive's, or
/// repository's) name. Relative paths are taken from the working folder.
pub fn install(
    home: &Home,
    source_text: &str,
    subfolder: Option<&str>,
    name: Option<&str>,
) -> Result<Installed, InstallError> {
    let (source, in_url) = Source::parse(source_text, Path::new(""))?;
    let subfolder = match (subfolder, in_url.as_deref()) {
        (Some(_), Some(folder)) => {
            return Err(InstallError::PathTwice { source_text: source_text.to_owned(), folder: folder.to_owned() });
        }
        (Some(folder), None) | (None, Some(folder)) => checked_subfolder(folder)?,
        (None, None) => None,
    };
    let skills_dir = skills_dir(home)?;
    let _held = lock::hold(&skills_dir)?;
    let lock_path = lock_path(home);
    let mut lock = Lock::read(&lock_path)?;
    let staged = stage(&skills_dir, &source, source_text, subfolder.as_deref())?;
    let name = name.map_or_else(|| staged.skill_name.clone(), str::to_owned);
    let target = move_into_place(&skills_dir, &mut lock, &name, &staged.root, &staged.entry)?;
    if let Err(error) = lock.write(&lock_path) {
        let _ = fs::remove_dir_all(&target);
        return Err(error);
    }
    Ok(Installed { name, path: target, entry: staged.entry })
}

/// What [`install_all`] did with one skill folder of the source.
#[derive(Debug)]
pub enum Outcome {
    /// Installed.
    Installed(Installed),
    /// Left out, with the reason; the other skills are installed all the same.
    Skipped {
        /// The skill's folder in the source (`.` for its top).
        subfolder: String,
        /// Why.
        error: InstallError,
    },
}

/// Installs every skill `source` holds (in the folder its web page names, if it is one):
/// the one at its top (or in its single top folder), else each skill folder inside it
/// (see `--path`), each under its frontmatter's name, else its folder's, with its
/// subfolder recorded. A skill that cannot be installed (a broken `SKILL.md`, a name
/// installed already) is skipped with the reason; a source that cannot be read, or holds
/// no skill, is an error.
pub fn install_all(home: &Home, source_text: &str) -> Result<Vec<Outcome>, InstallError> {
    let (source, in_url) = Source::parse(source_text, Path::new(""))?;
    let within = in_url.as_deref().map(checked_subfolder).transpose()?.flatten();
    let skills_dir = skills_dir(home)?;
    let _held = lock::hold(&skills_dir)?;
    let lock_path = lock_path(home);
    let mut lock = Lock::read(&lock_path)?;
    let fetched = fetch(&skills_dir, &source, source_text, None)?;
    let skills = skills_in(&fetched.content, within.as_deref(), source_text)?;
    let mut outcomes = Vec::new();
    let mut moved = Vec::new();
    // The names this run gave, by subfolder: a second skill of the same name is no skill
    // "installed already".
    let mut given: BTreeMap<String, String> = BTreeMap::new();
    for (root, subfolder) in skills {
        let shown = subfolder.as_deref().map_or(".".to_owned(), tree::slashed);
        let installed = fetched.skill(&source, source_text, &root, subfolder.as_deref()).and_then(|(name, entry)| {
            if let Some(first) = given.get(&name) {
                return Err(InstallError::SameNameTwice { name, first: first.clone() });
            }
            let path = move_into_place(&skills_dir, &mut lock, &name, &root, &entry)?;
            moved.push(path.clone());
            given.insert(name.clone(), shown.clone());
            Ok(Installed { name, path, entry })
        });
        outcomes.push(match installed {
            Ok(installed) => Outcome::Installed(installed),
            Err(error) => Outcome::Skipped { subfolder: shown, error },
        });
    }
    if !moved.is_empty()
        && let Err(error) = lock.write(&lock_path)
    {
        for target in moved {
            let _ = fs::remove_dir_all(target);
        }
        return Err(error);
    }
    Ok(outcomes)
}

/// The skills of what a source brought (`content`), in its folder `within` if given: each
/// skill's folder, and its subfolder in the source to record (none for a skill at the
/// source's top or in its single top folder, as `install` records it).
fn skills_in(
    content: &Path,
    within: Option<&Path>,
    source_text: &str,
) -> Result<Vec<(PathBuf, Option<PathBuf>)>, InstallError> {
    let top = match within {
        Some(within) => tree::folder(content, within, source_text)?,
        None => content.to_owned(),
    };
    let inside = |root: PathBuf| {
        let subfolder = root.strip_prefix(content).ok().map(Path::to_owned);
        (root, subfolder)
    };
    match tree::skill_root(&top, source_text) {
        Ok(root) if within.is_none() => Ok(vec![(root, None)]),
        Ok(root) => Ok(vec![inside(root)]),
        Err(InstallError::NoSkillFile { found, .. }) if !found.is_empty() => {
            Ok(found.into_iter().map(|found| inside(top.join(found))).collect())
        }
        Err(error) => Err(error),
    }
}

/// Checks `name` (or every installed skill) against the lock file.
pub fn verify(home: &Home, name: Option<&str>) -> Result<Vec<Verification>, InstallError> {
    let lock_path = lock_path(home);
    let lock = Lock::read(&lock_path)?;
    names(&lock, &lock_path, name)?
        .into_iter()
        .map(|name| {
            let entry = lock.skills[&name].clone();
            let path = home.skills_dir().join(&name);
            let (missing, changes) = local_changes(&path, &entry)?;
            Ok(Verification { name, path, entry, missing, changes })
        })
        .collect()
}

/// What `skills install` recorded of the skill folder `dir`, checked against its files
/// as [`verify`] does; `None` for a folder that no install made.
pub fn installed_at(home: &Home, dir: &Path) -> Option<Verification> {
    let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_owned());
    let inside = canonical(dir).strip_prefix(canonical(&home.skills_dir())).ok()?.to_owned();
    let name = match inside.components().collect::<Vec<_>>()[..] {
        [std::path::Component::Normal(name)] => name.to_str()?.to_owned(),
        _ => return None,
    };
    verify(home, Some(&name)).ok()?.pop()
}

/// Removes the installed skill `name`: its folder and its lock entry. Returns the entry.
pub fn remove(home: &Home, name: &str) -> Result<LockEntry, InstallError> {
    let skills_dir = skills_dir(home)?;
    let _held = lock::hold(&skills_dir)?;
    let lock_path = lock_path(home);
    let mut lock = Lock::read(&lock_path)?;
    let entry = lock.entry(name, &lock_path)?.clone();
    let target = skills_dir.join(name);
    let trash = staging_dir(&skills_dir, ".remove-")?;
    let moved = trash.path().join(name);
    let had_folder = target.symlink_metadata().is_ok();
    if had_folder {
        fs::rename(&target, &moved).map_err(|error| InstallError::Io { path: target.clone(), error })?;
    }
    lock.skills.remove(name);
    if let Err(error) = lock.write(&lock_path) {
        if had_folder {
            let _ = fs::rename(&moved, &target);
        }
        return Err(error);
    }
    Ok(entry)
}

fn skills_dir(home: &Home) -> Result<PathBuf, InstallError> {
    let folder = home.skills_dir();
    fs::create_dir_all(&folder).map_err(|error| InstallError::Io { path: folder.clone(), error })?;
    Ok(folder)
}

fn lock_path(home: &Home) -> PathBuf {
    home.root().join("skills.lock")
}

/// `[name]` when it is installed, every installed name when `None`.
fn names(lock: &Lock, lock_path: &Path, name: Option<&str>) -> Result<Vec<String>, InstallError> {
    match name {
        Some(name) => lock.entry(name, lock_path).map(|_| vec![name.to_owned()]),
        None => Ok(lock.names()),
    }
}

/// Whether the folder is gone, and how its files differ from `entry`'s.
fn local_changes(path: &Path, entry: &LockEntry) -> Result<(bool, Changes), InstallError> {
    let is_folder = path.symlink_metadata().is_ok_and(|metadata| metadata.is_dir());
    if !is_folder {
        return Ok((true, Changes { removed: entry.files.keys().cloned().collect(), ..Changes::default() }));
    }
    Ok((false, Changes::between(&entry.files, &tree::digests(path)?)))
}

/// Moves the staged skill folder `root` into the skills folder as `name`, and enters it in
/// `lock` (not yet written); refused when the name is no plain folder name, is installed
/// already, or names a folder that no install made. Returns its new folder.
fn move_into_place(
    skills_dir: &Path,
    lock: &mut Lock,
    name: &str,
    root: &Path,
    entry: &LockEntry,
) -> Result<PathBuf, InstallError> {
    check_name(name)?;
    if lock.skills.contains_key(name) {
        return Err(InstallError::AlreadyInstalled { name: name.to_owned() });
    }
    let target = skills_dir.join(name);
    if target.symlink_metadata().is_ok() {
        return Err(InstallError::NotOurs { path: target });
    }
    fs::rename(root, &target).map_err(|error| InstallError::Io { path: target.clone(), error })?;
    lock.skills.insert(name.to_owned(), entry.clone());
    Ok(target)
}

/// A name must be a plain folder name: `[A-Za-z0-9._-]`, at most 64, not starting with a dot.
fn check_name(name: &str) -> Result<(), InstallError> {
    let why = if name.is_empty() || name.len() > 64 {
        Some("must be 1 to 64 characters")
    } else if name.starts_with('.') {
        Some("must not start with a dot")
    } else if !name.chars().all(|character| character.is_ascii_alphanumeric() || "._-".contains(character)) {
        Some("may hold only letters, digits, `.`, `_` and `-`")
    } else {
        None
    };
    match why {
        Some(why) => Err(InstallError::BadName { name: name.to_owned(), why }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_told_apart() {
        let map = |pairs: &[(&str, &str)]| {
            pairs.iter().map(|(path, digest)| ((*path).to_owned(), (*digest).to_owned())).collect()
        };
        let changes =
            Changes::between(&map(&[("a", "1"), ("b", "2"), ("c", "3")]), &map(&[("a", "1"), ("b", "9"), ("d", "4")]));
        assert_eq!(changes, Changes { changed: vec!["b".into()], added: vec!["d".into()], removed: vec!["c".into()] });
        assert!(Changes::between(&map(&[("a", "1")]), &map(&[("a", "1")])).is_empty());
    }

    #[test]
    fn the_skills_of_a_source_are_those_at_its_top_else_each_one_inside() {
        let content = tempfile::tempdir().unwrap();
        let top = content.path();
        for skill in ["skills/pdf", "skills/weather", "solo/only"] {
            fs::create_dir_all(top.join(skill)).unwrap();
            fs::write(top.join(skill).join("SKILL.md"), "---\n").unwrap();
        }
        let found = |within: Option<&str>| {
            let skills = skills_in(top, within.map(Path::new), "src").unwrap();
            skills
                .into_iter()
                .map(|(root, subfolder)| {
                    let subfolder = subfolder.expect("a skill inside the source has its subfolder");
                    assert_eq!(root, top.join(&subfolder));
                    Some(tree::slashed(&subfolder))
                })
                .collect::<Vec<_>>()
        };
        let both = vec![Some("skills/pdf".to_owned()), Some("skills/weather".to_owned())];
        assert_eq!(found(None), [both.clone(), vec![Some("solo/only".to_owned())]].concat());
        assert_eq!(found(Some("skills")), both, "the folder a web page names");
        assert_eq!(found(Some("skills/pdf")), [Some("skills/pdf".to_owned())], "a skill's own folder");
        assert_eq!(found(Some("solo")), [Some("solo/only".to_owned())], "a single top folder, recorded");
        assert!(matches!(skills_in(top, Some(Path::new("nope")), "src"), Err(InstallError::NoSkillAtPath { .. })));
        let single = tempfile::tempdir().unwrap();
        fs::write(single.path().join("SKILL.md"), "---\n").unwrap();
        let skills = skills_in(single.path(), None, "src").unwrap();
        assert_eq!(skills, [(single.path().to_owned(), None)], "one skill at the top: no subfolder");
    }

    #[test]
    fn names_are_plain_folder_names() {
        assert!(check_name("pdf-tools_2.0").is_ok());
        for bad in ["", ".hidden", "a/b", "..", "a b", &"x".repeat(65)] {
            assert!(matches!(check_name(bad), Err(InstallError::BadName { .. })), "{bad:?}");
        }
    }
}
