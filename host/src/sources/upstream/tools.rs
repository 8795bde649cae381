//! An upstream server's tools as toolhost tools, and their results as toolhost outcomes.
//!
//! A result maps without loss:
//! - `isError: true` is a tool failure whose message is the result's text;
//! - `structuredContent` is the output (validated against the server's `outputSchema`
//!   when it declares one);
//! - otherwise the output is `{"content": [...]}`, the result's content blocks as the
//!   server sent them (text, images, resources), so nothing is dropped; such a tool's
//!   output form is [`OutputForm::McpContent`](crate::OutputForm): toolhost's own MCP
//!   clients get the blocks back as content, and no output schema in `tools/list`, just
//!   as the upstream server gave them.

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ClientRequest, ErrorCode, RequestId, ServerResult, Tool,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use serde_json::{Value, json};

use std::sync::Arc;

use super::UpstreamServer;
use super::client::{Connection, problem};
use super::progress::ProgressRoutes;
use super::stdio::{MAX_MESSAGE, TOO_LARGE};
use crate::error::CallError;
use crate::error::ToolDefError;
use crate::progress::ProgressHook;
use crate::redact::Redactor;
use crate::sources::{Produced, Ran};
use crate::tool::{DeclaredOutput, Limits, ToolDef, ToolError, ToolHints};

/// A tool of an upstream MCP server, called through the server's connection.
pub struct UpstreamTool {
    /// The server's name in `[[upstream]]`, which is also the tool's namespace.
    pub server: String,
    pub(crate) def: ToolDef,
    /// Its name on the server, which calls send ([`super::naming`]).
    pub remote_name: String,
    link: Link,
}

/// What the tools of one connection call through.
#[derive(Clone)]
pub(super) struct Link {
    pub(super) peer: Peer<RoleClient>,
    /// Blanks the credentials sent to the server out of its answers.
    pub(super) redactor: Arc<Redactor>,
    /// Where the server's progress notifications go.
    pub(super) progress: ProgressRoutes,
}

impl Link {
    pub(super) fn new(connection: &Connection, redactor: &Arc<Redactor>) -> Link {
        let progress = connection.service().progress.clone();
        Link { peer: connection.peer().clone(), redactor: redactor.clone(), progress }
    }
}

impl std::fmt::Debug for UpstreamTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UpstreamTool")
            .field("server", &self.server)
            .field("name", &self.def.name())
            .field("remote_name", &self.remote_name)
            .finish_non_exhaustive()
    }
}

impl UpstreamTool {
    /// `tool` of the server `server`, served as `name`, as a tool calling it through
    /// `peer`, with the server's time and size limits over the host's `defaults`.
    pub(super) fn new(
        server: &UpstreamServer,
        (tool, name): (&Tool, &str),
        link: &Link,
        defaults: Limits,
    ) -> Result<UpstreamTool, ToolDefError> {
        let description = tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default();
        let input_schema = Value::Object((*tool.input_schema).clone()).to_string();
        let declared_output = tool.output_schema.as_ref().map(|s| Value::Object((**s).clone()).to_string());
        let output = match &declared_output {
            Some(schema) => DeclaredOutput::Json(schema),
            None => DeclaredOutput::McpContent,
        };
        let mut def = ToolDef::new(name, description, &input_schema, output)?;
        def.policy.hints = hints(tool);
        def.policy.risk = def.policy.hints.implied_risk();
        def.limits = Limits {
            timeout: server.timeout.unwrap_or(defaults.timeout),
            max_output: server.max_response.unwrap_or(defaults.max_output),
            ..defaults
        };
        Ok(UpstreamTool { server: server.name.clone(), def, remote_name: tool.name.to_string(), link: link.clone() })
    }

    /// `namespace/tool`.
    pub fn full_name(&self) -> String {
        crate::names::full_name(&self.server, self.def.name())
    }

    /// Calls the tool on its server under the tool's time limit. Dropping the call (its
    /// caller going away) sends the server `notifications/cancelled` for the request. A
    /// panic on the way (in the client) is the host's failure to run the call, never
    /// the host's end.
    pub(crate) async fn run(&self, full_name: &str, input: Value, progress: Option<&ProgressHook>) -> Ran {
        use futures::FutureExt;
        let limit = self.def.limits.timeout;
        let tool = full_name.to_owned();
        let call = std::panic::AssertUnwindSafe(self.redacted_call(input, progress)).catch_unwind();
        let produced = match tokio::time::timeout(limit, call).await {
            Err(_elapsed) => Err(CallError::Timeout { tool, limit }),
            Ok(Err(_panic)) => Err(CallError::Host { tool, message: "the MCP client panicked".into() }),
            Ok(Ok(Ok(output))) => Ok(Produced::Value(output)),
            Ok(Ok(Err(Failure::Tool(failure)))) => Err(failure.for_call(&tool)),
            // The answer was never held: the message's bound is what it broke, unless the
            // tool's own is lower.
            Ok(Ok(Err(Failure::TooLarge { size }))) => {
                let limit = self.def.limits.max_output.min(MAX_MESSAGE as u64);
                Err(CallError::OutputTooLarge { tool, size, limit })
            }
        };
        Ran::produced(produced)
    }

    /// A call whose output and error text hold no credential sent to the server.
    async fn redacted_call(&self, input: Value, progress: Option<&ProgressHook>) -> Result<Value, Failure> {
        let redactor = &self.link.redactor;
        match self.call(input, progress).await {
            Ok(output) => Ok(redactor.value(output)),
            Err(Failure::Tool(ToolError::Failed(message))) => {
                Err(Failure::Tool(ToolError::Failed(redactor.text(&message).into_owned())))
            }
            Err(Failure::Tool(ToolError::InvalidInput(message))) => {
                Err(Failure::Tool(ToolError::InvalidInput(redactor.text(&message).into_owned())))
            }
            Err(too_large @ Failure::TooLarge { .. }) => Err(too_large),
        }
    }

    /// Calls the tool; its progress notifications go to `progress` while it runs.
    async fn call(&self, input: Value, progress: Option<&ProgressHook>) -> Result<Value, Failure> {
        let Value::Object(arguments) = input else {
            return Err(Failure::Tool(ToolError::InvalidInput("the input must be a JSON object".into())));
        };
        let server = &self.server;
        let request = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        let failed = |message: String| Err(Failure::Tool(ToolError::Failed(message)));
        let response = match progress {
            None => self.link.peer.call_tool_once(request).await,
            Some(hook) => self.call_with_progress(request, hook).await,
        };
        match response {
            Ok(CallToolResponse::Complete(result)) => outcome(result).map_err(Failure::Tool),
            Ok(CallToolResponse::InputRequired(_)) => {
                failed(format!("the upstream server `{server}` asked for more input, which toolhost does not relay"))
            }
            // A task (SEP-2663), or whatever later revisions add.
            Ok(_) => {
                failed(format!("the upstream server `{server}` answered with a task, which toolhost does not poll"))
            }
            Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                Err(Failure::Tool(ToolError::InvalidInput(error.message.to_string())))
            }
            Err(ServiceError::McpError(error)) if error.code == TOO_LARGE => {
                let size = error.data.as_ref().and_then(|data| data["size"].as_u64()).unwrap_or(MAX_MESSAGE as u64 + 1);
                Err(Failure::TooLarge { size })
            }
            Err(ServiceError::McpError(error)) => {
                failed(format!("the upstream server `{server}` answered with an error: {}", error.message))
            }
            Err(error) => failed(format!("the upstream server `{server}` did not answer: {}", problem(&error))),
        }
    }
}

impl UpstreamTool {
    /// `tools/call` with the reports for the request's progress token going to `hook`.
    /// Dropped before the answer, it sends the server `notifications/cancelled`.
    async fn call_with_progress(
        &self,
        request: CallToolRequestParams,
        hook: &ProgressHook,
    ) -> Result<CallToolResponse, ServiceError> {
        let peer = &self.link.peer;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(request));
        let handle = peer.send_request_with_option(request, PeerRequestOptions::no_options()).await?;
        let _route = self.link.progress.route(handle.progress_token.clone(), hook.clone());
        let mut abandoned = Abandoned { peer: peer.clone(), id: Some(handle.id.clone()) };
        let answer = handle.await_response().await;
        abandoned.id = None;
        match answer? {
            ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
            ServerResult::InputRequiredResult(result) => Ok(CallToolResponse::InputRequired(result)),
            ServerResult::CreateTaskResult(result) => Ok(CallToolResponse::Task(result)),
            _ => Err(ServiceError::UnexpectedResponse),
        }
    }
}

/// A request whose answer nobody waits for any more: the server is told, as the SDK's
/// own calls tell it.
struct Abandoned {
    peer: Peer<RoleClient>,
    id: Option<RequestId>,
}

impl Drop for Abandoned {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        let peer = self.peer.clone();
        let cancelled = CancelledNotificationParam::new(Some(id), Some("request abandoned by the caller".to_owned()));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { peer.notify_cancelled(cancelled).await });
        }
    }
}

/// How a call to the server failed.
enum Failure {
    /// As a tool fails.
    Tool(ToolError),
    /// Its answer took `size` bytes, past the most one message may take.
    TooLarge { size: u64 },
}

/// MCP's annotations are toolhost's hints (the same four).
fn hints(tool: &Tool) -> ToolHints {
    let Some(annotations) = &tool.annotations else { return ToolHints::default() };
    ToolHints {
        read_only: annotations.read_only_hint,
        destructive: annotations.destructive_hint,
        idempotent: annotations.idempotent_hint,
        open_world: annotations.open_world_hint,
    }
}

/// A complete result as the tool's outcome.
fn outcome(result: CallToolResult) -> Result<Value, ToolError> {
    if result.is_error == Some(true) {
        let text: Vec<&str> =
            result.content.iter().filter_map(|block| block.as_text().map(|text| text.text.as_str())).collect();
        let message = if text.is_empty() { "the tool failed without a message".to_owned() } else { text.join("\n") };
        return Err(ToolError::Failed(message));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    let content = serde_json::to_value(&result.content)
        .map_err(|e| ToolError::Failed(format!("the result's content is not JSON: {e}")))?;
    Ok(json!({ "content": content }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::ContentBlock;

    #[test]
    fn results_map_without_loss() {
        let structured = CallToolResult::structured(json!({ "sum": 3 }));
        assert_eq!(outcome(structured).unwrap(), json!({ "sum": 3 }));
        let text = CallToolResult::success(vec![ContentBlock::text("hello")]);
        assert_eq!(outcome(text).unwrap(), json!({ "content": [{ "type": "text", "text": "hello" }] }));
        let failed = CallToolResult::error(vec![ContentBlock::text("no such city")]);
        assert_eq!(outcome(failed).unwrap_err(), ToolError::Failed("no such city".into()));
    }
}
