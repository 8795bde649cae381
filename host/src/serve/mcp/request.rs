//! What a transport tells the MCP handler about a request: who sent it, in which session, whether its client is still there and may be asked anything.
//!
//! The handler reads these from the request and never names a transport: the HTTP
//! server puts them into the requests it hands the SDK, and stdio has none of them.

use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::policy::Caller;

/// The MCP session header of Streamable HTTP.
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The agent a request authenticated as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Authenticated {
    /// The agent the token stands for.
    pub agent: String,
}

/// Cancelled when the client stops reading the answer to its request before it ended:
/// the handler stops the call.
#[derive(Debug, Clone)]
pub(crate) struct Disconnect(pub CancellationToken);

/// Marks a call whose client cannot be asked anything while it runs: its answer stream
/// carries nothing else.
#[derive(Debug, Clone, Copy)]
pub(crate) struct NoQuestions;

/// What a transport with sessions hears from the handler, and answers.
pub(crate) trait SessionEvents: Send + Sync {
    /// The session `id` is initialized: its client answers to `peer`.
    fn initialized(&self, id: &str, peer: Peer<RoleServer>);
    /// Cancelled when the session `id` ends: its calls stop.
    fn closing(&self, id: &str) -> CancellationToken;
}

/// The MCP session an HTTP request names.
pub(crate) fn http_session(extensions: &rmcp::model::Extensions) -> Option<&str> {
    let parts = extensions.get::<http::request::Parts>()?;
    parts.headers.get(SESSION_HEADER).and_then(|value| value.to_str().ok())
}

/// The `_meta` key of a request that names the thread (conversation) its client acts
/// for: `{"_meta": {"toolhost/thread": "review-42"}}` on `tools/list` or `tools/call`.
pub const THREAD_META: &str = "toolhost/thread";

/// The longest thread name taken.
const MAX_THREAD_LEN: usize = 128;

/// Who makes a request: the agent its bearer token stands for (else `default`'s), in the
/// MCP session it names (else `default`'s; none on stdio and stateless requests), in the
/// thread its `_meta` names; refused when `_meta` names a thread badly.
pub(crate) fn caller_of(
    extensions: &rmcp::model::Extensions,
    meta: &rmcp::model::RequestMetaObject,
    default: &Caller,
) -> Result<Caller, rmcp::model::ErrorData> {
    let thread = match meta.get(THREAD_META) {
        None => None,
        Some(serde_json::Value::String(thread)) if is_thread_name(thread) => Some(thread.clone()),
        Some(_) => {
            let message = format!(
                "`_meta.{THREAD_META}` must be a string of 1 to {MAX_THREAD_LEN} bytes without control characters"
            );
            return Err(rmcp::model::ErrorData::invalid_params(message, None));
        }
    };
    let Some(parts) = extensions.get::<http::request::Parts>() else {
        return Ok(Caller { thread, ..default.clone() });
    };
    let agent = match parts.extensions.get::<Authenticated>() {
        Some(authenticated) => authenticated.agent.clone(),
        None => default.agent.clone(),
    };
    let session = http_session(extensions).map(str::to_owned).or_else(|| default.session.clone());
    Ok(Caller { agent, session, thread })
}

fn is_thread_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_THREAD_LEN && !name.chars().any(char::is_control)
}

/// The token that stops a call when its HTTP client goes away (none on stdio).
pub(crate) fn disconnect_of(extensions: &rmcp::model::Extensions) -> CancellationToken {
    extensions
        .get::<http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<Disconnect>())
        .map(|disconnect| disconnect.0.clone())
        .unwrap_or_default()
}
