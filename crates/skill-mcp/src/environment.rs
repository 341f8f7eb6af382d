//! The environment a server gets, built fresh for each agent, and `${VAR}` expansion.

use std::collections::{BTreeMap, HashMap};

use skill_core::{ExposeSecret, Secrets};

/// The host variables a subprocess inherits; everything else of the host stays out.
pub const INHERITED_VARS: [&str; 11] = [
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
];

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

/// Expands `${VAR}`, `${env:VAR}` and `${VAR:-default}` in `text`, looking names up in
/// `lookup`. An unset name without a default is an error naming it; no error shows the
/// rest of `text`, which may hold a credential.
pub(crate) fn expand(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut expanded = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        expanded.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            return Err("a `${` is not closed by `}`".to_owned());
        };
        let inner = &rest[start + 2..start + end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let name = name.strip_prefix("env:").unwrap_or(name);
        match (lookup(name), default) {
            (Some(value), _) => expanded.push_str(&value),
            (None, Some(default)) => expanded.push_str(default),
            (None, None) => return Err(format!("`${{{inner}}}` names a variable that is not set")),
        }
        rest = &rest[start + end + 1..];
    }
    expanded.push_str(rest);
    Ok(expanded)
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

    #[test]
    fn expansion_reads_both_spellings_and_defaults() {
        let lookup = |name: &str| (name == "TOKEN").then(|| "t0k".to_owned());
        let check = |text: &str, expect: Result<&str, &str>| {
            assert_eq!(expand(text, lookup), expect.map(str::to_owned).map_err(str::to_owned), "{text}");
        };
        check("Bearer ${TOKEN}", Ok("Bearer t0k"));
        check("Bearer ${env:TOKEN}", Ok("Bearer t0k"));
        check("${MISSING:-fallback}/x", Ok("fallback/x"));
        check("plain $TOKEN", Ok("plain $TOKEN"));
        check("${MISSING}", Err("`${MISSING}` names a variable that is not set"));
        check("Bearer s3cret ${TOKEN", Err("a `${` is not closed by `}`"));
    }
}
