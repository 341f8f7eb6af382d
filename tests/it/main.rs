//! Behaviour tests of the `omniagent` binary: each runs the real binary against a fresh
//! `OMNIAGENT_HOME` in a temporary folder.

mod config;
mod mcp;
mod secrets;
mod skills;
mod state;
mod tools;

use std::path::{Path, PathBuf};

use assert_cmd::Command;

/// A temporary `OMNIAGENT_HOME` and a way to run `omniagent` in it.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        Self { dir: tempfile::tempdir().expect("a temporary folder") }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `$OMNIAGENT_HOME/config.yaml`.
    fn with_config(self, yaml: &str) -> Self {
        self.write("config.yaml", yaml);
        self
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("a writable temporary folder");
        }
        std::fs::write(&path, text).expect("a writable temporary folder");
        path
    }

    /// `omniagent ARGS` with this home, no inherited config, and no colour settings.
    fn omniagent(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_omniagent"));
        command
            .args(args)
            .current_dir(self.path())
            .env("OMNIAGENT_HOME", self.path())
            .env_remove("OMNIAGENT_CONFIG")
            .env_remove("NO_COLOR")
            .env_remove("RUST_LOG");
        command
    }
}

/// Runs and returns (exit code, stdout, stderr).
fn run(mut command: Command) -> (i32, String, String) {
    let output = command.output().expect("omniagent runs");
    (
        output.status.code().expect("omniagent exits by itself"),
        String::from_utf8(output.stdout).expect("UTF-8 stdout"),
        String::from_utf8(output.stderr).expect("UTF-8 stderr"),
    )
}

/// Parses stdout as JSON.
fn json(stdout: &str) -> serde_json::Value {
    serde_json::from_str(stdout).unwrap_or_else(|error| panic!("stdout is not JSON ({error}):\n{stdout}"))
}

/// The in-repo MCP test server: `$OMNIAGENT_MCP_SAMPLE_SERVER`, else the binary beside
/// this test's own build (`cargo test` at the workspace root builds it).
fn sample_server() -> PathBuf {
    if let Some(path) = std::env::var_os("OMNIAGENT_MCP_SAMPLE_SERVER").filter(|path| !path.is_empty()) {
        return PathBuf::from(path);
    }
    let exe = std::env::current_exe().expect("the test's own path");
    let profile_dir = exe.parent().and_then(Path::parent).expect("target/<profile>/deps/<test>");
    let path = profile_dir.join("mcp-sample-server");
    assert!(
        path.is_file(),
        "{} is missing: run `cargo build -p mcp-sample-server` (cargo xtask test does)",
        path.display()
    );
    path
}

/// `mcp-server-everything` from the npm package that `cargo xtask peers` installs:
/// `$OMNIAGENT_SERVER_EVERYTHING`, else its place in the peers cache.
fn server_everything() -> PathBuf {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty()).map(PathBuf::from);
    if let Some(path) = non_empty("OMNIAGENT_SERVER_EVERYTHING") {
        return path;
    }
    let peers = non_empty("OMNIAGENT_PEERS").unwrap_or_else(|| {
        let cache = non_empty("XDG_CACHE_HOME").filter(|cache| cache.is_absolute());
        cache.unwrap_or_else(|| non_empty("HOME").expect("HOME is set").join(".cache")).join("omniagent-peers")
    });
    let path = peers.join("server-everything-2026.8.31/node_modules/.bin/mcp-server-everything");
    assert!(path.is_file(), "{} is missing: run `cargo xtask peers` once (cargo xtask test does)", path.display());
    path
}
