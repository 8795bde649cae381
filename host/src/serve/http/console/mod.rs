//! The operator's console at `/console`: tools, calls as they happen, and approvals, in the browser.
//!
//! Off unless `[console] enabled = true`. Every page and API is behind an operator's
//! sign-in (`[[console.operator]]`, never an agent's token: the console reads no
//! `Authorization` header), the server's `Host`/`Origin` checks, a CSRF token on every
//! request that changes anything, and a Content-Security-Policy that lets a page run
//! only the console's own script and style, which the binary embeds ([`assets`]).
//!
//! | path | what |
//! |---|---|
//! | `GET /console/login`, `POST /console/login`, `POST /console/logout` | signing in and out ([`session`]) |
//! | `GET /console/{tools,tool,calls,approvals}` | the pages (one shell; the script draws each); `/console/` is the tools |
//! | `GET /console/api/tools`, `GET /console/api/tool?name=`, `POST /console/api/call` | tools and trying one ([`tools`]) |
//! | `GET /console/api/calls`, `GET /console/api/calls/stream`, `GET /console/api/stats` | the audit stream ([`calls`]) |
//! | `GET /console/api/approvals`, `POST /console/api/approvals/{id}` | waiting calls ([`approvals`]) |

mod approvals;
mod assets;
mod calls;
mod session;
mod tools;

use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::middleware::{Next, from_fn, from_fn_with_state};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use http::{HeaderValue, StatusCode, header};
use tokio_util::sync::CancellationToken;

use super::LiveTokens;
use super::hosts::AllowedHosts;
use crate::ToolHost;
use crate::policy::{ApproveVia, Caller};
use crate::serve::mcp::ApprovalKey;
use crate::serve::{HttpLimits, Tokens};
use calls::CallLog;
use session::Sessions;

/// The path the console is served under.
pub const CONSOLE_PATH: &str = "/console";

/// The console's options (`[console]` in `toolhost.toml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleOptions {
    /// The operators' tokens, each standing for an operator by name.
    pub operators: Tokens,
    /// Where the approval questions of MCP calls go.
    pub approve_via: ApproveVia,
    /// How long a sign-in lasts.
    pub session_lifetime: Duration,
}

impl ConsoleOptions {
    /// How long a sign-in lasts unless configured.
    pub const DEFAULT_SESSION_LIFETIME: Duration = Duration::from_secs(8 * 3600);
}

/// What every console request shares.
pub(super) struct Console {
    host: ToolHost,
    sessions: Sessions,
    approve_via: ApproveVia,
    /// The agents' tokens, for the agents a tool may be tried as.
    agents: LiveTokens,
    /// Who calls over MCP when no token says otherwise.
    default_caller: Caller,
    calls: Arc<CallLog>,
    limits: HttpLimits,
    stop: CancellationToken,
}

/// What the console router is made of besides its options.
pub(super) struct ConsoleParts<'a> {
    pub host: ToolHost,
    pub approval_key: &'a ApprovalKey,
    pub agents: LiveTokens,
    pub default_caller: Caller,
    pub limits: HttpLimits,
    pub allowed: AllowedHosts,
    pub stop: CancellationToken,
}

/// The console's routes, each behind the `Host`/`Origin` checks and its security headers.
pub(super) fn router(options: ConsoleOptions, parts: ConsoleParts<'_>) -> axum::Router {
    let calls = CallLog::start(&parts.host, parts.stop.child_token());
    let console = Arc::new(Console {
        host: parts.host,
        sessions: Sessions::new(parts.approval_key, options.operators, options.session_lifetime),
        approve_via: options.approve_via,
        agents: parts.agents,
        default_caller: parts.default_caller,
        calls,
        limits: parts.limits,
        stop: parts.stop,
    });
    let signed_in = axum::Router::new()
        .route("/console", get(assets::to_tools))
        .route("/console/", get(assets::to_tools))
        .route("/console/tools", get(assets::shell))
        .route("/console/tool", get(assets::shell))
        .route("/console/calls", get(assets::shell))
        .route("/console/approvals", get(assets::shell))
        .route("/console/logout", post(session::sign_out))
        .route("/console/api/session", get(session::who))
        .route("/console/api/tools", get(tools::list))
        .route("/console/api/tool", get(tools::describe))
        .route("/console/api/call", post(tools::try_call))
        .route("/console/api/calls", get(calls::recent))
        .route("/console/api/calls/stream", get(calls::stream))
        .route("/console/api/stats", get(calls::stats))
        .route("/console/api/approvals", get(approvals::waiting))
        .route("/console/api/approvals/{id}", post(approvals::answer))
        .route_layer(from_fn_with_state(console.clone(), session::require_operator))
        .with_state(console.clone());
    let open = axum::Router::new()
        .route("/console/login", get(assets::login).post(session::sign_in))
        .route("/console/assets/console.css", get(assets::style))
        .route("/console/assets/console.js", get(assets::script))
        .with_state(console);
    signed_in
        .merge(open)
        .route_layer(from_fn(security_headers))
        .route_layer(from_fn_with_state(parts.allowed, super::hosts::check_host_and_origin))
}

/// The strictest policy the pages work under: only the console's own script, style
/// and connections; no frame may hold it; no form posts elsewhere.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
     connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CONTENT_SECURITY_POLICY));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // Not `no-referrer`: under it a browser sends `Origin: null` with the sign-in form,
    // which the Origin check refuses.
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-opener-policy", HeaderValue::from_static("same-origin"));
    headers.insert("cross-origin-resource-policy", HeaderValue::from_static("same-origin"));
    if !headers.contains_key(header::CACHE_CONTROL) {
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

/// A JSON error answer: `{"error": message}`.
fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message.into() }))).into_response()
}

/// A request's body, within the server's size and time bounds.
async fn body_within(body: axum::body::Body, limits: &HttpLimits) -> Result<axum::body::Bytes, Response> {
    let read = axum::body::to_bytes(body, limits.max_body_size);
    match tokio::time::timeout(limits.body_timeout, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(_)) => Err(error(StatusCode::PAYLOAD_TOO_LARGE, "the body is too large or was cut short")),
        Err(_) => Err(error(StatusCode::REQUEST_TIMEOUT, "the body took too long to arrive")),
    }
}

/// A JSON body of type `T`, within the server's bounds.
async fn json_body<T: serde::de::DeserializeOwned>(body: axum::body::Body, limits: &HttpLimits) -> Result<T, Response> {
    let bytes = body_within(body, limits).await?;
    serde_json::from_slice(&bytes)
        .map_err(|e| error(StatusCode::BAD_REQUEST, format!("the body is not the JSON expected: {e}")))
}

/// The value of the query parameter `name`, percent-decoded.
fn query_param(uri: &http::Uri, name: &str) -> Option<String> {
    let query = uri.query()?;
    url::form_urlencoded::parse(query.as_bytes()).find(|(key, _)| key == name).map(|(_, value)| value.into_owned())
}
