//! Finding skills: in packs, then in folders, with precedence and filters.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::MarkdownSkill;
use crate::packs::{PACKS, pack};
use crate::parse::{Location, parse, parse_bytes};

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
    let mut candidates: Vec<(MarkdownSkill, Origin)> = Vec::new();
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
                Ok(skill) => candidates.push((skill, Origin::Pack { pack: pack.name.to_owned() })),
                Err(error) => skipped.push(Skipped { path, line: Some(error.line), reason: error.reason }),
            }
        }
    }
    let mut walker = Walker { visited: HashSet::new(), found: Vec::new(), skipped: &mut skipped };
    for dir in &sources.dirs {
        walker.root(dir, false);
    }
    for dir in &sources.explicit_dirs {
        walker.root(dir, true);
    }
    let found = walker.found;
    for outcome in load_all(&found) {
        match outcome {
            Ok(skill) => candidates.push((skill, Origin::Dir)),
            Err(error) => skipped.push(error),
        }
    }
    Discovery { skills: resolve_precedence(candidates), skipped }
}

/// One entry per name: the first folder skill, else the first pack skill; the winner
/// keeps the position of the first candidate of its name.
fn resolve_precedence(candidates: Vec<(MarkdownSkill, Origin)>) -> Vec<Found> {
    let mut slots: Vec<Found> = Vec::new();
    let mut slot_of: HashMap<String, usize> = HashMap::new();
    for (skill, origin) in candidates {
        let Some(&slot_idx) = slot_of.get(&skill.name) else {
            slot_of.insert(skill.name.clone(), slots.len());
            slots.push(Found { skill, origin, shadows: Vec::new() });
            continue;
        };
        let slot = &mut slots[slot_idx];
        if slot.origin != Origin::Dir && origin == Origin::Dir {
            let hidden = std::mem::replace(slot, Found { skill, origin, shadows: Vec::new() });
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
    let n_threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(found.len().div_ceil(MIN_FILES_PER_THREAD))
        .max(1);
    if n_threads == 1 {
        return found.iter().map(FoundFile::load).collect();
    }
    let chunk_len = found.len().div_ceil(n_threads);
    std::thread::scope(|scope| {
        let workers: Vec<_> = found
            .chunks(chunk_len)
            .map(|chunk| scope.spawn(|| chunk.iter().map(FoundFile::load).collect::<Vec<_>>()))
            .collect();
        workers.into_iter().flat_map(|worker| worker.join().expect("parsing a skill does not panic")).collect()
    })
}

/// A `SKILL.md` the walk found, not yet read.
struct FoundFile {
    dir: PathBuf,
    file: PathBuf,
    has_hooks: bool,
    has_scripts: bool,
}

impl FoundFile {
    fn load(&self) -> Result<MarkdownSkill, Skipped> {
        let skipped = |line, reason| Skipped { path: self.file.clone(), line, reason };
        let bytes = std::fs::read(&self.file).map_err(|error| skipped(None, format!("cannot read: {error}")))?;
        let location = Location {
            path: self.file.clone(),
            dir: Some(self.dir.clone()),
            dir_name: self.dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default(),
            has_hooks: self.has_hooks,
            has_scripts: self.has_scripts,
        };
        parse_bytes(&bytes, location).map_err(|error| skipped(Some(error.line), error.reason))
    }
}

struct Walker<'a> {
    /// Canonical folders already walked: a symlink loop ends here.
    visited: HashSet<PathBuf>,
    found: Vec<FoundFile>,
    skipped: &'a mut Vec<Skipped>,
}

impl Walker<'_> {
    fn root(&mut self, dir: &Path, explicit: bool) {
        match dir.canonicalize() {
            Ok(canonical) if canonical.is_dir() => self.walk(dir, canonical, 0),
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
    fn walk(&mut self, dir: &Path, canonical: PathBuf, depth: usize) {
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
                    listing.children.push((path, file_type.is_symlink()));
                }
                _ if is_dir && !name.starts_with('.') && name != "node_modules" => {
                    listing.children.push((path, file_type.is_symlink()));
                }
                _ => {}
            }
        }
        if let Some(file) = listing.skill_file {
            let (has_hooks, has_scripts) = (listing.has_hooks, listing.has_scripts);
            self.found.push(FoundFile { dir: dir.to_owned(), file, has_hooks, has_scripts });
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
        listing.children.sort();
        for (child, is_symlink) in listing.children {
            let child_canonical = if is_symlink {
                let Ok(target) = child.canonicalize() else { continue };
                target
            } else {
                canonical.join(child.file_name().expect("a listed entry has a name"))
            };
            self.walk(&child, child_canonical, depth + 1);
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
    /// Sub-folders to walk, each with whether it is a symlink.
    children: Vec<(PathBuf, bool)>,
}
