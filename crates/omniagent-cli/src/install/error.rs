//! [`InstallError`]: why a skill could not be installed, verified, updated or removed.

use std::path::PathBuf;

/// Why an install, verify, update or remove failed. Nothing is left half done: a failed
/// install leaves no folder and no lock entry behind.
///
/// Every message names what it is about: the source as given, the archive entry, the
/// path, the cap or the skill.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InstallError {
    /// The source is none of the kinds an install takes.
    #[error(
        "{source_text}: not a skill folder, a .tar.gz, .tgz or .zip file, or a git URL (http, https, ssh, git, file; PATH#REF for a local repository)"
    )]
    UnknownSource {
        /// The source as given.
        source_text: String,
    },
    /// An http(s) URL with user info or a query, which would be written to `skills.lock`.
    #[error("{shown}: credentials in the URL would be stored in skills.lock; let a git credential helper supply them")]
    CredentialsInUrl {
        /// The URL, redacted.
        shown: String,
    },
    /// The source names a path that does not exist.
    #[error("{source_text}: no such file or folder")]
    NotFound {
        /// The source as given.
        source_text: String,
    },
    /// A git source's `#ref` is no branch, tag or commit of the repository.
    #[error("{source_text}: no branch, tag or commit `{reference}` in the repository")]
    UnknownRef {
        /// The source as given.
        source_text: String,
        /// The ref.
        reference: String,
    },
    /// A file or folder the install needed could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// An archive (or a copied folder) cannot be read.
    #[error("{source_text}: cannot read it: {message}")]
    Read {
        /// The source as given.
        source_text: String,
        /// Why.
        message: String,
    },
    /// An entry that would land outside the skill folder, or is not a plain file or folder.
    #[error("{source_text}: {entry}: {problem}")]
    UnsafeEntry {
        /// The source as given (or the folder being copied).
        source_text: String,
        /// The entry's name as the source has it.
        entry: String,
        /// What is wrong with it.
        problem: EntryProblem,
    },
    /// The files together are larger than the cap.
    #[error("{source_text}: the skill is larger than the cap of {cap} bytes")]
    TooLarge {
        /// The source as given.
        source_text: String,
        /// The cap, in bytes.
        cap: u64,
    },
    /// The source has more files and folders than the cap.
    #[error("{source_text}: the skill has more than the cap of {cap} files and folders")]
    TooManyEntries {
        /// The source as given.
        source_text: String,
        /// The cap.
        cap: u64,
    },
    /// No `SKILL.md` at the top, nor in a single top folder.
    #[error("{source_text}: no SKILL.md at its top or in its single top folder{}", skills_inside(.found))]
    NoSkillFile {
        /// The source as given.
        source_text: String,
        /// The folders deeper inside that hold a `SKILL.md`, which `--path` can pick.
        found: Vec<String>,
    },
    /// `--path` names no skill folder of the source.
    #[error("{source_text}: `{path}` {problem}")]
    NoSkillAtPath {
        /// The source as given.
        source_text: String,
        /// The path, as given.
        path: String,
        /// What is there instead.
        problem: &'static str,
    },
    /// `--path` given for a source whose URL names a folder already.
    #[error("{source_text} names the folder `{folder}` already; leave out --path")]
    PathTwice {
        /// The source as given.
        source_text: String,
        /// The folder the URL names.
        folder: String,
    },
    /// `--path` is absolute or leaves the source.
    #[error("--path `{path}`: give a folder inside the source, relative to its top")]
    BadPath {
        /// The path, as given.
        path: String,
    },
    /// The `SKILL.md` cannot be used as a skill.
    #[error("{source_text}: {file}:{line}: {reason}")]
    BadSkillFile {
        /// The source as given.
        source_text: String,
        /// The file, relative to the source.
        file: String,
        /// Its line (from 1).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The skill's name cannot be a folder name under `skills/`.
    #[error("skill name `{name}`: {why} (choose another with --name)")]
    BadName {
        /// The name.
        name: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// `git` could not be run.
    #[error("cannot run git (needed for git sources): {error}")]
    GitMissing {
        /// Why.
        error: std::io::Error,
    },
    /// A `git` command failed.
    #[error("{source_text}: `git {command}` failed: {message}")]
    Git {
        /// The source as given.
        source_text: String,
        /// The git subcommand and its arguments.
        command: String,
        /// What git said on stderr.
        message: String,
    },
    /// The skills folder has this name already, and not from an install.
    #[error("{} exists and was not installed by `omniagent skills install`; remove it or choose another --name", path.display())]
    NotOurs {
        /// The folder.
        path: PathBuf,
    },
    /// The source folder holds the skills folder the skill would be copied into.
    #[error("{source_text}: holds the skills folder {} itself; give the folder of the skill to install", skills_dir.display())]
    HoldsSkillsFolder {
        /// The source as given.
        source_text: String,
        /// The skills folder.
        skills_dir: PathBuf,
    },
    /// The source could not be fetched for an earlier skill of the same `update`.
    #[error("{message} (as for the skill before it from this source)")]
    FetchedBefore {
        /// Why, as the earlier skill was told.
        message: String,
    },
    /// `install --all`: an earlier skill of the source has this name.
    #[error("the skill in {first} is named `{name}` too; install this one with --path and --name")]
    SameNameTwice {
        /// The name.
        name: String,
        /// The earlier skill's folder in the source.
        first: String,
    },
    /// The skill is installed already.
    #[error("skill `{name}` is installed already; `omniagent skills update {name}` reinstalls it")]
    AlreadyInstalled {
        /// The skill.
        name: String,
    },
    /// No installed skill has this name.
    #[error("no skill `{name}` in {} (installed: {})", lock.display(), if installed.is_empty() { "none".to_owned() } else { installed.join(", ") })]
    NotInstalled {
        /// The name asked for.
        name: String,
        /// The lock file.
        lock: PathBuf,
        /// The skills it lists.
        installed: Vec<String>,
    },
    /// The lock file cannot be read as one.
    #[error("{}: {message}", path.display())]
    BadLock {
        /// The lock file.
        path: PathBuf,
        /// What is wrong, with the line when there is one.
        message: String,
    },
}

/// What is wrong with an archive entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EntryProblem {
    /// Its path climbs out with `..`.
    #[error("the path leaves the skill folder (`..`)")]
    ParentDir,
    /// Its path is absolute.
    #[error("absolute paths are refused")]
    Absolute,
    /// A symbolic or hard link: refused whatever it points to.
    #[error("links are refused (a skill is regular files and folders)")]
    Link,
    /// A device, a FIFO or another kind of entry that is not a file or folder.
    #[error("only regular files and folders are allowed")]
    Special,
    /// A second entry for a path already written.
    #[error("the archive has this path twice")]
    Duplicate,
    /// Encrypted, or compressed with a method other than deflate.
    #[error("only stored or deflated, unencrypted entries are supported")]
    Unsupported,
}

/// `; it holds 3 skills: a, b, c; install one with --path a` for skill folders found deeper in a
/// source, else nothing.
fn skills_inside(found: &[String]) -> String {
    const SHOWN: usize = 10;
    let Some(first) = found.first() else { return String::new() };
    let mut listed = found.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    if found.len() > SHOWN {
        listed.push_str(&format!(" and {} more", found.len() - SHOWN));
    }
    let skills = if found.len() == 1 { "1 skill".to_owned() } else { format!("{} skills", found.len()) };
    format!("; it holds {skills}: {listed}; install one with `--path {first}`")
}
