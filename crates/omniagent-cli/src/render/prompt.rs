//! What `prompt` prints, and how a skill the prompt cuts is shown by every command.

use std::io::Write;

use serde_json::{Value, json};
use skill_markdown::{Cut, PromptConfig, PromptMode, SkillSet, SkillsPrompt};

use super::skills::warn_skipped;
use super::{DIM, YELLOW, print_json};

/// The cut of the skill `name`, if the prompt cuts it.
pub(super) fn cut_of<'a>(cuts: &'a [Cut], name: &str) -> Option<&'a Cut> {
    cuts.iter().find(|cut| cut.skill == name)
}

/// A cut as the JSON output shows it: `{"kind", "reason", …the kind's numbers}`.
pub(super) fn cut_json(cut: &Cut) -> Value {
    let mut value = serde_json::to_value(&cut.reason).unwrap_or_else(|_| json!({}));
    if let Value::Object(fields) = &mut value {
        fields.insert("reason".to_owned(), Value::String(cut.reason.to_string()));
    }
    value
}

/// Every cut, and the `always` skills' overflow, as warnings on stderr: a prompt never
/// loses a skill without a word.
fn warn_cuts(prompt: &SkillsPrompt<'_>, config: &PromptConfig) -> std::io::Result<()> {
    let mut stderr = anstream::stderr().lock();
    for cut in &prompt.cuts {
        writeln!(stderr, "{YELLOW}warning:{YELLOW:#} skill `{}`: {}", cut.skill, cut.reason)?;
    }
    if let Some(over) = prompt.over_budget {
        writeln!(
            stderr,
            "{YELLOW}warning:{YELLOW:#} the prompt's skills are {over} characters over skills.max_prompt_chars: \
             `always` skills are never left out"
        )?;
    }
    if !prompt.cuts.is_empty() || prompt.over_budget.is_some() {
        let catalog = if config.mode == PromptMode::Full { ", or use --mode catalog" } else { "" };
        writeln!(
            stderr,
            "{DIM}hint: raise skills.max_prompt_chars or skills.max_injected{catalog}; \
             `omniagent skills list` marks the cuts{DIM:#}"
        )?;
    }
    Ok(())
}

/// `prompt`: the text on stdout (with `--json`, `{"prompt", "mode", "skills", "cuts"}`),
/// the cuts as warnings on stderr either way.
pub(crate) fn prompt(
    prompt: &SkillsPrompt<'_>,
    set: &SkillSet,
    config: &PromptConfig,
    json: bool,
) -> anyhow::Result<()> {
    warn_cuts(prompt, config)?;
    if json {
        let names: Vec<&str> = prompt.skills.iter().map(|loaded| loaded.skill.name.as_str()).collect();
        let cuts: Vec<Value> = prompt
            .cuts
            .iter()
            .map(|cut| {
                let mut value = cut_json(cut);
                value["skill"] = Value::String(cut.skill.clone());
                value
            })
            .collect();
        return print_json(&json!({"prompt": prompt.text, "mode": config.mode, "skills": names, "cuts": cuts}));
    }
    warn_skipped(&set.skipped)?;
    let mut out = std::io::stdout().lock();
    write!(out, "{}", prompt.text)?;
    if !prompt.text.ends_with('\n') {
        writeln!(out)?;
    }
    Ok(())
}
