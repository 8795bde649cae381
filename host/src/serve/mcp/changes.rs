//! What a registry change owes each client: list changes, and updates of the resources it subscribed to.
//!
//! A session (stdio, HTTP) hears of changes on its own stream from the moment it is
//! initialized; a stateless client (2026-07-28) through `subscriptions/listen`, for what
//! its filter accepted. Either way, changes that were missed (a slow client lagging
//! behind the registry) owe every list.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::{Arc, Mutex};

use rmcp::model::{ErrorData, ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, RoleServer, SubscriptionSink};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;

use crate::ToolHost;
use crate::policy::Caller;
use crate::registry::RegistryChange;

/// The most resources one session subscribes to.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// The resources one session subscribed to (`resources/subscribe`), each with the
/// caller that subscribed: an update is sent only while that caller may still read it.
#[derive(Clone, Default)]
pub(crate) struct Subscriptions(Arc<Mutex<BTreeMap<String, Caller>>>);

impl Subscriptions {
    pub(crate) fn add(&self, uri: String, caller: Caller) -> Result<(), ErrorData> {
        let mut uris = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if uris.len() >= MAX_SUBSCRIPTIONS && !uris.contains_key(&uri) {
            return Err(ErrorData::invalid_params(
                format!("a session subscribes to at most {MAX_SUBSCRIPTIONS} resources"),
                None,
            ));
        }
        uris.insert(uri, caller);
        Ok(())
    }

    pub(crate) fn remove(&self, uri: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uri);
    }

    /// The URIs whose subscriber may still read them.
    fn readable(&self, host: &ToolHost) -> BTreeSet<String> {
        let uris = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        host.readable_resources(uris.iter().map(|(uri, caller)| (uri.as_str(), caller)))
    }
}

/// One notification a registry change owes a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Notice {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated(String),
}

/// What `change` owes a client subscribed to `subscribed`; `None` (changes were missed)
/// owes every list.
pub(crate) fn notices(change: Option<&RegistryChange>, subscribed: &BTreeSet<String>) -> Vec<Notice> {
    let Some(change) = change else {
        let lists = [Notice::ToolsChanged, Notice::PromptsChanged, Notice::ResourcesChanged];
        return lists.into_iter().chain(subscribed.iter().cloned().map(Notice::ResourceUpdated)).collect();
    };
    let mut owed = Vec::new();
    if change.tools_changed() {
        owed.push(Notice::ToolsChanged);
    }
    if change.prompts_changed {
        owed.push(Notice::PromptsChanged);
    }
    if change.resources_changed {
        owed.push(Notice::ResourcesChanged);
    }
    let updated = change.resources_updated.iter().filter(|uri| subscribed.contains(*uri));
    owed.extend(updated.cloned().map(Notice::ResourceUpdated));
    owed
}

/// Forwards changes to a session until `stop` completes or the client is gone.
pub(crate) async fn to_session(
    peer: Peer<RoleServer>,
    host: ToolHost,
    stop: impl Future,
    subscriptions: Subscriptions,
) {
    forward(
        host.subscribe(),
        stop,
        || subscriptions.readable(&host),
        |notice| {
            let peer = peer.clone();
            async move {
                match notice {
                    Notice::ToolsChanged => peer.notify_tool_list_changed().await,
                    Notice::PromptsChanged => peer.notify_prompt_list_changed().await,
                    Notice::ResourcesChanged => peer.notify_resource_list_changed().await,
                    Notice::ResourceUpdated(uri) => {
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri)).await
                    }
                }
                .is_ok()
            }
        },
    )
    .await;
}

/// Forwards to a stateless client what its `subscriptions/listen` filter accepted, of
/// the resources `caller` may read at the time of a change.
pub(crate) async fn to_listener(sink: SubscriptionSink, accepted: SubscriptionFilter, host: ToolHost, caller: Caller) {
    let subscribed: BTreeSet<String> = accepted.resource_subscriptions.iter().flatten().cloned().collect();
    let readable = || host.readable_resources(subscribed.iter().map(|uri| (uri.as_str(), &caller)));
    let wanted = |on: Option<bool>| on == Some(true);
    let accepted = &accepted;
    forward(host.subscribe(), std::future::pending::<()>(), readable, |notice| {
        let sink = sink.clone();
        async move {
            match notice {
                Notice::ToolsChanged if wanted(accepted.tools_list_changed) => sink.notify_tool_list_changed().await,
                Notice::PromptsChanged if wanted(accepted.prompts_list_changed) => {
                    sink.notify_prompt_list_changed().await
                }
                Notice::ResourcesChanged if wanted(accepted.resources_list_changed) => {
                    sink.notify_resource_list_changed().await
                }
                Notice::ResourceUpdated(uri) => sink.notify_resource_updated(uri).await,
                _ => Ok(()),
            }
            .is_ok()
        }
    })
    .await;
}

/// Sends the notifications every change owes the client until `stop` completes, the
/// registry goes away, or a send fails (client gone). `subscribed` tells the resources
/// subscribed to at the time of a change.
async fn forward<Stop, Subscribed, Notify, Sent>(
    mut changes: Receiver<RegistryChange>,
    stop: Stop,
    subscribed: Subscribed,
    send: Notify,
) where
    Stop: Future,
    Subscribed: Fn() -> BTreeSet<String>,
    Notify: Fn(Notice) -> Sent,
    Sent: Future<Output = bool>,
{
    tokio::pin!(stop);
    loop {
        let change = tokio::select! {
            _ = &mut stop => return,
            change = changes.recv() => change,
        };
        let owed = match change {
            Ok(change) => notices(Some(&change), &subscribed()),
            Err(RecvError::Lagged(_)) => notices(None, &subscribed()),
            Err(RecvError::Closed) => return,
        };
        for notice in owed {
            tracing::debug!(?notice, "sent a change notification");
            if !send(notice).await {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_owes_what_it_changed_and_a_missed_one_owes_every_list() {
        let subscribed: BTreeSet<String> = ["docs://a".to_string()].into();
        let change = RegistryChange {
            resources_updated: vec!["docs://a".into(), "docs://b".into()],
            prompts_changed: true,
            ..RegistryChange::default()
        };
        assert_eq!(
            notices(Some(&change), &subscribed),
            [Notice::PromptsChanged, Notice::ResourceUpdated("docs://a".into())]
        );
        let tools = RegistryChange { added: vec!["math/add".into()], ..RegistryChange::default() };
        assert_eq!(notices(Some(&tools), &BTreeSet::new()), [Notice::ToolsChanged]);
        assert_eq!(notices(None, &subscribed).len(), 4);
    }
}
