//! `omniagent skills install|verify|update|remove`.

use std::process::ExitCode;

use omniagent_host::install::{self, InstallError, Outcome, Update};

use super::Session;
use crate::args::InstalledCommand;
use crate::render;

/// Exit code 1 when `verify` finds a change, `update` keeps edits or fails for a skill, or
/// `install --all` skips one for a reason other than its being installed already; an
/// install or a remove that fails is an error (exit 1 too).
pub(crate) fn run(session: &Session, command: InstalledCommand) -> anyhow::Result<ExitCode> {
    let home = &session.home;
    match command {
        InstalledCommand::Install { source, all: true, .. } => {
            let outcomes = install::install_all(home, &source)?;
            render::install::installed_all(&outcomes, session.json)?;
            // A skill installed already is kept, not a failure.
            let failed = outcomes.iter().any(|outcome| {
                matches!(outcome, Outcome::Skipped { error, .. } if !matches!(error, InstallError::AlreadyInstalled { .. }))
            });
            Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
        }
        InstalledCommand::Install { source, path, name, all: false } => {
            let installed = install::install(home, &source, path.as_deref(), name.as_deref())?;
            render::install::installed(&installed, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
        InstalledCommand::Verify { name } => {
            let verifications = install::verify(home, name.as_deref())?;
            render::install::verified(&verifications, session.json)?;
            let all_intact = verifications.iter().all(|verification| verification.changes.is_empty());
            Ok(if all_intact { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        InstalledCommand::Update { name, force } => {
            let updates = install::update(home, name.as_deref(), force)?;
            render::install::updated(&updates, session.json)?;
            let all_done =
                updates.iter().all(|update| matches!(update, Update::Updated { .. } | Update::UpToDate { .. }));
            Ok(if all_done { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        InstalledCommand::Remove { name } => {
            let entry = install::remove(home, &name)?;
            render::install::removed(&name, &entry, session.json)?;
            Ok(ExitCode::SUCCESS)
        }
    }
}
