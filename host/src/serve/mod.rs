//! Serving tools to their consumers: function-calling definitions and the MCP server.

pub mod definitions;
pub mod http;
pub mod mcp;
