//! One MCP session's handler: the SDK's `ServerHandler` over the shared state, for stdio and Streamable HTTP alike.

use std::sync::{Arc, Mutex};

use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientRequest, CompleteRequestParams, CompleteResult, ErrorData,
    GetExtensions, GetMeta, GetPromptRequestParams, GetPromptResponse, Implementation, InputRequiredResult,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, RoleServer, SubscriptionContext};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::approval;
use super::changes::{self, Subscriptions};
use super::client::{CallClient, LogRelay, SessionLogLevel};
use super::offered;
use super::progress::ProgressRelay;
use super::request::{NoQuestions, disconnect_of, http_session};
use super::shared::Shared;
use crate::error::OfferError;
use crate::host::CallOptions;
use crate::policy::{ApprovalHook, ApproveVia, Caller};
use crate::resource::MAX_URI_BYTES;

/// How long a `tools/list` during a server's start waits for the first load to end
/// before it lists what is served: long enough for a cold start of hundreds of
/// components, well within the clients' own request timeouts (60 s in the official
/// SDKs).
pub const FIRST_LIST_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// One MCP session's handler: cheap, created per session (stdio: once).
pub(crate) struct McpServer {
    shared: Arc<Shared>,
    /// The level the client set for its tools' log lines (`logging/setLevel`).
    log_level: SessionLogLevel,
    /// The resources the client subscribed to.
    subscriptions: Subscriptions,
    /// Dropped with the handler, which ends this session's change forwarder.
    forwarder: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
}

impl McpServer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let (log_level, subscriptions) = Default::default();
        McpServer { shared, log_level, subscriptions, forwarder: Mutex::new(None) }
    }

    /// Another handler of the same session: the same shared state and log level.
    pub(crate) fn same_session(&self) -> Self {
        McpServer {
            shared: self.shared.clone(),
            log_level: self.log_level.clone(),
            subscriptions: self.subscriptions.clone(),
            forwarder: Mutex::new(None),
        }
    }

    /// Whether `request` (a `tools/call`) is known to ask its client nothing while it
    /// runs: it wants no progress, and the tool resolves for its caller now and needs
    /// no approval of the client's.
    pub(crate) fn answers_without_asking(&self, request: &ClientRequest) -> bool {
        let ClientRequest::CallToolRequest(call) = request else { return false };
        if request.get_meta().get_progress_token().is_some() {
            return false;
        }
        // A thread named badly is refused where the SDK answers.
        let Ok(caller) = self.shared.caller_of(request.extensions(), request.get_meta()) else { return false };
        self.shared.host.runs_without_call_approver(&caller, &call.params.name)
    }

    /// Who approves this call if it needs approval: the person behind the client, asked
    /// during the call; on 2026-07-28, which forbids asking during a call, the answer the
    /// retried call carries, or else `Err`: the question to answer first.
    async fn approver(
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
        let console = || self.shared.host.operator_approver();
        match (self.shared.approve_via, can_ask, stateless) {
            (ApproveVia::Console, _, _) | (ApproveVia::Both, false, _) => return Ok(console()),
            (ApproveVia::Client, false, _) => return Ok(approval::unable(approval::NO_ELICITATION)),
            (ApproveVia::Both, true, false) => {
                return Ok(approval::first_of(approval::ask_beside_console(context.peer.clone()), console()));
            }
            (ApproveVia::Client, true, false) => return Ok(approval::ask_during_call(context.peer.clone())),
            // A 2026-07-28 client is asked ahead, in the answer to its call.
            (ApproveVia::Client | ApproveVia::Both, true, true) => {}
        }
        let Some(question) = self.shared.host.pending_approval(caller, &request.name, input) else {
            return Ok(approval::unable("the approval needed was not asked for"));
        };
        let key = &self.shared.approval_key;
        let now = std::time::SystemTime::now();
        match request.input_responses.as_ref().and_then(|r| r.get(approval::APPROVAL_INPUT)) {
            None => Err(Box::new(approval::input_required(&question, approval::seal(key, &question, now)))),
            Some(answer) => {
                let sealed = request.request_state.as_deref();
                if let Err(why) = approval::check_seal(key, &question, sealed, now) {
                    return Ok(approval::unable(why));
                }
                // One answer, one call: the seal is claimed in the store every replica
                // shares, and a retry that carries it again is refused.
                let token = approval::used_once_token(sealed.unwrap_or_default());
                match self.shared.host.storage().claim_once(&token, approval::claim_kept_until(now)).await {
                    Ok(true) => Ok(approval::answered(answer)),
                    Ok(false) => Ok(approval::unable(approval::USED)),
                    Err(problem) => {
                        tracing::warn!("approval: {}", crate::text::Escaped(&problem.to_string()));
                        Ok(approval::unable(approval::UNCHECKED))
                    }
                }
            }
        }
    }
}

impl McpServer {
    /// Most clients list once, right after initialize, and many never listen for
    /// `list_changed`: while the server starts, a list, a prompt or a resource waits for
    /// the first load (every component, native tool and upstream server), within a bound.
    async fn first_load(&self) {
        if tokio::time::timeout(FIRST_LIST_WAIT, self.shared.host.loaded()).await.is_err() {
            tracing::info!(
                "a list was answered before the first load ended ({FIRST_LIST_WAIT:?}): the rest will follow as list_changed"
            );
        }
    }

    /// The client behind a call, as the call's tool may ask it.
    fn call_client(&self, context: &RequestContext<RoleServer>) -> (crate::client::ClientHook, LogRelay) {
        let declared = context.client_capabilities();
        let elicitation =
            declared.as_ref().and_then(|c| c.elicitation.as_ref()).is_some_and(|e| e.form.is_some() || e.url.is_none());
        let sampling = declared.as_ref().is_some_and(|c| c.sampling.is_some());
        let stateless = context.extensions.get::<NoQuestions>().is_some()
            || context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        CallClient::start(context.peer.clone(), (elicitation, sampling, stateless), self.log_level.clone())
    }
}

impl ServerHandler for McpServer {
    #[allow(deprecated)] // Logging is deprecated by SEP-2577, and still what clients speak.
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_resources()
            .enable_tools()
            .enable_prompts_list_changed()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
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
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
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
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        let input = Value::Object(request.arguments.clone().unwrap_or_default());
        let approver = match self.approver(&caller, &request, &input, &context).await {
            Ok(approver) => approver,
            Err(ask_first) => return Ok(CallToolResponse::InputRequired(*ask_first)),
        };
        let relay = context.meta.get_progress_token().map(|token| ProgressRelay::start(context.peer.clone(), token));
        let (client, log_relay) = self.call_client(&context);
        let options = CallOptions {
            call_id: Some(context.id.to_string()),
            approver: Some(approver),
            progress: relay.as_ref().map(ProgressRelay::hook),
            client: Some(client),
        };
        let disconnect = disconnect_of(&context.extensions);
        // A direct call's own token already stops with its session (`inline::start`); a
        // call the SDK runs stops on the session's.
        let session_closed = match (http_session(&context.extensions), &self.shared.sessions) {
            (Some(session), Some(sessions)) if context.extensions.get::<NoQuestions>().is_none() => {
                sessions.closing(session)
            }
            _ => CancellationToken::new(),
        };
        let result = tokio::select! {
            result = self.shared.call(&caller, &request.name, input, &options) => result.map(CallToolResponse::from),
            // No answer reaches the client: it asked for none, is gone, or ended the session.
            () = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled by the client", None)),
            () = disconnect.cancelled() => return Err(ErrorData::internal_error("the client went away", None)),
            () = session_closed.cancelled() => return Err(ErrorData::internal_error("the session closed", None)),
        };
        drop(options);
        log_relay.finish().await;
        if let Some(relay) = relay {
            relay.finish().await;
        }
        result
    }

    /// The client's powers over MCP the log level of this session.
    #[allow(deprecated)] // Logging is deprecated by SEP-2577, and still what clients speak.
    async fn set_level(
        &self,
        request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.log_level.set(request.level);
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
        offered::list_prompts(&self.shared.host, &caller)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
        offered::get_prompt(&self.shared.host, &caller, &request.name, request.arguments).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
        offered::complete(&self.shared.host, &caller, &request)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
        offered::list_resources(&self.shared.host, &caller)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        self.first_load().await;
        offered::list_templates(&self.shared.host, &caller)
    }

    /// A template's read is a call of its tool, with the call's client, progress-free.
    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        offered::check_client_uri(&request.uri)?;
        self.first_load().await;
        let (client, log_relay) = self.call_client(&context);
        let options =
            CallOptions { call_id: Some(context.id.to_string()), client: Some(client), ..CallOptions::default() };
        let read = tokio::select! {
            read = self.shared.host.read_resource(&caller, &request.uri, &options) => read,
            () = context.ct.cancelled() => return Err(ErrorData::internal_error("cancelled by the client", None)),
        };
        drop(options);
        log_relay.finish().await;
        offered::read_result(read.map_err(offered::offer_error)?).map(Into::into)
    }

    /// Only a resource the caller can read is subscribed to.
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.shared.caller_of(&context.extensions, &context.meta)?;
        offered::check_client_uri(&request.uri)?;
        self.first_load().await;
        if !self.shared.host.may_read_resource(&caller, &request.uri) {
            return Err(offered::offer_error(OfferError::ResourceNotFound { uri: request.uri }));
        }
        self.subscriptions.add(request.uri, caller)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.remove(&request.uri);
        Ok(())
    }

    /// Session lifecycle (stdio and HTTP sessions): from now on, every registry change
    /// reaches this client as the notifications it owes (`changes.rs`).
    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if let (Some(session), Some(sessions)) = (http_session(&context.extensions), &self.shared.sessions) {
            sessions.initialized(session, context.peer.clone());
        }
        let (stop, stopped) = tokio::sync::oneshot::channel();
        let mut slot = self.forwarder.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return;
        }
        *slot = Some(stop);
        drop(slot);
        let host = self.shared.host.clone();
        tokio::spawn(changes::to_session(context.peer, host, stopped, self.subscriptions.clone()));
    }

    /// Stateless lifecycle (2026-07-28): list changes go to `subscriptions/listen`.
    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut offered =
            SubscriptionFilter::builder().tools_list_changed().prompts_list_changed().resources_list_changed().build();
        let uris = requested.resource_subscriptions.iter().flatten().filter(|uri| uri.len() <= MAX_URI_BYTES);
        let uris = uris.take(changes::MAX_SUBSCRIPTIONS);
        offered.resource_subscriptions = Some(uris.cloned().collect());
        Some(requested.intersection(&offered))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let request = context.request_context();
        let caller = self.shared.caller_of(&request.extensions, &request.meta)?;
        let (sink, accepted, host) = (context.sink().clone(), context.accepted().clone(), self.shared.host.clone());
        tokio::select! {
            _ = context.cancelled() => {}
            _ = changes::to_listener(sink, accepted, host, caller) => {}
        }
        Ok(())
    }
}
