//! What the HTTP server does around the MCP SDK's session service: body limits, quotas, protocol answers.
//!
//! What the HTTP server does around the MCP SDK's session service, once
//! [`crate::serve::http::door`] let a request in: POST bodies read within their size and
//! time limits, the agent's quota, JSON-RPC answers
//! to bodies that are not messages and to sessions or streams past their limits, `204`
//! to a session's `DELETE`, and cancellation of a call whose client went away.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::Response;
use bytes::Bytes;
use http::{HeaderValue, Method, StatusCode, header};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::policy::Caller;
use crate::serve::http::sessions::{self, BoundedSessions};
use crate::serve::mcp::{Authenticated, Disconnect, SESSION_HEADER};

/// JSON-RPC's code for errors of the server's own (the range -32000 to -32099 is the
/// implementation's): here, a limit reached.
const SERVER_BUSY: i64 = -32000;

pub(crate) fn plain(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

/// How large a POST body may be, and how long its client may take to send it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyLimits {
    pub(crate) max_size: usize,
    pub(crate) timeout: Duration,
}

/// Reads a POST's body within its limits, and answers in JSON-RPC where the SDK would
/// not:
///
/// - a body over the size limit gets `413` (before any of it is read when its
///   `Content-Length` says so), one not complete within the time limit `408`; both
///   close the connection, whose unread rest of a body cannot be told from a next
///   request;
/// - a body that is not JSON gets `400` and a parse error (`-32700`, `id: null`), JSON
///   that is no message `400` and `-32600` (with its id, when it has one), where the SDK
///   would answer `415` in plain text; the body is parsed here only when the SDK
///   refused it;
/// - an `initialize` when the server keeps as many sessions as it may gets `503` and a
///   `-32000` error naming the limit (with the request's id), where the SDK would
///   answer `500`.
pub(crate) async fn json_rpc_errors(State(limits): State<BodyLimits>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    if declared_length(&request).is_some_and(|length| length > limits.max_size as u64) {
        return body_too_large(limits);
    }
    let may_open_session = !request.headers().contains_key(SESSION_HEADER);
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(limits.timeout, axum::body::to_bytes(body, limits.max_size)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => {
            if e.into_inner().is::<http_body_util::LengthLimitError>() {
                return body_too_large(limits);
            }
            // The client went away mid-body: no one reads this answer.
            return json_rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32600, "Invalid Request: the body broke off");
        }
        Err(_) => {
            let message = format!("Invalid Request: the body did not arrive within {:?}", limits.timeout);
            return closing_connection(json_rpc_error(StatusCode::REQUEST_TIMEOUT, Value::Null, -32600, &message));
        }
    };
    let forwarded = Request::from_parts(parts, Body::from(bytes.clone()));
    let response = if may_open_session {
        match sessions::noting_refusal(next.run(forwarded)).await {
            (_, Some(max_sessions)) => {
                let message = format!(
                    "Server busy: {max_sessions} MCP sessions are open, the most this server keeps; \
                     retry later, or close a session (DELETE) first"
                );
                return json_rpc_error(StatusCode::SERVICE_UNAVAILABLE, request_id(&bytes), SERVER_BUSY, &message);
            }
            (response, None) => response,
        }
    } else {
        next.run(forwarded).await
    };
    if response.status() != StatusCode::UNSUPPORTED_MEDIA_TYPE || !is_json_rpc_refusal(&response) {
        return response;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Err(_) => json_rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32700, "Parse error: the body is not JSON"),
        Ok(_) => json_rpc_error(
            StatusCode::BAD_REQUEST,
            request_id(&bytes),
            -32600,
            "Invalid Request: not a JSON-RPC message",
        ),
    }
}

/// The `Content-Length` a request declares, if any.
fn declared_length(request: &Request) -> Option<u64> {
    request.headers().get(header::CONTENT_LENGTH)?.to_str().ok()?.parse().ok()
}

fn body_too_large(limits: BodyLimits) -> Response {
    let message = format!("Invalid Request: the body is larger than {} bytes", limits.max_size);
    closing_connection(json_rpc_error(StatusCode::PAYLOAD_TOO_LARGE, Value::Null, -32600, &message))
}

/// The id of the JSON-RPC request in `body` (a string or a number), else `null`.
fn request_id(body: &[u8]) -> Value {
    serde_json::from_slice::<Value>(body)
        .ok()
        .and_then(|value| value.get("id").filter(|id| id.is_string() || id.is_number()).cloned())
        .unwrap_or(Value::Null)
}

/// `response`, telling the client the connection closes after it.
fn closing_connection(mut response: Response) -> Response {
    response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// Counts a `GET` event stream or a `POST` into a session as one of the session's open
/// streams until its response body is dropped, and answers `429` with a `-32000` error
/// when the session already holds as many as it may. Requests naming no session, or
/// one that does not exist, pass uncounted (the SDK answers them).
pub(crate) async fn limit_streams(
    State(sessions): State<Arc<BoundedSessions>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::GET && request.method() != Method::POST {
        return next.run(request).await;
    }
    let Some(session) = request.headers().get(SESSION_HEADER).and_then(|v| v.to_str().ok()) else {
        return next.run(request).await;
    };
    let slot = match sessions.open_stream(session) {
        Ok(Some(slot)) => slot,
        Ok(None) => return next.run(request).await,
        Err(full) => {
            // The body was read whole before this middleware (see json_rpc_errors).
            let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap_or_default();
            let message = format!("Too many streams: {full}; retry when one has ended");
            let mut response = json_rpc_error(StatusCode::TOO_MANY_REQUESTS, request_id(&body), SERVER_BUSY, &message);
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            return response;
        }
    };
    let (parts, body) = next.run(request).await.into_parts();
    Response::from_parts(parts, Body::new(Holding { inner: body, _slot: slot }))
}

/// A response body that keeps its session's stream slot until it is dropped.
struct Holding {
    inner: Body,
    _slot: sessions::StreamSlot,
}

impl http_body::Body for Holding {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
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
pub(crate) async fn no_content_on_delete(request: Request, next: Next) -> Response {
    let deleting = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

/// Gives every POST a [`Disconnect`] token, cancelled when its response body is dropped
/// before it ended (the client closed the connection or the stream).
pub(crate) async fn cancel_on_disconnect(mut request: Request, next: Next) -> Response {
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

/// A `tools/call` by an agent over its quota (`[[quota]]`) is answered `429 Too Many
/// Requests` with `Retry-After` and a JSON-RPC error, before it reaches a session; the
/// refusal is recorded like any call. Requests of agents without a quota pass untouched.
pub(crate) async fn quotas(
    State((host, server_caller)): State<(crate::ToolHost, Caller)>,
    request: Request,
    next: Next,
) -> Response {
    let caller = match request.extensions().get::<Authenticated>() {
        Some(authenticated) => Caller::new(authenticated.agent.clone()),
        None => server_caller,
    };
    if request.method() != Method::POST || !host.has_quota(&caller) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    // The body was read whole, within its limits, by `json_rpc_errors` before this.
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return json_rpc_error(StatusCode::BAD_REQUEST, Value::Null, -32600, "Invalid Request: the body broke off");
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let called = (message["method"] == "tools/call").then(|| message["params"]["name"].as_str()).flatten();
    if let Some(name) = called
        && let Some(error) = host.refuse_over_quota(&caller, name).await
    {
        let message = error.to_string();
        let mut response = json_rpc_error(StatusCode::TOO_MANY_REQUESTS, request_id(&bytes), SERVER_BUSY, &message);
        let retry_after = error.retry_after_secs().unwrap_or(1);
        response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        return response;
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}
