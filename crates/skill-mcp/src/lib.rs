//! MCP skills: the tools of an MCP server, offered to an OmniAgent agent.
//!
//! This crate will hold the MCP client (on `rmcp`) that runs a server as a subprocess,
//! or reaches it over streamable HTTP, with a per-agent environment, start-up and
//! per-call timeouts, crash detection and restart, and clean shutdown of the whole
//! process group. It is filled by the issue that brings MCP skills; until then it is
//! empty on purpose.
