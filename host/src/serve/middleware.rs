//! What the HTTP server does around the MCP SDK's session service: bearer tokens and
//! session owners, JSON-RPC answers to bodies that are not messages, `204` to a
//! session's `DELETE`, and cancellation of a call whose client went away.

use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::serve::auth::{Authenticated, SessionOwners, Tokens};

/// The MCP session header.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

/// The largest request body read (the SDK's own limit).
pub(super) const MAX_BODY: usize = 4 << 20;

/// What authentication checks requests with.
pub(super) struct Authenticator {
    pub(super) tokens: Tokens,
    pub(super) owners: SessionOwners,
    pub(super) sessions: Arc<LocalSessionManager>,
}

/// Lets through requests with a valid bearer token, marked with the agent it stands
/// for, and only into sessions that agent opened; answers the rest `401` (with the
/// `WWW-Authenticate` challenge) or as an unknown session.
pub(super) async fn authenticate(State(auth): State<Arc<Authenticator>>, mut request: Request, next: Next) -> Response {
    let presented = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer ").or_else(|| value.strip_prefix("bearer ")));
    let Some(agent) = presented.and_then(|token| auth.tokens.agent_for(token.trim())).map(str::to_owned) else {
        return unauthorized(presented.is_some());
    };
    let session = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()).map(str::to_owned);
    if let Some(session) = &session
        && !auth.owners.may_use(session, &agent)
    {
        tracing::info!(agent = %agent, "refused a request into another agent's MCP session");
        return plain(StatusCode::NOT_FOUND, "Not Found: Session not found");
    }
    let closing = request.method() == Method::DELETE;
    request.extensions_mut().insert(Authenticated { agent: agent.clone() });
    let response = next.run(request).await;
    let opened = response.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok());
    match (&session, opened) {
        (None, Some(opened)) => {
            if auth.owners.needs_sweep() {
                let live: HashSet<String> =
                    auth.sessions.sessions.read().await.keys().map(|id| id.to_string()).collect();
                auth.owners.keep_only(&live);
            }
            auth.owners.bind(opened, &agent);
        }
        (Some(session), _) if closing && response.status().is_success() => auth.owners.forget(session),
        _ => {}
    }
    response
}

fn unauthorized(presented: bool) -> Response {
    // RFC 6750: a request without credentials gets the bare challenge; one with a bad
    // token is told the token is invalid.
    let challenge = if presented {
        r#"Bearer realm="toolhost", error="invalid_token", error_description="the token is not valid for this server""#
    } else {
        r#"Bearer realm="toolhost""#
    };
    let mut response = plain(StatusCode::UNAUTHORIZED, "Unauthorized: a bearer token is required");
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(challenge));
    response
}

fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// Answers a POST whose body is not JSON with `400` and a JSON-RPC parse error (`-32700`,
/// `id: null`), and one that is JSON but no message with `400` and `-32600` (with its
/// id, when it has one), where the SDK would answer `415` in plain text. The body is
/// read once and parsed here only when the SDK refused it.
pub(super) async fn json_rpc_errors(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY).await else {
        return json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, Value::Null, -32600, "Invalid Request: body too large");
    };
    let response = next.run(Request::from_parts(parts, Body::from(bytes.clone()))).await;
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE || !is_json_rpc_refusal(&response) {
        return response;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Err(_) => json_rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32700, "Parse error: the body is not JSON"),
        Ok(value) => {
            let id = value.get("id").filter(|id| id.is_string() || id.is_number()).cloned().unwrap_or(Value::Null);
            json_rpc_error(StatusCode::BAD_REQUEST, id, -32600, "Invalid Request: not a JSON-RPC message")
        }
    }
}

/// The SDK's 415 for a body it could not read as a message (not the one for a wrong
/// `Content-Type`, which stays 415): that one has no content type of its own.
fn is_json_rpc_refusal(response: &Response) -> bool {
    response.headers().get(header::CONTENT_TYPE).is_none()
}

fn json_rpc_error(status: StatusCode, id: Value, code: i64, message: &str) -> Response {
    let body = json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// A closed session answers `204 No Content` (the SDK says `202 Accepted`, which the
/// protocol leaves to requests still being processed).
pub(super) async fn no_content_on_delete(request: Request, next: Next) -> Response {
    let deleting = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Cancelled when the client stops reading the answer to its request before it ended:
/// the MCP handler finds it in the request and stops the call.
#[derive(Debug, Clone)]
pub struct Disconnect(pub CancellationToken);

/// Gives every POST a [`Disconnect`] token, cancelled when its response body is dropped
/// before it ended (the client closed the connection or the stream).
pub(super) async fn cancel_on_disconnect(mut request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let token = CancellationToken::new();
    request.extensions_mut().insert(Disconnect(token.clone()));
    let response = next.run(request).await;
    let (parts, body) = response.into_parts();
    Response::from_parts(parts, Body::new(CancelOnDrop { inner: body, token: Some(token) }))
}

/// A response body that cancels its token when dropped before its end.
struct CancelOnDrop {
    inner: Body,
    token: Option<CancellationToken>,
}

impl http_body::Body for CancelOnDrop {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) || self.inner.is_end_stream() {
            self.token = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.token.take() {
            token.cancel();
        }
    }
}
