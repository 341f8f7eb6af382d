//! `$OMNIAGENT_HOME/skills.lock`: what each install brought (its source, ref and commit,
//! when, and the SHA-256 of every file), in YAML like the config, written whole to a
//! temporary file and renamed over the old one, so a reader never sees half of it.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::error::InstallError;
use super::source::SourceKind;

/// The first lines of the file, for whoever opens it.
const HEADER: &str = "# Written by `omniagent skills install`, `update` and `remove`; do not edit.\n\
# `omniagent skills verify` compares each skill's files with the digests below.\n";

/// One installed skill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockEntry {
    /// Where it came from: an absolute path, or a git URL (without its ref).
    pub source: String,
    /// What kind of source that is.
    pub kind: SourceKind,
    /// The git ref asked for (`#ref`), when one was.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// The commit a git source was at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The SHA-256 of an archive source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive_sha256: Option<String>,
    /// The skill's folder inside the source (`--path`), `/`-separated, when it is not the
    /// source's top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subfolder: Option<String>,
    /// When it was installed (or last updated), RFC 3339 in UTC.
    pub installed_at: String,
    /// The SHA-256 (hex) of every file, by path relative to the skill's folder.
    pub files: BTreeMap<String, String>,
}

/// The whole lock file.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Lock {
    #[serde(default = "version_one")]
    version: u32,
    #[serde(default)]
    pub(crate) skills: BTreeMap<String, LockEntry>,
}

fn version_one() -> u32 {
    1
}

impl Lock {
    /// Reads `path`; a file that does not exist is an empty lock.
    pub(crate) fn read(path: &Path) -> Result<Self, InstallError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self { version: 1, ..Self::default() });
            }
            Err(error) => return Err(InstallError::Io { path: path.to_owned(), error }),
        };
        let lock: Self = serde_yaml_ng::from_str(&text).map_err(|error| {
            let at = error.location().map(|place| format!("{}:{}: ", place.line(), place.column())).unwrap_or_default();
            InstallError::BadLock { path: path.to_owned(), message: format!("{at}{error}") }
        })?;
        if lock.version != 1 {
            return Err(InstallError::BadLock {
                path: path.to_owned(),
                message: format!("version {} is not one this omniagent reads (1)", lock.version),
            });
        }
        Ok(lock)
    }

    /// Writes the lock to `path` atomically: a temporary file beside it, flushed to disk,
    /// then renamed over it.
    pub(crate) fn write(&self, path: &Path) -> Result<(), InstallError> {
        let folder = path.parent().unwrap_or(Path::new("."));
        let io_error = |error| InstallError::Io { path: path.to_owned(), error };
        let yaml = serde_yaml_ng::to_string(self)
            .map_err(|error| InstallError::BadLock { path: path.to_owned(), message: error.to_string() })?;
        let mut file = tempfile::Builder::new().prefix(".skills.lock.").tempfile_in(folder).map_err(io_error)?;
        file.write_all(HEADER.as_bytes()).map_err(io_error)?;
        file.write_all(yaml.as_bytes()).map_err(io_error)?;
        file.as_file().sync_all().map_err(io_error)?;
        file.persist(path).map_err(|error| io_error(error.error))?;
        Ok(())
    }

    /// The names it lists.
    pub(crate) fn names(&self) -> Vec<String> {
        self.skills.keys().cloned().collect()
    }

    /// The entry for `name`, or the error that names what is installed.
    pub(crate) fn entry(&self, name: &str, path: &Path) -> Result<&LockEntry, InstallError> {
        self.skills.get(name).ok_or_else(|| InstallError::NotInstalled {
            name: name.to_owned(),
            lock: PathBuf::from(path),
            installed: self.names(),
        })
    }
}

/// An exclusive hold on the skills folder (`flock`, on Unix), so that two installs,
/// updates or removes at once never lose each other's lock entries; released on drop.
#[derive(Debug)]
pub(crate) struct Held {
    #[cfg(unix)]
    _lock: nix::fcntl::Flock<std::fs::File>,
}

/// Waits for, then takes, the hold on `skills_dir`.
pub(crate) fn hold(skills_dir: &Path) -> Result<Held, InstallError> {
    #[cfg(unix)]
    {
        let io_error = |error| InstallError::Io { path: skills_dir.to_owned(), error };
        let folder = std::fs::File::open(skills_dir).map_err(io_error)?;
        let lock = nix::fcntl::Flock::lock(folder, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, errno)| io_error(std::io::Error::from(errno)))?;
        Ok(Held { _lock: lock })
    }
    #[cfg(not(unix))]
    {
        let _ = skills_dir;
        Ok(Held {})
    }
}

/// Now, as RFC 3339 in UTC to the second (`2026-12-01T16:20:00Z`).
pub(crate) fn now_rfc3339() -> String {
    rfc3339(SystemTime::now())
}

/// `time` as RFC 3339 in UTC to the second.
fn rfc3339(time: SystemTime) -> String {
    chrono::DateTime::<chrono::Utc>::from(time).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(1_796_142_245)), "2026-12-01T16:24:05Z");
    }

    #[test]
    fn the_lock_reads_back_what_it_wrote() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("skills.lock");
        assert!(Lock::read(&path).unwrap().skills.is_empty());
        let mut lock = Lock::read(&path).unwrap();
        let entry = LockEntry {
            source: "/src/hello".into(),
            kind: SourceKind::Git,
            reference: Some("v1".into()),
            commit: Some("0123".into()),
            archive_sha256: None,
            subfolder: Some("skills/hello".into()),
            installed_at: rfc3339(UNIX_EPOCH),
            files: BTreeMap::from([("SKILL.md".into(), "ab".into())]),
        };
        lock.skills.insert("hello".into(), entry.clone());
        lock.write(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(HEADER), "{text}");
        assert!(text.contains("\n    ref: v1\n"), "{text}");
        assert_eq!(Lock::read(&path).unwrap().skills["hello"], entry);
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 1, "no temporary file is left");

        std::fs::write(&path, "version: 1\nskills:\n  hello: {sauce: x}\n").unwrap();
        let error = Lock::read(&path).unwrap_err().to_string();
        assert!(error.starts_with(&format!("{}: 3:", path.display())), "{error}");
    }
}
