//! A `tools/call` run past the SDK's service loop, by the transport that read it.
//!
//! A `tools/call` run past the SDK's service loop, by the transport that read it
//! (stdio: [`crate::serve::stdio`]; an HTTP session: [`crate::serve::http::direct`]).
//!
//! The SDK runs every request as a chain of tasks, and on HTTP sessions behind a
//! session worker as well; each hand-off can wake the other core. A call run here goes
//! through the same handler with a context of the same parts the SDK builds
//! ([`start`]), and the transport answers it where it read it. What the SDK would do
//! around it is kept: the calls in flight are known by request id
//! ([`CallsInFlight`]), so `notifications/cancelled` and the end of the session stop
//! them, and a stopped call gets no answer.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, ClientRequest, Extensions, GetExtensions, GetMeta, JsonRpcMessage,
    JsonRpcNotification, RequestId, RequestMetaObject, ServerJsonRpcMessage,
};
use rmcp::service::{Peer, RequestContext, RoleServer, Service};
use tokio_util::sync::CancellationToken;

use super::McpServer;

/// The calls of one session run here and not yet answered, by request id.
#[derive(Default)]
pub(crate) struct CallsInFlight {
    /// Each call's token, with the number of its start: a client may reuse an id, and a
    /// call that ends takes out its own entry only.
    running: Mutex<HashMap<RequestId, (u64, CancellationToken)>>,
    starts: AtomicU64,
    /// Stops every call at the end of the session.
    closing: CancellationToken,
    /// Told when a call ends.
    ended: tokio::sync::Notify,
}

impl CallsInFlight {
    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, (u64, CancellationToken)>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn begin(self: &Arc<Self>, id: &RequestId) -> (Running, CancellationToken) {
        let start = self.starts.fetch_add(1, Ordering::Relaxed);
        let cancel = self.closing();
        self.running().insert(id.clone(), (start, cancel.clone()));
        (Running { calls: self.clone(), id: id.clone(), start }, cancel)
    }

    fn end(&self, id: &RequestId, start: u64) {
        let mut running = self.running();
        if running.get(id).is_some_and(|(started, _)| *started == start) {
            running.remove(id);
        }
        drop(running);
        self.ended.notify_waiters();
    }

    /// Stops call `id` if it runs here (`notifications/cancelled`); it gets no answer.
    pub(crate) fn cancel(&self, id: &RequestId) {
        if let Some((_, cancel)) = self.running().remove(id) {
            cancel.cancel();
        }
    }

    /// A token cancelled when every call stops ([`CallsInFlight::stop_all`], or the end
    /// of [`CallsInFlight::close`]).
    pub(crate) fn closing(&self) -> CancellationToken {
        self.closing.child_token()
    }

    /// Stops every call at once (the session is gone).
    pub(crate) fn stop_all(&self) {
        self.closing.cancel();
    }

    /// Waits up to `grace` for the calls running to end, then stops the rest.
    pub(crate) async fn close(&self, grace: Duration) {
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
pub(crate) type CallWork = Pin<Box<dyn Future<Output = Option<ServerJsonRpcMessage>> + Send>>;

/// Starts `request` (a `tools/call` of request `id`) as the SDK would run it: `handler`
/// with a context of `peer`, the request's meta and extensions, and a cancellation
/// token of `calls`. The call counts as in flight until the returned [`Running`] is
/// dropped: a transport keeps it until the answer is written.
pub(crate) fn start(
    calls: &Arc<CallsInFlight>,
    handler: Arc<McpServer>,
    peer: Peer<RoleServer>,
    id: RequestId,
    mut request: ClientRequest,
) -> (Running, CallWork) {
    let (running, cancel) = calls.begin(&id);
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

/// Polls a call's `work` once, catching a panic: the panic ends only that call, which
/// gets no answer (`Ready(None)`), as it would on a task of its own.
pub(crate) fn poll_call<F: Future + Unpin>(work: &mut F, context: &mut Context<'_>) -> Poll<Option<F::Output>> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| Pin::new(work).poll(context))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(output)) => Poll::Ready(Some(output)),
        Err(_) => {
            tracing::error!("a tools/call panicked; it gets no answer");
            Poll::Ready(None)
        }
    }
}

/// A call in [`CallsInFlight`] until this is dropped: when it is answered, or panics,
/// or the runtime drops it.
pub(crate) struct Running {
    calls: Arc<CallsInFlight>,
    id: RequestId,
    start: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.calls.end(&self.id, self.start);
    }
}

/// The request a `notifications/cancelled` names, if `message` is one.
pub(crate) fn cancelled_request(message: &ClientJsonRpcMessage) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ClientNotification::CancelledNotification(cancelled),
            ..
        }) => cancelled.params.request_id.as_ref(),
        _ => None,
    }
}
