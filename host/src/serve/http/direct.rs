//! `tools/call` on an HTTP session, answered on the connection that brought it, past the SDK's session worker.
//!
//! `tools/call` on an HTTP session, answered on the connection that brought it rather
//! than through the SDK's session worker.
//!
//! Through the SDK, a session's call goes from the connection's task to the session's
//! worker, to the session's service loop, to a task of its own, and back the same way
//! to the response's event stream: each hand-off can wake the other core (5.4–5.7
//! context switches and 260–300 µs of server CPU per sequential call, measured). Here the
//! session manager ([`crate::serve::http::sessions`]) hands such a call to [`DirectCalls`]
//! once the SDK has checked the request (host, origin, session, protocol headers):
//! the response's event stream runs the handler itself, on the connection's task, with
//! the session's peer and a context of the same parts ([`inline::start`]).
//!
//! Only a call that will ask its client nothing goes this way. The SDK routes a
//! server's request or progress notification to the stream of the request it belongs
//! to, which only its worker knows; so a call with a progress token, or one the policy
//! makes ask the client for approval, goes through the SDK. A call that comes to need
//! approval after that check (the policy changed meanwhile) is denied, not asked: its
//! stream can carry only its answer (`NoQuestions`).
//!
//! What the SDK does for its own calls holds here too: `notifications/cancelled`
//! stops a call and it gets no answer, a client that goes away stops it, and so does
//! the end of its session. The stream differs in one way: the SDK starts a request's
//! stream with a priming event and numbers its events, so that a client may resume it
//! (`Last-Event-ID`); a direct call's stream has neither, and a client that loses it
//! does not try. Resuming would find nothing on either path: a call whose client went
//! away has been stopped ([`crate::serve::http::middleware::cancel_on_disconnect`]).
//!
//! The call runs as its response is written: a client that stops reading its
//! connection (past the socket's buffers) pauses its call, slot and all, where the
//! SDK's call would run on. The server's limits on a session's streams bound what such
//! a client holds.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, GetExtensions, JsonRpcMessage};
use rmcp::service::{Peer, RoleServer};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use tokio_util::sync::CancellationToken;

use crate::serve::mcp::{
    CallWork, CallsInFlight, McpServer, NoQuestions, Running, SessionEvents, cancelled_request, poll_call, start_inline,
};

/// The live HTTP sessions, from their opening to their end, each with its calls
/// answered directly and, once initialized, its peer.
#[derive(Default)]
pub(crate) struct DirectSessions {
    sessions: Mutex<HashMap<String, DirectSession>>,
}

struct DirectSession {
    /// Set when the SDK tells the handler the session is initialized: its calls may be
    /// answered directly from then on.
    peer: Option<Peer<RoleServer>>,
    /// The calls answered directly; its closing token also stops the calls the SDK runs
    /// ([`DirectSessions::closing`]).
    calls: Arc<CallsInFlight>,
}

impl DirectSessions {
    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, DirectSession>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Session `id` is open (the session manager created it).
    pub(crate) fn opened(&self, id: &str) {
        self.sessions().insert(id.to_owned(), DirectSession { peer: None, calls: Arc::default() });
    }

    /// Session `id` is closed: its calls stop, without an answer, those answered here
    /// and those the SDK runs ([`DirectSessions::closing`]).
    pub(crate) fn closed(&self, id: &str) {
        if let Some(session) = self.sessions().remove(id) {
            session.calls.stop_all();
        }
    }

    /// Stops the call `message` cancels (`notifications/cancelled`), if it runs here.
    pub(crate) fn cancel(&self, id: &str, message: &ClientJsonRpcMessage) {
        let Some(request_id) = cancelled_request(message) else { return };
        let calls = self.sessions().get(id).map(|session| session.calls.clone());
        if let Some(calls) = calls {
            calls.cancel(request_id);
        }
    }

    fn session(&self, id: &str) -> Option<(Peer<RoleServer>, Arc<CallsInFlight>)> {
        let sessions = self.sessions();
        let session = sessions.get(id)?;
        let peer = session.peer.as_ref().filter(|peer| !peer.is_transport_closed())?;
        Some((peer.clone(), session.calls.clone()))
    }
}

impl SessionEvents for DirectSessions {
    /// Session `id` is initialized. The SDK tells this on a task of its own, which may
    /// run after the session closed: a session no longer open stays forgotten.
    fn initialized(&self, id: &str, peer: Peer<RoleServer>) {
        if let Some(session) = self.sessions().get_mut(id)
            && session.peer.is_none()
        {
            session.peer = Some(peer);
        }
    }

    /// Cancelled when session `id` closes (at once when it is not open): a call the SDK
    /// runs stops on it. The SDK would stop its own calls only after giving them 5 s to
    /// end, which a session's `DELETE` does not ask for.
    fn closing(&self, id: &str) -> CancellationToken {
        match self.sessions().get(id) {
            Some(session) => session.calls.closing(),
            None => {
                let closed = CancellationToken::new();
                closed.cancel();
                closed
            }
        }
    }
}

/// Answers the `tools/call`s of HTTP sessions that may skip the SDK's session worker.
pub(crate) struct DirectCalls {
    handler: Arc<McpServer>,
    sessions: Arc<DirectSessions>,
}

impl DirectCalls {
    /// Calls run by `handler` (a handler of the server's shared state: a call uses
    /// nothing of its session's own handler) for the `sessions` that `handler`'s shared
    /// state tells of their lifecycle.
    pub(crate) fn new(handler: McpServer, sessions: Arc<DirectSessions>) -> DirectCalls {
        DirectCalls { handler: Arc::new(handler), sessions }
    }

    pub(crate) fn sessions(&self) -> &DirectSessions {
        &self.sessions
    }

    /// Who answers `message`, a request of session `id`: here when it is a call that
    /// may skip the session's worker, else the SDK.
    pub(crate) fn route(&self, id: &str, message: ClientJsonRpcMessage) -> Route {
        let JsonRpcMessage::Request(mut request) = message else { return Route::Sdk(Box::new(message)) };
        let direct = match &request.request {
            ClientRequest::CallToolRequest(_) => self.sessions().session(id),
            _ => None,
        };
        let Some((peer, calls)) = direct.filter(|_| self.handler.answers_without_asking(&request.request)) else {
            return Route::Sdk(Box::new(JsonRpcMessage::Request(request)));
        };
        request.request.extensions_mut().insert(NoQuestions);
        let (running, work) = start_inline(&calls, self.handler.clone(), peer, request.id, request.request);
        Route::Here(DirectAnswer { call: Mutex::new(Some((running, work))) })
    }
}

/// Who answers a request of a session.
pub(crate) enum Route {
    /// This stream, a call answered directly.
    Here(DirectAnswer),
    Sdk(Box<ClientJsonRpcMessage>),
}

/// The event stream of a call answered directly: the call runs as the stream is
/// polled (on the connection's task), and its answer is the stream's one event. A
/// call stopped meanwhile ends the stream without one; dropping the stream (the client
/// went away) drops the call, which stops it.
pub(crate) struct DirectAnswer {
    /// Behind a mutex only because the SDK wants a `Sync` stream: polling has `&mut`
    /// access and never locks.
    call: Mutex<Option<(Running, CallWork)>>,
}

impl Stream for DirectAnswer {
    type Item = ServerSseMessage;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<ServerSseMessage>> {
        let call = self.get_mut().call.get_mut().unwrap_or_else(PoisonError::into_inner);
        let Some((_running, work)) = call else { return Poll::Ready(None) };
        let Poll::Ready(answer) = poll_call(work, context) else { return Poll::Pending };
        *call = None;
        Poll::Ready(answer.flatten().map(ServerSseMessage::from_message))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_s_closing_token_is_cancelled_when_it_closes_and_at_once_when_it_is_not_open() {
        let sessions = DirectSessions::default();
        sessions.opened("s-1");
        let closing = sessions.closing("s-1");
        assert!(!closing.is_cancelled(), "an open session's calls run");
        assert!(sessions.closing("s-2").is_cancelled(), "a session never opened");
        sessions.closed("s-1");
        assert!(closing.is_cancelled(), "closing the session stops the calls it runs");
        assert!(sessions.closing("s-1").is_cancelled(), "a closed session stays closed");
    }
}
