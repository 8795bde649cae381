//! A call's result as a model provider takes it back: OpenAI's tool message, Anthropic's `tool_result`.
//!
//! A call's result as a model provider takes it back, from the same [`CallReport`]
//! parts the MCP server answers from: the output, or the failure as `kind: message`;
//! and the content blocks the tool showed ([`crate::Content`]).
//!
//! - **OpenAI** (a Chat Completions `role: "tool"` message, whose content is text):
//!   text blocks as they are, media as a line naming it (`[image image/png, 70 bytes,
//!   not shown]`, as the message cannot carry it), then the output as text (a string
//!   as itself, `null` left out, anything else as JSON).
//! - **Anthropic** (a `tool_result` block): text blocks, images of the types the API
//!   takes (`image/jpeg`, `png`, `gif`, `webp`) as base64 image blocks and PDFs as
//!   document blocks, everything else as a line naming it; then the output as text;
//!   `is_error` on a failure.
//!
//! The caller adds the id the provider gave the call (`tool_call_id`, `tool_use_id`).
//!
//! [`CallReport`]: crate::CallReport

use base64::Engine as _;
use serde_json::{Value, json};

use crate::content::{Content, ResourceContents};
use crate::error::CallError;

/// Images Anthropic's API takes in a `tool_result`.
const ANTHROPIC_IMAGES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// The result of a call (`outcome`, and the `content` it showed) for `provider`:
/// `Some` for OpenAI and Anthropic, `None` for MCP (whose clients get the server's
/// `CallToolResult`).
pub fn tool_result(
    provider: super::ExportFormat,
    outcome: Result<&Value, &CallError>,
    content: &[Content],
) -> Option<Value> {
    let output_text = match outcome {
        Ok(Value::Null) => None,
        Ok(Value::String(text)) => Some(text.clone()),
        Ok(other) => Some(other.to_string()),
        Err(error) => Some(format!("{}: {error}", error.kind())),
    };
    // A failed call shows its error alone: what it showed before failing is not its answer.
    let content = if outcome.is_ok() { content } else { &[] };
    match provider {
        super::ExportFormat::OpenAi => {
            let mut parts: Vec<String> = content.iter().map(as_text).collect();
            parts.extend(output_text);
            Some(json!({ "role": "tool", "content": parts.join("\n\n") }))
        }
        super::ExportFormat::Anthropic => {
            let mut blocks: Vec<Value> = content.iter().map(anthropic_block).collect();
            blocks.extend(output_text.map(|text| json!({ "type": "text", "text": text })));
            Some(json!({ "type": "tool_result", "content": blocks, "is_error": outcome.is_err() }))
        }
        super::ExportFormat::Mcp => None,
    }
}

/// A block as text: its text, or a line naming what cannot be shown as text.
fn as_text(block: &Content) -> String {
    match block {
        Content::Text(text) => text.clone(),
        Content::Resource { contents: ResourceContents::Text(text), .. } => text.clone(),
        Content::ResourceLink { uri, name, .. } => format!("[{name}: {uri}]"),
        Content::Image { data, mime_type } | Content::Audio { data, mime_type } => {
            format!("[{} {mime_type}, {} bytes, not shown]", block.kind(), data.len())
        }
        Content::Resource { uri, mime_type, contents: ResourceContents::Blob(data) } => {
            format!("[resource {uri} ({}), {} bytes, not shown]", mime_type.as_deref().unwrap_or("bytes"), data.len())
        }
    }
}

fn anthropic_block(block: &Content) -> Value {
    let base64 = |data: &[u8]| base64::engine::general_purpose::STANDARD.encode(data);
    match block {
        Content::Image { data, mime_type } if ANTHROPIC_IMAGES.contains(&mime_type.as_str()) => json!({
            "type": "image",
            "source": { "type": "base64", "media_type": mime_type, "data": base64(data) },
        }),
        Content::Resource { mime_type: Some(mime), contents: ResourceContents::Blob(data), .. }
            if mime == "application/pdf" =>
        {
            json!({ "type": "document", "source": { "type": "base64", "media_type": mime, "data": base64(data) } })
        }
        other => json!({ "type": "text", "text": as_text(other) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ExportFormat;

    #[test]
    fn blocks_and_output_reach_each_provider_in_its_shape() {
        let blocks = [
            Content::text("Chart:"),
            Content::image(vec![1, 2, 3], "image/png"),
            Content::audio(vec![0; 4], "audio/wav"),
        ];
        let output = json!({ "mean": 2 });
        let openai = tool_result(ExportFormat::OpenAi, Ok(&output), &blocks).unwrap();
        assert_eq!(
            openai,
            json!({ "role": "tool", "content": "Chart:\n\n[image image/png, 3 bytes, not shown]\n\n[audio audio/wav, 4 bytes, not shown]\n\n{\"mean\":2}" })
        );
        let anthropic = tool_result(ExportFormat::Anthropic, Ok(&Value::Null), &blocks).unwrap();
        assert_eq!(anthropic["is_error"], false);
        assert_eq!(
            anthropic["content"][1],
            json!({ "type": "image", "source": { "type": "base64", "media_type": "image/png", "data": "AQID" } })
        );
        assert_eq!(anthropic["content"][2]["text"], "[audio audio/wav, 4 bytes, not shown]");
        assert_eq!(anthropic["content"].as_array().unwrap().len(), 3, "a null output adds no text");
        assert_eq!(tool_result(ExportFormat::Mcp, Ok(&output), &blocks), None);
    }

    #[test]
    fn a_failure_is_its_kind_and_message_alone() {
        let error = CallError::Failed { tool: "t/x".into(), message: "no".into() };
        let anthropic = tool_result(ExportFormat::Anthropic, Err(&error), &[Content::text("partial")]).unwrap();
        assert_eq!(anthropic["is_error"], true);
        assert_eq!(anthropic["content"], json!([{ "type": "text", "text": format!("failed: {error}") }]));
        let text = tool_result(ExportFormat::OpenAi, Ok(&json!("# Title")), &[]).unwrap();
        assert_eq!(text["content"], "# Title", "a string output is its text");
    }
}
