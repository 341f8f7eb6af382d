//! The Agent Skills fields, and the invocation policy, platforms and primary env.

use super::*;

#[test]
fn agent_skills_fields() {
    check(
        "agent-skills",
        MarkdownSkill {
            license: some("Apache-2.0"),
            compatibility: some("Needs Python 3.11 and network access"),
            allowed_tools: strings(&["Bash(python:*)", "Read", "Write"]),
            metadata: BTreeMap::from([
                ("author".to_owned(), "example-org".to_owned()),
                ("revision".to_owned(), "3".to_owned()),
                ("version".to_owned(), "1.0".to_owned()),
            ]),
            ..expected("agent-skills", "Fill in PDF forms and pull tables out of them.", BODY)
        },
    );
}

#[test]
fn invocation_policy_platforms_and_primary_env() {
    check(
        "invocation",
        MarkdownSkill {
            homepage: some("https://example.com/invocation"),
            user_invocable: false,
            disable_model_invocation: true,
            always: true,
            os: strings(&["darwin", "linux", "win32"]),
            primary_env: some("INVOKE_KEY"),
            ..expected("invocation", "Invocation policy, platforms and the primary credential.", BODY)
        },
    );
}
