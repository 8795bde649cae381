//! Serving tools to their consumers: one tool definition for every consumer
//! ([`definitions`]), and the MCP server over stdio ([`serve_stdio`]) and Streamable
//! HTTP ([`serve_http`], [`serve_http_on`]) with bearer tokens ([`auth`]) and bounds
//! on what one client may take ([`limits`]).

mod approval;
pub mod auth;
mod connections;
pub mod definitions;
mod direct;
mod http;
mod inline;
pub mod limits;
mod mcp;
mod message;
mod middleware;
mod progress;
mod sessions;
mod stdio;

pub use approval::{APPROVAL_WAIT, ApprovalKey, MIN_APPROVAL_SECRET};
pub use auth::Tokens;
pub use connections::raise_open_file_limit;
pub use http::{HTTP_PATH, HttpOptions, LOOPBACK_HOSTS, bind, serve_http, serve_http_on, shutdown_signal};
pub use limits::HttpLimits;
pub use mcp::serve_stdio;
pub use progress::PROGRESS_INTERVAL;
