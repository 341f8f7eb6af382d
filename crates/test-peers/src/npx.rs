//! npm servers started as users configure them, with `npx -y <package>`: from an npm
//! cache of their own in the peers cache, where `npx` found and installed the package
//! once, so that a test's `npx` (offline) fetches nothing.

use std::path::{Path, PathBuf};

use super::peer_or_panic;

/// The MCP reference server `sequential-thinking`, started with `npx -y`.
pub const SEQUENTIAL_THINKING_PACKAGE: &str = "@modelcontextprotocol/server-sequential-thinking";
/// Its version: the release of the other reference servers.
pub const SEQUENTIAL_THINKING_VERSION: &str = super::REFERENCE_SERVERS_VERSION;
/// The variable naming the npm cache that holds it (see [`sequential_thinking_npm_cache_in`]).
pub const SEQUENTIAL_THINKING_NPM_CACHE_VAR: &str = "OMNIAGENT_SEQUENTIAL_THINKING_NPM_CACHE";

/// The package as `npx` is given it: `name@version`.
pub fn sequential_thinking_spec() -> String {
    format!("{SEQUENTIAL_THINKING_PACKAGE}@{SEQUENTIAL_THINKING_VERSION}")
}

/// The install folder of sequential-thinking's npm cache in the cache folder `peers`.
pub fn sequential_thinking_install_in(peers: &Path) -> PathBuf {
    peers.join(format!("sequential-thinking-{SEQUENTIAL_THINKING_VERSION}"))
}

/// The npm cache of an install folder (for `npm_config_cache`).
pub fn sequential_thinking_npm_cache(install: &Path) -> PathBuf {
    install.join("npm-cache")
}

/// Whether the npm cache `cache` holds a package `npx` installed that has the program
/// `name` (in `_npx/<hash>/node_modules/.bin`, the hash being of the package specs).
pub fn npx_has_program(cache: &Path, name: &str) -> bool {
    let Ok(installs) = std::fs::read_dir(cache.join("_npx")) else { return false };
    installs.flatten().any(|install| install.path().join("node_modules").join(".bin").join(name).is_file())
}

/// `$OMNIAGENT_SEQUENTIAL_THINKING_NPM_CACHE`, else the npm cache in the peers cache;
/// panics when absent.
pub fn sequential_thinking_npm_cache_or_panic() -> PathBuf {
    peer_or_panic(SEQUENTIAL_THINKING_NPM_CACHE_VAR, "the npm cache of server-sequential-thinking", |peers| {
        sequential_thinking_npm_cache(&sequential_thinking_install_in(peers))
    })
}
