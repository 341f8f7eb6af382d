//! The calls page: the audit's latest lines, filtered.

use maud::{Markup, html};
use omniagent_host::audit::{AuditFilter, AuditRecord};

use super::{Viewer, layout};

/// The calls page: the audit's latest lines that the filter admits.
pub(in super::super) struct CallsPage {
    /// The audit file; `None`: the gateway keeps no audit file.
    pub(in super::super) file: Option<std::path::PathBuf>,
    /// The configured clients, to filter by.
    pub(in super::super) clients: Vec<String>,
    pub(in super::super) filter: AuditFilter,
    /// Newest first.
    pub(in super::super) records: Vec<AuditRecord>,
    /// Why the audit could not be read.
    pub(in super::super) error: Option<String>,
}

/// The outcomes an audit line may have, to filter by.
const OUTCOMES: [&str; 4] = ["ok", "error", "refused", "withheld"];

/// The calls page: a filter form (which works without script), then the latest lines.
pub(in super::super) fn calls(viewer: &Viewer<'_>, page: &CallsPage) -> Markup {
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
