//! What `tools review` and `tools approve` print, and the withheld part of `tools list`.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;
use skill_core::WithheldItem;
use skill_core::trust::{Finding, WithheldReason, escape_invisible, field_pairs};

use super::{BOLD, DIM, GREEN, RED, YELLOW, print_json};

/// A withheld item as `tools list --json` names it.
#[derive(Serialize)]
pub(super) struct Listed<'a> {
    name: &'a str,
    skill: &'a str,
    kind: &'static str,
    reason: WithheldReason,
    #[serde(skip_serializing_if = "Option::is_none")]
    rule: Option<&'static str>,
}

impl<'a> Listed<'a> {
    pub(super) fn of(item: &'a WithheldItem) -> Self {
        Self { name: &item.name, skill: &item.skill, kind: item.kind, reason: item.reason, rule: item.rule }
    }
}

/// A changed field of a withheld item: its value as recorded and as offered now (what
/// `tools review` and the console's review show).
#[derive(Serialize)]
pub(crate) struct Change {
    pub(crate) field: String,
    pub(crate) recorded: Value,
    pub(crate) offered: Value,
}

/// A withheld item as `tools review --json` shows it.
#[derive(Serialize)]
struct Reviewed<'a> {
    #[serde(flatten)]
    listed: Listed<'a>,
    /// For a change, each changed field.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    changes: Vec<Change>,
    #[serde(skip_serializing_if = "<[Finding]>::is_empty")]
    findings: &'a [Finding],
    /// What is offered now, whole.
    offered: &'a Value,
}

/// Each changed field of `item`, for a change (none for a new item).
pub(crate) fn changes(item: &WithheldItem) -> Vec<Change> {
    let Some(recorded) = &item.recorded else { return Vec::new() };
    field_pairs(recorded, &item.offered)
        .into_iter()
        .filter(|(_, old, new)| old != new)
        .map(|(field, recorded, offered)| Change { field, recorded, offered })
        .collect()
}

/// `tools review`.
pub(crate) fn review(withheld: &[WithheldItem], json: bool) -> anyhow::Result<()> {
    if json {
        let reviewed: Vec<Reviewed<'_>> = withheld
            .iter()
            .map(|item| Reviewed {
                listed: Listed::of(item),
                changes: changes(item),
                findings: &item.findings,
                offered: &item.offered,
            })
            .collect();
        return print_json(&serde_json::json!({ "withheld": reviewed }));
    }
    let mut out = anstream::stdout().lock();
    if withheld.is_empty() {
        writeln!(out, "nothing is withheld")?;
        return Ok(());
    }
    for item in withheld {
        let why = match item.reason {
            WithheldReason::New => "new, not approved yet".to_owned(),
            WithheldReason::Changed => "changed since it was approved".to_owned(),
            WithheldReason::Flagged => format!("flagged by `{}`", item.rule.unwrap_or_default()),
        };
        writeln!(
            out,
            "{BOLD}{}{BOLD:#} {DIM}({} of {}){DIM:#}: {YELLOW}{why}{YELLOW:#}",
            item.name,
            item.kind.replace('_', " "),
            item.skill
        )?;
        for change in changes(item) {
            writeln!(out, "  {}:", change.field)?;
            for line in shown(&change.recorded).lines() {
                writeln!(out, "  {RED}- {line}{RED:#}")?;
            }
            for line in shown(&change.offered).lines() {
                writeln!(out, "  {GREEN}+ {line}{GREEN:#}")?;
            }
        }
        for finding in &item.findings {
            writeln!(out, "  {}: {} {DIM}({}){DIM:#}", finding.field, finding.excerpt, finding.rule)?;
        }
        if item.reason == WithheldReason::New {
            for line in shown(&item.offered).lines() {
                writeln!(out, "  {GREEN}+ {line}{GREEN:#}")?;
            }
        }
        writeln!(out)?;
    }
    let flagged = withheld.iter().any(|item| item.reason == WithheldReason::Flagged);
    writeln!(
        out,
        "{} withheld; `omniagent tools approve NAME...` offers them{}",
        withheld.len(),
        if flagged { " (a flagged item only by its name)" } else { " (`--all`: every one)" }
    )?;
    Ok(())
}

/// A field's value for people: text as it is (invisible characters escaped), anything
/// else as indented JSON; `(none)` where the field is absent.
pub(crate) fn shown(value: &Value) -> String {
    match value {
        Value::Null => "(none)".to_owned(),
        Value::String(text) => escape_invisible(text),
        other => escape_invisible(&serde_json::to_string_pretty(other).unwrap_or_default()),
    }
}

/// `tools approve`.
pub(crate) fn approved(items: &[WithheldItem], json: bool) -> anyhow::Result<()> {
    if json {
        let approved: Vec<Listed<'_>> = items.iter().map(Listed::of).collect();
        return print_json(&serde_json::json!({ "approved": approved }));
    }
    let mut out = anstream::stdout().lock();
    if items.is_empty() {
        writeln!(out, "nothing to approve")?;
    }
    for item in items {
        writeln!(out, "approved {}", item.name)?;
    }
    Ok(())
}
