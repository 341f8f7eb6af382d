//! What an MCP server's credentials may reach: no other host through a redirect, and no
//! message through an error.

use std::io::{BufRead as _, BufReader, Write as _};
use std::net::{Ipv4Addr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use skill_core::Agent;
use skill_mcp::McpSkill;

use super::server_config;

const CANARY: &str = "canary-mcp-5b20e7";

/// A loopback HTTP server answering every request with `answer` (a whole response), on a
/// thread of its own; returns its port and how many requests it has read.
fn http_server(answer: impl Fn(u16) -> String + Send + 'static) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("a free port");
    let port = listener.local_addr().expect("its address").port();
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&requests);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
            let mut line = String::new();
            // The request's head; the body, if any, is left unread.
            while reader.read_line(&mut line).is_ok_and(|read| read > 0) && line != "\r\n" {
                line.clear();
            }
            seen.fetch_add(1, Ordering::SeqCst);
            let _ = stream.write_all(answer(port).as_bytes());
        }
    });
    (port, requests)
}

#[tokio::test]
async fn a_redirect_is_not_followed_and_the_error_shows_no_credential() {
    let (other_port, other_requests) =
        http_server(|_| "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_owned());
    let (port, requests) = http_server(move |_| {
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: http://127.0.0.1:{other_port}/mcp\r\n\
             content-length: 0\r\nconnection: close\r\n\r\n"
        )
    });
    let config = server_config(json!({
        "url": format!("http://user:{CANARY}@127.0.0.1:{port}/mcp?key={CANARY}"),
        "headers": {"X-Api-Key": CANARY},
    }));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("redirecting", config)).build();
    let report = agent.init_compiled_skills().await;
    assert!(report.loaded.is_empty(), "{report:?}");
    assert!(requests.load(Ordering::SeqCst) >= 1, "the server was asked");
    assert_eq!(other_requests.load(Ordering::SeqCst), 0, "the redirect's target saw a request");
    let shown = format!("{report:?}");
    assert!(!shown.contains(CANARY), "{shown}");
    assert!(shown.contains("HTTP 307 Temporary Redirect"), "{shown}");
    agent.close().await;
}

#[tokio::test]
async fn an_unreachable_url_is_named_redacted() {
    // A port nothing listens on: bound, then closed.
    let port = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).and_then(|listener| listener.local_addr()).unwrap().port();
    let config = server_config(json!({"url": format!("http://user:{CANARY}@127.0.0.1:{port}/mcp?key={CANARY}")}));
    let agent = Agent::builder().with_compiled_skill(McpSkill::new("unreachable", config)).build();
    let report = agent.init_compiled_skills().await;
    let shown = format!("{report:?}");
    assert!(report.loaded.is_empty() && !shown.contains(CANARY), "{shown}");
    assert!(shown.contains(&format!("http://127.0.0.1:{port}/mcp?key=REDACTED")), "{shown}");
    agent.close().await;
}
