//! The trust of an agent's config: its lock, opened once per process and shared by every
//! agent that names it (the gateway's clients' agents too, so that one approval reaches
//! them all), and which of its skills are pinned, under which origin.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use skill_core::trust::PinnedSkill;
use skill_core::{ScanMode, Trust, TrustMode, TrustSettings};

use crate::HostError;
use crate::config::{AgentConfig, Home};

/// The trusts this process opened, by lock file and scan mode.
static OPENED: Mutex<BTreeMap<(PathBuf, ScanMode), Trust>> = Mutex::new(BTreeMap::new());

/// The lock file of `config`: `trust.lock`, else `$OMNIAGENT_HOME/tools.lock`.
pub(crate) fn lock_path(config: &AgentConfig, home: &Home) -> PathBuf {
    match &config.sections.trust.lock {
        #[cfg(any(feature = "openapi", feature = "aauth", feature = "markdown", feature = "mcp"))]
        Some(path) => config.resolve_path(path),
        #[cfg(not(any(feature = "openapi", feature = "aauth", feature = "markdown", feature = "mcp")))]
        Some(path) => skill_core::expand_home(path),
        None => home.root().join("tools.lock"),
    }
}

/// The trust of `config`: its lock as this process has it (read the first time).
pub(super) fn trust(config: &AgentConfig, home: &Home) -> Result<Trust, HostError> {
    let scan = config.sections.trust.scan;
    let path = lock_path(config, home);
    let mut opened = OPENED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(trust) = opened.get(&(path.clone(), scan)) {
        return Ok(trust.clone());
    }
    let mut settings = TrustSettings::new(&path);
    settings.scan = scan;
    let trust = Trust::open(settings).map_err(|error| HostError::Trust { error })?;
    opened.insert((path, scan), trust.clone());
    Ok(trust)
}

/// Reads every lock this process opened again if its file changed (another process
/// approved or recorded items): the agents then judge their items anew and announce what
/// changed. A lock that became unreadable is logged, and the last one read stays.
pub fn reload_trusts() {
    let trusts: Vec<Trust> = OPENED.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).values().cloned().collect();
    for trust in trusts {
        if let Err(error) = trust.reload() {
            tracing::warn!("{error}; the lock as last read still applies");
        }
    }
}

/// The pinned skills of `config`, by name: each MCP server, and each OpenAPI document
/// given by URL, unless its `trust` (or `trust.tools`) is `off`.
pub(crate) fn pinned(config: &AgentConfig) -> BTreeMap<String, PinnedSkill> {
    let mut pinned: BTreeMap<String, PinnedSkill> = BTreeMap::new();
    #[cfg(feature = "mcp")]
    for (name, server) in config.sections.mcp_servers() {
        let origin = match &server.transport {
            skill_mcp::Transport::Stdio { command, args, .. } => {
                let words: Vec<String> = std::iter::once(command).chain(args).map(|word| quoted(word)).collect();
                format!("stdio:{}", words.join(" "))
            }
            skill_mcp::Transport::Http { url, .. } => skill_core::redact::url_text(url),
        };
        let mode = server.trust.unwrap_or(config.sections.trust.tools);
        pinned.insert(name.clone(), PinnedSkill { origin, mode });
    }
    #[cfg(feature = "openapi")]
    for (name, settings) in config.sections.openapi.iter().filter(|(_, settings)| settings.spec_is_url()) {
        let origin = skill_core::redact::url_text(&settings.spec);
        let mode = settings.trust.unwrap_or(config.sections.trust.tools);
        pinned.insert(name.clone(), PinnedSkill { origin, mode });
    }
    #[cfg(not(any(feature = "mcp", feature = "openapi")))]
    let _ = config;
    pinned.retain(|_, pinned| pinned.mode != TrustMode::Off);
    pinned
}

/// The trust mode of each pinned skill of `config`, by name (see [`pinned`]): what an
/// item those skills offer went through.
pub fn pinned_modes(config: &AgentConfig) -> BTreeMap<String, TrustMode> {
    pinned(config).into_iter().map(|(name, pinned)| (name, pinned.mode)).collect()
}

/// `word` as a shell would need it written, so that an origin reads as the command line.
#[cfg(feature = "mcp")]
fn quoted(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "@%+=:,./_-~".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(all(test, feature = "mcp"))]
mod tests {
    use super::*;

    #[test]
    fn origins_read_as_command_lines() {
        assert_eq!(quoted("@modelcontextprotocol/server-everything"), "@modelcontextprotocol/server-everything");
        assert_eq!(quoted("my notes"), "'my notes'");
        assert_eq!(quoted("it's"), r"'it'\''s'");
    }
}
