//! Behaviour tests of the `omniagent` binary: each runs the real binary against a fresh
//! `OMNIAGENT_HOME` in a temporary folder.

mod aauth;
mod config;
mod mcp;
mod openapi;
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
