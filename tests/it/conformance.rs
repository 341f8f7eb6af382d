//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`) in server
//! mode against `omniagent mcp serve --http`: every scored scenario of both protocol
//! eras through the gateway fronting the suite's fixtures (`mcp-sample-server
//! --conformance`, served under their own names), with the scenarios that cannot pass yet
//! listed, each with why, in `tests/fixtures/gateway/conformance-*.yaml`; and the skills
//! extension's scenarios against the gateway's own markdown skills.

use std::path::Path;
use std::process::Command;

use test_peers::sample_server_or_panic as sample_server;

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
    if output.status.success() { Ok(()) } else { Err(text) }
}

#[test]
fn every_required_scenario_of_both_eras_passes_or_is_listed_with_its_reason() {
    let home = Home::new().with_config(&format!(
        "storage: {{backend: memory}}\ncompiled: {{memory: {{enabled: false}}}}\nskills: {{packs: []}}\n\
         mcp:\n  servers:\n    fixtures:\n      command: {}\n      args: [--conformance]\n      prefix: false\n",
        sample_server().display()
    ));
    let gateway = HttpGateway::start(&home, &["--eager"], &[]);
    for revision in ["2025-11-25", "2026-07-28"] {
        let baseline = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../tests/fixtures/gateway/conformance-{revision}.yaml"));
        let args = ["--requirements", revision, "--expected-failures", baseline.to_str().unwrap()];
        if let Err(output) = conformance(&gateway.url(), &args) {
            panic!("--requirements {revision}:\n{output}");
        }
    }
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
