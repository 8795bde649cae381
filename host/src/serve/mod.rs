//! Serving tools to their consumers: one tool definition for every consumer
//! ([`definitions`]), and the MCP server over stdio ([`serve_stdio`]) and Streamable
//! HTTP ([`serve_http`], [`serve_http_on`]) with bearer tokens ([`auth`]) and bounds
//! on what one client may take ([`limits`]).

pub(crate) mod http;
pub(crate) mod mcp;
pub(crate) mod stdio;

pub use http::auth::Tokens;
pub use http::connections::raise_open_file_limit;
pub use http::limits::HttpLimits;
pub use http::{HTTP_PATH, HttpOptions, LOOPBACK_HOSTS, bind, serve_http, serve_http_on, shutdown_signal};
pub use http::{auth, limits};
pub use mcp::approval::{APPROVAL_WAIT, ApprovalKey, MIN_APPROVAL_SECRET};
pub use mcp::progress::PROGRESS_INTERVAL;
pub use mcp::serve_stdio;
