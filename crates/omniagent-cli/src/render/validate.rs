//! What `skills validate` prints: one `file:line: message` line per violation, then a
//! summary; with `--json`, every file and its violations.

use std::io::Write;

use serde_json::json;
use skill_markdown::ValidatedFile;

use super::{DIM, GREEN, RED, count, print_json};

/// `skills validate`.
pub(crate) fn report(validated: &[ValidatedFile], json: bool) -> anyhow::Result<()> {
    let n_invalid = validated.iter().filter(|file| !file.is_valid()).count();
    if json {
        let files: Vec<_> = validated
            .iter()
            .map(|file| {
                json!({
                    "path": file.path.display().to_string(),
                    "valid": file.is_valid(),
                    "violations": file.violations,
                })
            })
            .collect();
        return print_json(&json!({"valid": n_invalid == 0, "files": files}));
    }
    let mut out = anstream::stdout().lock();
    for file in validated {
        for violation in &file.violations {
            let place = match violation.line {
                Some(line) => format!("{}:{line}", file.path.display()),
                None => file.path.display().to_string(),
            };
            writeln!(out, "{place}: {} {DIM}[{}]{DIM:#}", violation.message, violation.rule)?;
        }
    }
    let n_violations: usize = validated.iter().map(|file| file.violations.len()).sum();
    if validated.is_empty() {
        writeln!(out, "no SKILL.md found")?;
    } else if n_invalid == 0 {
        writeln!(out, "{GREEN}{} valid{GREEN:#}", count(validated.len(), "skill file"))?;
    } else {
        writeln!(
            out,
            "{RED}{} in {} of {}{RED:#}",
            count(n_violations, "violation"),
            n_invalid,
            count(validated.len(), "skill file")
        )?;
    }
    Ok(())
}
