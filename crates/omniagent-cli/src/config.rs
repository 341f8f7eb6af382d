//! The config file: where it is ([`ConfigLocation`]), what it may say ([`Config`]), and
//! the effective config of one agent ([`Config::for_agent`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml_ng::{Mapping, Value};
use skill_core::{MemorySkill, SecretRef, Skill};
#[cfg(feature = "markdown")]
use skill_markdown::SkillsConfig;

use crate::UsageError;

/// Where OmniAgent keeps its files: `$OMNIAGENT_HOME`, default `~/.omniagent`.
#[derive(Debug, Clone)]
pub(crate) struct Home {
    pub(crate) root: PathBuf,
}

impl Home {
    pub(crate) fn from_env() -> Result<Self, UsageError> {
        if let Some(root) = std::env::var_os("OMNIAGENT_HOME").filter(|root| !root.is_empty()) {
            return Ok(Self { root: PathBuf::from(root) });
        }
        match std::env::var_os("HOME").filter(|home| !home.is_empty()) {
            Some(home) => Ok(Self { root: Path::new(&home).join(".omniagent") }),
            None => Err(UsageError::new("neither OMNIAGENT_HOME nor HOME is set; set OMNIAGENT_HOME")),
        }
    }

    /// The folder of skills every agent of this home gets.
    #[cfg(feature = "markdown")]
    pub(crate) fn skills_dir(&self) -> PathBuf {
        self.root.join("skills")
    }

    /// The AAuth agent's folder: its key and its cached tokens.
    #[cfg(any(feature = "openapi", feature = "aauth"))]
    pub(crate) fn aauth_dir(&self) -> PathBuf {
        self.root.join("aauth")
    }

    /// The embedded store's database file.
    #[cfg(feature = "sqlite")]
    pub(crate) fn state_db(&self) -> PathBuf {
        self.root.join("state").join("omniagent.db")
    }

    fn default_config(&self) -> PathBuf {
        self.root.join("config.yaml")
    }
}

/// Why a config file was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Origin {
    /// `-c/--config`.
    Flag,
    /// `$OMNIAGENT_CONFIG`.
    Env,
    /// `$OMNIAGENT_HOME/config.yaml`, which exists.
    Home,
    /// No file: built-in defaults.
    Defaults,
}

/// The config file to read, if any.
#[derive(Debug, Clone)]
pub(crate) struct ConfigLocation {
    pub(crate) path: Option<PathBuf>,
    pub(crate) origin: Origin,
}

impl ConfigLocation {
    /// `given` is `-c` or `$OMNIAGENT_CONFIG` (`from_env` says which).
    pub(crate) fn find(given: Option<PathBuf>, from_env: bool, home: &Home) -> Self {
        if let Some(path) = given {
            return Self { path: Some(path), origin: if from_env { Origin::Env } else { Origin::Flag } };
        }
        let path = home.default_config();
        if path.is_file() {
            Self { path: Some(path), origin: Origin::Home }
        } else {
            Self { path: None, origin: Origin::Defaults }
        }
    }

    /// Reads and validates the file (built-in defaults when there is none).
    pub(crate) fn load(&self) -> Result<ConfigFile, UsageError> {
        let Some(path) = &self.path else {
            return Ok(ConfigFile { path: None, tree: Value::Mapping(Mapping::new()), config: Config::default() });
        };
        let text = std::fs::read_to_string(path)
            .map_err(|error| UsageError::new(format!("cannot read config file {}: {error}", path.display())))?;
        ConfigFile::parse(path, &text)
    }
}

/// A validated config file.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    path: Option<PathBuf>,
    /// The file as YAML, for merging an agent's overrides over the top level.
    tree: Value,
    config: Config,
}

impl ConfigFile {
    fn parse(path: &Path, text: &str) -> Result<Self, UsageError> {
        let tree: Value = serde_yaml_ng::from_str(text).map_err(|error| yaml_error(path, &error))?;
        if tree.is_null() {
            return Ok(Self {
                path: Some(path.to_owned()),
                tree: Value::Mapping(Mapping::new()),
                config: Config::default(),
            });
        }
        let mut tree = tree;
        // Deserializing from the text (not from `tree`) keeps line numbers in errors.
        let config: Config = match serde_yaml_ng::from_str(text) {
            Ok(config) => config,
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
        let nested = config.agents.keys().find(|name| {
            tree.get("agents")
                .and_then(|agents| agents.get(name.as_str()))
                .is_some_and(|agent| agent.get("agents").is_some())
        });
        if let Some(name) = nested {
            return Err(UsageError::new(format!(
                "{}: agents.{name}: an agent's overrides cannot hold `agents`",
                path.display()
            )));
        }
        let file = Self { path: Some(path.to_owned()), tree, config: Config::default() };
        Ok(Self { config: file.located(config), ..file })
    }

    /// `config`, read from this file, knowing the file's folder.
    fn located(&self, config: Config) -> Config {
        #[cfg(any(feature = "openapi", feature = "aauth"))]
        let config = Config { file: self.path.clone(), ..config };
        config
    }

    /// The config an agent runs with: the top level, with `agents.<name>` merged over it
    /// (mappings merge key by key; anything else is replaced).
    pub(crate) fn for_agent(&self, agent: Option<&str>) -> Result<Config, UsageError> {
        let Some(name) = agent else {
            return Ok(Config { agents: BTreeMap::new(), ..self.config.clone() });
        };
        if !self.config.agents.contains_key(name) {
            let known: Vec<&str> = self.config.agents.keys().map(String::as_str).collect();
            let known = if known.is_empty() { "none".to_owned() } else { known.join(", ") };
            return Err(UsageError::new(format!(
                "unknown agent `{name}` in {} (agents configured: {known})",
                self.describe()
            )));
        }
        let mut merged = self.tree.clone();
        let overrides = self.tree.get("agents").and_then(|agents| agents.get(name)).cloned();
        if let Value::Mapping(top) = &mut merged {
            top.remove("agents");
        }
        if let Some(overrides) = overrides {
            merge(&mut merged, overrides);
        }
        serde_yaml_ng::from_value(merged)
            .map(|config| self.located(config))
            .map_err(|error| UsageError::new(format!("{}: agents.{name}: {error}", self.describe())))
    }

    /// Every agent's name.
    pub(crate) fn agent_names(&self) -> impl Iterator<Item = &str> {
        self.config.agents.keys().map(String::as_str)
    }

    fn describe(&self) -> String {
        match &self.path {
            Some(path) => path.display().to_string(),
            None => "the built-in defaults".to_owned(),
        }
    }
}

/// The top-level keys a config file may have.
const TOP_LEVEL_KEYS: [&str; 8] = ["skills", "mcp", "mcpServers", "openapi", "aauth", "storage", "compiled", "agents"];

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
fn yaml_error(path: &Path, error: &serde_yaml_ng::Error) -> UsageError {
    let message = error.to_string();
    let Some(location) = error.location() else {
        return UsageError::new(format!("{}: {message}", path.display()));
    };
    let (line, column) = (location.line(), location.column());
    let message = message.replacen(&format!(" at line {line} column {column}"), "", 1);
    UsageError::new(format!("{}:{line}:{column}: {message}", path.display()))
}

/// What a config file may hold. Unknown keys are errors, so that a typo is reported
/// rather than silently ignored.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Config {
    /// Markdown skills.
    #[cfg(feature = "markdown")]
    #[serde(default)]
    pub(crate) skills: SkillsConfig,
    /// MCP servers.
    #[cfg(feature = "mcp")]
    #[serde(default)]
    pub(crate) mcp: McpConfig,
    /// A pasted MCP client config's servers (Claude Desktop, Cursor, Claude Code).
    #[cfg(feature = "mcp")]
    #[serde(default, rename = "mcpServers", with = "pasted", skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) mcp_servers: BTreeMap<String, skill_mcp::ServerConfig>,
    /// OpenAPI documents, by skill name.
    #[cfg(feature = "openapi")]
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) openapi: BTreeMap<String, skill_openapi::OpenApiConfig>,
    /// The AAuth agent: where it enrolls and how it signs.
    #[cfg(feature = "aauth")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) aauth: Option<AAuthConfig>,
    /// Where skills keep state.
    #[serde(default)]
    pub(crate) storage: StorageConfig,
    /// The compiled skills built into the binary.
    #[serde(default)]
    pub(crate) compiled: CompiledConfig,
    /// Per-agent overrides of the sections above, selected with `--agent NAME`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) agents: BTreeMap<String, Config>,
    /// The config file, in whose folder relative paths in it (an OpenAPI `spec`, the AAuth
    /// key) resolve; `None` for the built-in defaults.
    #[cfg(any(feature = "openapi", feature = "aauth"))]
    #[serde(skip)]
    pub(crate) file: Option<PathBuf>,
}

#[cfg(any(feature = "openapi", feature = "aauth"))]
impl Config {
    /// `path` as written in the config: `~/` expanded, and a relative path taken from the
    /// config file's folder.
    pub(crate) fn resolve_path(&self, path: &str) -> PathBuf {
        let expanded = skill_core::expand_home(path);
        match self.file.as_deref().and_then(Path::parent) {
            Some(dir) if expanded.is_relative() => dir.join(expanded),
            _ => expanded,
        }
    }
}

/// The `mcp:` section.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpConfig {
    /// Our own server entries, by name.
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, skill_mcp::ServerConfig>,
    /// A pasted MCP client `mcpServers` map.
    #[serde(default, rename = "mcpServers", with = "pasted", skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) mcp_servers: BTreeMap<String, skill_mcp::ServerConfig>,
}

#[cfg(feature = "mcp")]
impl Config {
    /// Every configured MCP server by name: `mcp.servers`, then the pasted maps.
    pub(crate) fn mcp_servers(&self) -> impl Iterator<Item = (&String, &skill_mcp::ServerConfig)> {
        self.mcp.servers.iter().chain(&self.mcp.mcp_servers).chain(&self.mcp_servers)
    }
}

/// Reads a pasted `mcpServers` map leniently (unknown keys are warned about elsewhere)
/// and writes it back as our own entries.
#[cfg(feature = "mcp")]
mod pasted {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use skill_mcp::{PastedServer, ServerConfig};

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<BTreeMap<String, ServerConfig>, D::Error> {
        BTreeMap::<String, PastedServer>::deserialize(deserializer)?
            .into_iter()
            .map(|(name, pasted)| {
                let config = ServerConfig::try_from(pasted)
                    .map_err(|error| serde::de::Error::custom(format!("mcpServers.{name}: {error}")))?;
                Ok((name, config))
            })
            .collect()
    }

    pub(super) fn serialize<S: Serializer>(
        servers: &BTreeMap<String, ServerConfig>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        servers.serialize(serializer)
    }
}

/// The `aauth:` section.
#[cfg(feature = "aauth")]
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AAuthConfig {
    /// Where `aauth enroll` goes for an agent token (`https://host`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) agent_provider: Option<String>,
    /// The agent key (a JWK file, 0600); default `$OMNIAGENT_HOME/aauth/agent.jwk`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key: Option<String>,
    /// The person server; default: the agent token's `ps` claim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) person_server: Option<String>,
    /// An extra trust root (PEM), for a private PKI or tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) ca_file: Option<String>,
    /// Allow `http://` servers on 127.0.0.1 and ::1 (local testing).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub(crate) allow_http_loopback: bool,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StorageConfig {
    #[serde(default)]
    pub(crate) backend: StorageBackend,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum StorageBackend {
    /// One SQLite file under `$OMNIAGENT_HOME/state/`, shared by every process.
    #[default]
    Sqlite,
    /// Memory, gone when the process ends.
    Memory,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompiledConfig {
    #[serde(default)]
    pub(crate) memory: CompiledSkillConfig,
}

impl CompiledConfig {
    /// Every compiled skill built into this binary, with its settings: the one list of
    /// them (one field above per entry).
    pub(crate) fn skills(&self) -> [CompiledSkill<'_>; 1] {
        [CompiledSkill { name: "memory", settings: &self.memory, build: || Box::new(MemorySkill::new()) }]
    }
}

/// A compiled skill, its settings, and how to make one.
pub(crate) struct CompiledSkill<'a> {
    pub(crate) name: &'static str,
    pub(crate) settings: &'a CompiledSkillConfig,
    pub(crate) build: fn() -> Box<dyn Skill>,
}

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CompiledSkillConfig {
    /// Whether the skill is registered.
    #[serde(default = "enabled_by_default")]
    pub(crate) enabled: bool,
    /// The skill's secrets: name -> reference.
    #[serde(default)]
    pub(crate) secrets: BTreeMap<String, SecretRef>,
}

impl Default for CompiledSkillConfig {
    fn default() -> Self {
        Self { enabled: true, secrets: BTreeMap::new() }
    }
}

fn enabled_by_default() -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ConfigFile, String> {
        ConfigFile::parse(Path::new("config.yaml"), text).map_err(|error| error.to_string())
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
            "config.yaml:1:20: storage.backend: unknown variant `postgres`, expected `sqlite` or `memory`",
        );
        check(
            "skils: {}\n",
            "config.yaml:1:1: unknown field `skils`, expected one of `skills`, `mcp`, `mcpServers`, `openapi`, `aauth`, `storage`, `compiled`, `agents`",
        );
        check("storage: [\n", "config.yaml:2:1: did not find expected node content, while parsing a flow node");
        check(
            "agents:\n  alice:\n    agents: {}\n",
            "config.yaml: agents.alice: an agent's overrides cannot hold `agents`",
        );
    }

    #[test]
    fn a_mistyped_secret_is_refused_without_its_value() {
        let error = parse("compiled:\n  memory:\n    secrets:\n      TOKEN: 8675309123\n").unwrap_err();
        assert!(!error.contains("8675309123"), "{error}");
        assert!(
            error.starts_with("config.yaml:4:14: compiled.memory.secrets.TOKEN: expected a secret reference string"),
            "{error}"
        );
        let error = parse("compiled:\n  memory:\n    secrets:\n      TOKEN: \"vault:s3cr3t\"\n").unwrap_err();
        assert!(!error.contains("s3cr3t"), "{error}");
        assert!(error.contains("unknown secret reference scheme `vault:`"), "{error}");
    }

    #[test]
    fn empty_files_mean_defaults() {
        for text in ["", "# only a comment\n", "---\n"] {
            let config = parse(text).unwrap().for_agent(None).unwrap();
            assert_eq!(config.storage.backend, StorageBackend::Sqlite);
            assert!(config.compiled.memory.enabled);
        }
    }

    #[test]
    fn compiled_skills_are_named_as_they_name_themselves() {
        for skill in Config::default().compiled.skills() {
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
        assert_eq!(alice.storage.backend, StorageBackend::Memory);
        assert!(!alice.compiled.memory.enabled);
        let secrets: Vec<String> = alice.compiled.memory.secrets.values().map(ToString::to_string).collect();
        assert_eq!(secrets, ["env:A", "env:ALICE_B"]);
        assert!(alice.agents.is_empty());
        assert!(file.for_agent(Some("bob")).unwrap().compiled.memory.enabled);
        assert_eq!(
            file.for_agent(Some("carol")).unwrap_err().to_string(),
            "unknown agent `carol` in config.yaml (agents configured: alice, bob)"
        );
    }
}
