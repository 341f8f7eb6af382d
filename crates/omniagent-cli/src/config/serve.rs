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
    /// The gateway's public `/mcp` URL (as clients reach it, past any proxy): the
    /// protected resource of `oauth`, and its default audience.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// OAuth access tokens admitted beside `clients`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<ServeOAuth>,
    /// Lists `search_tools` and `call_tool` in place of the agent's tools.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tool_search: bool,
    /// Serves the console at `/console` on the HTTP gateway, to admin clients only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub console: bool,
}

impl ServeConfig {
    pub(super) fn is_empty(&self) -> bool {
        self.http.is_none()
            && self.allowed_hosts.is_empty()
            && self.clients.is_empty()
            && self.url.is_none()
            && self.oauth.is_none()
            && !self.tool_search
            && !self.console
    }
}

/// `serve.oauth`: the gateway as an OAuth 2.1 resource server.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ServeOAuth {
    /// The authorization server, exactly as its tokens name it in `iss`.
    pub issuer: String,
    /// What tokens must name in `aud`; default `serve.url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// The scopes every token must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The issuer's JWKS; default the `jwks_uri` of its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// The claim that names the identity; default `sub`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_claim: Option<String>,
    /// The identities admitted, by claim value, each with the `agents:` entry it runs as
    /// (null: the top level); `"*"` for every other identity, without which they are
    /// refused (403).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub agents: BTreeMap<String, Option<String>>,
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
    /// Whether it may use the console (`serve.console`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub admin: bool,
}
