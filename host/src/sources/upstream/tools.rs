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

use std::borrow::Cow;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ErrorCode, Tool};
use rmcp::service::{Peer, ServiceError};
use serde_json::{Value, json};

use crate::sources::native::NativeTool;
use crate::tool::ToolError;
use crate::tool::ToolHints;

/// What a failed upstream result keeps of its text in the failure's message.
const MAX_FAILURE_TEXT: usize = 4096;

/// The output schema of a tool whose server declares none: its content blocks.
fn content_schema() -> Value {
    json!({
        "type": "object",
        "properties": { "content": { "type": "array", "items": { "type": "object" } } },
        "required": ["content"],
    })
}

/// `tool` of the server `server` (its namespace) as a tool calling it through `peer`;
/// `Err` says why it cannot be served.
pub(super) fn upstream_tool(
    server: &str,
    tool: &Tool,
    peer: &Peer<RoleClient>,
    timeout: Option<Duration>,
    max_response: Option<u64>,
) -> Result<NativeTool, String> {
    let name = tool.name.to_string();
    let description = tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default();
    let input_schema = Value::Object((*tool.input_schema).clone());
    let declared_output = tool.output_schema.as_ref().map(|s| Value::Object((**s).clone()));
    let peer = peer.clone();
    let server_name = server.to_owned();
    let upstream_name: Cow<'static, str> = Cow::Owned(name.clone());
    let handler = move |input: Value| {
        let peer = peer.clone();
        let server = server_name.clone();
        let name = upstream_name.clone();
        async move {
            let Value::Object(arguments) = input else {
                return Err(ToolError::InvalidInput("the input must be a JSON object".into()));
            };
            // Dropping this future (the call's timeout, or its caller going away) sends
            // the server `notifications/cancelled` for the request.
            let response = peer.call_tool_once(CallToolRequestParams::new(name).with_arguments(arguments)).await;
            match response {
                Ok(CallToolResponse::Complete(result)) => outcome(result),
                Ok(CallToolResponse::InputRequired(_)) => Err(ToolError::Failed(format!(
                    "the upstream server `{server}` asked for more input, which toolhost does not relay"
                ))),
                // A task (SEP-2663), or whatever later revisions add.
                Ok(_) => Err(ToolError::Failed(format!(
                    "the upstream server `{server}` answered with a task, which toolhost does not poll"
                ))),
                Err(ServiceError::McpError(error)) if error.code == ErrorCode::INVALID_PARAMS => {
                    Err(ToolError::InvalidInput(bounded(&error.message)))
                }
                Err(error) => Err(ToolError::Failed(format!(
                    "the upstream server `{server}` did not answer: {}",
                    bounded(&error.to_string())
                ))),
            }
        }
    };
    let full_name = crate::names::full_name(server, &name);
    let output_schema = declared_output.clone().unwrap_or_else(content_schema);
    let mut native = NativeTool::new(&full_name, description, input_schema, output_schema, handler)
        .map_err(|e| e.to_string())?
        .with_hints(hints(tool));
    native.upstream = Some(server.to_owned());
    if declared_output.is_none() {
        native = native.with_mcp_content_output();
    }
    if let Some(timeout) = timeout {
        native = native.with_timeout(timeout);
    }
    if let Some(max_response) = max_response {
        native = native.with_max_output(max_response);
    }
    Ok(native)
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
        return Err(ToolError::Failed(bounded(&message)));
    }
    if let Some(structured) = result.structured_content {
        return Ok(structured);
    }
    let content = serde_json::to_value(&result.content)
        .map_err(|e| ToolError::Failed(format!("the result's content is not JSON: {e}")))?;
    Ok(json!({ "content": content }))
}

/// At most [`MAX_FAILURE_TEXT`] bytes of a server's text (like a guest's, it is data:
/// whoever prints it escapes it).
fn bounded(text: &str) -> String {
    let mut end = text.len().min(MAX_FAILURE_TEXT);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < text.len() { "…" } else { "" };
    format!("{}{cut}", &text[..end])
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

    #[test]
    fn failure_text_is_bounded_on_a_character() {
        let long = "é".repeat(MAX_FAILURE_TEXT);
        let cut = bounded(&long);
        assert!(cut.len() <= MAX_FAILURE_TEXT + "…".len() && cut.ends_with('…'));
        assert_eq!(bounded("short"), "short");
    }
}
