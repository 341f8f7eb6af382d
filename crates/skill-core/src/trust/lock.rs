//! The trust lock file (`tools.lock`): each origin's definitions as they were recorded,
//! read whole or refused, and changed only under an exclusive hold on its folder, with
//! the file written beside and renamed over, so that a reader sees the old file or the
//! new, and two writers at once lose nothing.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Error;

/// What the lock holds: by origin (`stdio:` command and arguments, an MCP server's URL,
/// an OpenAPI document's URL, or `skill:` and a name for what is the user's own), each
/// item's recorded definition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pins {
    pub(crate) version: u32,
    #[serde(default)]
    pub(crate) origins: BTreeMap<String, Origin>,
}

/// One origin's recorded items, by key (`tool:add`, `prompt:review`,
/// `resource_template:file`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Origin {
    #[serde(default)]
    pub(crate) items: BTreeMap<String, Pinned>,
}

/// One recorded item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Pinned {
    /// The SHA-256 of the definition's canonical JSON, in hex.
    pub(crate) sha256: String,
    /// The definition itself, for the diff of a later change.
    pub(crate) definition: Value,
    /// The scan rules a person approved this definition despite.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) accepted: Vec<String>,
}

const VERSION: u32 = 1;

/// The lock file at `path`.
#[derive(Debug, Clone)]
pub(crate) struct LockFile {
    path: PathBuf,
}

impl LockFile {
    pub(crate) fn new(path: PathBuf) -> Self {
        Self { path }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The pins as the file holds them now; no file is no pins. A file that cannot be
    /// read or parsed is an error naming it, never an empty trust.
    pub(crate) fn read(&self) -> Result<Pins, Error> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Pins { version: VERSION, origins: BTreeMap::new() });
            }
            Err(error) => return Err(self.bad(error.to_string())),
        };
        let pins: Pins = serde_json::from_str(&text)
            .map_err(|error| self.bad(format!("line {} column {}: {error}", error.line(), error.column())))?;
        if pins.version != VERSION {
            return Err(self.bad(format!("version {} is not one this omniagent reads ({VERSION})", pins.version)));
        }
        Ok(pins)
    }

    /// Applies `change` to the pins as the file holds them now, under an exclusive hold
    /// on the file's folder, and writes the result if `change` changed anything; returns
    /// the pins as written.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Pins)) -> Result<Pins, Error> {
        let folder = self.path.parent().filter(|folder| !folder.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(folder).map_err(|error| self.bad(error.to_string()))?;
        let hold = std::fs::File::open(folder).map_err(|error| self.bad(error.to_string()))?;
        hold.lock().map_err(|error| self.bad(format!("cannot hold its folder: {error}")))?;
        let mut pins = self.read()?;
        let before = pins.clone();
        change(&mut pins);
        if pins != before {
            self.write(folder, &pins)?;
        }
        // Dropping `hold` releases it.
        Ok(pins)
    }

    fn write(&self, folder: &Path, pins: &Pins) -> Result<(), Error> {
        let io = |error: std::io::Error| self.bad(error.to_string());
        let mut text = serde_json::to_string_pretty(pins).map_err(|error| self.bad(error.to_string()))?;
        text.push('\n');
        let name = self.path.file_name().and_then(|name| name.to_str()).unwrap_or("tools.lock");
        let temporary = folder.join(format!(".{name}.{}", std::process::id()));
        let mut file = std::fs::File::create(&temporary).map_err(io)?;
        let written = file.write_all(text.as_bytes()).and_then(|()| file.sync_all());
        if let Err(error) = written.and_then(|()| std::fs::rename(&temporary, &self.path)) {
            let _ = std::fs::remove_file(&temporary);
            return Err(io(error));
        }
        Ok(())
    }

    fn bad(&self, message: String) -> Error {
        Error::TrustLock { path: self.path.clone(), message }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupt_lock_is_an_error_naming_the_file() {
        let folder = tempfile::tempdir().unwrap();
        let lock = LockFile::new(folder.path().join("tools.lock"));
        assert_eq!(lock.read().unwrap().origins.len(), 0);
        std::fs::write(lock.path(), "{\"version\": 1, \"origins\": {\"x\": ").unwrap();
        let error = lock.read().unwrap_err().to_string();
        assert!(error.contains("tools.lock") && error.contains("line 1"), "{error}");
        assert!(lock.update(|_| {}).is_err());
    }

    #[test]
    fn updates_at_once_lose_nothing() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("tools.lock");
        let threads: Vec<_> = (0..16)
            .map(|n| {
                let lock = LockFile::new(path.clone());
                std::thread::spawn(move || {
                    lock.update(|pins| {
                        let pinned = Pinned { sha256: n.to_string(), definition: Value::Null, accepted: Vec::new() };
                        pins.origins.entry("o".into()).or_default().items.insert(format!("tool:{n}"), pinned);
                    })
                    .unwrap();
                })
            })
            .collect();
        threads.into_iter().for_each(|thread| thread.join().unwrap());
        assert_eq!(LockFile::new(path).read().unwrap().origins["o"].items.len(), 16);
    }
}
