//! What a tool shows its caller beyond its output, and what it may ask of the calling
//! client: content blocks, the person's answer to a question, the client's model.
//!
//! Content blocks need no grant. Asking the person (`elicit`), the model (`sample`) and
//! log lines reaching the client are powers the operator grants in the manifest
//! (`[grants] client = ["elicit", "sample", "log"]`); without the grant, or when the
//! client cannot answer, the call gets a [`ClientError`] at once, never a hang. All of
//! this needs a host that speaks `toolhost:tool@0.1.3`.

use super::host;

pub use host::{ClientError, Content, EmbeddedResource, Media, ResourceContents, ResourceLink};
pub use host::{Role, SamplingMessage, SamplingReply, SamplingRequest};

impl Content {
    /// Text for the model.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text(text.into())
    }

    /// An image of `mime_type` (`image/png`).
    pub fn image(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Image(Media { data: data.into(), mime_type: mime_type.into() })
    }

    /// Audio of `mime_type` (`audio/wav`).
    pub fn audio(data: impl Into<Vec<u8>>, mime_type: impl Into<String>) -> Content {
        Content::Audio(Media { data: data.into(), mime_type: mime_type.into() })
    }

    /// A resource's text, carried in the result.
    pub fn resource_text(uri: impl Into<String>, mime_type: Option<&str>, text: impl Into<String>) -> Content {
        Content::Resource(EmbeddedResource {
            uri: uri.into(),
            mime_type: mime_type.map(str::to_owned),
            contents: ResourceContents::Text(text.into()),
        })
    }

    /// A link to a resource the client reads elsewhere.
    pub fn link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::ResourceLink(ResourceLink { uri: uri.into(), name: name.into(), description: None, mime_type: None })
    }
}

/// Adds `block` to what the running call shows its caller, after the blocks added
/// before. The tool's output is still checked against its schema; a tool whose output
/// is `()` (JSON `null`) shows the blocks alone. Refused when the blocks together would
/// pass the tool's output limit.
pub fn add_content(block: Content) -> Result<(), String> {
    host::add_content(&block)
}

/// How the person answered a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// They submitted the form: its values (an object matching the schema).
    Accept(serde_json::Value),
    /// They said no.
    Decline,
    /// They dismissed the question.
    Cancel,
}

/// Asks the person behind the client `message`, with a form: `schema`, a flat object
/// schema whose properties are strings, numbers, booleans or enums. Waits for the answer
/// within the call's time limit.
pub fn elicit(message: &str, schema: &serde_json::Value) -> Result<Answer, ClientError> {
    Ok(match host::elicit(message, &schema.to_string())? {
        host::ElicitAnswer::Accept(values) => {
            Answer::Accept(serde_json::from_str(&values).unwrap_or(serde_json::Value::Null))
        }
        host::ElicitAnswer::Decline => Answer::Decline,
        host::ElicitAnswer::Cancel => Answer::Cancel,
    })
}

impl SamplingRequest {
    /// One question of the person's, answered in at most `max_tokens` tokens.
    pub fn user(prompt: impl Into<String>, max_tokens: u32) -> SamplingRequest {
        SamplingRequest {
            messages: vec![SamplingMessage { role: Role::User, text: prompt.into() }],
            system_prompt: None,
            max_tokens,
        }
    }
}

/// Asks the client's model for a completion; the client may show the request to the
/// person first.
pub fn sample(request: &SamplingRequest) -> Result<SamplingReply, ClientError> {
    host::sample(request)
}

impl From<ClientError> for super::ToolError {
    fn from(error: ClientError) -> Self {
        let reason = match error {
            ClientError::NotGranted(reason) => format!("not granted: {reason}"),
            ClientError::Unsupported(reason) => format!("unsupported: {reason}"),
            ClientError::Failed(reason) => format!("failed: {reason}"),
        };
        super::ToolError::Failed(reason)
    }
}
