//! What `skills install|verify|update|remove` print.

use std::io::Write;

use omniagent_host::install::{Changes, Installed, LockEntry, Outcome, Update, Verification};
use serde_json::{Value, json};

use super::{BOLD, DIM, GREEN, RED, YELLOW, count, print_json};

/// `skills install`.
pub(crate) fn installed(installed: &Installed, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(installed);
    }
    let mut out = anstream::stdout().lock();
    let n_files = count(installed.entry.files.len(), "file");
    writeln!(
        out,
        "{GREEN}installed{GREEN:#} {BOLD}{}{BOLD:#} ({n_files}) in {}",
        installed.name,
        installed.path.display()
    )?;
    writeln!(out, "  {DIM}from{DIM:#} {}", origin(&installed.entry))?;
    Ok(())
}

/// `skills install --all`: each skill installed, each one skipped with the reason, and
/// the count.
pub(crate) fn installed_all(outcomes: &[Outcome], json: bool) -> anyhow::Result<()> {
    let (mut installed, mut skipped) = (Vec::new(), Vec::new());
    for outcome in outcomes {
        match outcome {
            Outcome::Installed(each) => installed.push(each),
            Outcome::Skipped { subfolder, error } => skipped.push((subfolder, error)),
        }
    }
    if json {
        let skipped: Vec<Value> = skipped
            .iter()
            .map(|(subfolder, error)| json!({"subfolder": subfolder, "error": error.to_string()}))
            .collect();
        return print_json(&json!({"installed": installed, "skipped": skipped}));
    }
    for each in &installed {
        self::installed(each, false)?;
    }
    let mut out = anstream::stdout().lock();
    for (subfolder, error) in &skipped {
        writeln!(out, "{YELLOW}skipped{YELLOW:#} {subfolder}: {error}")?;
    }
    write!(out, "{} installed", count(installed.len(), "skill"))?;
    match skipped.len() {
        0 => writeln!(out)?,
        n => writeln!(out, ", {n} skipped")?,
    }
    Ok(())
}

/// Where an entry came from, for people: the source (and the skill's folder in it) and,
/// for git, the ref and commit.
pub(super) fn origin(entry: &LockEntry) -> String {
    let mut text = entry.source.clone();
    if let Some(subfolder) = &entry.subfolder {
        text.push_str(&format!(" ({subfolder})"));
    }
    if let Some(reference) = &entry.reference {
        text.push_str(&format!(" at {reference}"));
    }
    if let Some(commit) = &entry.commit {
        text.push_str(&format!(" (commit {})", short(commit)));
    }
    if let Some(digest) = &entry.archive_sha256 {
        text.push_str(&format!(" (sha256 {})", short(digest)));
    }
    text
}

fn short(digest: &str) -> &str {
    digest.get(..12).unwrap_or(digest)
}

/// `changed a, b; added c; removed d`.
pub(super) fn change_summary(changes: &Changes) -> String {
    let parts: Vec<String> = [("changed", &changes.changed), ("added", &changes.added), ("removed", &changes.removed)]
        .into_iter()
        .filter(|(_, paths)| !paths.is_empty())
        .map(|(what, paths)| format!("{} {what}", paths.len()))
        .collect();
    parts.join(", ")
}

fn change_lines(out: &mut impl Write, changes: &Changes) -> std::io::Result<()> {
    for (what, paths) in [("changed", &changes.changed), ("added", &changes.added), ("removed", &changes.removed)] {
        for path in paths {
            writeln!(out, "    {YELLOW}{what:<7}{YELLOW:#} {path}")?;
        }
    }
    Ok(())
}

/// `skills verify`.
pub(crate) fn verified(verifications: &[Verification], json: bool) -> anyhow::Result<()> {
    if json {
        let skills: Vec<Value> = verifications
            .iter()
            .map(|verification| {
                json!({
                    "name": verification.name,
                    "path": verification.path,
                    "source": verification.entry.source,
                    "ok": verification.changes.is_empty(),
                    "missing": verification.missing,
                    "changed": verification.changes.changed,
                    "added": verification.changes.added,
                    "removed": verification.changes.removed,
                })
            })
            .collect();
        return print_json(&json!({ "skills": skills }));
    }
    let mut out = anstream::stdout().lock();
    if verifications.is_empty() {
        writeln!(out, "no skills installed (`omniagent skills install SOURCE` adds one)")?;
        return Ok(());
    }
    for verification in verifications {
        let name = &verification.name;
        if verification.changes.is_empty() {
            writeln!(out, "{GREEN}✓{GREEN:#} {BOLD}{name}{BOLD:#}  unchanged")?;
        } else if verification.missing {
            writeln!(out, "{RED}✗{RED:#} {BOLD}{name}{BOLD:#}  its folder is gone: {}", verification.path.display())?;
        } else {
            writeln!(out, "{RED}✗{RED:#} {BOLD}{name}{BOLD:#}  {}", change_summary(&verification.changes))?;
            change_lines(&mut out, &verification.changes)?;
        }
    }
    let n_changed = verifications.iter().filter(|verification| !verification.changes.is_empty()).count();
    writeln!(out, "{} verified, {n_changed} changed since install", count(verifications.len(), "skill"))?;
    Ok(())
}

/// `skills update`.
pub(crate) fn updated(updates: &[Update], json: bool) -> anyhow::Result<()> {
    if json {
        let skills: Vec<Value> = updates.iter().map(update_json).collect();
        return print_json(&json!({ "skills": skills }));
    }
    let mut out = anstream::stdout().lock();
    if updates.is_empty() {
        writeln!(out, "no skills installed (`omniagent skills install SOURCE` adds one)")?;
    }
    for update in updates {
        match update {
            Update::Updated { installed, changes, overwritten, previous_commit } => {
                let mut summary = if changes.is_empty() { "same files".to_owned() } else { change_summary(changes) };
                if !overwritten.is_empty() {
                    summary.push_str(&format!(", local edits overwritten ({})", change_summary(overwritten)));
                }
                let commits = match (previous_commit, &installed.entry.commit) {
                    (Some(before), Some(after)) if before != after => {
                        format!(", commit {} → {}", short(before), short(after))
                    }
                    _ => String::new(),
                };
                writeln!(out, "{GREEN}updated{GREEN:#} {BOLD}{}{BOLD:#}: {summary}{commits}", installed.name)?;
                change_lines(&mut out, changes)?;
            }
            Update::UpToDate { name } => writeln!(out, "{BOLD}{name}{BOLD:#}: up to date")?,
            Update::KeptLocalEdits { name, local } => {
                writeln!(
                    out,
                    "{YELLOW}kept{YELLOW:#} {BOLD}{name}{BOLD:#}: local edits ({}); --force overwrites them",
                    change_summary(local)
                )?;
                change_lines(&mut out, local)?;
            }
            Update::Failed { name, error } => writeln!(out, "{RED}failed{RED:#} {BOLD}{name}{BOLD:#}: {error}")?,
        }
    }
    Ok(())
}

fn update_json(update: &Update) -> Value {
    match update {
        Update::Updated { installed, changes, overwritten, previous_commit } => json!({
            "name": installed.name,
            "status": "updated",
            "path": installed.path,
            "commit": installed.entry.commit,
            "previous_commit": previous_commit,
            "changed": changes.changed,
            "added": changes.added,
            "removed": changes.removed,
            "overwritten": overwritten,
        }),
        Update::UpToDate { name } => json!({"name": name, "status": "up_to_date"}),
        Update::KeptLocalEdits { name, local } => json!({
            "name": name,
            "status": "kept_local_edits",
            "changed": local.changed,
            "added": local.added,
            "removed": local.removed,
        }),
        Update::Failed { name, error } => json!({"name": name, "status": "failed", "error": error.to_string()}),
    }
}

/// `skills remove`.
pub(crate) fn removed(name: &str, entry: &LockEntry, json: bool) -> anyhow::Result<()> {
    if json {
        return print_json(&json!({"name": name, "removed": true, "source": entry.source}));
    }
    let mut out = anstream::stdout().lock();
    writeln!(out, "{GREEN}removed{GREEN:#} {BOLD}{name}{BOLD:#} (installed from {})", origin(entry))?;
    Ok(())
}
