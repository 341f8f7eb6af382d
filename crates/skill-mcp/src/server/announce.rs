//! What the gateway tells its clients unasked: that an agent's lists changed (to its
//! sessions and 2026-07-28 subscriptions) and that a subscribed resource changed.

use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::SubscriptionSink;
use rmcp::{Peer, RoleServer};
use skill_core::Changes;

use super::{Inner, lock};

/// Tells a client's sessions and subscriptions whenever its agent's lists change.
pub(super) async fn announce_changes(
    inner: std::sync::Weak<Inner>,
    client: String,
    mut changes: tokio::sync::watch::Receiver<Changes>,
) {
    let mut seen = *changes.borrow_and_update();
    loop {
        let stopping = match inner.upgrade() {
            Some(inner) => inner.stopping.clone(),
            None => return,
        };
        tokio::select! {
            () = stopping.cancelled() => return,
            changed = changes.changed() => if changed.is_err() { return },
        }
        let now = *changes.borrow_and_update();
        let Some(inner) = inner.upgrade() else { return };
        let changed = Lists {
            tools: now.tools != seen.tools,
            prompts: now.prompts != seen.prompts,
            resources: now.resources != seen.resources,
        };
        notify_client(&inner, &client, changed).await;
        seen = now;
    }
}

/// One legacy session's subscription to one resource.
pub(super) struct Subscribed {
    pub(super) client: String,
    /// The session's `Mcp-Session-Id` (empty over stdio, which has one session).
    pub(super) session: String,
    pub(super) peer: Peer<RoleServer>,
    /// The agent-level URI.
    pub(super) uri: String,
}

/// The `Mcp-Session-Id` a request came with; empty over stdio.
pub(super) fn session_of(extensions: &rmcp::model::Extensions) -> String {
    extensions
        .get::<::http::request::Parts>()
        .and_then(|parts| parts.headers.get("mcp-session-id"))
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

/// Tells a client's sessions subscribed to a resource, and its subscriptions that name
/// it, whenever the resource changes.
pub(super) async fn announce_updates(
    inner: std::sync::Weak<Inner>,
    client: String,
    mut updates: tokio::sync::broadcast::Receiver<String>,
) {
    loop {
        let stopping = match inner.upgrade() {
            Some(inner) => inner.stopping.clone(),
            None => return,
        };
        let uri = tokio::select! {
            () = stopping.cancelled() => return,
            update = updates.recv() => match update {
                Ok(uri) => uri,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                    tracing::warn!(client, "{missed} resource updates were missed");
                    continue;
                }
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
        };
        let Some(inner) = inner.upgrade() else { return };
        let peers: Vec<Peer<RoleServer>> = {
            let mut subscribed = lock(&inner.subscribed);
            subscribed.retain(|subscription| !subscription.peer.is_transport_closed());
            let wanted =
                subscribed.iter().filter(|subscription| subscription.client == client && subscription.uri == uri);
            wanted.map(|subscription| subscription.peer.clone()).collect()
        };
        let sinks: Vec<SubscriptionSink> = lock(&inner.sinks)
            .iter()
            .filter(|(owner, sink)| {
                *owner == client
                    && sink.accepted().resource_subscriptions.as_ref().is_some_and(|uris| uris.contains(&uri))
            })
            .map(|(_, sink)| sink.clone())
            .collect();
        // A session or stream closed since it was listed simply misses the notification.
        for peer in peers {
            let _closed = peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri.clone())).await;
        }
        for sink in sinks {
            let _closed = sink.notify_resource_updated(uri.clone()).await;
        }
    }
}

/// Which lists changed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Lists {
    pub(super) tools: bool,
    pub(super) prompts: bool,
    pub(super) resources: bool,
}

/// Tells every session and subscription of `client` that the `changed` lists changed.
pub(super) async fn notify_client(inner: &Inner, client: &str, changed: Lists) {
    let peers: Vec<Peer<RoleServer>> = {
        let mut peers = lock(&inner.peers);
        peers.retain(|(_, peer)| !peer.is_transport_closed());
        peers.iter().filter(|(owner, _)| owner == client).map(|(_, peer)| peer.clone()).collect()
    };
    let sinks: Vec<SubscriptionSink> =
        lock(&inner.sinks).iter().filter(|(owner, _)| owner == client).map(|(_, sink)| sink.clone()).collect();
    // A session or stream closed since it was listed simply misses the notification.
    if changed.tools {
        for peer in &peers {
            let _closed = peer.notify_tool_list_changed().await;
        }
        for sink in &sinks {
            let _closed = sink.notify_tool_list_changed().await;
        }
    }
    if changed.prompts {
        for peer in &peers {
            let _closed = peer.notify_prompt_list_changed().await;
        }
        for sink in &sinks {
            let _closed = sink.notify_prompt_list_changed().await;
        }
    }
    if changed.resources {
        for peer in &peers {
            let _closed = peer.notify_resource_list_changed().await;
        }
        for sink in &sinks {
            let _closed = sink.notify_resource_list_changed().await;
        }
    }
}
