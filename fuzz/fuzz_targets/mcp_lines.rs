//! The MCP stdio transport's lines: read as the transport reads them (a tool call's
//! result and a tool call's request directly, the rest by rmcp's codec), each line is
//! accepted, ignored or refused as rmcp's codec alone would, and accepted as the same
//! message.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| skill_mcp::check_against_rmcp(bytes));
