//! Who makes a call: what every layer of the call path knows of the caller.

use serde_json::{Map, Value};

use crate::trace::TraceParent;

/// Who makes an agent's calls: the client (a gateway's client by its configured name or
/// its OAuth identity; the CLI is the client `cli`), the claims its identity proved, the
/// trace its request is part of, and the MCP session the request came in.
///
/// An agent acts for one caller at a time ([`Agent::acting_for`](crate::Agent::acting_for));
/// a gateway makes one per request, since a client's claims and trace change between
/// requests.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Caller {
    /// The client's name.
    pub client: String,
    /// The claims of the client's identity (an OAuth access token's), empty for a
    /// client known by its static token.
    pub claims: Map<String, Value>,
    /// The trace context the client's request came with.
    pub trace: Option<TraceParent>,
    /// The MCP session the request came in (a gateway's `Mcp-Session-Id` over HTTP),
    /// which spans name; none over stdio, for a stateless request and for the CLI.
    pub session: Option<String>,
}

impl Caller {
    /// The CLI's own calls.
    pub const CLI: &str = "cli";

    /// The client named `client`, with no claims and no trace.
    pub fn new(client: impl Into<String>) -> Self {
        Self { client: client.into(), claims: Map::new(), trace: None, session: None }
    }

    /// The same caller with its identity's `claims`.
    #[must_use]
    pub fn with_claims(self, claims: Map<String, Value>) -> Self {
        Self { claims, ..self }
    }

    /// The same caller in the trace `trace`.
    #[must_use]
    pub fn with_trace(self, trace: Option<TraceParent>) -> Self {
        Self { trace, ..self }
    }

    /// The same caller in the MCP session `session`.
    #[must_use]
    pub fn in_session(self, session: Option<String>) -> Self {
        Self { session, ..self }
    }
}

impl Default for Caller {
    fn default() -> Self {
        Self::new(Self::CLI)
    }
}
