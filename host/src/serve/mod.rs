//! Serving tools to their consumers: one tool definition for every consumer
//! ([`definitions`]), and the MCP server over stdio ([`serve_stdio`]) and Streamable
//! HTTP ([`serve_http`], [`serve_http_on`]).

pub mod definitions;
mod http;
mod mcp;
mod stdio;

pub use http::{HTTP_PATH, HttpOptions, LOOPBACK_HOSTS, bind, serve_http, serve_http_on, shutdown_signal};
pub use mcp::serve_stdio;
