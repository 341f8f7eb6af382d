//! The config file: where it is ([`ConfigLocation`]), what it says ([`Config`]), and
//! the effective config of one agent ([`AgentConfig`], from [`Config::for_agent`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_yaml_ng::{Mapping, Value};
use skill_core::{SecretRef, ToolFilter};
#[cfg(feature = "markdown")]
use skill_markdown::SkillsConfig;

use crate::HostError;

mod location;
mod observability;
mod policy;
mod sections;
#[cfg(feature = "mcp")]
mod serve;
mod storage;

pub use location::{ConfigLocation, Home, Origin};
#[cfg(feature = "telemetry")]
pub(crate) use observability::OtlpConfig;
pub(crate) use policy::{PolicyConfig, RateLimitConfig, RuleConfig, SecretsMode};
pub(crate) use sections::Sections;
#[cfg(feature = "mcp")]
pub use serve::{ServeClient, ServeConfig, ServeOAuth};
pub(crate) use storage::StorageBackend;

/// The name of the agent that runs with the top level of the config, without overrides.
const TOP_LEVEL_AGENT: &str = "default";

/// A validated config file: the top level, and the overrides of each agent under
/// `agents:`. [`Config::for_agent`] gives the config one agent runs with.
#[derive(Clone)]
pub struct Config {
    file: Option<PathBuf>,
    /// The file as YAML, for merging an agent's overrides over the top level. It holds
    /// literal secrets as written: never shown (`Debug` leaves it out).
    tree: Value,
    sections: Sections,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config").field("file", &self.file).field("sections", &self.sections).finish_non_exhaustive()
    }
}

impl Config {
    /// Validates `text`, the content of the config file `path` (for a host that has the
    /// text already; [`ConfigLocation::load`] reads the file).
    pub fn parse(path: &Path, text: &str) -> Result<Self, HostError> {
        let tree: Value = serde_yaml_ng::from_str(text).map_err(|error| yaml_error(path, &error))?;
        if tree.is_null() {
            return Ok(Self {
                file: Some(path.to_owned()),
                tree: Value::Mapping(Mapping::new()),
                sections: Sections::default(),
            });
        }
        let mut tree = tree;
        // Deserializing from the text (not from `tree`) keeps line numbers in errors.
        let sections: Sections = match serde_yaml_ng::from_str(text) {
            Ok(sections) => sections,
            // A pasted MCP client config (Claude Desktop's, Cursor's, `.mcp.json`) is taken as
            // is: its other top-level keys are that client's business.
            Err(error) if tree.get("mcpServers").is_some() => {
                let Value::Mapping(top) = &mut tree else { return Err(yaml_error(path, &error)) };
                top.retain(|key, _| {
                    let known = key.as_str().is_some_and(|key| TOP_LEVEL_KEYS.contains(&key));
                    if !known {
                        tracing::warn!(
                            "{}: ignoring `{}`, which omniagent does not use",
                            path.display(),
                            yaml_key(key)
                        );
                    }
                    known
                });
                serde_yaml_ng::from_value(tree.clone()).map_err(|error| yaml_error(path, &error))?
            }
            Err(error) => return Err(yaml_error(path, &error)),
        };
        warn_ignored_mcp_keys(path, &tree);
        let nested = sections.agents.keys().find(|name| {
            tree.get("agents")
                .and_then(|agents| agents.get(name.as_str()))
                .is_some_and(|agent| agent.get("agents").is_some())
        });
        if let Some(name) = nested {
            return Err(HostError::InvalidConfig {
                file: Some(path.to_owned()),
                at: None,
                message: format!("agents.{name}: an agent's overrides cannot hold `agents`"),
            });
        }
        let config = Self { file: Some(path.to_owned()), tree, sections };
        config.check_agents(path, text)?;
        check_policy(path, text, &config.sections.policy)?;
        for name in config.sections.agents.keys() {
            // `check_agents` made sure each merges.
            if let Ok(merged) = config.merged(name) {
                check_policy(path, text, &merged.policy)?;
            }
        }
        Ok(config)
    }

    /// Checks that each agent's overrides, merged over the top level, make a valid config.
    /// A mistake the overrides show on their own as well (read as sections of their own)
    /// is named by its line in `text`.
    fn check_agents(&self, path: &Path, text: &str) -> Result<(), HostError> {
        for name in self.sections.agents.keys() {
            let Err(error) = self.merged(name) else { continue };
            let message = error.to_string();
            let alone = serde_yaml_ng::from_str::<Sections<Sections>>(text).err().map(|error| yaml_error(path, &error));
            return Err(match alone {
                Some(HostError::InvalidConfig { at: Some(at), message: located, file })
                    if located.starts_with(&format!("agents.{name}")) && located.ends_with(&message) =>
                {
                    HostError::InvalidConfig { file, at: Some(at), message: located }
                }
                _ => HostError::InvalidConfig {
                    file: Some(path.to_owned()),
                    at: None,
                    message: format!("agents.{name}: {message}"),
                },
            });
        }
        Ok(())
    }

    /// The config the agent `agent` runs with: the top level, with `agents.<agent>`
    /// merged over it (mappings merge key by key; anything else is replaced). `None` is
    /// the top level alone, the agent `default`.
    pub fn for_agent(&self, agent: Option<&str>) -> Result<AgentConfig, HostError> {
        let Some(name) = agent else {
            return Ok(self.located(TOP_LEVEL_AGENT, Sections { agents: BTreeMap::new(), ..self.sections.clone() }));
        };
        if !self.sections.agents.contains_key(name) {
            return Err(HostError::UnknownAgent {
                name: name.to_owned(),
                file: self.file.clone(),
                known: self.sections.agents.keys().cloned().collect(),
            });
        }
        self.merged(name).map(|sections| self.located(name, sections)).map_err(|error| HostError::InvalidConfig {
            file: self.file.clone(),
            at: None,
            message: format!("agents.{name}: {error}"),
        })
    }

    /// The top level with the overrides of the agent `name` merged over it.
    fn merged(&self, name: &str) -> Result<Sections, serde_yaml_ng::Error> {
        let mut merged = self.tree.clone();
        let overrides = self.tree.get("agents").and_then(|agents| agents.get(name)).cloned();
        if let Value::Mapping(top) = &mut merged {
            top.remove("agents");
        }
        if let Some(overrides) = overrides {
            merge(&mut merged, overrides);
        }
        serde_yaml_ng::from_value(merged)
    }

    /// The name of every agent under `agents:`.
    pub fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.sections.agents.keys().map(String::as_str)
    }

    /// The top level's `serve:` section (an agent's overrides do not change how the
    /// gateway listens).
    #[cfg(feature = "mcp")]
    pub fn serve(&self) -> &ServeConfig {
        &self.sections.serve
    }

    /// `sections`, the config of the agent `name`, read from this file.
    fn located(&self, name: &str, sections: Sections) -> AgentConfig {
        AgentConfig {
            name: name.to_owned(),
            sections,
            #[cfg(any(feature = "openapi", feature = "aauth", feature = "markdown", feature = "mcp"))]
            file: self.file.clone(),
        }
    }
}

/// The config one agent runs with: the top level of the file with that agent's
/// overrides merged over it, and the agent's name. Serialized, it is the effective config
/// (secrets show as their references).
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// The agent's name: its name under `agents:`, or `default` for the top level.
    name: String,
    pub(crate) sections: Sections,
    /// The config file, in whose folder relative paths in it (an OpenAPI `spec`, the AAuth
    /// key) resolve; `None` for the built-in defaults.
    #[cfg(any(feature = "openapi", feature = "aauth", feature = "markdown", feature = "mcp"))]
    file: Option<PathBuf>,
}

impl Serialize for AgentConfig {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.sections.serialize(serializer)
    }
}

impl AgentConfig {
    /// The MCP server `name` of this agent's config, if there is one.
    #[cfg(feature = "mcp")]
    pub fn mcp_server(&self, name: &str) -> Option<&skill_mcp::ServerConfig> {
        self.sections.mcp_servers().find(|(server, _)| *server == name).map(|(_, config)| config)
    }

    /// Each `command` server's name and the sandbox it runs in (its `sandbox:` over
    /// `mcp.sandbox`, every setting filled in).
    #[cfg(feature = "mcp")]
    pub fn sandboxes(&self) -> Vec<(String, skill_mcp::EffectiveSandbox)> {
        self.sections.sandboxes()
    }

    /// This config with each `command` server's `sandbox:` written out as it runs, as
    /// `config show` shows it.
    #[cfg(feature = "mcp")]
    #[must_use]
    pub fn with_effective_sandboxes(mut self) -> Self {
        self.sections = self.sections.with_effective_sandboxes();
        self
    }

    /// The agent's name, under which its store and tokens are kept.
    pub fn agent_name(&self) -> &str {
        &self.name
    }

    /// The same config run as the agent `name`, whose store namespace that is: the
    /// gateway names each HTTP client's agent after the client, so that two clients of
    /// one `agents:` entry still keep their state apart.
    pub fn renamed(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The `skills:` section: markdown skills.
    #[cfg(feature = "markdown")]
    pub fn skills(&self) -> &SkillsConfig {
        &self.sections.skills
    }

    /// Every secret reference of this config, each with the key it is written under
    /// (`compiled.memory.secrets.TOKEN`): markdown skills, compiled skills, MCP servers,
    /// OpenAPI skills, the gateway's clients, then `storage.url`.
    pub fn secret_references(&self) -> Vec<(String, SecretRef)> {
        let sections = &self.sections;
        let mut found: Vec<(String, Cow<'_, BTreeMap<String, SecretRef>>)> = Vec::new();
        #[cfg(feature = "markdown")]
        found.extend(
            sections
                .skills
                .config
                .iter()
                .map(|(skill, settings)| (format!("skills.config.{skill}.secrets"), Cow::Borrowed(&settings.secrets))),
        );
        found.extend(
            sections
                .compiled
                .skills()
                .into_iter()
                .map(|skill| (format!("compiled.{}.secrets", skill.name), Cow::Borrowed(&skill.settings.secrets))),
        );
        #[cfg(feature = "mcp")]
        found.extend(
            sections
                .mcp_servers()
                .map(|(server, settings)| (format!("mcp.servers.{server}.secrets"), Cow::Borrowed(&settings.secrets))),
        );
        // An OpenAPI skill's secrets are named by its `auth` section: `PETSTORE_TOKEN` for
        // `token_env: PETSTORE_TOKEN`, `auth.token` for a reference written as `token:`.
        #[cfg(feature = "openapi")]
        found.extend(
            sections
                .openapi
                .iter()
                .map(|(skill, settings)| (format!("openapi.{skill}"), Cow::Owned(settings.secret_refs()))),
        );
        #[cfg(feature = "mcp")]
        found.extend(sections.serve.clients.iter().map(|(client, settings)| {
            (
                format!("serve.clients.{client}"),
                Cow::Owned(BTreeMap::from([("token".to_owned(), settings.token.clone())])),
            )
        }));
        if let Some(url) = &sections.storage.url {
            found.push(("storage".to_owned(), Cow::Owned(BTreeMap::from([("url".to_owned(), url.clone())]))));
        }
        found
            .into_iter()
            .flat_map(|(prefix, secrets)| {
                secrets.into_owned().into_iter().map(move |(name, reference)| (format!("{prefix}.{name}"), reference))
            })
            .collect()
    }

    /// `path` as written in the config: `~/` expanded, and a relative path taken from the
    /// config file's folder.
    #[cfg(any(feature = "openapi", feature = "aauth", feature = "markdown", feature = "mcp"))]
    pub(crate) fn resolve_path(&self, path: &str) -> PathBuf {
        let expanded = skill_core::expand_home(path);
        match self.file.as_deref().and_then(Path::parent) {
            Some(dir) if expanded.is_relative() => dir.join(expanded),
            _ => expanded,
        }
    }

    /// How the markdown skills go into a prompt: as `skills:` says, but with the tools
    /// that load a skill only when the `tools:` section leaves `skills__activate` in.
    #[cfg(feature = "markdown")]
    pub fn prompt_config(&self) -> skill_markdown::PromptConfig {
        let mut prompt = skill_markdown::PromptConfig::from(&self.sections.skills);
        let activate =
            skill_core::agent_tool_name(skill_markdown::SKILL_TOOLS_NAME, skill_markdown::ACTIVATE_TOOL_NAME);
        prompt.tools &= self.sections.tools.offers(&activate);
        prompt.scan = self.sections.trust.scan;
        prompt
    }

    /// The `tools:` section: which tools the agent offers.
    pub fn tool_filter(&self) -> &ToolFilter {
        &self.sections.tools
    }

    /// The config file; `None` for the built-in defaults.
    #[cfg(any(feature = "openapi", feature = "markdown", feature = "mcp"))]
    pub(crate) fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
}

/// The top-level keys a config file may have.
const TOP_LEVEL_KEYS: [&str; 13] = [
    "skills",
    "mcp",
    "mcpServers",
    "openapi",
    "aauth",
    "storage",
    "compiled",
    "tools",
    "trust",
    "serve",
    "policy",
    "observability",
    "agents",
];

/// Compiles the rules and rate limits of `policy` (of the file `path`, whose text is
/// `text`), so that a mistake in one is an error as the config loads, naming the line
/// its condition is written on.
fn check_policy(path: &Path, text: &str, policy: &PolicyConfig) -> Result<(), HostError> {
    let invalid = |at, message| HostError::InvalidConfig { file: Some(path.to_owned()), at, message };
    if let Err(error) = crate::policy::Rules::compile(&policy.rules) {
        let first_line = error.condition.lines().next().unwrap_or_default().trim();
        let at = text.lines().position(|line| !first_line.is_empty() && line.contains(first_line));
        return Err(invalid(at.map(|index| (index + 1, 1)), error.to_string()));
    }
    if let Err(error) = crate::policy::RateLimits::new(&policy.rate_limits) {
        return Err(invalid(None, format!("policy.{error}")));
    }
    Ok(())
}

fn yaml_key(key: &Value) -> String {
    serde_yaml_ng::to_string(key).map(|text| text.trim_end().to_owned()).unwrap_or_default()
}

/// Warns about keys of pasted `mcpServers` entries that omniagent does not use
/// (`disabled`, `autoApprove`, …): tolerated, never silently.
#[cfg(feature = "mcp")]
fn warn_ignored_mcp_keys(path: &Path, tree: &Value) {
    let maps = [tree.get("mcpServers"), tree.get("mcp").and_then(|mcp| mcp.get("mcpServers"))];
    for servers in maps.into_iter().flatten().filter_map(Value::as_mapping) {
        for (name, entry) in servers {
            for key in entry.as_mapping().into_iter().flat_map(|entry| entry.keys()) {
                let known = key.as_str().is_some_and(|key| skill_mcp::PASTED_KEYS.contains(&key));
                if !known {
                    tracing::warn!(
                        "{}: mcpServers.{}: ignoring `{}`, which omniagent does not use",
                        path.display(),
                        yaml_key(name),
                        yaml_key(key)
                    );
                }
            }
        }
    }
}

#[cfg(not(feature = "mcp"))]
fn warn_ignored_mcp_keys(_path: &Path, _tree: &Value) {}

fn merge(base: &mut Value, overrides: Value) {
    match (base, overrides) {
        (Value::Mapping(base), Value::Mapping(overrides)) => {
            for (key, value) in overrides {
                match base.get_mut(&key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (slot, value) => *slot = value,
    }
}

/// `FILE:LINE:COLUMN: path.to.key: problem`, from a YAML or serde error.
fn yaml_error(path: &Path, error: &serde_yaml_ng::Error) -> HostError {
    let message = error.to_string();
    let file = Some(path.to_owned());
    let Some(location) = error.location() else {
        return HostError::InvalidConfig { file, at: None, message };
    };
    let (line, column) = (location.line(), location.column());
    let message = message.replacen(&format!(" at line {line} column {column}"), "", 1);
    HostError::InvalidConfig { file, at: Some((line, column)), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.yaml"), text).map_err(|error| error.to_string())
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let check = |text: &str, expect: &str| assert_eq!(parse(text).unwrap_err(), expect, "{text}");
        check(
            "storage:\n  backend: sqlite\ncompiled:\n  memroy: {enabled: false}\n",
            "config.yaml:4:3: compiled: unknown field `memroy`, expected `memory`",
        );
        check(
            "compiled:\n  memory:\n    enabled: maybe\n",
            "config.yaml:3:14: compiled.memory.enabled: invalid type: string \"maybe\", expected a boolean",
        );
        check(
            "storage: {backend: postgres}\n",
            "config.yaml:1:20: storage.backend: unknown variant `postgres`, expected one of `sqlite`, `memory`, `redis`",
        );
        check(
            "skils: {}\n",
            "config.yaml:1:1: unknown field `skils`, expected one of `skills`, `mcp`, `mcpServers`, `openapi`, `aauth`, `storage`, `compiled`, `tools`, `trust`, `serve`, `policy`, `observability`, `agents`",
        );
        check("storage: [\n", "config.yaml:2:1: did not find expected node content, while parsing a flow node");
        check(
            "agents:\n  alice:\n    agents: {}\n",
            "config.yaml: agents.alice: an agent's overrides cannot hold `agents`",
        );
        check(
            "agents:\n  alice:\n    compiled: {memory: {enabeld: false}}\n",
            "config.yaml:3:25: agents.alice.compiled.memory: unknown field `enabeld`, expected `enabled` or `secrets`",
        );
    }

    /// An override names only what it changes of an OpenAPI skill or an MCP server; what
    /// neither it nor the top level gives is still missing, named where it is missing.
    #[cfg(all(feature = "openapi", feature = "mcp"))]
    #[test]
    fn overrides_need_not_repeat_what_the_top_level_gives() {
        let top =
            "openapi:\n  pets: {spec: pets.yaml, timeout: 10s}\nmcp:\n  servers:\n    sample: {command: sample}\n";
        let file = parse(&format!(
            "{top}agents:\n  alice:\n    openapi:\n      pets: {{timeout: 3s}}\n    mcp:\n      servers:\n        sample: {{args: [--alice]}}\n"
        ))
        .unwrap();
        let alice = file.for_agent(Some("alice")).unwrap();
        let pets = serde_json::to_value(&alice.sections.openapi["pets"]).unwrap();
        assert_eq!((&pets["spec"], &pets["timeout"]), (&serde_json::json!("pets.yaml"), &serde_json::json!("3s")));
        let sample = serde_json::to_value(&alice.sections.mcp.servers["sample"]).unwrap();
        assert_eq!(
            (&sample["command"], &sample["args"]),
            (&serde_json::json!("sample"), &serde_json::json!(["--alice"]))
        );

        let missing = parse(&format!("{top}agents:\n  bob:\n    openapi:\n      weather: {{timeout: 3s}}\n"));
        assert_eq!(missing.unwrap_err(), "config.yaml:9:16: agents.bob.openapi.weather: missing field `spec`");
    }

    #[test]
    fn debug_shows_no_literal_secret() {
        let file = parse("compiled: {memory: {secrets: {TOKEN: s3cr3t-literal}}}\nagents: {alice: {}}\n").unwrap();
        let shown = format!("{file:?} {:?}", file.for_agent(Some("alice")).unwrap());
        assert!(!shown.contains("s3cr3t-literal"), "{shown}");
        assert!(shown.contains("[REDACTED]"), "{shown}");
    }

    #[test]
    fn a_mistyped_secret_is_refused_without_its_value() {
        let error = parse("compiled:\n  memory:\n    secrets:\n      TOKEN: 8675309123\n").unwrap_err();
        assert!(!error.contains("8675309123"), "{error}");
        assert!(
            error.starts_with("config.yaml:4:14: compiled.memory.secrets.TOKEN: expected a secret reference string"),
            "{error}"
        );
        let error = parse("compiled:\n  memory:\n    secrets:\n      TOKEN: \"admin:s3cr3t\"\n").unwrap_err();
        assert!(!error.contains("s3cr3t") && !error.contains("admin"), "{error}");
        assert!(
            error.starts_with(
                "config.yaml:4:14: compiled.memory.secrets.TOKEN: the value starts with an unknown secret"
            ),
            "{error}"
        );
    }

    #[test]
    fn a_redis_url_is_a_secret_reference_shown_as_one() {
        let config = parse("storage: {backend: redis, url: env:REDIS_URL}\n").unwrap().for_agent(None).unwrap();
        assert_eq!(config.sections.storage.backend, StorageBackend::Redis);
        let references: Vec<String> =
            config.secret_references().into_iter().map(|(key, reference)| format!("{key}={reference}")).collect();
        assert_eq!(references, ["storage.url=env:REDIS_URL"]);
        let literal = parse("storage: {backend: redis, url: \"redis://:pw@host/\"}\n").unwrap();
        let shown = serde_yaml_ng::to_string(&literal.for_agent(None).unwrap()).unwrap();
        assert!(shown.contains("url: '[REDACTED]'") && !shown.contains("pw@host"), "{shown}");
        assert!(!format!("{literal:?}").contains("pw@host"));
        let error = parse("storage: {backend: redis, url: 8675309}\n").unwrap_err().to_string();
        assert!(
            error.contains("storage.url: expected a Redis URL or a secret reference string, found a number"),
            "{error}"
        );
        assert!(!error.contains("8675309"), "{error}");
    }

    #[test]
    fn empty_files_mean_defaults() {
        for text in ["", "# only a comment\n", "---\n"] {
            let config = parse(text).unwrap().for_agent(None).unwrap();
            assert_eq!(config.agent_name(), "default");
            assert_eq!(config.sections.storage.backend, StorageBackend::Sqlite);
            assert!(config.sections.compiled.memory.enabled);
        }
    }

    #[test]
    fn compiled_skills_are_named_as_they_name_themselves() {
        for skill in <Sections>::default().compiled.skills() {
            assert_eq!((skill.build)().name(), skill.name);
        }
    }

    #[test]
    fn agent_overrides_merge_over_the_top_level() {
        let file = parse(
            "storage: {backend: memory}\n\
             compiled: {memory: {secrets: {A: env:A, B: env:B}}}\n\
             agents:\n  alice:\n    compiled: {memory: {enabled: false, secrets: {B: env:ALICE_B}}}\n  bob: {}\n",
        )
        .unwrap();
        let alice = file.for_agent(Some("alice")).unwrap();
        assert_eq!(alice.agent_name(), "alice");
        assert_eq!(alice.sections.storage.backend, StorageBackend::Memory);
        assert!(!alice.sections.compiled.memory.enabled);
        let secrets: Vec<String> = alice.sections.compiled.memory.secrets.values().map(ToString::to_string).collect();
        assert_eq!(secrets, ["env:A", "env:ALICE_B"]);
        assert!(alice.sections.agents.is_empty());
        let references: Vec<String> =
            alice.secret_references().into_iter().map(|(key, reference)| format!("{key}={reference}")).collect();
        assert_eq!(references, ["compiled.memory.secrets.A=env:A", "compiled.memory.secrets.B=env:ALICE_B"]);
        assert!(file.for_agent(Some("bob")).unwrap().sections.compiled.memory.enabled);
        assert_eq!(
            file.for_agent(Some("carol")).unwrap_err().to_string(),
            "unknown agent `carol` in config.yaml (agents configured: alice, bob)"
        );
        let empty_home = tempfile::tempdir().unwrap();
        let location = ConfigLocation::find(None, None, &Home::new(empty_home.path()));
        assert_eq!(location.origin(), Origin::Defaults);
        let defaults = location.load().unwrap();
        assert_eq!(
            defaults.for_agent(Some("carol")).unwrap_err().to_string(),
            "unknown agent `carol` in the built-in defaults (agents configured: none)"
        );
    }
}
