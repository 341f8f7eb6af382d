//! `omniagent mcp login` and `omniagent mcp logout`: this agent's OAuth tokens for an MCP
//! server that requires them.

use std::io::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use super::Session;
use crate::UsageError;

/// How long a login waits for the browser to come back.
const LOGIN_BOUND: Duration = Duration::from_secs(10 * 60);

pub(super) async fn login(session: &Session, server: &str, no_browser: bool) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    let (url, oauth) = url_server(&config, server)?;
    let client_secret = match &oauth.client_secret {
        Some(reference) => Some(
            skill_core::SecretResolver::default()
                .resolve(reference)
                .await
                .with_context(|| format!("mcp.servers.{server}.oauth.client_secret"))?,
        ),
        None => None,
    };
    let client_secret = client_secret.as_ref().map(skill_core::ExposeSecret::expose_secret);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await.context("cannot listen on 127.0.0.1")?;
    let port = listener.local_addr()?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let tokens = session.home.oauth_tokens(config.agent_name(), server);
    let login = skill_mcp::Login::start(&url, oauth, client_secret, &redirect_uri, tokens.clone())
        .await
        .with_context(|| format!("cannot log in to MCP server `{server}`"))?;
    let mut stdout = anstream::stdout().lock();
    writeln!(stdout, "Open this URL to log in to `{server}`:\n{}", login.authorization_url())?;
    stdout.flush()?;
    drop(stdout);
    if !no_browser {
        open_browser(login.authorization_url());
    }
    let redirected = tokio::time::timeout(LOGIN_BOUND, redirect(listener, port))
        .await
        .map_err(|_| anyhow::anyhow!("no browser came back within {} minutes", LOGIN_BOUND.as_secs() / 60))??;
    login.finish(&redirected).await.with_context(|| format!("cannot log in to MCP server `{server}`"))?;
    writeln!(anstream::stdout(), "Logged in to `{server}` (tokens in {})", tokens.path().display())?;
    Ok(ExitCode::SUCCESS)
}

pub(super) fn logout(session: &Session, server: &str) -> anyhow::Result<ExitCode> {
    let config = session.location.load()?.for_agent(session.agent.as_deref())?;
    url_server(&config, server)?;
    let tokens = session.home.oauth_tokens(config.agent_name(), server);
    let removed = tokens.remove().with_context(|| format!("cannot remove {}", tokens.path().display()))?;
    let said = if removed { "Logged out of" } else { "No tokens were kept for" };
    writeln!(anstream::stdout(), "{said} `{server}`")?;
    Ok(ExitCode::SUCCESS)
}

/// The URL of the `url` server `server` and how its login identifies this client; a
/// usage error for anything else.
fn url_server<'a>(
    config: &'a omniagent_host::AgentConfig,
    server: &str,
) -> anyhow::Result<(String, &'a skill_mcp::OAuthClient)> {
    let found =
        config.mcp_server(server).ok_or_else(|| UsageError::new(format!("no MCP server `{server}` in the config")))?;
    match &found.transport {
        skill_mcp::Transport::Http { url, .. } if !url.contains("${") => Ok((url.clone(), &found.oauth)),
        skill_mcp::Transport::Http { .. } => Err(UsageError::new(format!(
            "the url of MCP server `{server}` names a variable; login needs it written out"
        ))
        .into()),
        skill_mcp::Transport::Stdio { .. } => {
            Err(UsageError::new(format!("MCP server `{server}` is a command; only a `url` server logs in")).into())
        }
    }
}

/// Opens `url` in the person's browser when there is a display; a failure only means
/// they open the printed URL themselves.
fn open_browser(url: &str) {
    let has_display = ["DISPLAY", "WAYLAND_DISPLAY"].iter().any(|name| std::env::var_os(name).is_some());
    let opener = if cfg!(target_os = "macos") { "open" } else { "xdg-open" };
    if cfg!(target_os = "macos") || has_display {
        let _ = std::process::Command::new(opener)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
    }
}

/// Waits for the browser's request to `/callback` and answers it; the URL it asked for.
/// Any other path is not found.
async fn redirect(listener: tokio::net::TcpListener, port: u16) -> anyhow::Result<String> {
    let (came_back, mut redirected) = tokio::sync::mpsc::channel::<String>(1);
    let callback = move |axum::extract::RawQuery(query): axum::extract::RawQuery| async move {
        let _ = came_back.send(query.unwrap_or_default()).await;
        axum::response::Html("<!doctype html><p>Logged in. You can close this tab.</p>")
    };
    let router = axum::Router::new().route("/callback", axum::routing::get(callback));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        axum::serve(listener, router)
            .with_graceful_shutdown(async {
                let _ = stopped.await;
            })
            .await
    });
    let query = redirected.recv().await.ok_or_else(|| anyhow::anyhow!("the login listener stopped"))?;
    // The browser gets its page before the listener closes.
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    Ok(format!("http://127.0.0.1:{port}/callback?{query}"))
}
