//! Finding skills: in packs, then in folders, with precedence and filters.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::MarkdownSkill;
use crate::packs::{PACKS, pack};
use crate::parse::{Location, MAX_SKILL_FILE_BYTES, parse, parse_bytes};

/// How deep below a folder `SKILL.md` files are looked for (OpenClaw's depth).
const MAX_DEPTH: usize = 6;

/// Where to look, in discovery order.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    /// Embedded packs, by name.
    pub packs: Vec<String>,
    /// Folders, each either a skill (it holds `SKILL.md`) or a folder of skills. The
    /// first folder that has a skill of a given name wins.
    pub dirs: Vec<PathBuf>,
    /// Folders the user named explicitly: one that does not exist is reported in
    /// `skipped` (default folders that do not exist are silently passed over).
    pub explicit_dirs: Vec<PathBuf>,
    /// The folders of `dirs` that belong to the working folder (a checkout): their skills
    /// are project skills ([`Found::project`]).
    pub project_dirs: Vec<PathBuf>,
}

/// Where a skill was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum Origin {
    /// In an embedded pack.
    Pack {
        /// The pack's name.
        pack: String,
    },
    /// In a folder.
    Dir,
}

/// A skill that was found, and the same-named ones it hides.
#[derive(Debug, Clone)]
pub struct Found {
    /// The parsed skill.
    pub skill: MarkdownSkill,
    /// Where it was found.
    pub origin: Origin,
    /// The paths of lower-precedence skills of the same name.
    pub shadows: Vec<PathBuf>,
    /// Whether it was found in one of [`Sources::project_dirs`].
    pub project: bool,
}

/// A `SKILL.md` (or source) that could not be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// The file or folder.
    pub path: PathBuf,
    /// The 1-based line, when the problem is on one.
    pub line: Option<usize>,
    /// What is wrong.
    pub reason: String,
}

/// What discovery found.
#[derive(Debug, Clone, Default)]
pub struct Discovery {
    /// The skills, in discovery order, one per name.
    pub skills: Vec<Found>,
    /// Everything that could not be used.
    pub skipped: Vec<Skipped>,
}

/// Finds every skill of `sources`: packs first, then folders, in order. A folder skill
/// hides a pack skill of the same name; among folders the first found wins.
pub fn discover(sources: &Sources) -> Discovery {
    let mut candidates: Vec<Candidate> = Vec::new();
    let mut skipped = Vec::new();
    for pack_name in &sources.packs {
        let Some(pack) = pack(pack_name) else {
            let known: Vec<&str> = PACKS.iter().map(|pack| pack.name).collect();
            skipped.push(Skipped {
                path: PathBuf::from(format!("pack:{pack_name}")),
                line: None,
                reason: format!("unknown pack `{pack_name}` (this build has: {})", known.join(", ")),
            });
            continue;
        };
        for (dir_name, text) in pack.skills {
            let path = PathBuf::from(format!("pack:{}/{dir_name}/SKILL.md", pack.name));
            let location = Location {
                path: path.clone(),
                dir: None,
                dir_name: (*dir_name).to_owned(),
                has_hooks: false,
                has_scripts: false,
            };
            match parse(text, location) {
                Ok(skill) => candidates.push(Candidate {
                    skill,
                    origin: Origin::Pack { pack: pack.name.to_owned() },
                    project: false,
                }),
                Err(error) => skipped.push(Skipped { path, line: Some(error.line), reason: error.reason }),
            }
        }
    }
    let mut walker = Walker { visited: HashSet::new(), found: Vec::new(), skipped: &mut skipped };
    for dir in &sources.dirs {
        walker.root(dir, false, sources.project_dirs.contains(dir));
    }
    for dir in &sources.explicit_dirs {
        walker.root(dir, true, false);
    }
    let found = walker.found;
    for (outcome, file) in load_all(&found).into_iter().zip(&found) {
        match outcome {
            Ok(skill) => candidates.push(Candidate { skill, origin: Origin::Dir, project: file.project }),
            Err(error) => skipped.push(error),
        }
    }
    Discovery { skills: resolve_precedence(candidates), skipped }
}

/// The `SKILL.md` files below `dirs` as [`discover`] walks them, each with its skill
/// folder, and the folders that could not be walked; with `explicit`, a folder that does
/// not exist is one of them (for `skills validate`).
pub(crate) fn skill_files(dirs: &[PathBuf], explicit: bool) -> (Vec<(PathBuf, PathBuf)>, Vec<Skipped>) {
    let mut skipped = Vec::new();
    let mut walker = Walker { visited: HashSet::new(), found: Vec::new(), skipped: &mut skipped };
    for dir in dirs {
        walker.root(dir, explicit, false);
    }
    let files = walker.found.into_iter().map(|found| (found.dir, found.file)).collect();
    (files, skipped)
}

/// A parsed skill before precedence is applied.
struct Candidate {
    skill: MarkdownSkill,
    origin: Origin,
    project: bool,
}

/// One entry per name: the first folder skill, else the first pack skill; the winner
/// keeps the position of the first candidate of its name.
fn resolve_precedence(candidates: Vec<Candidate>) -> Vec<Found> {
    let mut slots: Vec<Found> = Vec::new();
    let mut slot_of: HashMap<String, usize> = HashMap::new();
    for Candidate { skill, origin, project } in candidates {
        let Some(&slot_idx) = slot_of.get(&skill.name) else {
            slot_of.insert(skill.name.clone(), slots.len());
            slots.push(Found { skill, origin, shadows: Vec::new(), project });
            continue;
        };
        let slot = &mut slots[slot_idx];
        if slot.origin != Origin::Dir && origin == Origin::Dir {
            let hidden = std::mem::replace(slot, Found { skill, origin, shadows: Vec::new(), project });
            slot.shadows.push(hidden.skill.path);
            slot.shadows.extend(hidden.shadows);
        } else {
            slot.shadows.push(skill.path);
        }
    }
    slots
}

/// Below this many files, reading and parsing stays on the calling thread.
const MIN_FILES_PER_THREAD: usize = 64;

/// Reads and parses every found `SKILL.md`, on several threads when there are many, and
/// returns the outcomes in the order the files were found.
fn load_all(found: &[FoundFile]) -> Vec<Result<MarkdownSkill, Skipped>> {
    load_each(found, FoundFile::load)
}

/// [`load_all`] with `load` for each file. A panic while loading one file skips that file
/// (a bug in the parser must cost one skill, not the list); a worker thread that fails
/// all the same skips the files it was given, each saying so.
fn load_each(
    found: &[FoundFile],
    load: impl Fn(&FoundFile) -> Result<MarkdownSkill, Skipped> + Sync,
) -> Vec<Result<MarkdownSkill, Skipped>> {
    let load_one = |file: &FoundFile| {
        catch_unwind(AssertUnwindSafe(|| load(file))).unwrap_or_else(|payload| {
            let message = panic_message(payload.as_ref());
            Err(file.skipped(None, format!("skipped: parsing it panicked ({message}), a bug in OmniAgent")))
        })
    };
    let n_threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(found.len().div_ceil(MIN_FILES_PER_THREAD))
        .max(1);
    if n_threads == 1 {
        return found.iter().map(load_one).collect();
    }
    let chunk_len = found.len().div_ceil(n_threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = found
            .chunks(chunk_len)
            .map(|chunk| (chunk, scope.spawn(|| chunk.iter().map(load_one).collect::<Vec<_>>())))
            .collect();
        workers
            .into_iter()
            .flat_map(|(chunk, worker)| {
                worker.join().unwrap_or_else(|_| {
                    let reason = || "skipped: the thread reading it failed, a bug in OmniAgent".to_owned();
                    chunk.iter().map(|file| Err(file.skipped(None, reason()))).collect()
                })
            })
            .collect()
    })
}

/// What a panic said, when it said it with a string (as `panic!` and `expect` do).
fn panic_message(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message")
}

/// A `SKILL.md` the walk found, not yet read.
struct FoundFile {
    dir: PathBuf,
    file: PathBuf,
    has_hooks: bool,
    has_scripts: bool,
    /// Found under one of [`Sources::project_dirs`].
    project: bool,
}

impl FoundFile {
    fn load(&self) -> Result<MarkdownSkill, Skipped> {
        let bytes = read_bounded(&self.file).map_err(|unreadable| match unreadable {
            Unreadable::NotAFile => self.skipped(None, "not a regular file".to_owned()),
            Unreadable::TooLarge { size } => self.skipped(
                Some(1),
                format!("the file is {size} bytes, more than the {MAX_SKILL_FILE_BYTES} a SKILL.md may have"),
            ),
            Unreadable::Io(error) => self.skipped(None, format!("cannot read: {error}")),
        })?;
        let location = Location {
            path: self.file.clone(),
            dir: Some(self.dir.clone()),
            dir_name: self.dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default(),
            has_hooks: self.has_hooks,
            has_scripts: self.has_scripts,
        };
        parse_bytes(&bytes, location).map_err(|error| self.skipped(Some(error.line), error.reason))
    }

    fn skipped(&self, line: Option<usize>, reason: String) -> Skipped {
        Skipped { path: self.file.clone(), line, reason }
    }
}

/// Why a found `SKILL.md` could not be read.
#[derive(Debug)]
pub(crate) enum Unreadable {
    /// It is no longer a regular file (the walk saw one): a FIFO, a device, a folder.
    NotAFile,
    /// It has more than [`MAX_SKILL_FILE_BYTES`] bytes.
    TooLarge { size: u64 },
    /// Opening or reading it failed.
    Io(std::io::Error),
}

impl From<std::io::Error> for Unreadable {
    fn from(error: std::io::Error) -> Self {
        Unreadable::Io(error)
    }
}

/// The bytes of the regular file at `path`, at most [`MAX_SKILL_FILE_BYTES`] of them.
///
/// The walk checked the file's type, but what is read is checked again on the opened file,
/// since it may have been replaced since: opening never waits for a FIFO's writer, and
/// no more than one byte past the limit is ever read, so that a huge file or an endless
/// one (a device behind a link swapped in) costs nothing.
pub(crate) fn read_bounded(path: &Path) -> Result<Vec<u8>, Unreadable> {
    let limit = MAX_SKILL_FILE_BYTES as u64;
    let file = open_without_blocking(path)?;
    let metadata = file.metadata()?;
    if !metadata.is_file() {
        return Err(Unreadable::NotAFile);
    }
    if metadata.len() > limit {
        return Err(Unreadable::TooLarge { size: metadata.len() });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    (&file).take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        // It grew past the limit since it was measured: its size now, at least what was read.
        let size = file.metadata().map_or(0, |now| now.len()).max(bytes.len() as u64);
        return Err(Unreadable::TooLarge { size });
    }
    Ok(bytes)
}

/// `path` opened for reading with `O_NONBLOCK`, which makes opening a FIFO return at once
/// instead of waiting for a writer, and changes nothing for a regular file.
#[cfg(unix)]
fn open_without_blocking(path: &Path) -> Result<File, Unreadable> {
    use std::os::unix::fs::OpenOptionsExt;

    let flags = nix::fcntl::OFlag::O_NONBLOCK.bits();
    Ok(std::fs::OpenOptions::new().read(true).custom_flags(flags).open(path)?)
}

/// `path` opened for reading if it is a regular file: there is no `O_NONBLOCK` here, so
/// its type is checked before opening (no FIFO lives among files here anyway).
#[cfg(not(unix))]
fn open_without_blocking(path: &Path) -> Result<File, Unreadable> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(Unreadable::NotAFile);
    }
    Ok(File::open(path)?)
}

struct Walker<'a> {
    /// Canonical folders already walked: a symlink loop ends here.
    visited: HashSet<PathBuf>,
    found: Vec<FoundFile>,
    skipped: &'a mut Vec<Skipped>,
}

impl Walker<'_> {
    fn root(&mut self, dir: &Path, explicit: bool, project: bool) {
        match dir.canonicalize() {
            Ok(canonical) if canonical.is_dir() => self.walk(dir, canonical, 0, project),
            _ if explicit => {
                let reason = if dir.exists() { "not a folder" } else { "no such folder" };
                self.skipped.push(Skipped { path: dir.to_owned(), line: None, reason: reason.to_owned() });
            }
            _ => {}
        }
    }

    /// Walks `dir` (whose symlink-free path is `canonical`) with one listing: it tells
    /// whether the folder is a skill, and which sub-folders to walk otherwise. Only
    /// symlinks cost extra system calls.
    fn walk(&mut self, dir: &Path, canonical: PathBuf, depth: usize, project: bool) {
        if !self.visited.insert(canonical.clone()) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(dir) else {
            self.skipped.push(Skipped {
                path: dir.to_owned(),
                line: None,
                reason: "cannot read the folder".to_owned(),
            });
            return;
        };
        let mut listing = Listing::default();
        for entry in entries.filter_map(Result::ok) {
            let Ok(file_type) = entry.file_type() else { continue };
            // A name that is not UTF-8 can be no file we look for, but still a folder to walk.
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let path = entry.path();
            let (is_dir, is_file) = if file_type.is_symlink() {
                std::fs::metadata(&path).map_or((false, false), |target| (target.is_dir(), target.is_file()))
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            match name.as_ref() {
                "SKILL.md" if is_file => listing.skill_file = Some(path),
                "skill.md" if is_file => listing.skill_file = listing.skill_file.or(Some(path)),
                "SKILL.md" | "skill.md" => listing.not_a_file = Some(path),
                // Walked too: in a folder of skills, `hooks` or `scripts` may be a skill.
                "hooks" | "scripts" if is_dir => {
                    if name == "hooks" {
                        listing.has_hooks = true;
                    } else {
                        listing.has_scripts = true;
                    }
                    listing.children.push(Child { path, name: entry.file_name(), is_symlink: file_type.is_symlink() });
                }
                _ if is_dir && !name.starts_with('.') && name != "node_modules" => {
                    listing.children.push(Child { path, name: entry.file_name(), is_symlink: file_type.is_symlink() });
                }
                _ => {}
            }
        }
        if let Some(file) = listing.skill_file {
            let (has_hooks, has_scripts) = (listing.has_hooks, listing.has_scripts);
            self.found.push(FoundFile { dir: dir.to_owned(), file, has_hooks, has_scripts, project });
            return;
        }
        if let Some(path) = listing.not_a_file {
            // A folder, a broken link or a device named `SKILL.md`: the skill is there but
            // cannot be read, so it is reported rather than lost without a word.
            self.skipped.push(Skipped { path, line: None, reason: "not a regular file".to_owned() });
            return;
        }
        if depth == MAX_DEPTH {
            return;
        }
        listing.children.sort_by(|left, right| left.path.cmp(&right.path));
        for child in listing.children {
            let child_canonical = if child.is_symlink {
                let Ok(target) = child.path.canonicalize() else { continue };
                target
            } else {
                canonical.join(&child.name)
            };
            self.walk(&child.path, child_canonical, depth + 1, project);
        }
    }
}

/// What one folder holds, as far as discovery cares.
#[derive(Default)]
struct Listing {
    skill_file: Option<PathBuf>,
    /// A `SKILL.md` (or `skill.md`) that is not a regular file.
    not_a_file: Option<PathBuf>,
    has_hooks: bool,
    has_scripts: bool,
    /// Sub-folders to walk.
    children: Vec<Child>,
}

/// A sub-folder to walk (or a link to one).
struct Child {
    path: PathBuf,
    /// Its name in the listing, which its canonical path ends with unless it is a link.
    name: OsString,
    is_symlink: bool,
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;
    use std::time::Duration;

    use super::*;

    fn found_file(dir: &Path) -> FoundFile {
        FoundFile {
            dir: dir.to_owned(),
            file: dir.join("SKILL.md"),
            has_hooks: false,
            has_scripts: false,
            project: false,
        }
    }

    /// `load` on `file`, given 10 s: a load that waits longer (for a FIFO's writer, or for
    /// an endless file to end) fails the test instead of hanging it.
    fn load_within_10_s(file: FoundFile) -> Result<MarkdownSkill, Skipped> {
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            // The receiver is gone only once the test has failed.
            let _ = sender.send(file.load());
        });
        receiver.recv_timeout(Duration::from_secs(10)).expect("loading the file ends")
    }

    #[test]
    fn a_panic_while_loading_one_file_skips_that_file_and_the_rest_load() {
        // 5 files load on the calling thread, 200 on several (where there are several cores).
        for n_skills in [5, 200] {
            let temp = tempfile::tempdir().unwrap();
            let found: Vec<FoundFile> = (0..n_skills)
                .map(|skill_idx| {
                    let dir = temp.path().join(format!("skill-{skill_idx:03}"));
                    std::fs::create_dir(&dir).unwrap();
                    let name = format!("skill-{skill_idx:03}");
                    std::fs::write(dir.join("SKILL.md"), format!("---\nname: {name}\ndescription: D.\n---\n")).unwrap();
                    found_file(&dir)
                })
                .collect();
            let outcomes = load_each(&found, |file| {
                if file.dir.ends_with("skill-003") {
                    panic!("a parser bug");
                }
                file.load()
            });
            assert_eq!(outcomes.len(), n_skills, "{n_skills}");
            for (skill_idx, outcome) in outcomes.iter().enumerate() {
                let name = format!("skill-{skill_idx:03}");
                match outcome {
                    Err(skipped) if skill_idx == 3 => assert_eq!(
                        skipped,
                        &Skipped {
                            path: temp.path().join("skill-003/SKILL.md"),
                            line: None,
                            reason: "skipped: parsing it panicked (a parser bug), a bug in OmniAgent".to_owned(),
                        },
                        "{n_skills}"
                    ),
                    Ok(skill) => assert_eq!(skill.name, name, "{n_skills}"),
                    other => panic!("{name} of {n_skills}: {other:?}"),
                }
            }
        }
    }

    /// The walk saw a regular file; by the time it is read, it is a FIFO or a link to an
    /// endless device. Neither is waited for nor read.
    #[cfg(unix)]
    #[test]
    fn a_fifo_or_a_device_swapped_in_after_the_walk_is_not_read() {
        let temp = tempfile::tempdir().unwrap();
        let fifo_dir = temp.path().join("fifo");
        std::fs::create_dir(&fifo_dir).unwrap();
        nix::unistd::mkfifo(&fifo_dir.join("SKILL.md"), nix::sys::stat::Mode::S_IRWXU).unwrap();
        let device_dir = temp.path().join("device");
        std::fs::create_dir(&device_dir).unwrap();
        std::os::unix::fs::symlink("/dev/zero", device_dir.join("SKILL.md")).unwrap();
        for dir in [fifo_dir, device_dir] {
            let skipped = load_within_10_s(found_file(&dir)).unwrap_err();
            assert_eq!(
                skipped,
                Skipped { path: dir.join("SKILL.md"), line: None, reason: "not a regular file".to_owned() }
            );
        }
    }

    #[test]
    fn panic_messages_are_read_from_str_and_string_payloads() {
        assert_eq!(panic_message(&"static"), "static");
        assert_eq!(panic_message(&"formatted".to_owned()), "formatted");
        assert_eq!(panic_message(&7_u8), "no message");
    }
}
