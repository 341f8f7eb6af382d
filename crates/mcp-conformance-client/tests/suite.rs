//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) in client
//! mode, driving this crate's binary: every client scenario the suite lists for
//! 2025-11-25 and for 2026-07-28, one at a time (run together, the suite's timing checks
//! such as `sse-retry` trip over each other), each either passing or listed with its
//! reason in `tests/fixtures/expected-failures-<version>.yaml`. Each runs twice: with the
//! connection pinned to the scenario's version, and unpinned (`protocol_version: auto`,
//! a user's default), when the client finds the server's era itself.

use std::path::Path;
use std::process::Command;

/// The client scenarios the suite lists for `version`.
fn scenarios(suite: &Path, version: &str) -> Vec<String> {
    let output = Command::new(suite)
        .args(["list", "--client", "--spec-version", version])
        .output()
        .expect("the conformance suite runs");
    let listing = String::from_utf8_lossy(&output.stdout);
    let names: Vec<String> = listing
        .lines()
        .filter_map(|line| line.strip_prefix("  - "))
        .filter_map(|entry| entry.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(names.len() > 10, "the suite lists client scenarios for {version}:\n{listing}");
    names
}

#[test]
fn every_client_scenario_of_both_eras_passes_or_is_listed_with_its_reason() {
    let suite = test_peers::mcp_conformance_or_panic();
    let client = env!("CARGO_BIN_EXE_mcp-conformance-client");
    let mut failed = Vec::new();
    for version in ["2025-11-25", "2026-07-28"] {
        let baseline =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/expected-failures-{version}.yaml"));
        for scenario in scenarios(&suite, version) {
            for (connection, unpinned) in [("pinned", ""), ("unpinned", "1")] {
                let output = Command::new(&suite)
                    .args(["client", "--command", client, "--scenario", &scenario, "--spec-version", version])
                    .args(["--expected-failures", baseline.to_str().unwrap()])
                    .env("MCP_CONFORMANCE_CLIENT_UNPINNED", unpinned)
                    .output()
                    .expect("the conformance suite runs");
                if !output.status.success() {
                    let stdout = String::from_utf8_lossy(&output.stdout);
                    let text = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
                    failed.push(format!("{scenario} at {version}, {connection}:\n{text}"));
                }
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
