//! A peer written by others: the MCP reference server
//! `@modelcontextprotocol/server-everything` (TypeScript SDK), over stdio and over
//! streamable HTTP.

use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use skill_core::{Agent, ResourceContents, SourceKind, ToolOutput, ToolSource};
use skill_mcp::McpSkill;

use crate::{assert_loaded, server_config};

/// How long the Node server may take to listen on its port.
const LISTEN_BOUND: Duration = Duration::from_secs(15);

/// Lists the server's tools through `agent` and calls its `echo`.
async fn lists_tools_and_echoes(agent: &Agent) {
    let echo = agent.find_tool("everything__echo").expect("server-everything has echo");
    let source = ToolSource { kind: SourceKind::Mcp, skill: "everything".to_owned(), tool: "echo".to_owned() };
    assert_eq!(echo.source(), &source);
    let tools = agent.tools();
    assert!(tools.len() >= 10, "server-everything lists more tools: {tools:?}");
    for tool in &tools {
        assert_eq!(tool.source().kind, SourceKind::Mcp);
        assert_eq!(tool.name(), format!("everything__{}", tool.source().tool));
    }
    let output = agent.call_tool("everything__echo", json!({"message": "hi"})).await.expect("echo answers");
    assert_eq!(output, ToolOutput::text("Echo: hi"));
    prompts_and_resources_pass_through(agent).await;
}

/// The server's prompts and resources reach the agent under its prefix, and a prompt
/// and a resource read through the agent come back from the server.
async fn prompts_and_resources_pass_through(agent: &Agent) {
    let prompts = agent.prompts();
    assert!(!prompts.is_empty(), "server-everything has prompts");
    for prompt in &prompts {
        assert_eq!(prompt.name(), format!("everything__{}", prompt.info().name));
    }
    let plain = prompts
        .iter()
        .find(|prompt| prompt.info().arguments.iter().all(|argument| argument.required != Some(true)))
        .expect("a prompt without required arguments");
    let output = agent.get_prompt(plain.name(), Default::default()).await.expect("the prompt renders");
    assert!(!output.messages.is_empty(), "{output:?}");

    let resources = agent.resources();
    let resource = resources.first().expect("server-everything lists resources");
    let (skill, _) = skill_core::split_agent_resource_uri(&resource.uri).expect("an agent-level URI");
    assert_eq!(skill, "everything");
    let read = agent.read_resource(&resource.uri).await.expect("the resource reads");
    let read_uri = match &read.contents[0] {
        ResourceContents::Text { uri, .. } | ResourceContents::Blob { uri, .. } => uri,
    };
    assert_eq!(read_uri, &resource.uri, "the contents under the URI they were read by");
    assert!(!agent.resource_templates().is_empty(), "server-everything has resource templates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let config = server_config(json!({"command": test_peers::server_everything_or_panic()}));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("everything", config)).build();
    assert_loaded(&agent.init_compiled_skills().await, "everything");
    lists_tools_and_echoes(&agent).await;
    let failures = agent.close().await;
    assert!(failures.is_empty(), "{failures:?}");
}

/// server-everything speaks only the `initialize` era: the default connection falls back
/// to it (above), and a connection pinned to 2026-07-28 is refused at start-up, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_pinned_to_2026_07_28_refuses_a_legacy_server_with_a_reason() {
    let config = server_config(json!({
        "command": test_peers::server_everything_or_panic(), "protocol_version": "2026-07-28"
    }));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("everything", config)).build();
    let report = agent.init_compiled_skills().await;
    assert!(report.loaded.is_empty(), "{report:?}");
    let [skipped] = report.skipped.as_slice() else { panic!("{report:?}") };
    assert!(skipped.skill == "everything" && skipped.reason.contains("discover"), "{}", skipped.reason);
    agent.close().await;
}

/// A server-everything started by the test, killed when dropped.
struct HttpServer {
    child: Child,
    port: u16,
}

impl HttpServer {
    /// Starts `mcp-server-everything streamableHttp` on a free port and waits until the port
    /// accepts connections.
    fn start() -> Self {
        let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(test_peers::server_everything_or_panic())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("server-everything starts");
        let mut server = Self { child, port };
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let started = Instant::now();
        while TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err() {
            if let Some(status) = server.child.try_wait().expect("the server's status") {
                panic!("server-everything exited before listening on port {port}: {status}");
            }
            assert!(started.elapsed() < LISTEN_BOUND, "server-everything did not listen on {port} in {LISTEN_BOUND:?}");
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        // The server may have exited already; there is nothing left to do then.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_streamable_http() {
    let server = HttpServer::start();
    let config = server_config(json!({"url": format!("http://127.0.0.1:{}/mcp", server.port)}));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("everything", config)).build();
    assert_loaded(&agent.init_compiled_skills().await, "everything");
    lists_tools_and_echoes(&agent).await;
    let failures = agent.close().await;
    assert!(failures.is_empty(), "{failures:?}");
    drop(server);
}
