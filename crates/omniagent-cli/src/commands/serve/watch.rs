//! Keeping a long-running gateway current: the config file and the skill folders are
//! looked at every [`POLL`]; a change reloads only what it touches and is announced to
//! the clients (as `list_changed`) by the agents' own change counters.
//!
//! - The config file changed: a broken edit is logged (file:line) and the last good
//!   config kept. A valid one replaces it; each running agent whose own effective config
//!   differs is made afresh, the others keep running untouched. `serve:` itself (address,
//!   clients, tokens) takes effect at the next start.
//! - A skill folder changed: every client's markdown skills are forgotten (the next
//!   session's instructions read them again); each running agent's markdown prompts,
//!   the tools that load them on demand, and skill files are read again, and handed to
//!   those two skills through their handles (skills activated before are given in full
//!   again).
//! - The trust lock changed (`tools approve` ran): every agent judges its items again,
//!   and announces the lists whose withheld items changed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use omniagent_host::{ConfigLocation, Home};
use skill_mcp::server::Gateway;
use tokio_util::sync::CancellationToken;

use super::{Markdown, Sections, SharedConfig};

/// How often the files are looked at.
const POLL: Duration = Duration::from_secs(1);

/// The most entries one look at the skill folders reads, so a huge tree cannot stall it.
const MAX_ENTRIES: usize = 20_000;

pub(super) async fn watch(
    gateway: Gateway,
    location: ConfigLocation,
    config: SharedConfig,
    home: Home,
    sections: Sections,
    markdown: Markdown,
    stop: CancellationToken,
) {
    let mut config_seen = config_text(&location).await;
    let mut folders_seen = folders_print(&current(&config), &sections, &home).await;
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(POLL) => {}
        }
        let text = config_text(&location).await;
        if text != config_seen {
            config_seen = text;
            reload_config(&gateway, &location, &config, &sections).await;
        }
        // Reads a lock only when its file's time or length moved; on a blocking thread,
        // as a lock of big documents' definitions takes a moment to parse.
        let _ = tokio::task::spawn_blocking(omniagent_host::reload_trusts).await;
        let folders = folders_print(&current(&config), &sections, &home).await;
        if folders != folders_seen {
            folders_seen = folders;
            reload_markdown(&gateway, &config, &sections, &home, &markdown).await;
        }
    }
}

fn current(config: &SharedConfig) -> Arc<omniagent_host::Config> {
    Arc::clone(&config.read().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// The config file's bytes (`None` when there is none or it cannot be read).
async fn config_text(location: &ConfigLocation) -> Option<Vec<u8>> {
    tokio::fs::read(location.path()?).await.ok()
}

async fn reload_config(gateway: &Gateway, location: &ConfigLocation, config: &SharedConfig, sections: &Sections) {
    let new = match location.load() {
        Ok(new) => Arc::new(new),
        Err(error) => {
            tracing::error!("{error}; keeping the last good config");
            return;
        }
    };
    let old =
        std::mem::replace(&mut *config.write().unwrap_or_else(std::sync::PoisonError::into_inner), Arc::clone(&new));
    if new.serve() != old.serve() {
        tracing::warn!("serve: changes to this section take effect when the gateway starts again");
    }
    tracing::info!("config reloaded");
    for (client, _) in gateway.running_agents() {
        // Compared as read, not as shown: `config show` hides values whose change matters.
        let effective = |config: &omniagent_host::Config| sections.agent_config(config, &client).ok();
        if effective(&old) != effective(&new) {
            tracing::info!(client, "the agent's config changed; starting it again");
            gateway.restart(&client).await;
        }
    }
}

#[cfg(feature = "markdown")]
async fn reload_markdown(
    gateway: &Gateway,
    config: &SharedConfig,
    sections: &Sections,
    home: &Home,
    markdown: &Markdown,
) {
    use skill_core::Skill as _;
    let config = current(config);
    markdown.sets.forget();
    for (client, _agent) in gateway.running_agents() {
        let handles = markdown.handles.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&client).cloned();
        let Some([prompts_handle, files_handle]) = handles else { continue };
        let Ok(agent_config) = sections.agent_config(&config, &client) else { continue };
        let set = markdown.sets.of(&client, &agent_config, home).await;
        let (prompts, files) = super::markdown_skills(&agent_config, home, &set);
        let taken = prompts_handle
            .replace_prompts(prompts.prompts())
            .and_then(|()| prompts_handle.replace_tools(prompts.tools()))
            .and_then(|()| files_handle.replace_resources(files.resources()));
        if let Err(error) = taken {
            tracing::warn!(client, "the new skills were not taken: {error}");
        }
    }
}

#[cfg(not(feature = "markdown"))]
async fn reload_markdown(
    _gateway: &Gateway,
    _config: &SharedConfig,
    _sections: &Sections,
    _home: &Home,
    _markdown: &Markdown,
) {
}

/// What the skill folders of every agent a client may run as hold now: each entry's
/// path, size and modification time, in walk order.
async fn folders_print(
    config: &omniagent_host::Config,
    sections: &Sections,
    home: &Home,
) -> Vec<(PathBuf, u64, SystemTime)> {
    let folders = skill_folders(config, sections, home);
    skill_core::off_runtime(move || {
        let mut print = Vec::new();
        for folder in &folders {
            walk(folder, &mut print);
        }
        print
    })
    .await
    .unwrap_or_default()
}

#[cfg(feature = "markdown")]
fn skill_folders(config: &omniagent_host::Config, sections: &Sections, home: &Home) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = Vec::new();
    for client in sections.client_names() {
        let Ok(agent_config) = sections.agent_config(config, client) else { continue };
        let sources = omniagent_host::markdown_sources(&agent_config, home, &omniagent_host::SkillPaths::default());
        folders.extend(sources.dirs.into_iter().chain(sources.explicit_dirs));
    }
    folders.sort();
    folders.dedup();
    folders
}

#[cfg(not(feature = "markdown"))]
fn skill_folders(_config: &omniagent_host::Config, _sections: &Sections, _home: &Home) -> Vec<PathBuf> {
    Vec::new()
}

fn walk(folder: &Path, print: &mut Vec<(PathBuf, u64, SystemTime)>) {
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|entry| entry.file_name());
    for entry in entries {
        if print.len() >= MAX_ENTRIES {
            return;
        }
        let Ok(metadata) = entry.metadata() else { continue };
        let path = entry.path();
        print.push((path.clone(), metadata.len(), metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)));
        if metadata.is_dir() {
            walk(&path, print);
        }
    }
}
