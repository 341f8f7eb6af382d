//! Peers the tests start with `npx -y <package>`, as users configure them: each in an npm
//! cache of its own, where `npx` installed it once, so that the tests' `npx` (offline)
//! finds it there and fetches nothing.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, bail};

use super::{install_staged, npm_command, run_npm};

/// Makes sure `<peers>/sequential-thinking-<version>/npm-cache` is an npm cache in which
/// `npx` installed `@modelcontextprotocol/server-sequential-thinking@<version>`, and
/// returns that cache.
///
/// `npm exec --yes --package <spec> -- node -e ""` installs the package where
/// `npx -y <spec>` looks for it (`_npx/<hash>`, the hash being of the spec alone) and runs
/// `node` instead of the server; install scripts are not run. As for the other peers, in
/// a staging folder renamed into place at the end: the cache's paths are relative to it.
pub(super) fn ensure_sequential_thinking(peers: &Path) -> anyhow::Result<PathBuf> {
    let installed = test_peers::sequential_thinking_install_in(peers);
    let spec = test_peers::sequential_thinking_spec();
    let has_program = |folder: &Path| {
        test_peers::npx_has_program(
            &test_peers::sequential_thinking_npm_cache(folder),
            "mcp-server-sequential-thinking",
        )
    };
    install_staged(peers, &installed, &format!("npx -y {spec}"), has_program, |staging| {
        let cache = test_peers::sequential_thinking_npm_cache(staging);
        std::fs::create_dir_all(&cache).with_context(|| format!("cannot create {}", cache.display()))?;
        let mut command = npm_command();
        command
            .args(["exec", "--yes", "--ignore-scripts", "--loglevel=warn", "--package", &spec, "--", "node", "-e", ""])
            .env("npm_config_cache", &cache)
            .current_dir(staging)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        let output = run_npm(&mut command, &spec, staging)?;
        if !output.status.success() {
            bail!("npm exec --package {spec} failed ({})", output.status);
        }
        Ok(())
    })?;
    Ok(test_peers::sequential_thinking_npm_cache(&installed))
}
