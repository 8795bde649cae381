//! The stdio transport of the MCP server: one JSON-RPC message per line, in on stdin and out on stdout.
//!
//! The stdio transport of the MCP server: one JSON-RPC message per line, in on stdin and
//! out on stdout.
//!
//! The SDK's own stdio transport reads through tokio's blocking thread pool, which hands
//! every line from one thread to another and back; an MCP client starts a server with
//! pipes, and a pipe can be read and written like a socket, so here it is: stdin and
//! stdout are registered with the runtime's reactor when they are pipes (the usual case),
//! and read through the blocking pool only when they are something else (a terminal, a
//! file).
//!
//! What the SDK's transport does not: a line that is not JSON gets a JSON-RPC parse
//! error (`-32700`, `id: null`) and the server keeps serving, as the specification asks;
//! JSON that is not a JSON-RPC message gets `-32600` with its id; a line longer than
//! [`MAX_LINE`] is refused the same way without being held in memory.
//!
//! Once the session is initialized, a `tools/call` does not go through the SDK's service
//! loop: the SDK runs every request as a chain of tasks (the loop, a handler, the loop, a
//! send), and past three in a row tokio wakes the other worker, so each call cost two
//! cross-core wake-ups. Here the task that read the request runs it, through the same
//! handler, until it first waits, and answers at once when it does not
//! (`InlineCalls`); a call that waits (a guest past its first epoch tick, an approval,
//! I/O) goes on on its own task, and so does a call with more requests read behind it,
//! so that a client that sends without waiting keeps both cores busy. `notifications/cancelled` stops such a call and its
//! answer is not sent, as the SDK does; at the end of input, calls still running get the
//! SDK's grace to answer before they are stopped.

mod lines;
mod message;

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::ToolHost;
use crate::policy::Caller;
use crate::serve::mcp::{ApprovalKey, McpServer, Shared};
use lines::{InlineCalls, JsonLines};

pub use lines::MAX_LINE;

/// Serves MCP over this process's stdin and stdout until stdin closes (or the client
/// goes away). Logs go to stderr; nothing else is written to stdout.
pub async fn serve_stdio(host: ToolHost, caller: Caller) -> anyhow::Result<()> {
    let approval_key = ApprovalKey::random().map_err(|e| anyhow::anyhow!("no randomness for the approval key: {e}"))?;
    let shared = Shared::start(host, caller, approval_key, None, crate::policy::ApproveVia::Client);
    let transport = JsonLines::stdio();
    let inline = transport.inline_calls();
    let server = McpServer::new(shared);
    let calls = server.same_session();
    let running = match server.serve(transport).await {
        Ok(running) => running,
        // stdin closed before the client said anything: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(anyhow::anyhow!("MCP session did not start: {e}")),
    };
    // Initialized: from here the transport runs tools/call itself, with a handler of
    // the same session (shared state, log level).
    let _ = inline.set(InlineCalls { handler: Arc::new(calls), peer: running.peer().clone() });
    let reason = running.waiting().await?;
    tracing::debug!(?reason, "MCP stdio session ended");
    Ok(())
}
