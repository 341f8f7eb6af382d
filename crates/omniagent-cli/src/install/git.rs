//! Git sources: the system `git` binary clones the repository (shallow where it can) at
//! the ref asked for, and says which commit that is.

use std::path::Path;
use std::process::{Command, Stdio};

use super::error::InstallError;

/// Checks out `url` at `reference` (default branch when `None`) into the new folder
/// `into`, drops its `.git`, and returns the commit's full hash.
pub(crate) fn checkout(url: &str, reference: Option<&str>, into: &Path) -> Result<String, InstallError> {
    let into_text = into.as_os_str();
    let shallow = match reference {
        Some(reference) => {
            git(url, None, &["clone", "--quiet", "--depth", "1", "--branch", reference, "--", url], Some(into_text))
        }
        None => git(url, None, &["clone", "--quiet", "--depth", "1", "--", url], Some(into_text)),
    };
    if let Err(error) = shallow {
        // `--branch` takes only branch and tag names: for a commit, clone in full and
        // check it out.
        let Some(reference) = reference else { return Err(error) };
        if into.exists() {
            std::fs::remove_dir_all(into).map_err(|error| InstallError::Io { path: into.to_owned(), error })?;
        }
        git(url, None, &["clone", "--quiet", "--no-checkout", "--", url], Some(into_text)).map_err(|_| error)?;
        git(url, Some(into), &["checkout", "--quiet", "--detach", &format!("{reference}^{{commit}}")], None)
            .map_err(|_| InstallError::UnknownRef { source_text: url.to_owned(), reference: reference.to_owned() })?;
    }
    let commit = git(url, Some(into), &["rev-parse", "HEAD"], None)?;
    let dot_git = into.join(".git");
    std::fs::remove_dir_all(&dot_git).map_err(|error| InstallError::Io { path: dot_git, error })?;
    Ok(commit.trim().to_owned())
}

/// Runs `git ARGS [LAST]` (in `folder` when given), with no terminal prompt and English
/// messages; returns its stdout.
fn git(
    source_text: &str,
    folder: Option<&Path>,
    args: &[&str],
    last: Option<&std::ffi::OsStr>,
) -> Result<String, InstallError> {
    let mut command = Command::new("git");
    if let Some(folder) = folder {
        command.arg("-C").arg(folder);
    }
    command
        .args(args)
        .args(last)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = command.output().map_err(|error| InstallError::GitMissing { error })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let message = stderr.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join("; ");
        let message = if message.is_empty() { output.status.to_string() } else { message };
        return Err(InstallError::Git { source_text: source_text.to_owned(), command: args.join(" "), message });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
