//! A `tools/call` run past the SDK's service loop, by the transport that read it
//! (stdio: [`crate::serve::stdio`]; an HTTP session: [`crate::serve::direct`]).
//!
//! The SDK runs every request as a chain of tasks, and on HTTP sessions behind a
//! session worker as well; each hand-off can wake the other core. A call run here goes
//! through the same handler with a context of the same parts the SDK builds
//! ([`start`]), and the transport answers it where it read it. What the SDK would do
//! around it is kept: the calls in flight are known by request id
//! ([`CallsInFlight`]), so `notifications/cancelled` and the end of the session stop
//! them, and a stopped call gets no answer.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    ClientRequest, Extensions, GetExtensions, GetMeta, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer, Service};
use tokio_util::sync::CancellationToken;

use crate::serve::mcp::McpServer;

/// The calls of one session run here and not yet answered, by request id.
#[derive(Default)]
pub(super) struct CallsInFlight {
    running: Mutex<HashMap<RequestId, CancellationToken>>,
    /// Stops every call at the end of the session.
    closing: CancellationToken,
    /// Told when a call ends.
    ended: tokio::sync::Notify,
}

impl CallsInFlight {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, CancellationToken>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn end(&self, id: &RequestId) {
        self.running().remove(id);
        self.ended.notify_waiters();
    }

    /// Stops call `id` if it runs here (`notifications/cancelled`); it gets no answer.
    pub(super) fn cancel(&self, id: &RequestId) {
        if let Some(cancel) = self.running().remove(id) {
            cancel.cancel();
        }
    }

    /// Stops every call at once (the session is gone).
    pub(super) fn stop_all(&self) {
        self.closing.cancel();
    }

    /// Waits up to `grace` for the calls running to end, then stops the rest.
    pub(super) async fn close(&self, grace: Duration) {
        let _ = tokio::time::timeout(grace, async {
            loop {
                let ended = self.ended.notified();
                tokio::pin!(ended);
                ended.as_mut().enable();
                if self.running().is_empty() {
                    return;
                }
                ended.await;
            }
        })
        .await;
        self.closing.cancel();
    }
}

/// A call's work: its answer, or `None` when it was stopped and gets none.
pub(super) type CallWork = std::pin::Pin<Box<dyn Future<Output = Option<ServerJsonRpcMessage>> + Send>>;

/// Starts `request` (a `tools/call` of request `id`) as the SDK would run it: `handler`
/// with a context of `peer`, the request's meta and extensions, and a cancellation
/// token of `calls`. The call counts as in flight until the returned [`Running`] is
/// dropped: a transport keeps it until the answer is written.
pub(super) fn start(
    calls: &Arc<CallsInFlight>,
    handler: Arc<McpServer>,
    peer: Peer<RoleServer>,
    id: RequestId,
    mut request: ClientRequest,
) -> (Running, CallWork) {
    let cancel = calls.closing.child_token();
    calls.running().insert(id.clone(), cancel.clone());
    let running = Running { calls: calls.clone(), id: id.clone() };
    let mut meta = RequestMetaObject::new();
    let mut extensions = Extensions::new();
    // The meta first: it lives among the extensions.
    std::mem::swap(&mut meta, request.get_meta_mut());
    std::mem::swap(&mut extensions, request.extensions_mut());
    let mut context = RequestContext::new(id.clone(), peer);
    context.ct = cancel.clone();
    context.meta = meta;
    context.extensions = extensions;
    let work = Box::pin(async move {
        let result = handler.handle_request(request, context).await;
        // Cancelled by the client, or stopped at the end of the session: no answer.
        if cancel.is_cancelled() {
            return None;
        }
        Some(match result {
            Ok(result) => ServerJsonRpcMessage::response(result, id),
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        })
    });
    (running, work)
}

/// A call in [`CallsInFlight`] until this is dropped: when it is answered, or panics,
/// or the runtime drops it.
pub(super) struct Running {
    calls: Arc<CallsInFlight>,
    id: RequestId,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.calls.end(&self.id);
    }
}
