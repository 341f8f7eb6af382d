//! `--hostile`: tools that each try one thing a sandbox must deny, and answer what
//! happened as text: `allowed: …` or `denied: <the system's error>`.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::{tool, tool_router};
use serde::Deserialize;

use crate::server::SampleServer;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct PathArgs {
    /// The file.
    path: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct PidArgs {
    /// The process.
    pid: i32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct CountArgs {
    /// How many.
    count: u32,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct AllocateArgs {
    /// How many MiB.
    megabytes: u64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ConnectArgs {
    /// `host:port`.
    address: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct FetchArgs {
    /// An `http://` URL, fetched through the proxy `HTTP_PROXY` names, if any.
    url: String,
}

fn outcome<T, E: std::fmt::Display>(result: Result<T, E>, allowed: impl FnOnce(T) -> String) -> String {
    match result {
        Ok(value) => format!("allowed: {}", allowed(value)),
        Err(error) => format!("denied: {error}"),
    }
}

#[tool_router(router = hostile_router, vis = "pub(crate)")]
impl SampleServer {
    #[tool(description = "Read the file at `path`")]
    fn read_file(&self, Parameters(PathArgs { path }): Parameters<PathArgs>) -> String {
        outcome(std::fs::read(&path), |bytes| format!("{} bytes", bytes.len()))
    }

    #[tool(description = "Append a line to the file at `path`, creating it if need be")]
    fn write_file(&self, Parameters(PathArgs { path }): Parameters<PathArgs>) -> String {
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .and_then(|mut file| file.write_all(b"# hostile\n"));
        outcome(appended, |()| "appended".to_owned())
    }

    #[tool(description = "Attach to the process `pid` with ptrace, and detach")]
    fn ptrace(&self, Parameters(PidArgs { pid }): Parameters<PidArgs>) -> String {
        let pid = nix::unistd::Pid::from_raw(pid);
        outcome(nix::sys::ptrace::attach(pid), |()| {
            let _ = nix::sys::wait::waitpid(pid, None);
            let _ = nix::sys::ptrace::detach(pid, None);
            "attached".to_owned()
        })
    }

    #[tool(description = "Start `count` processes (`sleep 30`) at once; answer how many started, then end them")]
    fn fork(&self, Parameters(CountArgs { count }): Parameters<CountArgs>) -> String {
        let mut started = Vec::new();
        let mut failure = None;
        for _ in 0..count {
            let spawned = Command::new("sleep")
                .arg("30")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
            match spawned {
                Ok(child) => started.push(child),
                Err(error) => {
                    failure = Some(error);
                    break;
                }
            }
        }
        let how_many = started.len();
        for mut child in started {
            let _ = child.kill();
            let _ = child.wait();
        }
        match failure {
            Some(error) => format!("denied: {how_many} of {count} started, then {error}"),
            None => format!("allowed: {count} started"),
        }
    }

    #[tool(description = "Allocate `megabytes` MiB and touch every page")]
    fn allocate(&self, Parameters(AllocateArgs { megabytes }): Parameters<AllocateArgs>) -> String {
        let size = usize::try_from(megabytes.saturating_mul(1 << 20)).unwrap_or(usize::MAX);
        let mut memory: Vec<u8> = Vec::new();
        outcome(memory.try_reserve_exact(size), |()| {
            // Touching the pages makes them real; the answer says how many were.
            memory.resize(size, 1);
            format!("{megabytes} MiB")
        })
    }

    #[tool(description = "Open a TCP connection to `address` (host:port) within 2 seconds")]
    fn connect(&self, Parameters(ConnectArgs { address }): Parameters<ConnectArgs>) -> String {
        let resolved = std::net::ToSocketAddrs::to_socket_addrs(&address).map(|mut found| found.next());
        match resolved {
            Ok(Some(address)) => {
                outcome(std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)), |_| {
                    "connected".to_owned()
                })
            }
            Ok(None) => "denied: no address".to_owned(),
            Err(error) => format!("denied: {error}"),
        }
    }

    #[tool(description = "GET `url` (through HTTP_PROXY when it is set) and answer its status and body")]
    async fn fetch(&self, Parameters(FetchArgs { url }): Parameters<FetchArgs>) -> String {
        // reqwest is built with rustls and no provider of its own.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder().timeout(Duration::from_secs(5)).build();
        let response = match client {
            Ok(client) => client.get(&url).send().await,
            Err(error) => return format!("denied: {error}"),
        };
        match response {
            Ok(response) => {
                let status = response.status();
                let body = response.text().await.unwrap_or_default();
                format!("allowed: {status} {body}")
            }
            Err(error) => format!("denied: {error:#}"),
        }
    }
}
