//! `--http ADDR`: the same server over rmcp's streamable HTTP at `/mcp`, with rmcp's
//! default settings (sessions for clients that send `initialize`, stateless answers for
//! 2026-07-28 requests, loopback `Host` headers only), as the conformance suite needs it;
//! with `--oauth-issuer`, behind the `oauth` module's token check.

use std::{
    io::{self, Write as _},
    net::SocketAddr,
    sync::Arc,
    time::Duration,
};

use anyhow::Context as _;
use rmcp::{
    ServerHandler,
    transport::{
        StreamableHttpServerConfig, StreamableHttpService, streamable_http_server::session::local::LocalSessionManager,
    },
};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long open streams and requests in flight get to end after a stop signal.
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Serves a handler from `new_handler` (called per session and per stateless request)
/// on `address` until SIGINT or SIGTERM. The bound address goes to stderr as
/// `listening on http://ADDR/mcp`, so `--http 127.0.0.1:0` picks a free port; `stopping`
/// becomes `true` at the signal, which ends open subscriptions. With `oauth_issuer`,
/// `/mcp` needs that issuer's access tokens (see [`crate::oauth`]).
pub(crate) async fn serve<S: ServerHandler>(
    address: SocketAddr,
    oauth_issuer: Option<&str>,
    new_handler: impl Fn() -> S + Send + Sync + 'static,
    stopping: watch::Sender<bool>,
) -> anyhow::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(address).await.with_context(|| format!("cannot listen on {address}"))?;
    let bound = listener.local_addr().context("cannot read the bound address")?;
    let stop = CancellationToken::new();
    let config = StreamableHttpServerConfig::default().with_cancellation_token(stop.child_token());
    let service =
        StreamableHttpService::new(move || Ok(new_handler()), Arc::new(LocalSessionManager::default()), config);
    let mcp = axum::Router::new().nest_service("/mcp", service);
    let url = format!("http://{bound}/mcp");
    let app = match oauth_issuer {
        Some(issuer) => crate::oauth::protect(mcp, issuer, &url).await?,
        None => mcp,
    };
    writeln!(io::stderr(), "listening on {url}").context("cannot write stderr")?;
    let stopped = stop.clone();
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        stop_signal().await;
        stopping.send_replace(true);
        stop.cancel();
    });
    tokio::select! {
        served = server => served.context("the http server failed"),
        // Streams that outlive the grace (a client holding a GET stream open) do not
        // keep the process alive.
        () = async {
            stopped.cancelled().await;
            tokio::time::sleep(STOP_GRACE).await;
        } => Ok(()),
    }
}

async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut terminate) = signal(SignalKind::terminate()) {
            tokio::select! {
                _interrupted = tokio::signal::ctrl_c() => {}
                _terminated = terminate.recv() => {}
            }
            return;
        }
    }
    let _interrupted = tokio::signal::ctrl_c().await;
}
