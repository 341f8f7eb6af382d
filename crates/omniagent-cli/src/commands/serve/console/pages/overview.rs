//! The overview: the clients and their agents, the upstream servers' health, what is
//! withheld, and the last hour's calls.

use std::time::SystemTime;

use maud::{Markup, html};
use skill_mcp::UpstreamHealth;

use super::{Viewer, ago, display_client, encoded, layout};

/// A client of the gateway, as the overview lists it.
pub(in super::super) struct ClientRow {
    pub(in super::super) name: String,
    /// Its `agents:` entry; `None`: the top level.
    pub(in super::super) agent: Option<String>,
    pub(in super::super) admin: bool,
    /// Its agent's offered tools, and withheld items, when the agent runs.
    pub(in super::super) tools: Option<usize>,
    pub(in super::super) withheld: Option<usize>,
}

/// An upstream server of a client's agent.
pub(in super::super) struct UpstreamRow {
    pub(in super::super) client: String,
    pub(in super::super) server: String,
    pub(in super::super) health: UpstreamHealth,
    /// Its sandbox in one line, as `config check` gives it.
    pub(in super::super) sandbox: String,
}

pub(in super::super) struct Overview {
    pub(in super::super) clients: Vec<ClientRow>,
    pub(in super::super) upstreams: Vec<UpstreamRow>,
    /// The items withheld from any running agent, each counted once.
    pub(in super::super) withheld: usize,
    /// The last hour's calls, from the audit; `None` without one.
    pub(in super::super) calls: Option<CallCounts>,
}

/// The calls of the last hour in the audit.
#[derive(Default)]
pub(in super::super) struct CallCounts {
    pub(in super::super) calls: usize,
    /// Those whose outcome is `error`.
    pub(in super::super) errors: usize,
    /// Whether there may be more than were read.
    pub(in super::super) more: bool,
    /// Why the audit could not be read.
    pub(in super::super) error: Option<String>,
}

pub(in super::super) fn overview(viewer: &Viewer<'_>, overview: &Overview) -> Markup {
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
