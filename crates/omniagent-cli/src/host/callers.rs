//! Whom an omniagent started as an MCP server serves: the agents above it, passed down
//! in [`CALLERS_VAR`], so that a config which lists omniagent as its own server stops at
//! the first repeat instead of starting copies of itself without end.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest as _, Sha256};
use skill_mcp::CALLERS_VAR;

use crate::HostError;
use crate::config::AgentConfig;
use base16ct::lower::encode_string as hex;

/// The environment the MCP servers of the agent `config` start from: this process's,
/// with [`CALLERS_VAR`] naming this agent after the agents this process serves. An agent
/// already among those is refused: it would start itself again, and that copy another.
pub(super) fn servers_host_env(config: &AgentConfig) -> Result<HashMap<String, String>, HostError> {
    let mut env = skill_mcp::process_env();
    let mut callers = env.get(CALLERS_VAR).map(|value| parse(value)).unwrap_or_default();
    let me = identity(config);
    if callers.contains(&me) {
        return Err(HostError::OwnServer {
            agent: config.agent_name().to_owned(),
            file: config.file().map(Path::to_owned),
        });
    }
    callers.push(me);
    if !callers.iter().any(|caller| caller == process_mark()) {
        callers.push(process_mark().to_owned());
    }
    env.insert(CALLERS_VAR.to_owned(), serde_json::Value::from(callers).to_string());
    Ok(env)
}

/// This process among the callers of its agents' servers: a digest of its id and start
/// time. A gateway refuses the requests that carry it, which come back to it through its
/// own servers and would wait on themselves.
pub fn process_mark() -> &'static str {
    static MARK: OnceLock<String> = OnceLock::new();
    MARK.get_or_init(|| {
        let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_nanos());
        hex(&Sha256::digest(format!("process {} {started}", std::process::id()))[..16])
    })
}

/// The agents a caller named: a JSON list of [`identity`]s. Anything else names none.
fn parse(value: &str) -> Vec<String> {
    serde_json::from_str(value).unwrap_or_else(|_| {
        tracing::warn!("{CALLERS_VAR} is not a JSON list of strings; ignored");
        Vec::new()
    })
}

/// The agent `config` as [`CALLERS_VAR`] names it: a digest of its name and its config
/// file's path (links resolved, so that the same file reached by two paths is one agent),
/// which tells the servers, whoever wrote them, neither.
fn identity(config: &AgentConfig) -> String {
    let file = config.file().map(|file| std::fs::canonicalize(file).unwrap_or_else(|_| file.to_owned()));
    let file = file.as_deref().map_or_else(|| "built-in defaults".into(), Path::to_string_lossy);
    let digest = Sha256::new().chain_update(config.agent_name()).chain_update([0]).chain_update(file.as_bytes());
    hex(&digest.finalize()[..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_is_named_by_a_digest_that_tells_neither_its_name_nor_its_file() {
        let config = crate::Config::parse(Path::new("/configs/team.yaml"), "agents: {alice: {}}\n").unwrap();
        let (default, alice) = (config.for_agent(None).unwrap(), config.for_agent(Some("alice")).unwrap());
        let named = identity(&default);
        assert_eq!(named.len(), 32);
        assert!(named.chars().all(|c| c.is_ascii_hexdigit()), "{named}");
        assert!(!named.contains("default") && !named.contains("team"), "{named}");
        assert_eq!(named, identity(&default), "the same agent, the same name");
        assert_ne!(named, identity(&alice));
    }

    #[test]
    fn the_servers_hear_of_this_agent_then_of_this_process() {
        let config = crate::Config::parse(Path::new("/configs/team.yaml"), "{}\n").unwrap().for_agent(None).unwrap();
        let env = servers_host_env(&config).unwrap();
        assert_eq!(parse(&env[CALLERS_VAR]), [identity(&config), process_mark().to_owned()]);
        assert_eq!(process_mark().len(), 32);
        assert_eq!(process_mark(), process_mark(), "one mark for the life of the process");
    }

    #[test]
    fn a_list_that_is_not_one_names_no_caller() {
        assert_eq!(parse(r#"["0123abcd"]"#), ["0123abcd"]);
        for wrong in ["", "0123abcd", "[1]", "{}"] {
            assert!(parse(wrong).is_empty(), "{wrong}");
        }
    }
}
