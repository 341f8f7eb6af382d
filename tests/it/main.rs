//! Behaviour tests of the `omniagent` binary: each runs the real binary against a fresh
//! `OMNIAGENT_HOME` in a temporary folder.

mod aauth;
mod aauth_interop;
mod config;
mod conformance;
mod gateway;
mod install;
mod mcp;
mod oauth;
mod openapi;
mod prompt;
mod replicas;
mod secrets;
mod skill_tools;
mod skills;
mod skills_validate;
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
        Command::from_std(self.omniagent_process(args))
    }

    /// The same as a `std::process::Command`, for a test that talks to it while it runs.
    fn omniagent_process(&self, args: &[&str]) -> std::process::Command {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_omniagent"));
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

/// Sends `request` (a whole HTTP/1.1 request, `Connection: close`) to `address` as is and
/// returns the response's status: for requests no HTTP client would send, and with no
/// client dependency.
fn raw_http_status(address: (&str, u16), request: &str) -> u16 {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(address).expect("the server listens");
    stream.write_all(request.as_bytes()).expect("the request is sent");
    let mut response = String::new();
    stream.read_to_string(&mut response).expect("a response");
    response.split(' ').nth(1).and_then(|status| status.parse().ok()).expect("an HTTP status line")
}
