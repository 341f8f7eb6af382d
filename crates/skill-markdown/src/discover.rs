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
    let mut walker = Walker { visited: HashSet::new(), candidates: &mut candidates, skipped: &mut skipped };
    for dir in &sources.dirs {
        walker.root(dir, false);
    }
    for dir in &sources.explicit_dirs {
        walker.root(dir, true);
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

struct Walker<'a> {
    /// Canonical folders already walked: a symlink loop ends here.
    visited: HashSet<PathBuf>,
    candidates: &'a mut Vec<(MarkdownSkill, Origin)>,
    skipped: &'a mut Vec<Skipped>,
}

impl Walker<'_> {
    fn root(&mut self, dir: &Path, explicit: bool) {
        if dir.is_dir() {
            self.walk(dir, 0);
        } else if explicit {
            let reason = if dir.exists() { "not a folder" } else { "no such folder" };
            self.skipped.push(Skipped { path: dir.to_owned(), line: None, reason: reason.to_owned() });
        }
    }

    fn walk(&mut self, dir: &Path, depth: usize) {
        let Ok(canonical) = dir.canonicalize() else { return };
        if !self.visited.insert(canonical) {
            return;
        }
        if let Some(file) = ["SKILL.md", "skill.md"].iter().map(|name| dir.join(name)).find(|file| file.is_file()) {
            self.load(dir, &file);
            return;
        }
        if depth == MAX_DEPTH {
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
        let mut children: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|entry| {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                !name.starts_with('.') && name != "node_modules"
            })
            .map(|entry| entry.path())
            .filter(|path| path.is_dir())
            .collect();
        children.sort();
        for child in children {
            self.walk(&child, depth + 1);
        }
    }

    fn load(&mut self, dir: &Path, file: &Path) {
        let bytes = match std::fs::read(file) {
            Ok(bytes) => bytes,
            Err(error) => {
                self.skipped.push(Skipped {
                    path: file.to_owned(),
                    line: None,
                    reason: format!("cannot read: {error}"),
                });
                return;
            }
        };
        let location = Location {
            path: file.to_owned(),
            dir: Some(dir.to_owned()),
            dir_name: dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default(),
            has_hooks: dir.join("hooks").is_dir(),
            has_scripts: dir.join("scripts").is_dir(),
        };
        match parse_bytes(&bytes, location) {
            Ok(skill) => self.candidates.push((skill, Origin::Dir)),
            Err(error) => {
                self.skipped.push(Skipped { path: file.to_owned(), line: Some(error.line), reason: error.reason })
            }
        }
    }
}
