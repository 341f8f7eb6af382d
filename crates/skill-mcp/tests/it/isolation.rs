//! Isolation: two agents share one server configuration but each server process sees only
//! its own agent's secret and the inherited allowlist of host variables; an agent without
//! the secret skips the server without starting anything.

use std::collections::HashMap;
use std::path::Path;

use serde_json::json;
use skill_core::{Agent, SecretString, Secrets, SkillFailure, ToolOutput};
use skill_mcp::{McpSkill, ServerConfig};

use crate::{SAMPLE, logged_pids, logged_sample_config, only_text};

/// A host variable outside the allowlist: a server must never see it.
const HOST_ONLY: &str = "OMNIAGENT_HOST_ONLY";

/// The one configuration all agents use, logging the pid of every server started.
fn shared_config(pid_log: &Path) -> ServerConfig {
    logged_sample_config(
        pid_log,
        &[],
        json!({"required_env": ["TOKEN"], "secrets": {"TOKEN": "env:OMNIAGENT_TEST_TOKEN"}}),
    )
}

/// What the skill takes for this process's environment: the host-only variable, and the
/// allowlisted PATH and HOME.
fn host_env() -> HashMap<String, String> {
    HashMap::from([
        (HOST_ONLY.to_owned(), "visible?".to_owned()),
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".to_owned())),
        ("HOME".to_owned(), "/home/omniagent-test".to_owned()),
    ])
}

fn token(value: &str) -> Secrets {
    [("TOKEN".to_owned(), SecretString::from(value))].into_iter().collect()
}

fn agent(config: &ServerConfig, secrets: Option<Secrets>) -> Agent {
    let skill = McpSkill::with_host_env(SAMPLE, config.clone(), host_env());
    let builder = Agent::builder().with_compiled_skill(skill);
    match secrets {
        Some(secrets) => builder.skill_secrets(SAMPLE, secrets).build(),
        None => builder.build(),
    }
}

async fn env_of(agent: &Agent, name: &str) -> ToolOutput {
    agent.call_tool("sample__env", json!({"name": name})).await.expect("env answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_server_sees_only_its_agents_secret_and_the_allowlist() {
    let scratch = tempfile::tempdir().expect("a temporary folder");
    let pid_log = scratch.path().join("pids");
    let config = shared_config(&pid_log);
    let alpha = agent(&config, Some(token("alpha-secret")));
    let beta = agent(&config, Some(token("beta-secret")));
    let (alpha_report, beta_report) = tokio::join!(alpha.init_compiled_skills(), beta.init_compiled_skills());
    crate::assert_loaded(&alpha_report, SAMPLE);
    crate::assert_loaded(&beta_report, SAMPLE);
    assert_eq!(logged_pids(&pid_log).len(), 2);

    assert_eq!(env_of(&alpha, "TOKEN").await, ToolOutput::text("alpha-secret"));
    assert_eq!(env_of(&beta, "TOKEN").await, ToolOutput::text("beta-secret"));
    for agent in [&alpha, &beta] {
        let host_only = env_of(agent, HOST_ONLY).await;
        assert!(host_only.is_error, "{HOST_ONLY} leaked into the server: {host_only:?}");
        assert_eq!(only_text(&host_only), format!("{HOST_ONLY} is not set"));
        assert_eq!(env_of(agent, "HOME").await, ToolOutput::text("/home/omniagent-test"));
    }

    // The third agent has no TOKEN: the server is skipped before anything starts.
    let without = agent(&config, None);
    let report = without.init_compiled_skills().await;
    let expected = [SkillFailure { skill: SAMPLE.to_owned(), reason: "missing secret TOKEN".to_owned() }];
    assert!(report.loaded.is_empty(), "{:?}", report.loaded);
    assert_eq!(report.skipped, expected);
    assert_eq!(without.skipped(), expected);
    assert!(without.tools().is_empty());
    assert_eq!(logged_pids(&pid_log).len(), 2, "the agent without the secret started a server");

    alpha.close().await;
    beta.close().await;
}
