//! The gateway's HTTP/1.1 connections: accepted, served by hyper's HTTP/1 server, and
//! closed gracefully at the stop.
//!
//! Not `axum::serve`: each of its connections first reads the bytes that tell HTTP/2 from
//! HTTP/1 (even in a build without HTTP/2) and hands them to hyper ahead of the rest. hyper
//! reads them alone into its 8 KiB buffer, which then has to grow to 16 KiB to make room
//! for its next read: 8 KiB more on every connection, of which an idle 2025-11-25 session
//! holds two (its POSTs' and its GET stream's).

use std::io;
use std::time::Duration;

use futures_util::FutureExt as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How long accepting pauses after an error that is not the connection's own (such as
/// too many open files), so that the loop does not spin while nothing can be accepted.
const ACCEPT_ERROR_PAUSE: Duration = Duration::from_secs(1);

/// How long a connection may take to send a request's head, counted from when the server
/// starts waiting for it (an idle kept-alive connection waits too): a connection that
/// sends nothing, or trickles its headers, is closed then rather than held for ever.
pub(super) const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Serves `app` to every connection `listener` accepts until `stop` is cancelled; then
/// accepts no more, lets each connection finish the requests it has begun, and returns
/// when all have closed. A connection that has not sent a request's head within
/// `header_timeout` of the server starting to wait for it is closed.
pub(super) async fn serve(listener: TcpListener, app: axum::Router, header_timeout: Duration, stop: CancellationToken) {
    let graceful = GracefulShutdown::new();
    let mut http1 = hyper::server::conn::http1::Builder::new();
    http1.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = stop.cancelled() => break,
        };
        let connection = match accepted {
            Ok((connection, _)) => connection,
            Err(error) if is_connection_error(&error) => continue,
            Err(error) => {
                tracing::error!("accepting an HTTP connection failed: {error}");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        // A response written in two pieces (the session's event stream) would otherwise
        // wait for a delayed ACK: 44 ms a call on a 2025-11-25 session.
        let _ = connection.set_nodelay(true);
        let served = http1.serve_connection(TokioIo::new(connection), TowerToHyperService::new(app.clone()));
        // Spawned as it is, not awaited in an `async` block, which would hold the
        // connection twice (the block's capture and its awaited future): 800 bytes more.
        tokio::spawn(graceful.watch(served).map(|served| {
            if let Err(error) = served {
                tracing::debug!("an HTTP connection ended with an error: {error}");
            }
        }));
    }
    drop(listener);
    graceful.shutdown().await;
}

/// An error of the one connection being accepted, which the next accept does not share.
fn is_connection_error(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionAborted | io::ErrorKind::ConnectionReset
    )
}

#[cfg(test)]
mod tests {
    use std::net::SocketAddr;
    use std::sync::Arc;

    use axum::routing::get;
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio::net::TcpStream;

    use super::*;

    /// A test's bound on reading a request's head.
    const HEADER_TIMEOUT: Duration = Duration::from_secs(1);

    async fn started(app: axum::Router) -> (SocketAddr, CancellationToken, tokio::task::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let stop = CancellationToken::new();
        (address, stop.clone(), tokio::spawn(serve(listener, app, HEADER_TIMEOUT, stop)))
    }

    /// The whole answer to `request`, sent on a connection of its own.
    async fn answer(address: SocketAddr, request: &str) -> String {
        let mut connection = TcpStream::connect(address).await.unwrap();
        connection.write_all(request.as_bytes()).await.unwrap();
        let mut answer = String::new();
        connection.read_to_string(&mut answer).await.unwrap();
        answer
    }

    #[tokio::test]
    async fn a_request_head_far_over_8_kib_is_served() {
        let app = axum::Router::new()
            .route("/", get(|headers: axum::http::HeaderMap| async move { headers["x-large"].len().to_string() }));
        let (address, stop, serving) = started(app).await;
        let large = "a".repeat(64 * 1024);
        let answer = answer(
            address,
            &format!("GET / HTTP/1.1\r\nHost: localhost\r\nX-Large: {large}\r\nConnection: close\r\n\r\n"),
        )
        .await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("\r\n\r\n65536"), "{answer}");
        stop.cancel();
        serving.await.unwrap();
    }

    #[tokio::test]
    async fn the_stop_lets_a_request_in_flight_finish_and_accepts_no_more() {
        let entered = Arc::new(tokio::sync::Notify::new());
        let app = axum::Router::new().route(
            "/slow",
            get({
                let entered = Arc::clone(&entered);
                move || async move {
                    entered.notify_one();
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    "finished"
                }
            }),
        );
        let (address, stop, serving) = started(app).await;
        let request = tokio::spawn(answer(address, "GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n"));
        entered.notified().await;
        stop.cancel();
        let answer = request.await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("finished"), "{answer}");
        serving.await.unwrap();
        assert!(TcpStream::connect(address).await.is_err(), "a connection was accepted after the stop");
    }

    #[tokio::test]
    async fn a_connection_that_does_not_finish_its_head_is_closed_at_the_bound() {
        let app = axum::Router::new().route("/", get(|| async { "served" }));
        let (address, stop, serving) = started(app).await;
        let started = tokio::time::Instant::now();
        let mut connection = TcpStream::connect(address).await.unwrap();
        connection.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n").await.unwrap();
        let mut sent_back = Vec::new();
        let closed = tokio::time::timeout(10 * HEADER_TIMEOUT, connection.read_to_end(&mut sent_back)).await;
        assert!(closed.is_ok(), "the connection was still open after {:?}", 10 * HEADER_TIMEOUT);
        assert!(started.elapsed() >= HEADER_TIMEOUT, "closed after {:?}", started.elapsed());
        assert!(sent_back.is_empty(), "{}", String::from_utf8_lossy(&sent_back));
        // A connection that sends its head in time is served.
        let answer = answer(address, "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await;
        assert!(answer.ends_with("served"), "{answer}");
        stop.cancel();
        serving.await.unwrap();
    }
}
