//! The egress proxy of a server whose `network` is a list: HTTP `CONNECT` (and plain
//! `http://` requests) to the hosts and ports the list allows, a 403 naming the setting
//! for the others. The server's only way out: its sandbox allows TCP to this port alone.

use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::network;

/// The longest request head read before it is refused.
const HEAD_LIMIT: usize = 16 * 1024;

/// A running proxy: stopped when dropped.
#[derive(Debug)]
pub(crate) struct Proxy {
    port: u16,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Starts a proxy on the loopback interface for `server`, letting through what
    /// `allowed` (`host:port` patterns) names.
    pub(crate) fn start(server: &str, allowed: &[String]) -> std::io::Result<Self> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let listener = TcpListener::from_std(listener)?;
        let rules = Arc::new(Rules { server: server.to_owned(), allowed: allowed.to_vec() });
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                tokio::spawn(serve(client, Arc::clone(&rules)));
            }
        });
        Ok(Self { port, task })
    }

    /// The port it listens on, at 127.0.0.1.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The URL the server's `HTTP_PROXY` and `HTTPS_PROXY` name.
    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Whom a proxy serves and what it lets through.
#[derive(Debug)]
struct Rules {
    server: String,
    allowed: Vec<String>,
}

impl Rules {
    fn allows(&self, host: &str, port: u16) -> bool {
        self.allowed.iter().any(|pattern| network::allows(pattern, host, port))
    }
}

/// Answers one connection: reads the request head, checks its target, and then relays
/// bytes both ways (after `200 Connection established` for `CONNECT`, or with the head
/// passed on for a plain request).
async fn serve(mut client: TcpStream, rules: Arc<Rules>) {
    let Some((head, rest)) = read_head(&mut client).await else { return };
    let Some((method, target)) = request_line(&head) else {
        let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").await;
        return;
    };
    let connect = method.eq_ignore_ascii_case("CONNECT");
    let Some((host, port)) = (if connect { authority(target) } else { absolute_target(target) }) else {
        let _ = client.write_all(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n").await;
        return;
    };
    if !rules.allows(&host, port) {
        tracing::warn!(server = %rules.server, host = %host, port, "sandbox: network refused a host outside sandbox.network");
        let body = format!("omniagent sandbox: {host}:{port} is not in sandbox.network of {}\n", rules.server);
        let refusal = format!(
            "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = client.write_all(refusal.as_bytes()).await;
        return;
    }
    let Ok(mut upstream) = TcpStream::connect((host.as_str(), port)).await else {
        let _ = client.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
        return;
    };
    let started = if connect {
        client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await
    } else {
        upstream.write_all(head.as_bytes()).await
    };
    if started.is_ok() && upstream.write_all(&rest).await.is_ok() {
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// The request head (through its blank line) and what came after it.
async fn read_head(client: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut read = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some(end) = read.windows(4).position(|window| window == b"\r\n\r\n") {
            let rest = read.split_off(end + 4);
            return Some((String::from_utf8(read).ok()?, rest));
        }
        if read.len() > HEAD_LIMIT {
            return None;
        }
        let count = client.read(&mut buffer).await.ok().filter(|count| *count > 0)?;
        read.extend_from_slice(&buffer[..count]);
    }
}

/// The method and target of a request line.
fn request_line(head: &str) -> Option<(&str, &str)> {
    let mut words = head.lines().next()?.split_whitespace();
    Some((words.next()?, words.next()?))
}

/// `host:port` (IPv6 in brackets) as a host and a port.
fn authority(text: &str) -> Option<(String, u16)> {
    let (host, port) = text.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((host.to_owned(), port.parse().ok()?))
}

/// The host and port of an `http://` absolute target (port 80 unless it says).
fn absolute_target(target: &str) -> Option<(String, u16)> {
    let rest = target.strip_prefix("http://")?;
    let authority_text = rest.split(['/', '?', '#']).next()?;
    let authority_text = authority_text.rsplit_once('@').map_or(authority_text, |(_, host)| host);
    authority(authority_text).or_else(|| Some((authority_text.to_owned(), 80)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_are_read_as_clients_write_them() {
        assert_eq!(authority("api.github.com:443"), Some(("api.github.com".to_owned(), 443)));
        assert_eq!(authority("[::1]:8080"), Some(("::1".to_owned(), 8080)));
        assert_eq!(absolute_target("http://example.com/a?b"), Some(("example.com".to_owned(), 80)));
        assert_eq!(absolute_target("http://u:p@127.0.0.1:81/"), Some(("127.0.0.1".to_owned(), 81)));
        assert_eq!(absolute_target("https://example.com/"), None);
        assert_eq!(request_line("CONNECT a:1 HTTP/1.1\r\n"), Some(("CONNECT", "a:1")));
    }
}
