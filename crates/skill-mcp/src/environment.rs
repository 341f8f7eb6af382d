//! The environment a server gets, built fresh for each agent, and `${VAR}` expansion.

use std::collections::{BTreeMap, HashMap};

use skill_core::{ExposeSecret, Secrets};

/// The host variables a subprocess inherits; everything else of the host stays out.
pub const INHERITED_VARS: [&str; 12] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "LANG",
    "TMPDIR",
    "npm_config_cache",
    "NPM_CONFIG_CACHE",
    "UV_CACHE_DIR",
    CALLERS_VAR,
];

/// The variable that tells an omniagent started as an MCP server which omniagent agents
/// it serves, the outermost first, so that a config which lists omniagent as its own
/// server stops at once instead of starting copies of itself without end. Its host sets
/// it in the environment it gives its servers (see [`McpSkill::with_host_env`]).
///
/// [`McpSkill::with_host_env`]: crate::McpSkill::with_host_env
pub const CALLERS_VAR: &str = "OMNIAGENT_CALLERS";

/// The HTTP header that carries [`CALLERS_VAR`]'s value to a `url` server, so that a
/// gateway reached through its own servers can tell (see
/// [`HttpOptions::own_caller`](crate::server::HttpOptions::own_caller)).
pub const CALLERS_HEADER: &str = "omniagent-callers";

/// This process's environment as [`McpSkill::with_host_env`] takes it: the variables
/// whose name and value are text (a server would not get the others anyway).
///
/// [`McpSkill::with_host_env`]: crate::McpSkill::with_host_env
pub fn process_env() -> HashMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
        .collect()
}

/// The variables of a server's process: the inherited allowlist from `host`, then the
/// static `env`, then the agent's secrets (secrets win).
pub(crate) fn server_env(
    host: &HashMap<String, String>,
    env: &BTreeMap<String, String>,
    secrets: &Secrets,
) -> BTreeMap<String, String> {
    let mut vars: BTreeMap<String, String> =
        INHERITED_VARS.iter().filter_map(|name| Some(((*name).to_owned(), host.get(*name)?.clone()))).collect();
    vars.extend(env.iter().map(|(name, value)| (name.clone(), value.clone())));
    vars.extend(secrets.iter().map(|(name, value)| (name.to_owned(), value.expose_secret().to_owned())));
    vars
}

#[cfg(test)]
mod tests {
    use super::*;
    use skill_core::SecretString;

    #[test]
    fn the_environment_is_the_allowlist_then_env_then_secrets() {
        let host: HashMap<String, String> =
            [("PATH", "/bin"), ("HOME", "/home/a"), ("AWS_SECRET_ACCESS_KEY", "host-only")]
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect();
        let env = BTreeMap::from([("MODE".to_owned(), "test".to_owned()), ("TOKEN".to_owned(), "static".to_owned())]);
        let secrets: Secrets = [("TOKEN".to_owned(), SecretString::from("secret"))].into_iter().collect();
        let vars = server_env(&host, &env, &secrets);
        let expect: BTreeMap<String, String> =
            [("HOME", "/home/a"), ("MODE", "test"), ("PATH", "/bin"), ("TOKEN", "secret")]
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect();
        assert_eq!(vars, expect);
    }
}
