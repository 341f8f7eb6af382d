//! `serve.oauth`: checked against the rest of the config and made into the gateway's
//! [`OAuthOptions`]; and which `agents:` entry each OAuth identity runs as.

use std::collections::BTreeMap;

use omniagent_host::{Config, ServeConfig};
use skill_mcp::server::{OAuthOptions, client_name};
use url::Url;

use crate::UsageError;

/// The key of `serve.oauth.agents` that stands for every identity not named there.
const EVERY_OTHER: &str = "*";

/// The claim that names an identity when `agent_claim` does not say.
const DEFAULT_CLAIM: &str = "sub";

/// Which `agents:` entry (`None`: the top level) each OAuth identity runs as, by its
/// client name.
#[derive(Debug, Clone, Default)]
pub(crate) struct OAuthAgents {
    named: BTreeMap<String, Option<String>>,
    others: Option<Option<String>>,
}

impl OAuthAgents {
    pub(super) fn of(serve: &ServeConfig) -> Self {
        let Some(oauth) = &serve.oauth else { return Self::default() };
        let named = oauth
            .agents
            .iter()
            .filter(|(identity, _)| *identity != EVERY_OTHER)
            .map(|(identity, agent)| (client_name(identity), agent.clone()))
            .collect();
        Self { named, others: oauth.agents.get(EVERY_OTHER).cloned() }
    }

    /// The agent the client `client` runs as, when it is an OAuth identity admitted here.
    pub(super) fn agent(&self, client: &str) -> Option<Option<&str>> {
        match self.named.get(client) {
            Some(agent) => Some(agent.as_deref()),
            None if client.starts_with(&client_name("")) => self.others.as_ref().map(Option::as_deref),
            None => None,
        }
    }

    /// The client names of the identities named in the config.
    pub(super) fn client_names(&self) -> impl Iterator<Item = &str> {
        self.named.keys().map(String::as_str)
    }
}

/// The resource server's options from `serve.oauth`, when there is one; an error names
/// the key at fault.
pub(super) fn options(serve: &ServeConfig, config: &Config) -> Result<Option<OAuthOptions>, UsageError> {
    let Some(oauth) = &serve.oauth else { return Ok(None) };
    let invalid = |key: &str, message: String| UsageError::new(format!("serve.oauth.{key}: {message}"));
    let url = |key: &str, value: &str| {
        let parsed = Url::parse(value).map_err(|error| invalid(key, format!("`{value}` is not a URL: {error}")))?;
        if !matches!(parsed.scheme(), "https" | "http") {
            return Err(invalid(key, format!("`{value}` is not an http(s) URL")));
        }
        Ok(parsed)
    };
    url("issuer", &oauth.issuer)?;
    let Some(resource) = &serve.url else {
        return Err(UsageError::new(
            "serve.oauth needs serve.url, the gateway's public /mcp URL (the resource its tokens are for)",
        ));
    };
    let resource = Url::parse(resource)
        .map_err(|error| UsageError::new(format!("serve.url: `{resource}` is not a URL: {error}")))?;
    let jwks_uri = oauth.jwks_uri.as_deref().map(|value| url("jwks_uri", value)).transpose()?;
    for (identity, agent) in &oauth.agents {
        config
            .for_agent(agent.as_deref())
            .map_err(|error| invalid(&format!("agents.{identity}"), error.to_string()))?;
    }
    Ok(Some(OAuthOptions {
        issuer: oauth.issuer.clone(),
        audience: oauth.audience.clone().unwrap_or_else(|| resource.as_str().to_owned()),
        resource,
        scopes: oauth.scopes.clone(),
        jwks_uri,
        claim: oauth.agent_claim.clone().unwrap_or_else(|| DEFAULT_CLAIM.to_owned()),
        identities: oauth.agents.keys().filter(|identity| *identity != EVERY_OTHER).cloned().collect(),
        admit_others: oauth.agents.contains_key(EVERY_OTHER),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve(yaml: &str) -> ServeConfig {
        serde_yaml_ng::from_str(yaml).unwrap()
    }

    #[test]
    fn identities_run_as_their_mapped_agent_and_others_only_with_a_star() {
        let mapped = OAuthAgents::of(&serve("oauth: {issuer: https://a.example, agents: {alice: research, bob: ~}}"));
        assert_eq!(mapped.agent("oauth:alice"), Some(Some("research")));
        assert_eq!(mapped.agent("oauth:bob"), Some(None));
        assert_eq!(mapped.agent("oauth:carol"), None);
        assert_eq!(mapped.agent("alice"), None, "a static client's name is not an identity");
        let open = OAuthAgents::of(&serve("oauth: {issuer: https://a.example, agents: {'*': ops}}"));
        assert_eq!(open.agent("oauth:carol"), Some(Some("ops")));
        assert_eq!(open.client_names().count(), 0);
    }
}
