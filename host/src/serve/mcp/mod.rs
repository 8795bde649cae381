//! The MCP server: the tools a caller may call, served over stdio or Streamable HTTP with
//! the official Rust SDK (`rmcp`), which owns the JSON-RPC framing, the lifecycle and
//! every protocol revision (2024-11-05 … 2025-11-25 and the stateless 2026-07-28).
//!
//! | MCP | toolhost |
//! |---|---|
//! | caller | the agent of the request's bearer token (else the server's `--agent`), in the `Mcp-Session-Id` session |
//! | `tools/list` | [`ToolHost::list`] for the caller, each tool's definition from [`definitions`] (`math/add` is `math.add`) |
//! | `tools/call` | [`ToolHost::call_detailed_as`]; any accepted name form resolves, an exported one takes a wrapped input from `input` |
//! | tool failure (any [`CallError`] but `NotFound`) | a result with `isError: true` and `kind: message` text |
//! | unknown tool, or one hidden from the caller | JSON-RPC error `-32602` (invalid params) naming the close matches it may see |
//! | `notifications/cancelled`, client gone | the call stops; its audit record says `cancelled` |
//! | a call that needs approval | the person behind the client is asked ([`approval`]) |
//! | `progressToken` on a call | the tool's `host.progress` reports as `notifications/progress` ([`progress`](super::progress)) |
//! | registry change with tools changed | `notifications/tools/list_changed` |
//!
//! Each caller's tool list is built once per [`ToolHost::listing_version`] (registry
//! snapshot, policy and session tool sets) and reused until one of them changes, or until
//! no listing used it for the host's idle time (a list of 400 tools holds megabytes).
//!
//! Nothing here writes to stdout: in stdio mode stdout carries only protocol messages
//! (guests' stdout is captured by the sandbox, the host logs to stderr).

pub(crate) mod approval;
pub(crate) mod inline;
pub(crate) mod progress;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest, ContentBlock, ErrorData, GetExtensions,
    GetMeta, Implementation, InputRequiredResult, ListToolsResult, PaginatedRequestParams, ProtocolVersion,
    ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use crate::definitions::{self, ExportFormat};
use crate::error::CallError;
use crate::names;
use crate::policy::ApprovalHook;
use crate::policy::Caller;
use crate::registry::RegistryChange;
use crate::serve::http::auth::Authenticated;
use crate::serve::http::direct::{DirectSessions, NoQuestions};
use crate::serve::http::middleware::{Disconnect, SESSION_HEADER};
use crate::serve::mcp::approval::ApprovalKey;
use crate::serve::mcp::progress::ProgressRelay;
use crate::serve::stdio::{InlineCalls, JsonLines};
use crate::tool::OutputForm;
use crate::{CallOptions, ToolHost};
use crate::{ListingVersion, ToolDescription};

/// How long a `tools/list` during a server's start waits for the components still
/// loading before it lists what is served.
const FIRST_LIST_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Serves MCP over this process's stdin and stdout until stdin closes (or the client
/// goes away). Logs go to stderr; nothing else is written to stdout.
pub async fn serve_stdio(host: ToolHost, caller: Caller) -> anyhow::Result<()> {
    let approval_key = ApprovalKey::random().map_err(|e| anyhow::anyhow!("no randomness for the approval key: {e}"))?;
    let shared = Shared::start(host, caller, approval_key);
    let transport = JsonLines::stdio();
    let inline = transport.inline_calls();
    let running = match McpServer::new(shared.clone()).serve(transport).await {
        Ok(running) => running,
        // stdin closed before the client said anything: nothing to serve.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => return Ok(()),
        Err(e) => return Err(anyhow::anyhow!("MCP session did not start: {e}")),
    };
    // Initialized: from here the transport runs tools/call itself, with a handler of
    // the same shared state (a call uses nothing of the session's own handler).
    let _ = inline.set(InlineCalls { handler: Arc::new(McpServer::new(shared)), peer: running.peer().clone() });
    let reason = running.waiting().await?;
    tracing::debug!(?reason, "MCP stdio session ended");
    Ok(())
}

/// What every session shares: the host, who calls when no credentials say otherwise,
/// and each caller's tool list of the last snapshot and policy it was built for.
pub(crate) struct Shared {
    host: ToolHost,
    caller: Caller,
    tools: Mutex<HashMap<Caller, ToolList>>,
    /// Seals the approval questions of 2026-07-28 calls ([`approval::seal`]).
    approval_key: ApprovalKey,
    /// The HTTP sessions whose calls may be answered past the SDK's session worker.
    direct: DirectSessions,
}

/// The MCP tool definitions a caller saw at one [`ToolHost::listing_version`].
struct ToolList {
    version: ListingVersion,
    tools: Arc<Vec<Tool>>,
    /// When a listing last used it.
    used: Instant,
}

/// Callers whose lists are kept; past this the cache starts over (sessions end without
/// telling the handler).
const LISTS_KEPT: usize = 1024;

impl Shared {
    /// The shared state of a server, whose unused tool lists leave memory for as long
    /// as it lives.
    pub(crate) fn start(host: ToolHost, caller: Caller, approval_key: ApprovalKey) -> Arc<Self> {
        let idle = host.idle_after();
        let shared = Arc::new(Shared {
            host,
            caller,
            tools: Mutex::new(HashMap::new()),
            approval_key,
            direct: DirectSessions::default(),
        });
        crate::host::sweep_idle(Arc::downgrade(&shared), idle, "tool lists no listing used", move |shared| {
            let mut lists = shared.lists();
            let kept = lists.len();
            lists.retain(|_, list| list.used.elapsed() < idle);
            kept - lists.len()
        });
        shared
    }

    /// Who makes a request: the agent its bearer token stands for (else the server's
    /// caller), in the MCP session it names (none on stdio and stateless requests).
    fn caller_of(&self, extensions: &rmcp::model::Extensions) -> Caller {
        let Some(parts) = extensions.get::<http::request::Parts>() else {
            return self.caller.clone();
        };
        let agent = match parts.extensions.get::<Authenticated>() {
            Some(authenticated) => authenticated.agent.clone(),
            None => self.caller.agent.clone(),
        };
        let session = http_session(extensions);
        Caller { agent, session: session.map(str::to_owned).or_else(|| self.caller.session.clone()) }
    }

    /// The tools `caller` may call, rebuilt only when the snapshot or the policy
    /// changed.
    fn tools(&self, caller: &Caller) -> Arc<Vec<Tool>> {
        loop {
            let version = self.host.listing_version();
            if let Some(cached) = self.lists().get_mut(caller)
                && cached.version == version
            {
                cached.used = Instant::now();
                return cached.tools.clone();
            }
            let tools: Vec<Tool> = self.host.list(caller).iter().filter_map(mcp_tool).collect();
            // A reload or a new policy while listing: the list may be of the newer
            // state; build again rather than cache it under the wrong version.
            if self.host.listing_version() != version {
                continue;
            }
            let tools = Arc::new(tools);
            let mut lists = self.lists();
            if lists.len() >= LISTS_KEPT {
                lists.clear();
            }
            lists.insert(caller.clone(), ToolList { version, tools: tools.clone(), used: Instant::now() });
            return tools;
        }
    }

    fn lists(&self) -> std::sync::MutexGuard<'_, HashMap<Caller, ToolList>> {
        self.tools.lock().unwrap_or_else(|e| e.into_inner())
    }

    async fn call(
        &self,
        caller: &Caller,
        name: &str,
        input: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, ErrorData> {
        let report = self.host.call_with(caller, name, input, options).await;
        match report.outcome {
            Ok(output) if report.output_form == OutputForm::McpContent => Ok(content_result(output)),
            Ok(output @ Value::Object(_)) => Ok(CallToolResult::structured(output)),
            Ok(output) => Ok(CallToolResult::success(vec![ContentBlock::text(output.to_string())])),
            Err(CallError::NotFound { name, suggestions }) => {
                tracing::debug!(caller = %caller, tool = %crate::text::Escaped(&name), "call of an unknown tool");
                Err(unknown_tool(&name, &suggestions))
            }
            Err(error) => Ok(CallToolResult::error(vec![ContentBlock::text(format!("{}: {error}", error.kind()))])),
        }
    }
}

/// The MCP session an HTTP request names.
fn http_session(extensions: &rmcp::model::Extensions) -> Option<&str> {
    let parts = extensions.get::<http::request::Parts>()?;
    parts.headers.get(SESSION_HEADER).and_then(|value| value.to_str().ok())
}

/// The content blocks of an upstream tool's output (`{"content": [...]}`, checked
/// against its schema), passed on as the upstream server sent them.
fn content_result(mut output: Value) -> CallToolResult {
    match serde_json::from_value::<Vec<ContentBlock>>(output["content"].take()) {
        Ok(blocks) => CallToolResult::success(blocks),
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "output_invalid: the tool's content blocks are not MCP content: {e}"
        ))]),
    }
}

/// A tool as `tools/list` shows it: the MCP definition of [`definitions`], in the SDK's
/// type.
fn mcp_tool(description: &ToolDescription) -> Option<Tool> {
    let definition = definitions::definition(description, ExportFormat::Mcp);
    serde_json::from_value(definition)
        .inspect_err(|e| tracing::error!(tool = %description.name, "no MCP definition for the tool: {e}"))
        .ok()
}

/// The protocol error for a name that resolves to no tool (MCP: invalid params).
fn unknown_tool(name: &str, suggestions: &[String]) -> ErrorData {
    let suggestions: Vec<String> = suggestions.iter().map(|s| names::mcp_name(s)).collect();
    let mut message = format!("unknown tool `{name}`");
    if !suggestions.is_empty() {
        let quoted: Vec<String> = suggestions.iter().map(|s| format!("`{s}`")).collect();
        message.push_str(&format!(" (did you mean {}?)", quoted.join(", ")));
    }
    ErrorData::invalid_params(message, Some(json!({ "name": name, "suggestions": suggestions })))
}

/// One MCP session's handler: cheap, created per session (stdio: once).
pub(crate) struct McpServer {
    shared: Arc<Shared>,
    /// Dropped with the handler, which ends this session's change forwarder.
    forwarder: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

impl McpServer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        McpServer { shared, forwarder: Mutex::new(None) }
    }

    pub(crate) fn direct_sessions(&self) -> &DirectSessions {
        &self.shared.direct
    }

    /// Whether `request` (a `tools/call`) is known to ask its client nothing while it
    /// runs: it wants no progress, and the tool resolves for its caller now and needs
    /// no approval of the client's.
    pub(crate) fn answers_without_asking(&self, request: &ClientRequest) -> bool {
        let ClientRequest::CallToolRequest(call) = request else { return false };
        if request.get_meta().get_progress_token().is_some() {
            return false;
        }
        let caller = self.shared.caller_of(request.extensions());
        self.shared.host.runs_without_call_approver(&caller, &call.params.name)
    }

    /// Who approves this call if it needs approval: the person behind the client, asked
    /// during the call; on 2026-07-28, which forbids asking during a call, the answer the
    /// retried call carries, or else `Err`: the question to answer first.
    fn approver(
        &self,
        caller: &Caller,
        request: &CallToolRequestParams,
        input: &Value,
        context: &RequestContext<RoleServer>,
    ) -> Result<ApprovalHook, Box<InputRequiredResult>> {
        if context.extensions.get::<NoQuestions>().is_some() {
            return Ok(approval::unable(approval::NO_QUESTIONS));
        }
        // A form is asked: a client that declared only URL elicitation cannot show one
        // (an empty declaration means forms, as before modes existed).
        let can_ask = context
            .client_capabilities()
            .and_then(|c| c.elicitation)
            .is_some_and(|e| e.form.is_some() || e.url.is_none());
        let stateless = context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        if !can_ask {
            return Ok(approval::unable(approval::NO_ELICITATION));
        }
        if !stateless {
            return Ok(approval::ask_during_call(context.peer.clone()));
        }
        let Some(question) = self.shared.host.pending_approval(caller, &request.name, input) else {
            return Ok(approval::unable("the approval needed was not asked for"));
        };
        let key = &self.shared.approval_key;
        let now = std::time::SystemTime::now();
        match request.input_responses.as_ref().and_then(|r| r.get(approval::APPROVAL_INPUT)) {
            None => Err(Box::new(approval::input_required(&question, approval::seal(key, &question, now)))),
            Some(answer) => match approval::check_seal(key, &question, request.request_state.as_deref(), now) {
                Ok(()) => Ok(approval::answered(answer)),
                Err(why) => Ok(approval::unable(why)),
            },
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(Implementation::new("toolhost", env!("CARGO_PKG_VERSION")).with_title("toolhost"))
            .with_instructions(
                "Tools run as sandboxed WebAssembly components. A tool's input and output are \
                 validated against its schemas; a failed call returns isError with the kind of \
                 failure (input_invalid, failed, trap, timeout, out_of_fuel, …).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions);
        // Most clients list once, right after initialize: while the server starts, give
        // its components a moment to load, then list what is served (`list_changed`
        // tells of the rest).
        let _ = tokio::time::timeout(FIRST_LIST_GRACE, self.shared.host.loaded()).await;
        Ok(ListToolsResult::with_all_items(self.shared.tools(&caller).as_ref().clone()))
    }

    // `get_tool` keeps the SDK's default (none): it is asked without a request, so
    // without knowing whose tools it may name.

    /// A call runs until it ends, the client cancels it (`notifications/cancelled`), or
    /// the client stops reading its answer; then the call's future is dropped, which
    /// stops the guest at its next epoch tick and records the call as cancelled.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions);
        let input = Value::Object(request.arguments.clone().unwrap_or_default());
        let approver = match self.approver(&caller, &request, &input, &context) {
            Ok(approver) => approver,
            Err(ask_first) => return Ok(CallToolResponse::InputRequired(*ask_first)),
        };
        let relay = context.meta.get_progress_token().map(|token| ProgressRelay::start(context.peer.clone(), token));
        let options = CallOptions {
            call_id: Some(context.id.to_string()),
            approver: Some(approver),
            progress: relay.as_ref().map(ProgressRelay::hook),
        };
        let disconnect = context
            .extensions
            .get::<http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<Disconnect>())
            .map(|disconnect| disconnect.0.clone())
            .unwrap_or_default();
        // A direct call's own token already stops with its session (`inline::start`); a
        // call the SDK runs stops on the session's.
        let session_closed = match http_session(&context.extensions) {
            Some(session) if context.extensions.get::<NoQuestions>().is_none() => self.shared.direct.closing(session),
            _ => CancellationToken::new(),
        };
        let result = tokio::select! {
            result = self.shared.call(&caller, &request.name, input, &options) => result.map(CallToolResponse::from),
            // No answer reaches the client: it asked for none, is gone, or ended the session.
            () = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled by the client", None)),
            () = disconnect.cancelled() => return Err(ErrorData::internal_error("the client went away", None)),
            () = session_closed.cancelled() => return Err(ErrorData::internal_error("the session closed", None)),
        };
        if let Some(relay) = relay {
            relay.finish().await;
        }
        result
    }

    /// Session lifecycle (stdio and HTTP sessions): from now on, every registry change
    /// that touches tools reaches this client as `notifications/tools/list_changed`.
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let Some(session) = http_session(&context.extensions) {
            self.shared.direct.initialized(session, context.peer.clone());
        }
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let mut slot = self.forwarder.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return;
        }
        *slot = Some(stop);
        drop(slot);
        let peer = context.peer;
        let changes = self.shared.host.subscribe();
        tokio::spawn(async move {
            forward_changes(changes, stopped, |_| {
                let peer = peer.clone();
                async move { peer.notify_tool_list_changed().await.is_ok() }
            })
            .await;
        });
    }

    /// Stateless lifecycle (2026-07-28): list changes go to `subscriptions/listen`.
    fn accepted_subscription_filter(&self, _requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if context.accepted().tools_list_changed != Some(true) {
            context.cancelled().await;
            return Ok(());
        }
        let changes = self.shared.host.subscribe();
        let sink = context.sink().clone();
        tokio::select! {
            _ = context.cancelled() => {}
            _ = forward_changes(changes, std::future::pending::<()>(), |_| {
                let sink = sink.clone();
                async move { sink.notify_tool_list_changed().await.is_ok() }
            }) => {}
        }
        Ok(())
    }
}

/// Sends a notification for every change that touches tools (and after missed changes)
/// until `stop` completes, the registry goes away, or a send fails (client gone).
async fn forward_changes<Stop, Notify, Sent>(
    mut changes: tokio::sync::broadcast::Receiver<RegistryChange>,
    stop: Stop,
    send: Notify,
) where
    Stop: Future,
    Notify: Fn(&RegistryChange) -> Sent,
    Sent: Future<Output = bool>,
{
    tokio::pin!(stop);
    loop {
        let change = tokio::select! {
            _ = &mut stop => return,
            change = changes.recv() => change,
        };
        let change = match change {
            Ok(change) if change.tools_changed() => change,
            Ok(_) => continue,
            // Changes were missed: the list may have changed.
            Err(RecvError::Lagged(_)) => RegistryChange::default(),
            Err(RecvError::Closed) => return,
        };
        if !send(&change).await {
            return;
        }
        tracing::debug!(added = ?change.added, removed = ?change.removed, changed = ?change.changed, "sent tools/list_changed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_tool_list_no_listing_used_for_the_idle_time_leaves_memory() {
        let tools = tempfile::tempdir().unwrap();
        // Long beside the 20 ms between listings: a test thread stalled for longer than
        // the idle time on a loaded machine would see the planner's list dropped too.
        let idle = Duration::from_secs(1);
        let host = ToolHost::builder()
            .root(tools.path())
            .engine_settings(crate::EngineSettings { drop_idle_code_after: idle, ..crate::EngineSettings::default() })
            .build()
            .await
            .unwrap();
        let shared = Shared::start(host, Caller::local(), ApprovalKey::random().unwrap());
        let planner = Caller::new("planner");
        shared.tools(&Caller::local());
        shared.tools(&planner);
        assert_eq!(shared.lists().len(), 2);
        // Listed again and again, the planner's list stays; the other one leaves.
        let started = Instant::now();
        while shared.lists().len() == 2 {
            assert!(started.elapsed() < Duration::from_secs(10), "an unused list was never dropped");
            shared.tools(&planner);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let lists = shared.lists().keys().cloned().collect::<Vec<_>>();
        assert_eq!(lists, vec![planner.clone()]);
        assert!(started.elapsed() >= idle / 2, "dropped after {:?}, before it was idle", started.elapsed());
    }

    #[test]
    fn unknown_tools_name_their_close_matches_in_mcp_form() {
        let error = unknown_tool("math.ad", &["math/add".into()]);
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_PARAMS);
        assert_eq!(error.message, "unknown tool `math.ad` (did you mean `math.add`?)");
    }
}
