//! On a 2026-07-28 connection a server sends list changes and resource updates only on
//! `subscriptions/listen` streams (SEP-2575), never unasked: one stream for the lists
//! the server says can change, opened with the connection, and one per subscribed
//! resource. Each stream's notifications reach the [`Handler`] as the legacy ones do.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::{ProtocolVersion, ServerNotification, SubscriptionFilter};
use rmcp::service::{Peer, Subscription};
use rmcp::{RoleClient, ServiceError};

use super::Handler;

/// Whether `peer` speaks 2026-07-28 or later, where notifications need a stream.
pub(crate) fn needs_streams(peer: &Peer<RoleClient>) -> bool {
    peer.peer_info().is_some_and(|info| info.protocol_version >= ProtocolVersion::V_2026_07_28)
}

/// The connection's open streams; each ends when dropped (the server hears a cancel).
#[derive(Default)]
pub(crate) struct Streams {
    lists: Mutex<Option<tokio::task::JoinHandle<()>>>,
    resources: Mutex<HashMap<String, tokio::task::JoinHandle<()>>>,
}

impl Streams {
    /// Opens the stream for the lists the server says can change, if any.
    pub(crate) async fn open_lists(&self, peer: &Peer<RoleClient>, handler: &Handler) -> Result<(), ServiceError> {
        let capabilities = peer.peer_info().map(|info| info.capabilities.clone()).unwrap_or_default();
        let wanted = SubscriptionFilter::builder().tools_list_changed().prompts_list_changed().resources_list_changed();
        let filter = wanted.build().supported_by(&capabilities);
        if filter == SubscriptionFilter::default() {
            return Ok(());
        }
        let stream = peer.listen(filter).await?;
        *lock(&self.lists) = Some(tokio::spawn(relay(stream, handler.clone())));
        Ok(())
    }

    /// Opens a stream for the updates of the resource `uri` (once).
    pub(crate) async fn subscribe(
        &self,
        peer: &Peer<RoleClient>,
        handler: &Handler,
        uri: &str,
    ) -> Result<(), ServiceError> {
        if lock(&self.resources).contains_key(uri) {
            return Ok(());
        }
        let stream = peer.listen(SubscriptionFilter::builder().resource_subscription(uri).build()).await?;
        let relay = tokio::spawn(relay(stream, handler.clone()));
        if let Some(earlier) = lock(&self.resources).insert(uri.to_owned(), relay) {
            earlier.abort();
        }
        Ok(())
    }

    /// Ends the stream for `uri`, if one is open.
    pub(crate) fn unsubscribe(&self, uri: &str) {
        if let Some(relay) = lock(&self.resources).remove(uri) {
            relay.abort();
        }
    }

    /// Ends every stream.
    pub(crate) fn close(&self) {
        if let Some(relay) = lock(&self.lists).take() {
            relay.abort();
        }
        for (_, relay) in lock(&self.resources).drain() {
            relay.abort();
        }
    }
}

impl Drop for Streams {
    fn drop(&mut self) {
        self.close();
    }
}

/// Hands each notification of `stream` to `handler` until the stream ends.
async fn relay(mut stream: Subscription, handler: Handler) {
    while let Ok(Some(notification)) = stream.next().await {
        match notification {
            ServerNotification::ToolListChangedNotification(_)
            | ServerNotification::PromptListChangedNotification(_)
            | ServerNotification::ResourceListChangedNotification(_) => handler.lists_changed.notify_one(),
            ServerNotification::ResourceUpdatedNotification(updated) => handler.resource_updated(&updated.params.uri),
            _ => {}
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
