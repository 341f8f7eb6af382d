//! The real browser of the console's tests: Debian's `chromium` (from the PATH, which
//! `cargo xtask test` installs with apt-get where it can), driven by npm `playwright-core`
//! (its latest release, installed once into the peers cache) with `executablePath` set
//! to that Chromium: Playwright's own browser downloads are never used.

use std::path::{Path, PathBuf};

use super::{existing, non_empty_var, peer_or_panic};

/// The npm package that drives the browser: its latest release, not pinned.
pub const PLAYWRIGHT_CORE_PACKAGE: &str = "playwright-core";
/// The variable naming its package folder (see [`playwright_core_package`]).
pub const PLAYWRIGHT_CORE_VAR: &str = "OMNIAGENT_PLAYWRIGHT_CORE";
/// The variable naming the Chromium program; default `chromium` from the PATH.
pub const CHROMIUM_VAR: &str = "OMNIAGENT_CHROMIUM";
/// The flags Chromium starts with in the tests: headless, nothing fetched in the
/// background, no first-run work (a fresh `--user-data-dir` is added per run).
pub const CHROMIUM_FLAGS: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
];

/// The folder in the cache folder `peers` that `playwright-core` is installed into
/// (unpinned: the release that was latest when it was made).
pub fn playwright_core_install_in(peers: &Path) -> PathBuf {
    peers.join("playwright-core-latest")
}

/// The `playwright-core` package folder of an install folder, which `require` takes.
pub fn playwright_core_package(install: &Path) -> PathBuf {
    install.join("node_modules").join(PLAYWRIGHT_CORE_PACKAGE)
}

/// `$OMNIAGENT_PLAYWRIGHT_CORE`, else the `playwright-core` package folder in the peers
/// cache; panics when absent.
pub fn playwright_core_or_panic() -> PathBuf {
    peer_or_panic(PLAYWRIGHT_CORE_VAR, "npm playwright-core", |peers| {
        playwright_core_package(&playwright_core_install_in(peers))
    })
}

/// `$OMNIAGENT_CHROMIUM`, else `chromium` on the PATH; panics when absent.
pub fn chromium_or_panic() -> PathBuf {
    let found = non_empty_var(CHROMIUM_VAR).or_else(|| {
        let path = std::env::var_os("PATH")?;
        std::env::split_paths(&path).map(|dir| dir.join("chromium")).find(|program| program.is_file())
    });
    existing(found, "Debian's chromium", CHROMIUM_VAR, "apt-get install chromium")
}
