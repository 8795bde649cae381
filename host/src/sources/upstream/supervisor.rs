//! Keeps each upstream server connected and its tools served: one task per server.
//!
//! connect → list → serve its tools; on `tools/list_changed` list again (at most once
//! a second, published only when the listing changed); when the connection ends (the
//! child died, the HTTP server went away), cannot be made within the connect timeout,
//! or a listing breaks a bound ([`super::listing`]), the namespace serves nothing and
//! carries a load error, and the next attempt waits a backoff (0.5 s doubling to 30 s,
//! reset by a connection that lived a minute).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::RoleClient;
use rmcp::model::{SubscriptionFilter, Tool};
use rmcp::service::{Peer, Subscription};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::client::{Connected, Connection, connect};
use super::listing::{list_tools, seconds};
use super::naming::served_names;
use super::status::{Implementation, UpstreamChanges, UpstreamState, UpstreamStatus};
use super::stdio::Unreadable;
use super::tools::Link;
use super::{DEFAULT_CONNECT_TIMEOUT, UpstreamServer, UpstreamTool};
use crate::error::{LoadError, LoadErrorKind, ToolDefError};
use crate::redact::Redactor;
use crate::tool::{Limits, check_set};

const FIRST_RETRY: Duration = Duration::from_millis(500);
const LAST_RETRY: Duration = Duration::from_secs(30);
/// A connection that lived this long was healthy: the next failure retries quickly.
const HEALTHY: Duration = Duration::from_secs(60);
/// How often a connected server is pinged.
const PING_EVERY: Duration = Duration::from_secs(10);
/// The shortest time between two listings of one connection's tools.
const RELIST_INTERVAL: Duration = Duration::from_secs(1);

/// The tools and problems of a server, published as one change of its namespace.
pub(crate) struct Publication {
    /// The layer its tools are served in.
    pub layer: String,
    /// Its namespace.
    pub namespace: String,
    /// Every tool it serves now.
    pub tools: Vec<UpstreamTool>,
    /// Why it serves nothing, or why some of its tools are not served.
    pub errors: Vec<LoadError>,
    /// Answered once the change is published, or dropped when nobody publishes any more.
    pub done: tokio::sync::oneshot::Sender<()>,
}

/// Where supervisors publish: whoever serves the tools (a host) receives and answers.
pub(crate) type Publisher = mpsc::UnboundedSender<Publication>;

/// The supervisors of a host's upstream servers, one task per server; dropping it (with
/// the last clone of the host that owns it) stops them, and with them the child
/// processes.
pub(crate) struct Supervisors {
    /// Where every supervisor publishes its server's tools.
    publisher: Publisher,
    /// The host's default limits, under a server's own.
    defaults: Limits,
    /// By server name. Changed one [`Supervisors::apply`] at a time.
    running: tokio::sync::Mutex<BTreeMap<String, Supervised>>,
}

struct Supervised {
    server: UpstreamServer,
    task: JoinHandle<()>,
    /// What its task last said of the connection.
    state: watch::Receiver<UpstreamState>,
}

impl Drop for Supervisors {
    fn drop(&mut self) {
        for supervised in self.running.get_mut().values() {
            supervised.task.abort();
        }
    }
}

impl Supervisors {
    /// Supervisors of no server yet, publishing to `publisher`.
    pub fn new(publisher: Publisher, defaults: Limits) -> Supervisors {
        Supervisors { publisher, defaults, running: tokio::sync::Mutex::default() }
    }

    /// Makes `servers` the upstream servers: starts the new ones (all at once), stops
    /// the ones no longer declared, restarts the ones declared differently, and leaves
    /// the others connected. A stopped server's namespace is gone before this returns.
    pub async fn apply(&self, servers: Vec<UpstreamServer>) -> UpstreamChanges {
        let mut running = self.running.lock().await;
        let mut changes = UpstreamChanges::default();
        let wanted: BTreeMap<String, UpstreamServer> =
            servers.into_iter().map(|server| (server.name.clone(), server)).collect();
        let gone: Vec<String> = running
            .iter()
            .filter(|(name, supervised)| wanted.get(*name) != Some(&supervised.server))
            .map(|(name, _)| name.clone())
            .collect();
        for name in gone {
            let Some(supervised) = running.remove(&name) else { continue };
            // Awaited, so that nothing it was publishing lands after the namespace is
            // cleared; dropping its future ends the connection and kills a child.
            supervised.task.abort();
            let _ = supervised.task.await;
            publish(&self.publisher, &supervised.server, Vec::new(), Vec::new()).await;
            if wanted.contains_key(&name) {
                changes.restarted.push(name);
            } else {
                changes.stopped.push(name);
            }
        }
        for (name, server) in wanted {
            if running.contains_key(&name) {
                continue;
            }
            if !changes.restarted.contains(&name) {
                changes.started.push(name.clone());
            }
            let (reported, state) = watch::channel(UpstreamState::Connecting);
            let supervisor =
                Supervisor { publisher: self.publisher.clone(), server: server.clone(), defaults: self.defaults };
            let task = tokio::spawn(async move { supervisor.supervise(reported).await });
            running.insert(name, Supervised { server, task, state });
        }
        changes
    }

    /// Waits until every server has been tried once (or `limit` passed).
    pub async fn first_attempts(&self, limit: Duration) {
        let states: Vec<watch::Receiver<UpstreamState>> =
            self.running.lock().await.values().map(|supervised| supervised.state.clone()).collect();
        let all = futures::future::join_all(states.into_iter().map(|mut state| async move {
            let _ = state.wait_for(|state| *state != UpstreamState::Connecting).await;
        }));
        let _ = tokio::time::timeout(limit, all).await;
    }

    /// Every server, by name, and how it is doing.
    pub async fn statuses(&self) -> Vec<UpstreamStatus> {
        let running = self.running.lock().await;
        running
            .values()
            .map(|supervised| UpstreamStatus {
                server: supervised.server.clone(),
                state: supervised.state.borrow().clone(),
            })
            .collect()
    }
}

/// Where a server comes from, as its load errors and listings name it: its section of
/// `toolhost.toml`.
pub(crate) fn section(server: &str) -> PathBuf {
    PathBuf::from(format!("[[upstream]] {server}"))
}

/// One server's supervisor: what it keeps connected, and where it publishes.
struct Supervisor {
    publisher: Publisher,
    server: UpstreamServer,
    defaults: Limits,
}

impl Supervisor {
    /// Keeps the server connected for as long as the task lives, saying how in `state`.
    async fn supervise(self, state: watch::Sender<UpstreamState>) {
        let mut retry = FIRST_RETRY;
        loop {
            let started = Instant::now();
            let (changed, mut changes) = mpsc::channel(1);
            let time = self.connect_time();
            let ended = match tokio::time::timeout(time, connect(&self.server, changed)).await {
                Err(_elapsed) => format!("the server did not complete `initialize` within {}", seconds(time)),
                Ok(Err(problem)) => problem,
                Ok(Ok(Connected { connection, child_group, redactor, unreadable })) => {
                    let ended = self.serve(connection, (&redactor, &unreadable), &mut changes, &state).await;
                    // The child's whole process group ends with its connection.
                    drop(child_group);
                    redactor.text(&ended).into_owned()
                }
            };
            if started.elapsed() >= HEALTHY {
                retry = FIRST_RETRY;
            }
            // The server's own words are part of it: bounded like any remote text.
            let ended = crate::text::bounded(ended, crate::text::MAX_MESSAGE);
            let problem = format!("{ended} (next attempt in {:.1} s)", retry.as_secs_f64());
            tracing::warn!(server = %self.server.name, "upstream MCP server: {}", crate::text::Escaped(&problem));
            let error = LoadError::new(
                section(&self.server.name),
                LoadErrorKind::Upstream { server: self.server.name.clone(), problem: problem.clone() },
            );
            publish(&self.publisher, &self.server, Vec::new(), vec![error]).await;
            state.send_replace(UpstreamState::Failed { problem });
            tokio::time::sleep(retry).await;
            retry = (retry * 2).min(LAST_RETRY);
        }
    }

    /// Serves the tools of a live connection, listing them again on every change, until
    /// the connection ends; returns why it ended.
    async fn serve(
        &self,
        connection: Connection,
        (redactor, unreadable): (&Arc<Redactor>, &Unreadable),
        changes: &mut mpsc::Receiver<()>,
        state: &watch::Sender<UpstreamState>,
    ) -> String {
        let link = Link::new(&connection, redactor);
        let (protocol, implementation) = described(&link.peer);
        tracing::info!(server = %self.server.name, protocol = %protocol, "upstream MCP server connected");
        let time = self.connect_time();
        let mut subscription = tokio::time::timeout(time, self.subscribe(&link.peer)).await.ok().flatten();
        let mut ended = Box::pin(connection.waiting());
        // A server that went away without closing the connection (an HTTP server that
        // died, a child that hangs) is found out by the ping it no longer answers.
        let mut unanswered = Box::pin(keep_alive(&link.peer, time));
        let (mut published, mut listed_at): (Option<Vec<Tool>>, Option<Instant>) = (None, None);
        loop {
            // However many changes a server announces, it is listed at most once per
            // RELIST_INTERVAL, and the announcements in between are one.
            let wait = listed_at.map_or(Duration::ZERO, |at| RELIST_INTERVAL.saturating_sub(at.elapsed()));
            let listed = tokio::select! {
                listed = async { tokio::time::sleep(wait).await; list_tools(&link.peer, time).await } => listed,
                reason = &mut ended => return format!("the server ended ({})", quit_reason(reason)),
                problem = &mut unanswered => return problem,
            };
            listed_at = Some(Instant::now());
            let left_out = std::mem::take(&mut *unreadable.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
            let tools = match listed {
                Ok(tools) => tools,
                Err(problem) => return problem,
            };
            // An unchanged listing changes nothing: no publication, no notification to
            // anyone's clients.
            if published.as_ref() != Some(&tools) {
                let tools_served = self.publish_tools((&tools, left_out), &link).await;
                let (protocol, implementation) = (protocol.clone(), implementation.clone());
                state.send_replace(UpstreamState::Connected { protocol, implementation, tools_served });
                published = Some(tools);
            }
            tokio::select! {
                changed = changes.recv() => {
                    if changed.is_none() {
                        return "the connection's handler stopped".to_owned();
                    }
                }
                notified = next_notification(subscription.as_mut()) => match notified {
                    Ok(Some(_)) => {}
                    // Listed once more (a change may be what was missed), then served
                    // without hearing of changes until the next connection.
                    Ok(None) | Err(_) => {
                        tracing::warn!(server = %self.server.name, "upstream MCP server ended the subscription to tool list changes");
                        subscription = None;
                    }
                },
                reason = &mut ended => return format!("the server ended ({})", quit_reason(reason)),
                problem = &mut unanswered => return problem,
            }
        }
    }

    /// How long connecting and each listing may take.
    fn connect_time(&self) -> Duration {
        self.server.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT)
    }

    /// From the 2026-07-28 revision on, a server sends list changes only on a
    /// subscription; before it, on the connection itself (the handler hears them).
    async fn subscribe(&self, peer: &Peer<RoleClient>) -> Option<Subscription> {
        let info = peer.peer_info()?;
        let announces_changes = info.capabilities.tools.as_ref().and_then(|tools| tools.list_changed);
        if info.protocol_version.has_initialize() || announces_changes != Some(true) {
            return None;
        }
        let filter = SubscriptionFilter::builder().tools_list_changed().build();
        match peer.listen(filter).await {
            Ok(subscription) => Some(subscription),
            Err(e) => {
                // Its tools still serve; only their changes go unheard until the next
                // connection.
                let problem = crate::text::Escaped(&super::client::problem(&e)).to_string();
                tracing::warn!(server = %self.server.name, "upstream MCP server: `subscriptions/listen` failed: {problem}");
                None
            }
        }
    }

    /// Makes the listed tools the server's namespace: each made by the rules every
    /// tool obeys, a tool that breaks one left out with its error. Returns how many
    /// are served.
    async fn publish_tools(&self, (tools, unreadable): (&[Tool], Vec<ToolDefError>), link: &Link) -> usize {
        let error = |refused| LoadError::new(section(&self.server.name), LoadErrorKind::Tool(refused));
        let (mut served, mut errors) = (Vec::with_capacity(tools.len()), Vec::new());
        errors.extend(unreadable.into_iter().map(error));
        // The server's name is its tools' namespace: a name `toolhost.toml` did not
        // check (an embedder's) serves nothing, as a native tool's namespace would not.
        if let Err(problem) = crate::names::validate_namespace(&self.server.name) {
            let refused = LoadError::new(section(&self.server.name), LoadErrorKind::BadName(problem));
            tracing::warn!("{}", crate::text::Escaped(&refused.to_string()));
            publish(&self.publisher, &self.server, served, vec![refused]).await;
            return 0;
        }
        let remote_names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        let names = served_names(&remote_names, &self.server.rename);
        match check_set(names.iter().map(String::as_str)) {
            Err(refused) => errors.push(error(refused)),
            Ok(()) => {
                for (tool, name) in tools.iter().zip(&names) {
                    match UpstreamTool::new(&self.server, (tool, name), link, self.defaults) {
                        Ok(tool) => served.push(tool),
                        Err(refused) => errors.push(error(refused)),
                    }
                }
            }
        }
        for refused in &errors {
            tracing::warn!("{}", crate::text::Escaped(&refused.to_string()));
        }
        let count = served.len();
        publish(&self.publisher, &self.server, served, errors).await;
        count
    }
}

/// The revision a connection speaks, and what the server says it is.
fn described(peer: &Peer<RoleClient>) -> (String, Option<Implementation>) {
    let info = peer.peer_info();
    let protocol = info.as_ref().map(|info| info.protocol_version.to_string()).unwrap_or_default();
    let implementation = info.as_ref().and_then(|info| info.server_info.as_ref()).map(|implementation| {
        Implementation { name: implementation.name.clone(), version: implementation.version.clone() }
    });
    (protocol, implementation)
}

/// Pings the server every [`PING_EVERY`]; completes, with why, when a ping is not
/// answered within `time`.
async fn keep_alive(peer: &Peer<RoleClient>, time: Duration) -> String {
    use rmcp::model::{ClientRequest, PingRequest};
    loop {
        tokio::time::sleep(PING_EVERY).await;
        let ping =
            ClientRequest::PingRequest(PingRequest { method: Default::default(), extensions: Default::default() });
        match tokio::time::timeout(time, peer.send_request(ping)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return format!("the server did not answer a ping: {}", super::client::problem(&e)),
            Err(_elapsed) => return format!("the server did not answer a ping within {}", seconds(time)),
        }
    }
}

/// The next notification of `subscription`; never, without one.
async fn next_notification(
    subscription: Option<&mut Subscription>,
) -> Result<Option<rmcp::model::ServerNotification>, rmcp::ServiceError> {
    match subscription {
        Some(subscription) => subscription.next().await,
        None => std::future::pending().await,
    }
}

fn quit_reason(reason: Result<rmcp::service::QuitReason, tokio::task::JoinError>) -> String {
    match reason {
        Ok(reason) => format!("{reason:?}"),
        Err(e) => e.to_string(),
    }
}

/// Makes `tools` the whole namespace of `server`, with `errors` as its load errors, and
/// waits until it is published.
async fn publish(publisher: &Publisher, server: &UpstreamServer, tools: Vec<UpstreamTool>, errors: Vec<LoadError>) {
    let (done, published) = tokio::sync::oneshot::channel();
    let (layer, namespace) = (server.layer.clone(), server.name.clone());
    if publisher.send(Publication { layer, namespace, tools, errors, done }).is_ok() {
        let _ = published.await;
    }
}
