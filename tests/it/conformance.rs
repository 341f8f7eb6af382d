//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) in server
//! mode against `omniagent mcp serve --http`.

use std::process::Command;

use crate::Home;
use crate::gateway::HttpGateway;

/// Runs the suite's `server` mode against `url` with `args`; the output when it fails.
fn conformance(url: &str, args: &[&str]) -> Result<(), String> {
    let output = Command::new(test_peers::mcp_conformance_or_panic())
        .args(["server", "--url", url])
        .args(args)
        .output()
        .expect("the conformance suite runs");
    let text = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    if output.status.success() && !text.contains("FAILURE") { Ok(()) } else { Err(text) }
}

/// The skills extension (SEP-2640): `skills/list`, `skills/get` and the `skill://`
/// resources of the markdown skills, in both eras. Extension scenarios are not on the
/// spec timeline, so they are run with `--force`.
#[test]
fn the_skills_extension_passes_its_scenarios() {
    let home = Home::new().with_config("storage: {backend: memory}\n");
    home.write(
        "skills/hello/SKILL.md",
        "---\nname: hello\ndescription: Greet people warmly\nlicense: MIT\n---\nSay hello.\n",
    );
    home.write("skills/hello/scripts/greet.sh", "echo hello\n");
    let gateway = HttpGateway::start(&home, &[], &[]);
    for scenario in ["sep-2640-skills-enumeration", "sep-2640-skills-manifest"] {
        for version in ["2025-11-25", "2026-07-28"] {
            let args = ["--scenario", scenario, "--spec-version", version, "--force"];
            if let Err(output) = conformance(&gateway.url(), &args) {
                panic!("{scenario} at {version}:\n{output}");
            }
        }
    }
}
