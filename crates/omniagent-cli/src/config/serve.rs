//! The `serve:` section, for `omniagent mcp serve`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skill_core::SecretRef;

/// The `serve:` section: how `omniagent mcp serve --http` listens and whom it serves.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// The address `--http` listens on when given no value (default `127.0.0.1:8765`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<String>,
    /// The names requests may give in `Host` (and browsers in `Origin`); default the
    /// loopback names.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_hosts: Vec<String>,
    /// Who may call over HTTP, by client name; each gets an agent of its own.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clients: BTreeMap<String, ServeClient>,
}

impl ServeConfig {
    pub(super) fn is_empty(&self) -> bool {
        self.http.is_none() && self.allowed_hosts.is_empty() && self.clients.is_empty()
    }
}

/// One client of `serve.clients`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeClient {
    /// The bearer token it sends, as a secret reference.
    pub token: SecretRef,
    /// The agent of `agents:` it runs as; default the top level.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}
