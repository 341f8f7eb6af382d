//! What `gateway_stdio_call` puts between client and server beside the gateway: this
//! bench binary, run as a relay that copies bytes, or as a proxy made of rmcp alone. Each
//! is a floor: the relay of any gateway over stdio, the proxy of any gateway built on
//! rmcp's server and client, as the gateway is.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Stdio};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::{Peer, RequestContext};
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, RoleServer, ServerHandler, ServiceExt as _};

/// The environment variable that makes this binary a relay to the program it names.
const RELAY_VAR: &str = "OMNIAGENT_BENCH_RELAY";
/// The environment variable that makes this binary an rmcp proxy of the program it names.
const PROXY_VAR: &str = "OMNIAGENT_BENCH_RMCP_PROXY";

/// This binary as a relay to `server`.
pub(crate) fn relay_to(server: &Path) -> Command {
    this_binary_with(RELAY_VAR, server)
}

/// This binary as an rmcp proxy of `server`.
pub(crate) fn rmcp_proxy_of(server: &Path) -> Command {
    this_binary_with(PROXY_VAR, server)
}

fn this_binary_with(variable: &str, server: &Path) -> Command {
    let mut command = Command::new(std::env::current_exe().expect("the bench binary's path"));
    command.env(variable, server);
    command
}

/// Runs this process as the relay or the proxy when it was started as one (the
/// variables above); whether it was.
pub(crate) fn run_as_relay_or_proxy() -> bool {
    let runtime = || tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    if let Some(server) = std::env::var_os(RELAY_VAR) {
        runtime().block_on(relay(&server));
    } else if let Some(server) = std::env::var_os(PROXY_VAR) {
        runtime().block_on(rmcp_proxy(&server));
    } else {
        return false;
    }
    true
}

/// Starts `server` and copies standard input to it and its output to standard output,
/// until it ends (after standard input does). The gateway's own I/O without its MCP
/// work: one thread, rmcp's non-blocking standard streams and tokio's child pipes.
async fn relay(server: &OsStr) {
    let mut child = tokio::process::Command::new(server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the server starts");
    let (mut to_server, mut from_server) = (child.stdin.take().expect("piped"), child.stdout.take().expect("piped"));
    let (mut stdin, mut stdout) = rmcp::transport::stdio_pipes();
    let requests = async {
        let _ = tokio::io::copy(&mut stdin, &mut to_server).await;
        // Closing its input ends the server.
        drop(to_server);
    };
    let answers = tokio::io::copy(&mut from_server, &mut stdout);
    let _ = tokio::join!(requests, answers);
    let _ = child.wait().await;
}

/// Serves `server`'s tools over standard input and output, each list and call passed to
/// it through an rmcp client: rmcp's server and client, their stock transports and
/// nothing else (no agent, names, progress, cancellation or timeouts). One thread, as the
/// gateway over stdio.
async fn rmcp_proxy(server: &OsStr) {
    let transport = TokioChildProcess::new(tokio::process::Command::new(server)).expect("the server starts");
    let upstream = ().serve(transport).await.expect("the server initializes");
    let proxy = Proxy { upstream: upstream.peer().clone() };
    let served = proxy.serve(rmcp::transport::stdio_pipes()).await.expect("the client initializes");
    let _ = served.waiting().await;
    let _ = upstream.cancel().await;
}

struct Proxy {
    upstream: Peer<RoleClient>,
}

impl ServerHandler for Proxy {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.upstream.list_tools(request).await.map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.upstream.call_tool_once(request).await.map_err(|error| ErrorData::internal_error(error.to_string(), None))
    }
}
