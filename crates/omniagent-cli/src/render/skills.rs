//! What `skills list|info|check` and `prompt` print.

use std::io::Write;

use omniagent_host::install::Verification;
use serde::Serialize;
use serde_json::{Value, json};
use skill_markdown::{Cut, LoadedSkill, Missing, Origin, SkillSet, Skipped};

use super::prompt::{cut_json, cut_of};
use super::{BOLD, DIM, GREEN, RED, WIDTH, YELLOW, count, print_json, truncate};

/// One skill as `skills list --json` shows it (the shape `docs/cli.md` fixes).
#[derive(Serialize)]
struct ListEntry<'a> {
    name: &'a str,
    description: &'a str,
    emoji: Option<&'a str>,
    homepage: Option<&'a str>,
    path: String,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pack: Option<&'a str>,
    available: bool,
    always: bool,
    missing: &'a Missing,
    has_hooks: bool,
    has_scripts: bool,
    shadows: Vec<String>,
    project: bool,
    cut: Option<Value>,
}

impl<'a> ListEntry<'a> {
    fn new(loaded: &'a LoadedSkill, cuts: &[Cut]) -> Self {
        let skill = &loaded.skill;
        let (source, pack) = source_of(loaded);
        Self {
            name: &skill.name,
            description: &skill.description,
            emoji: skill.emoji.as_deref(),
            homepage: skill.homepage.as_deref(),
            path: skill.path.display().to_string(),
            source,
            pack,
            available: loaded.available(),
            always: skill.always,
            missing: &loaded.missing,
            has_hooks: skill.has_hooks,
            has_scripts: skill.has_scripts,
            shadows: loaded.shadows.iter().map(|path| path.display().to_string()).collect(),
            project: loaded.project,
            cut: cut_of(cuts, &skill.name).map(cut_json),
        }
    }
}

/// How the text list names where a skill comes from.
fn source_label(loaded: &LoadedSkill) -> &'static str {
    if loaded.project { "project" } else { source_of(loaded).0 }
}

fn source_of(loaded: &LoadedSkill) -> (&'static str, Option<&str>) {
    match &loaded.origin {
        Origin::Pack { pack } => ("pack", Some(pack.as_str())),
        Origin::Dir => ("dir", None),
    }
}

fn skipped_json(skipped: &[Skipped]) -> Vec<Value> {
    skipped
        .iter()
        .map(|skipped| json!({"path": skipped.path.display().to_string(), "line": skipped.line, "reason": skipped.reason}))
        .collect()
}

/// Files that could not be used go to stderr, so that a list on stdout stays clean.
pub(super) fn warn_skipped(skipped: &[Skipped]) -> std::io::Result<()> {
    let mut stderr = anstream::stderr().lock();
    for skipped in skipped {
        let place = match skipped.line {
            Some(line) => format!("{}:{line}", skipped.path.display()),
            None => skipped.path.display().to_string(),
        };
        writeln!(stderr, "{YELLOW}skipped{YELLOW:#} {place}: {}", skipped.reason)?;
    }
    Ok(())
}

/// `skills list [--all]`, each skill the prompt cuts marked with the reason.
pub(crate) fn list(set: &SkillSet, cuts: &[Cut], all: bool, json: bool) -> anyhow::Result<()> {
    let shown: Vec<&LoadedSkill> = set.skills.iter().filter(|loaded| all || loaded.available()).collect();
    if json {
        let skills: Vec<ListEntry<'_>> = shown.iter().map(|loaded| ListEntry::new(loaded, cuts)).collect();
        return print_json(&json!({"skills": skills, "skipped": skipped_json(&set.skipped)}));
    }
    warn_skipped(&set.skipped)?;
    let mut out = anstream::stdout().lock();
    let name_width = shown.iter().map(|loaded| loaded.skill.name.chars().count()).max().unwrap_or(0).min(24);
    // Mark, emoji (two columns), name, description, source ("pack", "dir" or "project").
    let source_width = shown.iter().map(|loaded| source_label(loaded).len()).max().unwrap_or(0);
    let description_width = WIDTH.saturating_sub(2 + 3 + name_width + 2 + 2 + source_width).max(16);
    for loaded in &shown {
        let skill = &loaded.skill;
        let mark = if loaded.available() { format!("{GREEN}✓{GREEN:#}") } else { format!("{RED}✗{RED:#}") };
        let emoji = skill.emoji.as_deref().unwrap_or("  ");
        let description = truncate(skill.description.lines().next().unwrap_or_default(), description_width);
        let source = source_label(loaded);
        let name = truncate(&skill.name, name_width);
        writeln!(
            out,
            "{mark} {emoji} {BOLD}{name:<name_width$}{BOLD:#}  {description:<description_width$}  {DIM}{source}{DIM:#}"
        )?;
        if !loaded.available() {
            writeln!(out, "      {YELLOW}{}{YELLOW:#}", truncate(&loaded.missing.reason(), WIDTH - 6))?;
        }
        if let Some(cut) = cut_of(cuts, &skill.name) {
            // Whole, even past the width: the numbers are at its end.
            writeln!(out, "      {YELLOW}{}{YELLOW:#}", cut.reason)?;
        }
    }
    let n_available = set.skills.iter().filter(|loaded| loaded.available()).count();
    let n_unavailable = set.skills.len() - n_available;
    let hint = if n_unavailable > 0 && !all { " (--all shows them)" } else { "" };
    writeln!(out, "{} available, {n_unavailable} unavailable{hint}", count(n_available, "skill"))?;
    Ok(())
}

/// `skills info NAME`.
pub(crate) fn info(loaded: &LoadedSkill, installed: Option<&Verification>, json: bool) -> anyhow::Result<()> {
    let skill = &loaded.skill;
    if json {
        let mut value = serde_json::to_value(skill)?;
        let (source, pack) = source_of(loaded);
        let installed = installed.map(|installed| {
            let mut record = serde_json::to_value(&installed.entry).unwrap_or_default();
            if let Value::Object(fields) = &mut record {
                fields.remove("files");
                fields.insert("ok".to_owned(), json!(installed.changes.is_empty()));
                fields.insert("changes".to_owned(), json!(installed.changes));
            }
            record
        });
        let extra = json!({
            "source": source,
            "pack": pack,
            "installed": installed,
            "available": loaded.available(),
            "missing": loaded.missing,
            "shadows": loaded.shadows,
            "project": loaded.project,
            "bound_secrets": loaded.script_env().map(|(name, _)| name).collect::<Vec<_>>(),
        });
        if let (Value::Object(fields), Value::Object(extra)) = (&mut value, extra) {
            fields.extend(extra);
        }
        return print_json(&value);
    }
    let mut out = anstream::stdout().lock();
    let emoji = skill.emoji.as_deref().map(|emoji| format!("{emoji} ")).unwrap_or_default();
    let status = if loaded.available() {
        format!("{GREEN}available{GREEN:#}")
    } else {
        format!("{RED}unavailable{RED:#}: {}", loaded.missing.reason())
    };
    writeln!(out, "{emoji}{BOLD}{}{BOLD:#}  {status}", skill.name)?;
    writeln!(out, "{}", skill.description)?;
    writeln!(out)?;
    let mut field = |label: &str, value: String| writeln!(out, "{DIM}{label:<13}{DIM:#}{value}");
    field("path", skill.path.display().to_string())?;
    field(
        "source",
        match &loaded.origin {
            Origin::Pack { pack } => format!("pack {pack}"),
            Origin::Dir if loaded.project => "folder of the project (the working folder)".to_owned(),
            Origin::Dir => "folder".to_owned(),
        },
    )?;
    if let Some(installed) = installed {
        let entry = &installed.entry;
        field("installed", format!("{} on {}", super::install::origin(entry), entry.installed_at))?;
        let changes = if installed.changes.is_empty() {
            "none since install".to_owned()
        } else {
            let summary = super::install::change_summary(&installed.changes);
            format!("{summary} since install (`omniagent skills verify` lists them)")
        };
        field("changes", changes)?;
    }
    for shadowed in &loaded.shadows {
        field("shadows", shadowed.display().to_string())?;
    }
    for (label, value) in [
        ("homepage", &skill.homepage),
        ("license", &skill.license),
        ("compatibility", &skill.compatibility),
        ("primaryEnv", &skill.primary_env),
    ] {
        if let Some(value) = value {
            field(label, value.clone())?;
        }
    }
    let requires = &skill.requires;
    for (label, values) in [
        ("bins", &requires.bins),
        ("anyBins", &requires.any_bins),
        ("env", &requires.env),
        ("config", &requires.config),
        ("os", &skill.os),
        ("allowed-tools", &skill.allowed_tools),
    ] {
        if !values.is_empty() {
            field(label, values.join(", "))?;
        }
    }
    let bound: Vec<&str> = loaded.script_env().map(|(name, _)| name).collect();
    for secret in &requires.secrets {
        let state = if bound.contains(&secret.name.as_str()) { "bound" } else { "not bound" };
        let description = secret.description.as_deref().map(|text| format!(": {text}")).unwrap_or_default();
        field("secret", format!("{} ({state}){description}", secret.name))?;
    }
    for spec in &skill.install {
        let hint = spec.hint().unwrap_or_else(|| "(incomplete spec)".to_owned());
        field("install", format!("{}: {hint}", serde_json::to_value(spec.kind)?.as_str().unwrap_or_default()))?;
    }
    for (key, value) in &skill.metadata {
        field("metadata", format!("{key}: {value}"))?;
    }
    let flags = [
        (skill.always, "always"),
        (!skill.user_invocable, "not user-invocable"),
        (skill.disable_model_invocation, "model invocation disabled"),
    ];
    for (_, flag) in flags.iter().filter(|(set, _)| *set) {
        field("flag", (*flag).to_owned())?;
    }
    if skill.has_hooks {
        field("hooks", "hooks/ present (never run)".to_owned())?;
    }
    if skill.has_scripts {
        field("scripts", "scripts/ present".to_owned())?;
    }
    for warning in &skill.warnings {
        field("warning", warning.clone())?;
    }
    field("body", format!("{} lines", skill.body.lines().count()))?;
    Ok(())
}

/// `skills info NAME` for a name no skill has.
pub(crate) fn unknown(name: &str, set: &SkillSet) {
    let mut stderr = anstream::stderr().lock();
    let _ = writeln!(stderr, "{RED}error:{RED:#} unknown skill `{name}`");
    let close = skill_core::close_names(name, set.skills.iter().map(|loaded| loaded.skill.name.as_str()));
    if let Some(best) = close.first() {
        let _ = writeln!(
            stderr,
            "{DIM}hint: did you mean `{best}`? `omniagent skills list --all` shows every skill{DIM:#}"
        );
    } else {
        let _ = writeln!(stderr, "{DIM}hint: `omniagent skills list --all` shows every skill{DIM:#}");
    }
}

/// `skills check`, each skill the prompt cuts marked with the reason.
pub(crate) fn check(set: &SkillSet, cuts: &[Cut], json: bool) -> anyhow::Result<()> {
    let os = skill_markdown::Environment::current().os().to_owned();
    let hints = |loaded: &LoadedSkill| -> Vec<Value> {
        loaded
            .skill
            .install
            .iter()
            .filter(|spec| spec.os.is_empty() || spec.os.contains(&os))
            .map(|spec| json!({"kind": spec.kind, "label": spec.label, "hint": spec.hint()}))
            .collect()
    };
    if json {
        let skills: Vec<Value> = set
            .skills
            .iter()
            .map(|loaded| {
                json!({
                    "name": loaded.skill.name,
                    "available": loaded.available(),
                    "missing": loaded.missing,
                    "install": if loaded.available() { Vec::new() } else { hints(loaded) },
                    "cut": cut_of(cuts, &loaded.skill.name).map(cut_json),
                })
            })
            .collect();
        return print_json(&json!({"skills": skills, "skipped": skipped_json(&set.skipped)}));
    }
    warn_skipped(&set.skipped)?;
    let mut out = anstream::stdout().lock();
    for loaded in &set.skills {
        if loaded.available() {
            writeln!(out, "{GREEN}✓{GREEN:#} {}", loaded.skill.name)?;
            if let Some(cut) = cut_of(cuts, &loaded.skill.name) {
                writeln!(out, "    {YELLOW}{}{YELLOW:#}", cut.reason)?;
            }
            continue;
        }
        writeln!(out, "{RED}✗{RED:#} {}: {}", loaded.skill.name, loaded.missing.reason())?;
        for hint in hints(loaded) {
            let kind = hint["kind"].as_str().unwrap_or_default();
            match hint["hint"].as_str() {
                Some(command) => writeln!(out, "    {DIM}{kind}:{DIM:#} {command}")?,
                None => writeln!(out, "    {DIM}{kind}:{DIM:#} {}", hint["label"].as_str().unwrap_or("see the skill"))?,
            }
        }
        if !loaded.missing.secrets.is_empty() {
            writeln!(
                out,
                "    {DIM}secrets:{DIM:#} bind them in skills.config.{}.secrets of the config",
                loaded.skill.name
            )?;
        }
    }
    let n_unmet = set.skills.iter().filter(|loaded| !loaded.available()).count();
    writeln!(out, "{} checked, {n_unmet} with unmet requirements", count(set.skills.len(), "skill"))?;
    Ok(())
}
