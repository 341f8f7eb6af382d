//! The images the server shows: its own, which its tools without one show through a
//! gateway, and the one that some items (the `add` tool, a prompt, a resource and the
//! template of the fixtures) carry themselves.

use rmcp::model::{Icon, IconTheme};

/// A 1×1 PNG.
const SERVER_PNG: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/// A white plus sign, for dark backgrounds.
const ITEM_SVG: &str = "data:image/svg+xml;base64,PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciIHZpZXdCb3g9IjAgMCAxNiAxNiI+PHBhdGggZD0iTTcgMmgydjVoNXYySDl2NUg3VjlIMlY3aDV6IiBmaWxsPSIjZmZmIi8+PC9zdmc+";

/// The server's icons (its `serverInfo.icons`).
pub(crate) fn server() -> Vec<Icon> {
    vec![Icon::new(SERVER_PNG).with_mime_type("image/png").with_sizes(vec!["1x1".to_owned()])]
}

/// The icons of the items that have their own.
pub(crate) fn item() -> Vec<Icon> {
    vec![
        Icon::new(ITEM_SVG)
            .with_mime_type("image/svg+xml")
            .with_sizes(vec!["any".to_owned()])
            .with_theme(IconTheme::Dark),
    ]
}
