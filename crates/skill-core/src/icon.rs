//! [`Icon`]: an image a host may show beside a tool, prompt or resource.

use serde::{Deserialize, Serialize};

/// An image a host may show beside an item, in MCP's `Icon` wire form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// Where the image is: an `https:` URL or a `data:` URI.
    pub src: String,
    /// Its media type, when `src` does not make it plain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The sizes it comes in, each `WxH` (`48x48`) or `any` (scalable).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<String>,
    /// The theme it is drawn for; none suits any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// The image at `src`, for any size and theme.
    pub fn new(src: impl Into<String>) -> Self {
        Self { src: src.into(), mime_type: None, sizes: Vec::new(), theme: None }
    }
}

/// The background an icon is drawn for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// A light background.
    Light,
    /// A dark background.
    Dark,
}
