//! Which skills, and how much of each, fit a prompt's limits.
//!
//! Priority decides what stays: `always` skills first, then the order given (discovery
//! order, which follows the config). Past `max_injected`, the lowest are left out. Past
//! `max_chars`, a catalog's descriptions are shortened first, all to one length and no
//! shorter than [`MIN_DESCRIPTION_CHARS`]; if that is not enough, the lowest skills are
//! left out, and the room they free goes back to the descriptions. `always` skills are
//! never left out for the budget.

use super::text::{self, Entry};
use super::{Cut, CutReason, PromptConfig, PromptMode};
use crate::LoadedSkill;
use skill_core::ScanMode;
use skill_core::trust::scan_skill_text;

/// A shortened description keeps at least this many characters (a sentence's opening
/// clause): below it, leaving out a skill costs less than a description nobody can use.
pub(super) const MIN_DESCRIPTION_CHARS: usize = 48;

/// What [`fit`] chose.
pub(super) struct Fitted<'a> {
    /// The skills part of the prompt; empty when no skill is in it.
    pub(super) section: String,
    pub(super) skills: Vec<&'a LoadedSkill>,
    pub(super) cuts: Vec<Cut>,
    pub(super) over_budget: Option<usize>,
}

/// The skills of `skills` a prompt may offer (available, model invocation allowed, not
/// flagged by a scan rule where `scan` withholds), at most `max_injected` by priority,
/// as positions in `skills`, in order; and the cuts of the others, each with its
/// position.
pub(super) fn offered(skills: &[LoadedSkill], max_injected: usize, scan: ScanMode) -> (Vec<usize>, Vec<(usize, Cut)>) {
    let mut cuts = Vec::new();
    let eligible: Vec<usize> = (0..skills.len())
        .filter(|&skill_idx| skills[skill_idx].available() && !skills[skill_idx].skill.disable_model_invocation)
        .filter(|&skill_idx| {
            let skill = &skills[skill_idx].skill;
            if scan == ScanMode::Off {
                return true;
            }
            let Some(finding) = scan_skill_text(&skill.name, &skill.description, &skill.body).into_iter().next()
            else {
                return true;
            };
            if scan == ScanMode::Warn {
                tracing::warn!(skill = %skill.name, rule = finding.rule, field = %finding.field, "scan finding: {}", finding.excerpt);
                return true;
            }
            let reason = CutReason::Flagged { rule: finding.rule, field: finding.field, excerpt: finding.excerpt };
            cuts.push((skill_idx, Cut { skill: skill.name.clone(), reason }));
            false
        })
        .collect();
    let mut kept = vec![false; skills.len()];
    for &skill_idx in by_priority(&eligible, |skill_idx| skills[skill_idx].skill.always).iter().take(max_injected) {
        kept[skill_idx] = true;
    }
    let mut offered = Vec::new();
    for skill_idx in eligible {
        if kept[skill_idx] {
            offered.push(skill_idx);
        } else {
            let reason = CutReason::MaxInjected { max_injected };
            cuts.push((skill_idx, Cut { skill: skills[skill_idx].skill.name.clone(), reason }));
        }
    }
    (offered, cuts)
}

/// The offered skills of `skills` that fit `config`, their section of the prompt, and
/// every cut, in the order of `skills`.
pub(super) fn fit<'a>(skills: &'a [LoadedSkill], config: &PromptConfig) -> Fitted<'a> {
    let (positions, max_injected_cuts) = offered(skills, config.max_injected, config.scan);
    let offered: Vec<&LoadedSkill> = positions.iter().map(|&skill_idx| &skills[skill_idx]).collect();
    let entries: Vec<Entry> = offered
        .iter()
        .map(|loaded| {
            // Without the loading tools, a catalog cannot point at a pack skill's body.
            let whole = config.mode == PromptMode::Catalog && !config.tools && loaded.skill.dir.is_none();
            Entry::new(loaded, if whole { PromptMode::Full } else { config.mode })
        })
        .collect();
    let order = by_priority(&(0..entries.len()).collect::<Vec<_>>(), |entry_idx| offered[entry_idx].skill.always);
    let n_always = offered.iter().filter(|loaded| loaded.skill.always).count();
    let chars = |n_kept: usize, limit: Option<usize>| -> usize {
        if n_kept == 0 {
            return 0;
        }
        let kept = &order[..n_kept];
        let project = kept.iter().any(|&entry_idx| entries[entry_idx].project);
        let entry_chars: usize = kept.iter().map(|&entry_idx| entries[entry_idx].chars(limit)).sum();
        text::frame_chars(config.mode, config.tools, project, n_kept) + entry_chars
    };

    let (n_kept, limit, over_budget) = match config.max_chars {
        None => (entries.len(), None, None),
        Some(budget) if chars(entries.len(), None) <= budget => (entries.len(), None, None),
        Some(budget) => {
            let shortest = match config.mode {
                PromptMode::Full => None,
                PromptMode::Catalog => Some(MIN_DESCRIPTION_CHARS),
            };
            let fits = |n_kept: usize, limit: Option<usize>| chars(n_kept, limit) <= budget;
            let n_kept = largest(n_always, entries.len(), |n_kept| fits(n_kept, shortest)).unwrap_or(n_always);
            let over_budget = Some(chars(n_kept, shortest)).filter(|&used| used > budget).map(|used| used - budget);
            let limit = if fits(n_kept, None) || shortest.is_none() {
                None
            } else {
                let longest = order[..n_kept].iter().map(|&entry_idx| entries[entry_idx].description_chars).max();
                let longest = longest.unwrap_or(0).max(MIN_DESCRIPTION_CHARS);
                Some(
                    largest(MIN_DESCRIPTION_CHARS, longest, |limit| fits(n_kept, Some(limit)))
                        .unwrap_or(MIN_DESCRIPTION_CHARS),
                )
            };
            (n_kept, limit, over_budget)
        }
    };

    let mut cuts = max_injected_cuts;
    let mut in_prompt = vec![false; entries.len()];
    for &entry_idx in &order[..n_kept] {
        in_prompt[entry_idx] = true;
    }
    for (entry_idx, entry) in entries.iter().enumerate() {
        let skill = offered[entry_idx].skill.name.clone();
        let at = positions[entry_idx];
        let budget = config.max_chars.unwrap_or_default();
        if !in_prompt[entry_idx] {
            cuts.push((at, Cut { skill, reason: CutReason::Budget { max_prompt_chars: budget } }));
        } else if let Some(kept_chars) = entry.kept_chars(limit) {
            let reason = CutReason::Shortened {
                max_prompt_chars: budget,
                description_chars: entry.description_chars,
                kept_chars,
            };
            cuts.push((at, Cut { skill, reason }));
        }
    }
    cuts.sort_by_key(|(at, _)| *at);

    let kept: Vec<usize> = (0..entries.len()).filter(|&entry_idx| in_prompt[entry_idx]).collect();
    let section = if kept.is_empty() {
        String::new()
    } else {
        let kept_entries: Vec<&Entry> = kept.iter().map(|&entry_idx| &entries[entry_idx]).collect();
        text::section(config.mode, config.tools, &kept_entries, limit)
    };
    Fitted {
        section,
        skills: kept.iter().map(|&entry_idx| offered[entry_idx]).collect(),
        cuts: cuts.into_iter().map(|(_, cut)| cut).collect(),
        over_budget,
    }
}

/// `indices` with those `is_always` says first, each part in its order.
fn by_priority(indices: &[usize], is_always: impl Fn(usize) -> bool) -> Vec<usize> {
    let (mut order, rest): (Vec<usize>, Vec<usize>) = indices.iter().partition(|&&idx| is_always(idx));
    order.extend(rest);
    order
}

/// The largest `n` of `low..=high` for which `holds`, when it holds up to some point and
/// not after it; none when it does not hold for `low`.
fn largest(low: usize, high: usize, holds: impl Fn(usize) -> bool) -> Option<usize> {
    if !holds(low) {
        return None;
    }
    let (mut yes, mut no) = (low, high + 1);
    while no - yes > 1 {
        let middle = yes + (no - yes) / 2;
        if holds(middle) {
            yes = middle;
        } else {
            no = middle;
        }
    }
    Some(yes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_finds_the_last_value_that_holds() {
        let check = |low, high, last: usize, expect: Option<usize>| {
            assert_eq!(largest(low, high, |n| n <= last), expect, "{low}..={high}, holds up to {last}");
        };
        check(0, 10, 4, Some(4));
        check(0, 10, 10, Some(10));
        check(0, 10, 99, Some(10));
        check(3, 10, 3, Some(3));
        check(0, 0, 0, Some(0));
        assert_eq!(largest(5, 10, |n| n < 5), None);
    }

    #[test]
    fn always_comes_first_and_order_is_kept_otherwise() {
        assert_eq!(by_priority(&[0, 1, 2, 3, 4], |idx| idx == 1 || idx == 3), [1, 3, 0, 2, 4]);
    }
}
