//! What `omniagent skills install SOURCE` was given: a folder, an archive, or a git
//! repository at an optional `#ref`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::InstallError;

/// Where a skill comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Source {
    /// A skill folder on disk, copied as it is.
    Folder(PathBuf),
    /// A gzip-compressed tar archive (`.tar.gz`, `.tgz`).
    TarGz(PathBuf),
    /// A zip archive.
    Zip(PathBuf),
    /// A git repository: a URL, or a local repository's path; at `reference` (a branch, a
    /// tag or a commit), else at its default branch.
    Git { url: String, reference: Option<String> },
}

/// The kind of a [`Source`], as the lock file records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A folder.
    Folder,
    /// A `.tar.gz` archive.
    #[serde(rename = "tar.gz")]
    TarGz,
    /// A `.zip` archive.
    Zip,
    /// A git repository.
    Git,
}

/// URL schemes that name a git repository.
const GIT_SCHEMES: [&str; 5] = ["file://", "http://", "https://", "ssh://", "git://"];

impl Source {
    /// Reads `text` as a source; a relative path is taken from `cwd`. URLs (`file`,
    /// `http(s)`, `ssh`, `git`, and `user@host:path`) are git repositories, and so is
    /// `PATH#REF` for a local one; a path is a folder, or an archive by its extension.
    pub(crate) fn parse(text: &str, cwd: &Path) -> Result<Self, InstallError> {
        let unknown = || InstallError::UnknownSource { source_text: text.to_owned() };
        if text.is_empty() || text.starts_with('-') {
            return Err(unknown());
        }
        let is_url = GIT_SCHEMES.iter().any(|scheme| text.starts_with(scheme)) || is_scp_like(text);
        if is_url {
            if carries_credentials(text) {
                return Err(InstallError::CredentialsInUrl { shown: skill_core::redact::url_text(text) });
            }
            let (url, reference) = split_ref(text)?;
            return Ok(Self::Git { url: url.to_owned(), reference });
        }
        let path = cwd.join(text);
        let path = path.canonicalize().unwrap_or(path);
        if path.is_dir() {
            return Ok(Self::Folder(path));
        }
        if path.is_file() {
            let name = path.file_name().map(|name| name.to_string_lossy().to_lowercase()).unwrap_or_default();
            if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
                return Ok(Self::TarGz(path));
            }
            if name.ends_with(".zip") {
                return Ok(Self::Zip(path));
            }
            return Err(unknown());
        }
        if let Some((repository, _)) = text.rsplit_once('#')
            && let Ok(repository) = cwd.join(repository).canonicalize()
            && repository.is_dir()
        {
            let (_, reference) = split_ref(text)?;
            return Ok(Self::Git { url: repository.display().to_string(), reference });
        }
        Err(InstallError::NotFound { source_text: text.to_owned() })
    }

    /// The kind, for the lock file.
    pub(crate) fn kind(&self) -> SourceKind {
        match self {
            Self::Folder(_) => SourceKind::Folder,
            Self::TarGz(_) => SourceKind::TarGz,
            Self::Zip(_) => SourceKind::Zip,
            Self::Git { .. } => SourceKind::Git,
        }
    }

    /// The source as the lock file records it (absolute paths, the URL without its ref),
    /// so that `update` finds it again from any folder.
    pub(crate) fn location(&self) -> String {
        match self {
            Self::Folder(path) | Self::TarGz(path) | Self::Zip(path) => path.display().to_string(),
            Self::Git { url, .. } => url.clone(),
        }
    }

    /// The git ref asked for, if any.
    pub(crate) fn reference(&self) -> Option<&str> {
        match self {
            Self::Git { reference, .. } => reference.as_deref(),
            _ => None,
        }
    }

    /// The source again from what the lock file recorded.
    pub(crate) fn recorded(kind: SourceKind, location: &str, reference: Option<&str>) -> Self {
        let path = PathBuf::from(location);
        match kind {
            SourceKind::Folder => Self::Folder(path),
            SourceKind::TarGz => Self::TarGz(path),
            SourceKind::Zip => Self::Zip(path),
            SourceKind::Git => Self::Git { url: location.to_owned(), reference: reference.map(str::to_owned) },
        }
    }

    /// The name a skill gets when neither `--name` nor its frontmatter gives one: the
    /// folder's, the archive's without its extension, the repository's without `.git`.
    pub(crate) fn default_name(&self) -> String {
        let last = |text: &str| {
            let trimmed = text.trim_end_matches('/');
            trimmed.rsplit(['/', ':']).next().unwrap_or(trimmed).to_owned()
        };
        match self {
            Self::Folder(path) => path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default(),
            Self::TarGz(path) | Self::Zip(path) => {
                let name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
                let lower = name.to_lowercase();
                let cut = [".tar.gz", ".tgz", ".zip"]
                    .iter()
                    .find(|ending| lower.ends_with(*ending))
                    .map_or(0, |ending| ending.len());
                name[..name.len() - cut].to_owned()
            }
            Self::Git { url, .. } => {
                let name = last(url);
                name.strip_suffix(".git").unwrap_or(&name).to_owned()
            }
        }
    }
}

/// Whether an http(s) URL has user info (`https://TOKEN@host/…`) or a query.
fn carries_credentials(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("https://").or_else(|| text.strip_prefix("http://")) else { return false };
    let rest = rest.split_once('#').map_or(rest, |(rest, _)| rest);
    let authority = rest.split(['/', '?']).next().unwrap_or_default();
    authority.contains('@') || rest.contains('?')
}

/// `git@github.com:owner/repo`: a host, a colon, and a path, with no scheme.
fn is_scp_like(text: &str) -> bool {
    match text.split_once(':') {
        Some((host, path)) => host.contains('@') && !host.contains('/') && !path.is_empty() && !path.starts_with("//"),
        None => false,
    }
}

/// `URL#REF` into the URL and the ref, which must be one git can take as a name.
fn split_ref(text: &str) -> Result<(&str, Option<String>), InstallError> {
    let Some((url, reference)) = text.rsplit_once('#') else { return Ok((text, None)) };
    let bad = reference.is_empty()
        || reference.starts_with('-')
        || reference.chars().any(|character| character.is_whitespace() || character.is_control());
    if bad {
        return Err(InstallError::UnknownSource { source_text: text.to_owned() });
    }
    Ok((url, Some(reference.to_owned())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_told_apart() {
        let folder = tempfile::tempdir().unwrap();
        let cwd = folder.path().canonicalize().unwrap();
        std::fs::create_dir(cwd.join("hello")).unwrap();
        std::fs::write(cwd.join("hello.tar.gz"), "").unwrap();
        std::fs::write(cwd.join("Hello.ZIP"), "").unwrap();
        std::fs::write(cwd.join("notes.txt"), "").unwrap();
        let parse = |text: &str| Source::parse(text, &cwd);

        assert_eq!(parse("hello").unwrap(), Source::Folder(cwd.join("hello")));
        assert_eq!(parse("hello.tar.gz").unwrap(), Source::TarGz(cwd.join("hello.tar.gz")));
        assert_eq!(parse("Hello.ZIP").unwrap().default_name(), "Hello");
        assert_eq!(
            parse("hello#v1").unwrap(),
            Source::Git { url: cwd.join("hello").display().to_string(), reference: Some("v1".into()) }
        );
        let git = parse("https://example.com/team/skills.git#main").unwrap();
        assert_eq!(
            git,
            Source::Git { url: "https://example.com/team/skills.git".into(), reference: Some("main".into()) }
        );
        assert_eq!(git.default_name(), "skills");
        assert_eq!(parse("git@example.com:team/pdf").unwrap().default_name(), "pdf");
        assert_eq!(parse("file:///srv/repo").unwrap(), Source::Git { url: "file:///srv/repo".into(), reference: None });

        for with_credentials in [
            "https://ghp_s3cret@example.com/r.git#v1",
            "https://u:s3cret@example.com/r",
            "http://example.com/r?token=s3cret",
        ] {
            let error = parse(with_credentials).unwrap_err().to_string();
            assert!(error.contains("credentials in the URL") && !error.contains("s3cret"), "{error}");
        }
        assert!(matches!(parse("notes.txt"), Err(InstallError::UnknownSource { .. })));
        assert!(matches!(parse("--upload-pack=evil"), Err(InstallError::UnknownSource { .. })));
        assert!(matches!(parse("https://example.com/r#--evil"), Err(InstallError::UnknownSource { .. })));
        assert!(matches!(parse("missing"), Err(InstallError::NotFound { .. })));
    }
}
