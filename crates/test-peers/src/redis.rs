//! A `redis-server` of a test's own.

/// A `redis-server` (the system's package) of a test's own on a loopback port, keeping
/// nothing on disk, killed when dropped.
#[derive(Debug)]
pub struct RedisServer {
    child: std::process::Child,
    port: u16,
}

impl RedisServer {
    /// A server on a free port. A port another test's server took between the pick and
    /// the start is given up for another.
    pub fn start() -> Self {
        for _ in 0..10 {
            let port =
                std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port").local_addr().unwrap().port();
            if let Some(server) = Self::try_start_on(port) {
                return server;
            }
        }
        panic!("redis-server did not start on any of 10 free ports")
    }

    /// A server on `port` (to start one again where another was), listening when this
    /// returns; a missing `redis-server` fails the test saying how to install it.
    pub fn start_on(port: u16) -> Self {
        Self::try_start_on(port).unwrap_or_else(|| panic!("redis-server could not listen on port {port}"))
    }

    /// A server on `port` once it listens, or none when the port was taken: the server
    /// that answers there must be this child (its `INFO` names the process).
    fn try_start_on(port: u16) -> Option<Self> {
        let child = std::process::Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|error| {
                panic!("cannot start redis-server ({error}): install it (`apt-get install redis-server`)")
            });
        let mut server = Self { child, port };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            if server.child.try_wait().expect("redis-server's status").is_some() {
                return None;
            }
            if let Some(process) = redis_process_id(port) {
                return (process == server.child.id()).then_some(server);
            }
            assert!(std::time::Instant::now() < deadline, "redis-server did not listen on port {port} within 10 s");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }
}

/// The process id of the Redis server listening on `port`, from its `INFO server`.
fn redis_process_id(port: u16) -> Option<u32> {
    use std::io::{BufRead as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(5))).ok()?;
    stream.write_all(b"INFO server\r\n").ok()?;
    std::io::BufReader::new(stream)
        .lines()
        .map_while(Result::ok)
        .find_map(|line| line.strip_prefix("process_id:").and_then(|id| id.trim().parse().ok()))
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::RedisServer;

    #[test]
    fn a_port_another_server_holds_is_not_mistaken_for_ours() {
        let other = RedisServer::start();
        assert!(RedisServer::try_start_on(other.port()).is_none());
        let ours = RedisServer::start();
        assert_eq!(super::redis_process_id(ours.port()), Some(ours.child.id()));
    }
}
