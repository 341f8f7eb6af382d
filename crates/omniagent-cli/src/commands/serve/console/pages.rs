//! The console's pages, as maud templates compiled into the binary: every value put in
//! is escaped (maud escapes whatever is not marked `PreEscaped`, and nothing here is), so
//! a tool's description that holds markup is shown as text.

use std::collections::BTreeMap;
use std::time::SystemTime;

use maud::{DOCTYPE, Markup, html};
use omniagent_host::audit::{AuditFilter, AuditRecord};
use skill_core::WithheldItem;
use skill_core::trust::WithheldReason;
use skill_mcp::UpstreamHealth;

use crate::render::{Change, shown};

/// The console's style sheet.
pub(super) const STYLE: &str = include_str!("console.css");
/// The console's one script: live refresh of the pages that ask for it. Every page works
/// without it.
pub(super) const SCRIPT: &str = include_str!("console.js");
/// The console's icon, which browsers ask for on every page.
pub(super) const ICON: &str = include_str!("favicon.svg");

/// The longest description a list shows; the review shows it whole.
const LISTED_DESCRIPTION: usize = 160;

/// Who is looking, and the CSRF token their forms carry (none for a bearer token's
/// reader, who gets no form).
pub(super) struct Viewer<'a> {
    pub(super) client: &'a str,
    pub(super) csrf: Option<&'a str>,
}

/// A client of the gateway, as the overview lists it.
pub(super) struct ClientRow {
    pub(super) name: String,
    /// Its `agents:` entry; `None`: the top level.
    pub(super) agent: Option<String>,
    pub(super) admin: bool,
    /// Its agent's offered tools, and withheld items, when the agent runs.
    pub(super) tools: Option<usize>,
    pub(super) withheld: Option<usize>,
}

/// An upstream server of a client's agent.
pub(super) struct UpstreamRow {
    pub(super) client: String,
    pub(super) server: String,
    pub(super) health: UpstreamHealth,
    /// Its sandbox in one line, as `config check` gives it.
    pub(super) sandbox: String,
}

pub(super) struct Overview {
    pub(super) clients: Vec<ClientRow>,
    pub(super) upstreams: Vec<UpstreamRow>,
    /// The items withheld from any running agent, each counted once.
    pub(super) withheld: usize,
    /// The last hour's calls, from the audit; `None` without one.
    pub(super) calls: Option<CallCounts>,
}

/// The calls of the last hour in the audit.
#[derive(Default)]
pub(super) struct CallCounts {
    pub(super) calls: usize,
    /// Those whose outcome is `error`.
    pub(super) errors: usize,
    /// Whether there may be more than were read.
    pub(super) more: bool,
    /// Why the audit could not be read.
    pub(super) error: Option<String>,
}

/// The calls page: the audit's latest lines that the filter admits.
pub(super) struct CallsPage {
    /// The audit file; `None`: the gateway keeps no audit file.
    pub(super) file: Option<std::path::PathBuf>,
    /// The configured clients, to filter by.
    pub(super) clients: Vec<String>,
    pub(super) filter: AuditFilter,
    /// Newest first.
    pub(super) records: Vec<AuditRecord>,
    /// Why the audit could not be read.
    pub(super) error: Option<String>,
}

/// The policy page: the rules and rate limits, with their refusals of the last hour.
pub(super) struct PolicyPage {
    pub(super) rules: Vec<RuleRow>,
    pub(super) limits: Vec<LimitRow>,
    /// Whether the counts come from an audit (without one there are none).
    pub(super) audit: bool,
    /// Why the audit could not be read.
    pub(super) error: Option<String>,
}

pub(super) struct RuleRow {
    pub(super) rule: omniagent_host::RuleView,
    /// The calls it refused in the last hour; `None` for an allowing rule, or without an
    /// audit.
    pub(super) hits: Option<usize>,
}

pub(super) struct LimitRow {
    pub(super) limit: omniagent_host::RateLimitView,
    /// The calls it refused in the last hour; `None` without an audit.
    pub(super) refused: Option<usize>,
}

/// The outcomes an audit line may have, to filter by.
const OUTCOMES: [&str; 4] = ["ok", "error", "refused", "withheld"];

/// A tool, prompt or template, offered or withheld.
pub(super) struct ItemRow {
    name: String,
    kind: &'static str,
    description: String,
    /// Offered: what it went through (`pinned`, `approved`, `not pinned`); withheld: why.
    trust: String,
    withheld: bool,
}

impl ItemRow {
    pub(super) fn offered(name: &str, kind: &'static str, description: &str, trust: &str) -> Self {
        let description = match description.char_indices().nth(LISTED_DESCRIPTION) {
            Some((end, _)) => format!("{}…", &description[..end]),
            None => description.to_owned(),
        };
        Self { name: name.to_owned(), kind, description, trust: trust.to_owned(), withheld: false }
    }

    pub(super) fn withheld(item: &WithheldItem) -> Self {
        Self {
            name: item.name.clone(),
            kind: match item.kind {
                "resource_template" => "resource template",
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
pub(super) struct ToolsPage {
    /// The client whose agent is shown; `None`: no agent runs.
    pub(super) client: Option<String>,
    /// Every client whose agent runs.
    pub(super) clients: Vec<String>,
    /// The items, by skill.
    pub(super) skills: BTreeMap<String, Vec<ItemRow>>,
    /// The item just approved.
    pub(super) approved: Option<String>,
}

pub(super) struct ReviewPage {
    pub(super) client: String,
    pub(super) item: WithheldItem,
    pub(super) changes: Vec<Change>,
}

/// Why an item is withheld, for people.
fn reason(item: &WithheldItem) -> String {
    match item.reason {
        WithheldReason::New => "withheld: new, not approved yet".to_owned(),
        WithheldReason::Changed => "withheld: changed since it was approved".to_owned(),
        WithheldReason::Flagged => format!("withheld: flagged by `{}`", item.rule.unwrap_or_default()),
    }
}

/// A whole page: the header with its links and the sign-out form, then `main`.
fn layout(title: &str, viewer: Option<&Viewer<'_>>, live: bool, main: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) " · omniagent console" }
                link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg";
                link rel="stylesheet" href="/console/assets/console.css";
                script src="/console/assets/console.js" defer {}
            }
            body {
                header {
                    strong { "omniagent console" }
                    @if let Some(viewer) = viewer {
                        nav {
                            a href="/console" { "Overview" }
                            a href="/console/tools" { "Tools" }
                            a href="/console/calls" { "Calls" }
                            a href="/console/policy" { "Policy" }
                        }
                        span.who { "signed in as " code { (viewer.client) } }
                        @if let Some(csrf) = viewer.csrf {
                            form method="post" action="/console/signout" {
                                input type="hidden" name="csrf" value=(csrf);
                                button type="submit" { "Sign out" }
                            }
                        }
                    }
                }
                main data-live=[live.then_some("5")] { (main) }
            }
        }
    }
}

pub(super) fn sign_in(csrf: &str, refusal: Option<&str>) -> Markup {
    layout(
        "Sign in",
        None,
        false,
        html! {
            h1 { "Sign in" }
            @if let Some(refusal) = refusal { p.error role="alert" { (refusal) } }
            p { "Paste an admin's token (a client's of " code { "serve.clients" } " with " code { "admin: true" }
                ", or an OAuth access token with the scope " code { "omniagent:admin" } "). "
                "It is checked once; the browser then keeps a session cookie." }
            form method="post" action="/console/signin" {
                input type="hidden" name="csrf" value=(csrf);
                label for="token" { "Token" }
                input id="token" type="password" name="token" autocomplete="off" required;
                button type="submit" { "Sign in" }
            }
        },
    )
}

pub(super) fn refused(text: &str) -> Markup {
    layout(
        "Refused",
        None,
        false,
        html! {
            h1 { "Refused" }
            p.error { (text) }
            p { a href="/console/signin" { "Sign in" } }
        },
    )
}

pub(super) fn overview(viewer: &Viewer<'_>, overview: &Overview) -> Markup {
    let now = SystemTime::now();
    layout(
        "Overview",
        Some(viewer),
        true,
        html! {
            h1 { "Overview" }
            p.summary {
                @if overview.withheld == 0 {
                    "Nothing is withheld."
                } @else {
                    a href="/console/tools" { (overview.withheld) " withheld" } " — review them on the Tools page."
                }
            }
            h2 { "Clients" }
            table {
                thead { tr { th { "client" } th { "agent" } th { "admin" } th.number { "tools" } th.number { "withheld" } } }
                tbody {
                    @for client in &overview.clients {
                        tr {
                            td { code { (display_client(&client.name)) } }
                            td { (client.agent.as_deref().unwrap_or("(top level)")) }
                            td { @if client.admin { "yes" } }
                            @match (client.tools, client.withheld) {
                                (Some(tools), Some(withheld)) => {
                                    td.number { a href={ "/console/tools?client=" (encoded(&client.name)) } { (tools) } }
                                    td.number { (withheld) }
                                }
                                _ => { td.muted colspan="2" { "not running (it starts at the client's first request)" } }
                            }
                        }
                    }
                }
            }
            h2 { "Upstream servers" }
            @if overview.upstreams.is_empty() {
                p.muted { "No client's agent has MCP servers running or pinned yet." }
            } @else {
                table.upstreams {
                    thead { tr { th { "client" } th { "server" } th { "state" } th.number { "restarts" } th { "last error" } th { "sandbox" } } }
                    tbody {
                        @for upstream in &overview.upstreams {
                            tr {
                                td { code { (display_client(&upstream.client)) } }
                                td { code { (upstream.server) } }
                                td { span class={ "state " (upstream.health.state.as_str()) } { (upstream.health.state.as_str()) } }
                                td.number { (upstream.health.restarts) }
                                td {
                                    @if let Some((at, error)) = &upstream.health.last_error {
                                        (error) " " span.muted { "(" (ago(now, *at)) ")" }
                                    }
                                }
                                td.sandbox { (upstream.sandbox) }
                            }
                        }
                    }
                }
                p.muted { "idle: not started (its tools come from the lock; the first call starts it); "
                    "exited: it ran and ended (the next call starts it again)." }
            }
            h2 { "Calls in the last hour" }
            @match &overview.calls {
                None => { p.muted { "No audit: with " code { "observability.audit" } " the gateway counts its calls here." } }
                Some(CallCounts { error: Some(error), .. }) => { p.error { "The audit cannot be read: " (error) } }
                Some(counts) => {
                    p.summary {
                        a href="/console/calls" { (counts.calls) @if counts.more { "+" } " calls" } ", "
                        a href="/console/calls?outcome=error" { (counts.errors) " errors" } "."
                    }
                }
            }
        },
    )
}

pub(super) fn tools(viewer: &Viewer<'_>, page: &ToolsPage) -> Markup {
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

pub(super) fn review(viewer: &Viewer<'_>, page: &ReviewPage) -> Markup {
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

/// The calls page: a filter form (which works without script), then the latest lines.
pub(super) fn calls(viewer: &Viewer<'_>, page: &CallsPage) -> Markup {
    let filter = &page.filter;
    layout(
        "Calls",
        Some(viewer),
        false,
        html! {
            h1 { "Calls" }
            @match &page.file {
                None => { p.muted { "The latest calls come from the audit, one JSON line per call ("
                    code { "observability.audit" } " with a file). This gateway keeps none." } }
                Some(file) => {
                    form.inline method="get" action="/console/calls" {
                        label for="client" { "Client" }
                        select id="client" name="client" {
                            option value="" { "any" }
                            @for client in &page.clients {
                                option value=(client) selected[filter.client.as_deref() == Some(client.as_str())] { (client) }
                            }
                        }
                        label for="tool" { "Tool" }
                        input id="tool" type="text" name="tool" value=[filter.item.as_deref()] placeholder="any";
                        label for="outcome" { "Outcome" }
                        select id="outcome" name="outcome" {
                            option value="" { "any" }
                            @for outcome in OUTCOMES {
                                option value=(outcome) selected[filter.outcome.as_deref() == Some(outcome)] { (outcome) }
                            }
                        }
                        button type="submit" { "Filter" }
                    }
                    @if let Some(error) = &page.error { p.error { "The audit cannot be read: " (error) } }
                    p.muted { "The latest " (page.records.len()) " calls in " code { (file.display()) } ", newest first." }
                    table.calls {
                        thead { tr { th { "time (UTC)" } th { "client" } th { "item" } th { "outcome" } th.number { "ms" } th { "trace id" } } }
                        tbody {
                            @for record in &page.records {
                                tr class=[(record.outcome != "ok").then_some("failed")] {
                                    td { (record.time.replace('T', " ").trim_end_matches('Z')) }
                                    td { code { (record.client) } }
                                    td { code { (record.item) } }
                                    td {
                                        (record.outcome)
                                        @if let Some(kind) = &record.error_kind { " (" (kind) ")" }
                                        @if let Some(layer) = &record.layer { " by " (layer) }
                                        @if let Some(reason) = &record.reason { br; span.muted { (reason) } }
                                    }
                                    td.number { (format!("{:.1}", record.duration_ms)) }
                                    td { code.trace { (record.trace_id.as_deref().unwrap_or("")) } }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// The policy page: the rules in order, then the rate limits, each with its refusals.
pub(super) fn policy(viewer: &Viewer<'_>, page: &PolicyPage) -> Markup {
    let count = |count: Option<usize>| count.map_or_else(|| "—".to_owned(), |count| count.to_string());
    layout(
        "Policy",
        Some(viewer),
        true,
        html! {
            h1 { "Policy" }
            @if let Some(error) = &page.error { p.error { "The audit cannot be read: " (error) } }
            @if !page.audit {
                p.muted { "Without an audit (" code { "observability.audit" } ") there are no counts." }
            }
            h2 { "Rules" }
            @if page.rules.is_empty() {
                p.muted { "No " code { "policy.rules" } ": every call is allowed." }
            } @else {
                p.muted { "In order: the first rule whose condition holds decides. Hits are the calls a rule refused in the last hour." }
                table {
                    thead { tr { th { "rule" } th { "effect" } th { "condition" } th.number { "hits (1 h)" } } }
                    tbody {
                        @for row in &page.rules {
                            tr {
                                td { code { (row.rule.name) } }
                                td { (row.rule.effect) }
                                td { code { (row.rule.condition) } }
                                td.number { (count(row.hits)) }
                            }
                        }
                    }
                }
            }
            h2 { "Rate limits" }
            @if page.limits.is_empty() {
                p.muted { "No " code { "policy.rate_limits" } "." }
            } @else {
                table {
                    thead { tr { th { "clients" } th { "items" } th.number { "per minute" } th.number { "burst" } th.number { "refused (1 h)" } } }
                    tbody {
                        @for row in &page.limits {
                            tr {
                                td { code { (row.limit.client) } }
                                td { code { (row.limit.tool) } }
                                td.number { (row.limit.per_minute) }
                                td.number { (row.limit.burst) }
                                td.number { (count(row.refused)) }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// Each line of `text` after `prefix`, as a diff shows it.
fn prefixed(prefix: &str, text: &str) -> String {
    text.lines().map(|line| format!("{prefix}{line}")).collect::<Vec<_>>().join("\n")
}

/// A client's name for people: the open gateway's client `""` is named so.
fn display_client(name: &str) -> &str {
    if name.is_empty() { "(any: no clients configured)" } else { name }
}

fn encoded(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

/// How long before `now` `at` was, in the largest whole unit.
fn ago(now: SystemTime, at: SystemTime) -> String {
    let seconds = now.duration_since(at).unwrap_or_default().as_secs();
    match seconds {
        0..60 => format!("{seconds} s ago"),
        60..3600 => format!("{} min ago", seconds / 60),
        _ => format!("{} h ago", seconds / 3600),
    }
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

    #[test]
    fn times_read_as_ago() {
        let now = SystemTime::now();
        assert_eq!(ago(now, now - std::time::Duration::from_secs(5)), "5 s ago");
        assert_eq!(ago(now, now - std::time::Duration::from_secs(7200)), "2 h ago");
    }
}
