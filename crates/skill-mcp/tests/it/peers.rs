//! Where the peer servers are: the paths `cargo xtask test` passes, else where a plain
//! `cargo build` and `cargo xtask peers` put them. A missing peer fails the test with what
//! to run; it never passes silently.

use std::path::PathBuf;

/// The release of `@modelcontextprotocol/server-everything` that `cargo xtask` installs.
const SERVER_EVERYTHING_VERSION: &str = "2026.8.31";

fn non_empty_var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from)
}

/// `OMNIAGENT_MCP_SAMPLE_SERVER`, else `mcp-sample-server` in the cargo profile folder
/// this test binary was built into (`target/<profile>/deps/it-…` → `target/<profile>/`).
pub(crate) fn sample_server() -> PathBuf {
    let path = non_empty_var("OMNIAGENT_MCP_SAMPLE_SERVER").unwrap_or_else(|| {
        let test_binary = std::env::current_exe().expect("the test binary's path");
        let profile_dir = test_binary.parent().and_then(|deps| deps.parent()).expect("target/<profile>/deps/it-…");
        profile_dir.join(format!("mcp-sample-server{}", std::env::consts::EXE_SUFFIX))
    });
    assert!(
        path.is_file(),
        "mcp-sample-server is not at {}: run `cargo build -p mcp-sample-server` (or `cargo xtask test`, which \
         builds it), or set OMNIAGENT_MCP_SAMPLE_SERVER to its path",
        path.display()
    );
    path
}

/// `OMNIAGENT_SERVER_EVERYTHING`, else the program in the peers cache (`$OMNIAGENT_PEERS`,
/// else `$XDG_CACHE_HOME/omniagent-peers`, else `~/.cache/omniagent-peers`), as
/// `xtask/src/peers.rs` computes it.
pub(crate) fn server_everything() -> PathBuf {
    let path = non_empty_var("OMNIAGENT_SERVER_EVERYTHING").unwrap_or_else(|| {
        let peers = non_empty_var("OMNIAGENT_PEERS").unwrap_or_else(|| {
            match non_empty_var("XDG_CACHE_HOME").filter(|cache| cache.is_absolute()) {
                Some(cache) => cache.join("omniagent-peers"),
                None => non_empty_var("HOME").expect("HOME is set").join(".cache/omniagent-peers"),
            }
        });
        peers
            .join(format!("server-everything-{SERVER_EVERYTHING_VERSION}"))
            .join("node_modules/.bin/mcp-server-everything")
    });
    assert!(
        path.is_file(),
        "@modelcontextprotocol/server-everything@{SERVER_EVERYTHING_VERSION} is not at {}: run `cargo xtask peers` \
         (or `cargo xtask test`), which installs it with npm, or set OMNIAGENT_SERVER_EVERYTHING to its \
         `mcp-server-everything` program",
        path.display()
    );
    path
}
