//! The policy page: the rules in order with their hits, then the rate limits with each
//! client's bucket as it is now.

use std::time::Duration;

use maud::{Markup, html};
use omniagent_host::PolicyReport;

use super::{Viewer, layout};

/// The policy page, from [`omniagent_host::PolicyState::report`].
pub(in super::super) fn policy(viewer: &Viewer<'_>, report: &PolicyReport) -> Markup {
    layout(
        "Policy",
        Some(viewer),
        true,
        html! {
            h1 { "Policy" }
            p.muted { "Counted by this gateway since it started, over every client's agent." }
            h2 { "Rules" }
            @if report.rules.is_empty() {
                p.muted { "No " code { "policy.rules" } ": every call is allowed." }
            } @else {
                p.muted { "In order: the first rule whose condition holds decides a call. "
                    "A rule's hits are the calls it decided, allowed or refused." }
                table.rules {
                    thead { tr { th { "rule" } th { "effect" } th { "condition" } th.number { "hits" } } }
                    tbody {
                        @for rule in &report.rules {
                            tr {
                                td { code { (rule.name) } }
                                td { (rule.effect) }
                                td { code { (rule.condition) } }
                                td.number { (rule.hits) }
                            }
                        }
                    }
                }
            }
            h2 { "Rate limits" }
            @if report.limits.is_empty() {
                p.muted { "No " code { "policy.rate_limits" } "." }
            } @else {
                @match &report.shared {
                    Some(url) => { p.muted { "The buckets are shared by every replica in the Redis server "
                        code { (url) } ", and read from it now; the refusals are this gateway's." } }
                    None => { p.muted { "The buckets are this gateway's: each client's holds "
                        "the burst and gets a token back every minute ÷ calls a minute." } }
                }
                @if let Some(error) = &report.error { p.error { "The shared buckets cannot be read: " (error) } }
                @for limit in &report.limits {
                    section.limit {
                        h3 { code { (limit.client) } " → " code { (limit.tool) } ": "
                            (limit.per_minute) @if limit.per_minute == 1 { " call" } @else { " calls" }
                            " a minute, bursts of " (limit.burst) }
                        @if limit.buckets.is_empty() {
                            p.muted { "No client's bucket has been drawn from: each is full." }
                        } @else {
                            table.buckets {
                                thead { tr { th { "client" } th.number { "available" } th.number { "next call in" }
                                    th.number { "full in" } th.number { "refused" } } }
                                tbody {
                                    @for bucket in &limit.buckets {
                                        tr class=[(bucket.available == 0).then_some("failed")] {
                                            td { code { (bucket.client) } }
                                            td.number { (bucket.available) " of " (limit.burst) }
                                            td.number { (seconds(bucket.next_in)) }
                                            td.number { (seconds(bucket.full_in)) }
                                            td.number { (bucket.refused) }
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

/// A wait, for people: `now`, or seconds to a tenth.
fn seconds(wait: Duration) -> String {
    if wait.is_zero() { "now".to_owned() } else { format!("{:.1} s", wait.as_secs_f64().max(0.1)) }
}

#[cfg(test)]
mod tests {
    use omniagent_host::{BucketView, RateLimitView, RuleView};

    use super::*;

    #[test]
    fn the_page_shows_each_rules_hits_and_each_clients_bucket() {
        let report = PolicyReport {
            rules: vec![RuleView {
                name: "bob-<b>".to_owned(),
                effect: "allow",
                condition: r#"client.name == "bob""#.to_owned(),
                hits: 7,
            }],
            limits: vec![RateLimitView {
                client: "*".to_owned(),
                tool: "memory__*".to_owned(),
                per_minute: 60,
                burst: 3,
                buckets: vec![BucketView {
                    client: "bob".to_owned(),
                    available: 0,
                    next_in: Duration::from_millis(400),
                    full_in: Duration::from_secs(3),
                    refused: 2,
                }],
            }],
            ..PolicyReport::default()
        };
        let html = policy(&Viewer { client: "root", csrf: None }, &report).into_string();
        assert!(html.contains("<code>bob-&lt;b&gt;</code></td><td>allow</td>"), "{html}");
        assert!(html.contains(r#"<td class="number">7</td>"#), "{html}");
        let row = r#"<tr class="failed"><td><code>bob</code></td><td class="number">0 of 3</td><td class="number">0.4 s</td><td class="number">3.0 s</td><td class="number">2</td></tr>"#;
        assert!(html.contains(row), "{html}");
        assert_eq!(seconds(Duration::ZERO), "now");
    }
}
