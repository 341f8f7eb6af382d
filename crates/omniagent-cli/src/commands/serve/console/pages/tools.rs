//! The tools page (every item of a client's agent, by skill, with its trust) and the
//! review of a withheld item, with Approve.

use std::collections::BTreeMap;

use maud::{Markup, html};
use skill_core::WithheldItem;
use skill_core::trust::WithheldReason;

use super::{Viewer, display_client, encoded, layout};
use crate::render::{Change, shown};

/// The longest description a list shows; the review shows it whole.
const LISTED_DESCRIPTION: usize = 160;

/// A tool, prompt or template, offered or withheld.
pub(in super::super) struct ItemRow {
    name: String,
    kind: &'static str,
    description: String,
    /// Offered: what it went through (`pinned`, `approved`, `not pinned`); withheld: why.
    trust: String,
    withheld: bool,
}

impl ItemRow {
    pub(in super::super) fn offered(name: &str, kind: &'static str, description: &str, trust: &str) -> Self {
        let description = match description.char_indices().nth(LISTED_DESCRIPTION) {
            Some((end, _)) => format!("{}…", &description[..end]),
            None => description.to_owned(),
        };
        Self { name: name.to_owned(), kind, description, trust: trust.to_owned(), withheld: false }
    }

    pub(in super::super) fn withheld(item: &WithheldItem) -> Self {
        Self {
            name: item.name.clone(),
            kind: match item.kind {
                "resource_template" => "resource template",
                "resource" => "resource",
                "prompt" => "prompt",
                _ => "tool",
            },
            description: String::new(),
            trust: reason(item),
            withheld: true,
        }
    }
}

#[derive(Default)]
pub(in super::super) struct ToolsPage {
    /// The client whose agent is shown; `None`: no agent runs.
    pub(in super::super) client: Option<String>,
    /// Every client whose agent runs.
    pub(in super::super) clients: Vec<String>,
    /// The items, by skill.
    pub(in super::super) skills: BTreeMap<String, Vec<ItemRow>>,
    /// The item just approved.
    pub(in super::super) approved: Option<String>,
}

pub(in super::super) struct ReviewPage {
    pub(in super::super) client: String,
    pub(in super::super) item: WithheldItem,
    pub(in super::super) changes: Vec<Change>,
}

/// Why an item is withheld, for people.
fn reason(item: &WithheldItem) -> String {
    match item.reason {
        WithheldReason::New => "withheld: new, not approved yet".to_owned(),
        WithheldReason::Changed => "withheld: changed since it was approved".to_owned(),
        WithheldReason::Flagged => format!("withheld: flagged by `{}`", item.rule.unwrap_or_default()),
    }
}

pub(in super::super) fn tools(viewer: &Viewer<'_>, page: &ToolsPage) -> Markup {
    layout(
        "Tools",
        Some(viewer),
        false,
        html! {
            h1 { "Tools, prompts and templates" }
            @if let Some(approved) = &page.approved {
                p.notice role="status" { "Approved " code { (approved) } ": every client's agent offers it now." }
            }
            @match &page.client {
                None => { p.muted { "No client's agent is running yet: they start at each client's first request." } }
                Some(client) => {
                    @if page.clients.len() > 1 {
                        form.inline method="get" action="/console/tools" {
                            label for="client" { "Client" }
                            select id="client" name="client" {
                                @for name in &page.clients {
                                    option value=(name) selected[name == client] { (display_client(name)) }
                                }
                            }
                            button type="submit" { "Show" }
                        }
                    } @else {
                        p { "The agent of " code { (display_client(client)) } "." }
                    }
                    @for (skill, items) in &page.skills {
                        section.skill {
                            h2 { (skill) " " span.muted { "(" (items.len()) ")" } }
                            table {
                                thead { tr { th { "name" } th { "kind" } th { "trust" } th { "description" } } }
                                tbody {
                                    @for item in items {
                                        tr class=[item.withheld.then_some("withheld")] {
                                            td {
                                                @if item.withheld {
                                                    a href={ "/console/tools/review?client=" (encoded(client)) "&name=" (encoded(&item.name)) } { code { (item.name) } }
                                                } @else {
                                                    code { (item.name) }
                                                }
                                            }
                                            td { (item.kind) }
                                            td { (item.trust) }
                                            td { (item.description) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

pub(in super::super) fn review(viewer: &Viewer<'_>, page: &ReviewPage) -> Markup {
    let item = &page.item;
    layout(
        "Review",
        Some(viewer),
        false,
        html! {
            h1 { "Review " code { (item.name) } }
            p { (item.kind.replace('_', " ")) " of " code { (item.skill) } ": " strong { (reason(item)) } }
            @for change in &page.changes {
                section.change {
                    h2 { code { (change.field) } }
                    pre.removed { (prefixed("- ", &shown(&change.recorded))) }
                    pre.added { (prefixed("+ ", &shown(&change.offered))) }
                }
            }
            @if !item.findings.is_empty() {
                h2 { "Findings" }
                ul {
                    @for finding in &item.findings {
                        li { code { (finding.field) } ": " (finding.excerpt) " " span.muted { "(" (finding.rule) ")" } }
                    }
                }
            }
            @if item.reason == WithheldReason::New || page.changes.is_empty() {
                h2 { "Offered" }
                pre.added { (prefixed("+ ", &shown(&item.offered))) }
            }
            @if let Some(csrf) = viewer.csrf {
                form method="post" action="/console/tools/approve" {
                    input type="hidden" name="csrf" value=(csrf);
                    input type="hidden" name="client" value=(page.client);
                    input type="hidden" name="name" value=(item.name);
                    button.approve type="submit" { "Approve " (item.name) }
                }
            } @else {
                p.muted { "Sign in to approve it (a bearer token reads only), or run "
                    code { "omniagent tools approve " (item.name) } "." }
            }
        },
    )
}

/// Each line of `text` after `prefix`, as a diff shows it.
fn prefixed(prefix: &str, text: &str) -> String {
    text.lines().map(|line| format!("{prefix}{line}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_a_description_is_text() {
        let row = ItemRow::offered("x__y", "tool", "<script>alert(1)</script>", "pinned");
        let page = ToolsPage {
            client: Some("alice".to_owned()),
            clients: vec!["alice".to_owned()],
            skills: BTreeMap::from([("x".to_owned(), vec![row])]),
            approved: None,
        };
        let html = tools(&Viewer { client: "alice", csrf: Some("t") }, &page).into_string();
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "{html}");
        assert!(!html.contains("<script>alert"), "{html}");
    }

    #[test]
    fn long_descriptions_are_cut_in_lists() {
        let row = ItemRow::offered("x__y", "tool", &"é".repeat(500), "");
        assert_eq!(row.description.chars().count(), LISTED_DESCRIPTION + 1);
    }
}
