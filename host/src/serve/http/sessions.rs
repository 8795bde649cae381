//! The MCP sessions of the HTTP server, bounded in number, streams and idle time.
//!
//! The MCP sessions of the HTTP server, bounded: how many may be open at once, how many
//! streams each may hold, and how long one may sit unused before it is closed.
//!
//! [`BoundedSessions`] is the SDK's in-memory session manager with a ledger beside it:
//! sessions are opened and closed only through it (the SDK closes every session through
//! its manager, whichever way it ended), so the ledger holds exactly the live sessions.
//! Idle expiry is the ledger's and not the SDK's keep-alive, which counts only messages:
//! the SDK would close a session in the middle of a long call or while its client waits
//! on an open event stream, where the ledger counts open streams as use.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::{Stream, StreamExt};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError, LocalSessionWorker,
};
use rmcp::transport::streamable_http_server::session::{ServerSseMessage, SessionId, SessionManager};
use tokio_util::sync::CancellationToken;

use crate::serve::http::direct::{DirectCalls, Route};
use crate::serve::http::limits::HttpLimits;

tokio::task_local! {
    /// The session limit, set when [`BoundedSessions::create_session`] refused a session
    /// for the request this task is answering. The SDK turns any error of a session
    /// manager into a `500` in plain text; this lets the middleware answer `503` with a
    /// JSON-RPC error instead.
    static REFUSED_AT: Cell<Option<usize>>;
}

/// Runs `answer` (the SDK answering one request) and returns its output and, when a
/// session was refused for want of room meanwhile, the session limit.
pub(crate) async fn noting_refusal<F: Future>(answer: F) -> (F::Output, Option<usize>) {
    REFUSED_AT.scope(Cell::new(None), async move { (answer.await, REFUSED_AT.with(Cell::get)) }).await
}

/// A session manager that keeps at most `max_sessions` sessions, at most
/// `max_streams_per_session` streams open in each, and closes sessions idle for
/// `session_idle_timeout` ([`BoundedSessions::close_idle`]).
pub(crate) struct BoundedSessions {
    local: LocalSessionManager,
    /// Answers the sessions' calls that need not go through their workers.
    direct: DirectCalls,
    max_sessions: usize,
    max_streams: usize,
    idle_timeout: Duration,
    ledger: Mutex<HashMap<SessionId, Usage>>,
    /// Held while a session is counted and created, so that two `initialize` requests
    /// at once cannot both take the last place.
    opening: tokio::sync::Mutex<()>,
}

/// What the ledger knows of a live session.
struct Usage {
    id: SessionId,
    open_streams: usize,
    last_used: Instant,
}

impl Usage {
    fn idle_for(&self, timeout: Duration, now: Instant) -> bool {
        self.open_streams == 0 && now.saturating_duration_since(self.last_used) >= timeout
    }
}

/// A session already holds as many open streams as it may.
#[derive(Debug, thiserror::Error)]
#[error("this session already has {max} streams open (event streams and calls being answered), the most it may")]
pub(crate) struct StreamsFull {
    pub(crate) max: usize,
}

/// Why a session operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionsError {
    #[error("{max} MCP sessions are open, the most this server keeps")]
    Full { max: usize },
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
}

impl BoundedSessions {
    pub(crate) fn new(limits: &HttpLimits, direct: DirectCalls) -> Arc<BoundedSessions> {
        let mut local = LocalSessionManager::default();
        // The ledger expires idle sessions (see the module's documentation).
        local.session_config.keep_alive = None;
        Arc::new(BoundedSessions {
            local,
            direct,
            max_sessions: limits.max_sessions,
            max_streams: limits.max_streams_per_session,
            idle_timeout: limits.session_idle_timeout,
            ledger: Mutex::new(HashMap::new()),
            opening: tokio::sync::Mutex::new(()),
        })
    }

    /// The ids of the live sessions.
    pub(crate) fn live_ids(&self) -> HashSet<String> {
        self.ledger().keys().map(|id| id.to_string()).collect()
    }

    /// Counts a stream opening in `session` (a `GET` event stream, a `POST` being
    /// answered) until the returned slot is dropped. `None` for a session that does not
    /// exist, which the SDK answers `404`.
    pub(crate) fn open_stream(self: &Arc<Self>, session: &str) -> Result<Option<StreamSlot>, StreamsFull> {
        let mut ledger = self.ledger();
        let Some(usage) = ledger.get_mut(session) else {
            return Ok(None);
        };
        if usage.open_streams >= self.max_streams {
            return Err(StreamsFull { max: self.max_streams });
        }
        usage.open_streams += 1;
        usage.last_used = Instant::now();
        Ok(Some(StreamSlot { sessions: self.clone(), id: usage.id.clone() }))
    }

    /// Closes every session idle for the idle timeout, checking a few times per timeout,
    /// until `stop` is cancelled.
    pub(crate) async fn close_idle(self: Arc<Self>, stop: CancellationToken) {
        let period = (self.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        let mut ticks = tokio::time::interval(period);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = stop.cancelled() => return,
            }
            let now = Instant::now();
            let idle: Vec<SessionId> = {
                let mut ledger = self.ledger();
                let idle: Vec<SessionId> = ledger
                    .values()
                    .filter(|usage| usage.idle_for(self.idle_timeout, now))
                    .map(|u| u.id.clone())
                    .collect();
                for id in &idle {
                    ledger.remove(id);
                }
                idle
            };
            for id in idle {
                self.direct.sessions().closed(&id);
                match self.local.close_session(&id).await {
                    Ok(()) => tracing::debug!(idle_for = ?self.idle_timeout, "closed an idle MCP session"),
                    Err(e) => tracing::warn!("cannot close an idle MCP session: {e}"),
                }
            }
        }
    }

    fn ledger(&self) -> MutexGuard<'_, HashMap<SessionId, Usage>> {
        self.ledger.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// One open stream of a session; dropping it closes the stream's place and marks the
/// session used now.
pub(crate) struct StreamSlot {
    sessions: Arc<BoundedSessions>,
    id: SessionId,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        if let Some(usage) = self.sessions.ledger().get_mut(&self.id) {
            usage.open_streams = usage.open_streams.saturating_sub(1);
            usage.last_used = Instant::now();
        }
    }
}

impl SessionManager for BoundedSessions {
    type Error = SessionsError;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let _opening = self.opening.lock().await;
        if self.ledger().len() >= self.max_sessions {
            let _ = REFUSED_AT.try_with(|refused| refused.set(Some(self.max_sessions)));
            tracing::warn!(max_sessions = self.max_sessions, "refused a new MCP session: the server keeps no more");
            return Err(SessionsError::Full { max: self.max_sessions });
        }
        let (id, transport) = self.local.create_session().await?;
        let usage = Usage { id: id.clone(), open_streams: 0, last_used: Instant::now() };
        self.ledger().insert(id.clone(), usage);
        self.direct.sessions().opened(&id);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.local.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.local.has_session(id).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.ledger().remove(id);
        self.direct.sessions().closed(id);
        Ok(self.local.close_session(id).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        match self.direct.route(id, message) {
            Route::Here(answer) => Ok(answer.left_stream()),
            Route::Sdk(message) => Ok(self.local.create_stream(id, *message).await?.right_stream()),
        }
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        // The SDK's own calls are cancelled by it.
        self.direct.sessions().cancel(id, &message);
        Ok(self.local.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.local.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_sessions: usize, max_streams: usize, idle: Duration) -> HttpLimits {
        HttpLimits {
            max_sessions,
            max_streams_per_session: max_streams,
            session_idle_timeout: idle,
            ..HttpLimits::default()
        }
    }

    /// Sessions of a host without tools.
    async fn bounded(limits: &HttpLimits) -> Arc<BoundedSessions> {
        let tools = tempfile::tempdir().unwrap();
        let host = crate::ToolHost::builder().root(tools.path()).build().await.unwrap();
        let key = crate::serve::ApprovalKey::random().unwrap();
        let direct = Arc::new(super::super::direct::DirectSessions::default());
        let shared = crate::serve::mcp::Shared::start(
            host,
            crate::policy::Caller::local(),
            key,
            Some(direct.clone()),
            crate::policy::ApproveVia::Client,
        );
        BoundedSessions::new(limits, DirectCalls::new(crate::serve::mcp::McpServer::new(shared), direct))
    }

    #[tokio::test]
    async fn sessions_are_counted_and_a_closed_one_frees_its_place() {
        let sessions = bounded(&limits(1, 4, Duration::from_secs(60))).await;
        let (first, _transport) = sessions.create_session().await.unwrap();
        let (refused, refused_at) = noting_refusal(sessions.create_session()).await;
        assert!(matches!(refused, Err(SessionsError::Full { max: 1 })));
        assert_eq!(refused_at, Some(1), "the refusal is noted for the middleware");
        assert_eq!(noting_refusal(async {}).await.1, None);
        sessions.close_session(&first).await.unwrap();
        assert!(sessions.create_session().await.is_ok(), "the closed session's place is free");
    }

    #[tokio::test]
    async fn streams_are_capped_per_session_and_freed_when_dropped() {
        let sessions = bounded(&limits(4, 2, Duration::from_secs(60))).await;
        let (id, _transport) = sessions.create_session().await.unwrap();
        let first = sessions.open_stream(&id).unwrap().expect("a live session");
        let _second = sessions.open_stream(&id).unwrap().expect("a live session");
        assert_eq!(sessions.open_stream(&id).err().map(|full| full.max), Some(2));
        drop(first);
        assert!(sessions.open_stream(&id).unwrap().is_some(), "a closed stream frees its place");
        assert!(sessions.open_stream("no-such-session").unwrap().is_none(), "unknown sessions are the SDK's to answer");
    }

    #[tokio::test]
    async fn idle_sessions_close_and_busy_ones_stay() {
        let sessions = bounded(&limits(4, 4, Duration::from_millis(200))).await;
        let (idle, _idle_transport) = sessions.create_session().await.unwrap();
        let (busy, _busy_transport) = sessions.create_session().await.unwrap();
        let _stream = sessions.open_stream(&busy).unwrap().expect("a live session");
        let stop = CancellationToken::new();
        let sweeper = tokio::spawn(sessions.clone().close_idle(stop.clone()));
        tokio::time::sleep(Duration::from_millis(600)).await;
        let live = sessions.live_ids();
        assert!(!live.contains(&*idle), "the idle session was closed");
        assert!(!sessions.has_session(&idle).await.unwrap(), "and the SDK forgot it too");
        assert!(live.contains(&*busy), "a session with an open stream is in use");
        stop.cancel();
        sweeper.await.unwrap();
    }
}
