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
    /// Reads `text` as a source, with the folder inside it that `text` names, if any; a
    /// relative path is taken from `cwd`. URLs (`file`, `http(s)`, `ssh`, `git`, and
    /// `user@host:path`) are git repositories, and so is `PATH#REF` for a local one; a
    /// repository's web page for a folder at a ref (see [`web_folder`]) is that
    /// repository at that ref, and that folder; a path is a folder, or an archive by its
    /// extension.
    pub(crate) fn parse(text: &str, cwd: &Path) -> Result<(Self, Option<String>), InstallError> {
        let unknown = || InstallError::UnknownSource { source_text: text.to_owned() };
        if text.is_empty() || text.starts_with('-') {
            return Err(unknown());
        }
        let is_url = GIT_SCHEMES.iter().any(|scheme| text.starts_with(scheme)) || is_scp_like(text);
        if is_url {
            if carries_credentials(text) {
                return Err(InstallError::CredentialsInUrl { shown: skill_core::redact::url_text(text) });
            }
            if let Some((url, reference, folder)) = web_folder(text) {
                return Ok((Self::Git { url, reference: Some(reference) }, folder));
            }
            let (url, reference) = split_ref(text)?;
            return Ok((Self::Git { url: url.to_owned(), reference }, None));
        }
        Self::parse_path(text, cwd).map(|source| (source, None))
    }

    /// [`Source::parse`] of a `text` that is no URL.
    fn parse_path(text: &str, cwd: &Path) -> Result<Self, InstallError> {
        let unknown = || InstallError::UnknownSource { source_text: text.to_owned() };
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

/// A repository's web page for a folder (or a `SKILL.md`) at a ref, as people copy it
/// from a browser: GitHub's `https://github.com/OWNER/REPO/tree/REF/PATH` (and
/// `blob/REF/PATH/SKILL.md`), and GitLab's `https://HOST/GROUP/REPO/-/tree/REF/PATH`.
/// Gives the repository's git URL, the ref and the folder (`None` for the top). A ref
/// with a `/` in it cannot be told from the path; such a page needs the repository's URL,
/// `#REF` and `--path`.
fn web_folder(text: &str) -> Option<(String, String, Option<String>)> {
    let rest = text.strip_prefix("https://")?;
    let (repository, page) = match rest.split_once("/-/") {
        Some(split) => split,
        None => {
            let mut parts = rest.splitn(4, '/');
            let (host, owner, repo, page) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
            if host != "github.com" || owner.is_empty() || repo.is_empty() {
                return None;
            }
            (&rest[..host.len() + owner.len() + repo.len() + 2], page)
        }
    };
    let (kind, at) = page.split_once('/')?;
    let (reference, path) = at.split_once('/').unwrap_or((at, ""));
    let path = path.trim_end_matches('/');
    let folder = match kind {
        "tree" => path,
        "blob" if path == "SKILL.md" => "",
        "blob" => path.strip_suffix("/SKILL.md")?,
        _ => return None,
    };
    if reference.is_empty() || reference.starts_with('-') {
        return None;
    }
    let url = format!("https://{}.git", repository.trim_end_matches(".git"));
    Some((url, reference.to_owned(), (!folder.is_empty()).then(|| folder.to_owned())))
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
        let parse = |text: &str| Source::parse(text, &cwd).map(|(source, _)| source);

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

    #[test]
    fn a_repositorys_web_page_for_a_folder_is_that_folder_of_the_repository() {
        let parse = |text: &str| Source::parse(text, Path::new("/")).unwrap();
        let github = |reference: &str| Source::Git {
            url: "https://github.com/anthropics/skills.git".into(),
            reference: Some(reference.into()),
        };
        assert_eq!(
            parse("https://github.com/anthropics/skills/tree/main/skills/pdf"),
            (github("main"), Some("skills/pdf".into()))
        );
        assert_eq!(
            parse("https://github.com/anthropics/skills/blob/v2/skills/pdf/SKILL.md"),
            (github("v2"), Some("skills/pdf".into()))
        );
        assert_eq!(parse("https://github.com/anthropics/skills/tree/main/"), (github("main"), None));
        assert_eq!(parse("https://github.com/anthropics/skills/blob/main/SKILL.md"), (github("main"), None));
        assert_eq!(
            parse("https://gitlab.example.com/team/tools/skills/-/tree/dev/pdf"),
            (
                Source::Git {
                    url: "https://gitlab.example.com/team/tools/skills.git".into(),
                    reference: Some("dev".into())
                },
                Some("pdf".into())
            )
        );
        // Not a folder's page: the URL is the repository's, as git takes it.
        for plain in [
            "https://github.com/anthropics/skills",
            "https://github.com/anthropics/skills.git#main",
            "https://github.com/anthropics/skills/blob/main/README.md",
            "https://example.com/team/tree/main/pdf",
        ] {
            let (source, folder) = parse(plain);
            assert!(matches!(source, Source::Git { .. }) && folder.is_none(), "{plain}: {source:?}");
        }
    }
}
