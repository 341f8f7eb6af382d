//! The sections of a config file, as they are read and shown.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use skill_core::{MemorySkill, SecretRef, Skill, ToolFilter};
#[cfg(feature = "markdown")]
use skill_markdown::SkillsConfig;

#[cfg(feature = "mcp")]
use super::ServeConfig;
use super::observability::ObservabilityConfig;
use super::policy::PolicyConfig;
use super::storage::StorageConfig;

/// What a config file may hold, and what an agent's overrides may hold. Unknown keys are
/// errors, so that a typo is reported rather than silently ignored.
///
/// The agents' overrides are kept as written (`Overrides`, YAML): an override may leave
/// out what the top level gives it (an OpenAPI skill's `spec`, a server's `command`), so
/// only the config it merges into is whole. `Sections<Sections>` reads them as sections
/// of their own, for the line of a mistake in them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Sections<Overrides = serde_yaml_ng::Value> {
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
    /// Which of the skills' tools the agent offers, by agent-level name.
    #[serde(default, skip_serializing_if = "ToolFilter::is_empty")]
    pub(crate) tools: ToolFilter,
    /// Pinned definitions and the scan of what skills say.
    #[serde(default)]
    pub(crate) trust: TrustConfig,
    /// The gateway, `omniagent mcp serve`.
    #[cfg(feature = "mcp")]
    #[serde(default, skip_serializing_if = "ServeConfig::is_empty")]
    pub(crate) serve: ServeConfig,
    /// Rules that may refuse calls, rate limits and the secret egress guard.
    #[serde(default, skip_serializing_if = "PolicyConfig::is_empty")]
    pub(crate) policy: PolicyConfig,
    /// What the host records of its calls and where it sends it.
    #[serde(default, skip_serializing_if = "ObservabilityConfig::is_empty")]
    pub(crate) observability: ObservabilityConfig,
    /// Per-agent overrides of the sections above, selected by agent name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) agents: BTreeMap<String, Overrides>,
}

/// The `trust:` section: whether the definitions of MCP servers and URL-given OpenAPI
/// documents are pinned (each server or document may say otherwise), what the scan rules
/// do, and where the lock is.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct TrustConfig {
    /// `on-first-use` (default), `approved` or `off`.
    #[serde(default)]
    pub(crate) tools: skill_core::TrustMode,
    /// `withhold` (default), `warn` or `off`.
    #[serde(default)]
    pub(crate) scan: skill_core::ScanMode,
    /// The lock file (default `$OMNIAGENT_HOME/tools.lock`; `~` and paths relative to the
    /// config file's folder are resolved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) lock: Option<String>,
}

/// The `mcp:` section.
#[cfg(feature = "mcp")]
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct McpConfig {
    /// Our own server entries, by name.
    #[serde(default)]
    pub(crate) servers: BTreeMap<String, skill_mcp::ServerConfig>,
    /// A pasted MCP client `mcpServers` map.
    #[serde(default, rename = "mcpServers", with = "pasted", skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) mcp_servers: BTreeMap<String, skill_mcp::ServerConfig>,
    /// The sandbox of every `command` server, which each server's `sandbox:` overrides.
    #[serde(default, skip_serializing_if = "skill_mcp::SandboxSettings::is_empty")]
    pub(crate) sandbox: skill_mcp::SandboxSettings,
}

#[cfg(feature = "mcp")]
impl Sections {
    /// Every configured MCP server by name: `mcp.servers`, then the pasted maps.
    pub(crate) fn mcp_servers(&self) -> impl Iterator<Item = (&String, &skill_mcp::ServerConfig)> {
        self.mcp.servers.iter().chain(&self.mcp.mcp_servers).chain(&self.mcp_servers)
    }

    /// The sandbox a `command` server runs in: its `sandbox:` over `mcp.sandbox`.
    pub(crate) fn sandbox_of(&self, server: &skill_mcp::ServerConfig) -> skill_mcp::SandboxSettings {
        server.sandbox.over(&self.mcp.sandbox)
    }

    /// Each `command` server's name and the sandbox it runs in, every setting filled in.
    pub(crate) fn sandboxes(&self) -> Vec<(String, skill_mcp::EffectiveSandbox)> {
        self.mcp_servers()
            .filter(|(_, server)| matches!(server.transport, skill_mcp::Transport::Stdio { .. }))
            .map(|(name, server)| (name.clone(), self.sandbox_of(server).effective()))
            .collect()
    }

    /// These sections with each `command` server's `sandbox:` written out whole, as it
    /// runs (what `config show` shows).
    pub(crate) fn with_effective_sandboxes(mut self) -> Self {
        let defaults = self.mcp.sandbox.clone();
        let maps = [&mut self.mcp.servers, &mut self.mcp.mcp_servers, &mut self.mcp_servers];
        for servers in maps {
            for server in servers.values_mut() {
                if matches!(server.transport, skill_mcp::Transport::Stdio { .. }) {
                    server.sandbox = server.sandbox.over(&defaults).effective().into();
                }
            }
        }
        self
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
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
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
    /// The agent provider's issuance URL (bootstrap -02: each provider defines its own);
    /// default: `bootstrap_endpoint` in its metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) enroll_url: Option<String>,
    /// The agent provider's refresh URL; default: `refresh_endpoint` in its metadata, else
    /// enrolling again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) refresh_url: Option<String>,
    /// `login_hint` for the person server: who the person is there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) login_hint: Option<String>,
    /// `tenant` for the person server: the person's organization there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tenant: Option<String>,
    /// `justification` for the person server: why the agent asks, shown to the person.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) justification: Option<String>,
    /// The `mission_s256` of the mission the agent works under, instead of the current one
    /// (`aauth mission propose`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) mission: Option<String>,
    /// The kind of key created when there is none yet: `ed25519` (default) or `es256`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) key_type: Option<aauth_client::KeyType>,
    /// A self-hosted agent (bootstrap -02): the local part of its identifier; it issues
    /// its own agent tokens, `agent_provider` being its own domain (`aauth publish`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) self_hosted: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
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

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
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
