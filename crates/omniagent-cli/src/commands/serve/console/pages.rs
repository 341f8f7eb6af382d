//! The console's pages, as maud templates compiled into the binary: every value put in
//! is escaped (maud escapes whatever is not marked `PreEscaped`, and nothing here is), so
//! a tool's description that holds markup is shown as text.

mod calls;
mod overview;
mod policy;
mod tools;

use std::time::SystemTime;

use maud::{DOCTYPE, Markup, html};

pub(super) use self::calls::{CallsPage, calls};
pub(super) use self::overview::{CallCounts, ClientRow, Overview, UpstreamRow, overview};
pub(super) use self::policy::policy;
pub(super) use self::tools::{ItemRow, ReviewPage, ToolsPage, review, tools};

/// The console's style sheet.
pub(super) const STYLE: &str = include_str!("console.css");
/// The console's one script: live refresh of the pages that ask for it. Every page works
/// without it.
pub(super) const SCRIPT: &str = include_str!("console.js");
/// The console's icon, which browsers ask for on every page.
pub(super) const ICON: &str = include_str!("favicon.svg");

/// Who is looking, and the CSRF token their forms carry (none for a bearer token's
/// reader, who gets no form).
pub(super) struct Viewer<'a> {
    pub(super) client: &'a str,
    pub(super) csrf: Option<&'a str>,
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
    fn times_read_as_ago() {
        let now = SystemTime::now();
        assert_eq!(ago(now, now - std::time::Duration::from_secs(5)), "5 s ago");
        assert_eq!(ago(now, now - std::time::Duration::from_secs(7200)), "2 h ago");
    }
}
