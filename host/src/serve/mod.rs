//! Serving tools to their consumers: one tool definition for every consumer
//! ([`definitions`]), and the MCP server over stdio ([`serve_stdio`]) and Streamable
//! HTTP ([`serve_http`], [`serve_http_on`]) with bearer tokens ([`auth`]).

pub mod auth;
pub mod definitions;
mod http;
mod mcp;
mod middleware;
mod stdio;

pub use auth::Tokens;
pub use http::{HTTP_PATH, HttpOptions, LOOPBACK_HOSTS, bind, serve_http, serve_http_on, shutdown_signal};
pub use mcp::serve_stdio;
