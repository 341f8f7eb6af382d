//! `skills update`: each skill reinstalled from its recorded source, each source fetched
//! once however many skills it gave.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::error::InstallError;
use super::lock::{self, Lock};
use super::source::Source;
use super::stage::{self, Fetched, Staged, checked_subfolder};
use super::{Changes, Installed, local_changes, lock_path, names, skills_dir};
use crate::Home;

/// What `update` did with one skill.
#[derive(Debug)]
pub enum Update {
    /// Reinstalled from its source.
    Updated {
        /// The skill as it is now.
        installed: Box<Installed>,
        /// How the new files differ from the recorded ones.
        changes: Changes,
        /// The local edits `force` overwrote.
        overwritten: Changes,
        /// The commit it was at, for a git source.
        previous_commit: Option<String>,
    },
    /// The source gives the same files, and the folder has no edits: nothing to do.
    UpToDate {
        /// The skill.
        name: String,
    },
    /// The folder has local edits, kept because `force` was not given.
    KeptLocalEdits {
        /// The skill.
        name: String,
        /// The edits.
        local: Changes,
    },
    /// The update failed; the skill is as it was.
    Failed {
        /// The skill.
        name: String,
        /// Why.
        error: InstallError,
    },
}

/// Reinstalls `name` (or every installed skill) from its recorded source, at its
/// recorded ref. A skill with local edits is left as it is unless `force`. One skill
/// failing does not stop the others. Skills of one repository or archive (`--all`,
/// `--path`) are taken from one clone or one read of it.
pub fn update(home: &Home, name: Option<&str>, force: bool) -> Result<Vec<Update>, InstallError> {
    let skills_dir = skills_dir(home)?;
    let _held = lock::hold(&skills_dir)?;
    let lock_path = lock_path(home);
    let mut lock = Lock::read(&lock_path)?;
    let names = names(&lock, &lock_path, name)?;
    let mut fetches = Fetches::default();
    Ok(names
        .into_iter()
        .map(|name| match update_one(&skills_dir, &lock_path, &mut lock, &name, force, &mut fetches) {
            Ok(update) => update,
            Err(error) => Update::Failed { name, error },
        })
        .collect())
}

fn update_one(
    skills_dir: &Path,
    lock_path: &Path,
    lock: &mut Lock,
    name: &str,
    force: bool,
    fetches: &mut Fetches,
) -> Result<Update, InstallError> {
    let entry = lock.skills[name].clone();
    let target = skills_dir.join(name);
    let (_, local) = local_changes(&target, &entry)?;
    if !local.is_empty() && !force {
        return Ok(Update::KeptLocalEdits { name: name.to_owned(), local });
    }
    let source = Source::recorded(entry.kind, &entry.source, entry.reference.as_deref());
    let subfolder = entry.subfolder.as_deref().map(checked_subfolder).transpose()?.flatten();
    let staged = fetches.stage(skills_dir, &source, &entry.source, subfolder.as_deref())?;
    // A skill of a repository of several is up to date while its own files are, whatever
    // the other skills' commits did.
    let same_commit = staged.entry.commit == entry.commit || entry.subfolder.is_some();
    if local.is_empty() && staged.entry.files == entry.files && same_commit {
        return Ok(Update::UpToDate { name: name.to_owned() });
    }
    let previous = staged.fetched.dir.path().join(format!("previous-{name}"));
    let had_folder = target.symlink_metadata().is_ok();
    if had_folder {
        fs::rename(&target, &previous).map_err(|error| InstallError::Io { path: target.clone(), error })?;
    }
    if let Err(error) = fs::rename(&staged.root, &target) {
        if had_folder {
            let _ = fs::rename(&previous, &target);
        }
        return Err(InstallError::Io { path: target, error });
    }
    lock.skills.insert(name.to_owned(), staged.entry.clone());
    if let Err(error) = lock.write(lock_path) {
        let _ = fs::remove_dir_all(&target);
        if had_folder {
            let _ = fs::rename(&previous, &target);
        }
        lock.skills.insert(name.to_owned(), entry);
        return Err(error);
    }
    let changes = Changes::between(&entry.files, &staged.entry.files);
    let installed = Box::new(Installed { name: name.to_owned(), path: target, entry: staged.entry });
    Ok(Update::Updated { installed, changes, overwritten: local, previous_commit: entry.commit })
}

/// The sources `update` fetched so far: a repository or an archive is cloned or read
/// once for every skill taken from it (a local folder is copied per skill, which copies
/// only that skill's folder).
#[derive(Default)]
struct Fetches {
    /// By source and ref: what each brought, or why it could not be fetched (which the
    /// other skills of that source are told rather than trying again).
    fetched: HashMap<(String, Option<String>), Result<Rc<Fetched>, String>>,
    /// The skill folders moved out of them (or about to be).
    taken: HashSet<PathBuf>,
}

impl Fetches {
    /// The skill of `source` in its folder `subfolder`, as [`stage::stage`] gives it, from
    /// the source's fetch when there is one already.
    fn stage(
        &mut self,
        skills_dir: &Path,
        source: &Source,
        source_text: &str,
        subfolder: Option<&Path>,
    ) -> Result<Staged, InstallError> {
        if matches!(source, Source::Folder(_)) {
            return stage::stage(skills_dir, source, source_text, subfolder);
        }
        let key = (source.location(), source.reference().map(str::to_owned));
        let fetched = match self.fetched.get(&key) {
            Some(Ok(fetched)) => Rc::clone(fetched),
            Some(Err(message)) => return Err(InstallError::FetchedBefore { message: message.clone() }),
            None => match stage::fetch(skills_dir, source, source_text, None) {
                Ok(fetched) => {
                    let fetched = Rc::new(fetched);
                    self.fetched.insert(key, Ok(Rc::clone(&fetched)));
                    fetched
                }
                Err(error) => {
                    self.fetched.insert(key, Err(error.to_string()));
                    return Err(error);
                }
            },
        };
        let root = fetched.root(source, source_text, subfolder)?;
        if !self.taken.insert(root.clone()) {
            // Two skills from one folder of the source: the second gets a fetch of its own.
            return stage::stage(skills_dir, source, source_text, subfolder);
        }
        let (skill_name, entry) = fetched.skill(source, source_text, &root, subfolder)?;
        Ok(Staged { fetched, root, skill_name, entry })
    }
}
