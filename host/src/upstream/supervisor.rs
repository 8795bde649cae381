//! Keeps each upstream server connected and its tools served: one task per server.
//!
//! connect → list → serve its tools; on `tools/list_changed` list again; when the
//! connection ends (the child died, the HTTP server went away) or cannot be made, the
//! namespace serves nothing and carries a load error, and the next attempt waits a
//! backoff (0.5 s doubling to 30 s, reset by a connection that lived a minute).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::UpstreamServer;
use super::client::{Connection, connect};
use super::tools::upstream_tool;
use crate::error::{LoadError, LoadErrorKind};
use crate::host::ToolHost;
use crate::native::NativeTool;

const FIRST_RETRY: Duration = Duration::from_millis(500);
const LAST_RETRY: Duration = Duration::from_secs(30);
/// A connection that lived this long was healthy: the next failure retries quickly.
const HEALTHY: Duration = Duration::from_secs(60);

/// The supervisors of a host's upstream servers; dropping it (with the last clone of
/// the host that owns it) stops them, and with them the child processes.
pub(crate) struct Supervisors {
    stop: CancellationToken,
    /// One per server: true once its first attempt (listed, or failed) is over.
    first_attempts: Vec<watch::Receiver<bool>>,
}

impl Drop for Supervisors {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl Supervisors {
    /// Starts one supervisor per server, all at once. `host` must not own these
    /// supervisors (it would never be dropped).
    pub fn start(host: ToolHost, servers: Vec<UpstreamServer>) -> Supervisors {
        let stop = CancellationToken::new();
        let mut first_attempts = Vec::with_capacity(servers.len());
        for server in servers {
            let (attempted, first_attempt) = watch::channel(false);
            first_attempts.push(first_attempt);
            let (host, stop) = (host.clone(), stop.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = supervise(&host, &server, attempted) => {}
                    () = stop.cancelled() => {}
                }
            });
        }
        Supervisors { stop, first_attempts }
    }

    /// Waits until every server has been tried once (or `limit` passed).
    pub async fn first_attempts(&self, limit: Duration) {
        let all = futures::future::join_all(self.first_attempts.iter().cloned().map(|mut attempted| async move {
            let _ = attempted.wait_for(|done| *done).await;
        }));
        let _ = tokio::time::timeout(limit, all).await;
    }
}

/// The path a server's load errors name: its section of `toolhost.toml`.
pub(crate) fn error_path(server: &str) -> PathBuf {
    PathBuf::from(format!("[[upstream]] {server}"))
}

async fn supervise(host: &ToolHost, server: &UpstreamServer, attempted: watch::Sender<bool>) {
    let mut retry = FIRST_RETRY;
    loop {
        let started = Instant::now();
        let (changed, mut changes) = mpsc::channel(1);
        let ended = match connect(server, changed).await {
            Ok(connection) => serve(host, server, connection, &mut changes, &attempted).await,
            Err(problem) => problem,
        };
        if started.elapsed() >= HEALTHY {
            retry = FIRST_RETRY;
        }
        let problem = format!("{ended} (next attempt in {:.1} s)", retry.as_secs_f64());
        tracing::warn!(server = %server.name, "upstream MCP server: {}", crate::text::Escaped(&problem));
        publish(host, server, Vec::new(), Some(problem)).await;
        attempted.send_replace(true);
        tokio::time::sleep(retry).await;
        retry = (retry * 2).min(LAST_RETRY);
    }
}

/// Serves the tools of a live connection, listing them again on every change, until
/// the connection ends; returns why it ended.
async fn serve(
    host: &ToolHost,
    server: &UpstreamServer,
    connection: Connection,
    changes: &mut mpsc::Receiver<()>,
    attempted: &watch::Sender<bool>,
) -> String {
    let peer = connection.peer().clone();
    let mut ended = Box::pin(connection.waiting());
    loop {
        let listed = tokio::select! {
            listed = peer.list_all_tools() => listed,
            reason = &mut ended => return format!("the server ended ({})", quit_reason(reason)),
        };
        let tools = match listed {
            Ok(tools) => tools,
            Err(e) => return format!("`tools/list` failed: {e}"),
        };
        let mut served = Vec::with_capacity(tools.len());
        let mut refused = Vec::new();
        for tool in &tools {
            match upstream_tool(&server.name, tool, &peer, server.timeout, server.max_response) {
                Ok(native) => served.push(native),
                Err(problem) => refused.push(problem),
            }
        }
        let error = (!refused.is_empty()).then(|| format!("tools not served: {}", refused.join("; ")));
        publish(host, server, served, error).await;
        attempted.send_replace(true);
        tokio::select! {
            changed = changes.recv() => {
                if changed.is_none() {
                    return "the connection's handler stopped".to_owned();
                }
            }
            reason = &mut ended => return format!("the server ended ({})", quit_reason(reason)),
        }
    }
}

fn quit_reason(reason: Result<rmcp::service::QuitReason, tokio::task::JoinError>) -> String {
    match reason {
        Ok(reason) => format!("{reason:?}"),
        Err(e) => e.to_string(),
    }
}

/// Makes `tools` the whole namespace of `server`, with `problem` as its load error.
async fn publish(host: &ToolHost, server: &UpstreamServer, tools: Vec<NativeTool>, problem: Option<String>) {
    let error = problem.map(|problem| {
        LoadError::new(error_path(&server.name), LoadErrorKind::Upstream { server: server.name.clone(), problem })
    });
    if let Err(problem) = host.replace_source(&server.layer, &server.name, tools, error).await {
        tracing::error!(server = %server.name, "upstream MCP server: {problem}");
    }
}
