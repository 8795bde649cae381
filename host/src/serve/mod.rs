//! Serving tools to their consumers: the MCP server over stdio and over Streamable HTTP.
//!
//! Serving tools to their consumers: the MCP server over stdio ([`serve_stdio`]) and
//! Streamable HTTP ([`serve_http`], [`serve_http_on`]) with bearer tokens
//! ([`new_token`], [`digest`]) or OAuth access tokens ([`OAuth`]) and bounds on what one client may take ([`HttpLimits`]),
//! and the operator's console beside it ([`ConsoleOptions`], [`CONSOLE_PATH`]).
//! Every consumer reads the same tool definitions (`crate::definitions`).

mod http;
mod mcp;
mod stdio;

pub use http::{
    CONSOLE_PATH, ConsoleOptions, HTTP_PATH, HttpLimits, HttpOptions, LOOPBACK_HOSTS, LiveTokens, OAuth, OAuthSettings,
    Tokens, bind, digest, new_token, raise_open_file_limit, serve_http, serve_http_on, shutdown_signal,
};
pub(crate) use http::{bounds, check_address, parse_digest};
pub use mcp::{
    APPROVAL_WAIT, ApprovalKey, FIRST_LIST_WAIT, MAX_SUBSCRIPTIONS, MIN_APPROVAL_SECRET, PROGRESS_INTERVAL, THREAD_META,
};
pub use stdio::{MAX_LINE, serve_stdio};
