//! The MCP server: the tools a caller may call, over stdio or Streamable HTTP, with the official Rust SDK.
//!
//! The MCP server: the tools a caller may call, served over stdio or Streamable HTTP with
//! the official Rust SDK (`rmcp`), which owns the JSON-RPC framing, the lifecycle and
//! every protocol revision (2024-11-05 … 2025-11-25 and the stateless 2026-07-28).
//!
//! | MCP | toolhost |
//! |---|---|
//! | caller | the agent of the request's bearer token (else the server's `--agent`), in the `Mcp-Session-Id` session |
//! | `tools/list` | [`ToolHost::list`](crate::ToolHost::list) for the caller, each tool's definition from `definitions.rs` (`math/add` is `math.add`) |
//! | `tools/call` | [`ToolHost::call_detailed_as`](crate::ToolHost::call_detailed_as); any accepted name form resolves, an exported one takes a wrapped input from `input` |
//! | tool failure (any [`CallError`](crate::CallError) but `NotFound`) | a result with `isError: true` and `kind: message` text |
//! | unknown tool, or one hidden from the caller | JSON-RPC error `-32602` (invalid params) naming the close matches it may see |
//! | `notifications/cancelled`, client gone | the call stops; its audit record says `cancelled` |
//! | a call that needs approval | the person behind the client is asked (`approval.rs`) |
//! | `progressToken` on a call | the tool's `host.progress` reports as `notifications/progress` (`progress.rs`) |
//! | a tool's content blocks | the result's `content`, before the output's text (`shared.rs`) |
//! | a granted tool's `elicit`, `sample`, `log` | `elicitation/create`, `sampling/createMessage`, `notifications/message` at the level of `logging/setLevel` (`client.rs`) |
//! | `prompts/list`, `prompts/get` | the prompts of the namespaces whose tools the caller sees, from their manifests (`offered.rs`) |
//! | `resources/list`, `resources/templates/list`, `resources/read` | the same namespaces' resources; a template's read is a call of its tool |
//! | `completion/complete` | a prompt argument's listed values, a template variable's `enum` |
//! | `resources/subscribe` | `notifications/resources/updated` when a reload changes the resource |
//! | registry change | `notifications/{tools,prompts,resources}/list_changed` for what changed |
//!
//! Each caller's tool list is built once per [`ToolHost::listing_version`](crate::ToolHost::listing_version) (registry
//! snapshot, policy and session tool sets) and reused until one of them changes, or until
//! no listing used it for the host's idle time (a list of 400 tools holds megabytes).
//!
//! Nothing here writes to stdout: in stdio mode stdout carries only protocol messages
//! (guests' stdout is captured by the sandbox, the host logs to stderr).

mod approval;
mod changes;
mod client;
mod handler;
mod inline;
mod offered;
mod progress;
mod request;
mod shared;

pub use approval::{APPROVAL_WAIT, ApprovalKey, MIN_APPROVAL_SECRET};
pub use changes::MAX_SUBSCRIPTIONS;
pub use handler::FIRST_LIST_WAIT;
pub(crate) use handler::McpServer;
pub(crate) use inline::{CallWork, CallsInFlight, Running, cancelled_request, poll_call, start as start_inline};
pub use progress::PROGRESS_INTERVAL;
pub use request::THREAD_META;
pub(crate) use request::{Authenticated, Disconnect, NoQuestions, SESSION_HEADER, SessionEvents};
pub(crate) use shared::Shared;
