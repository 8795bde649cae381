//! Prompts, resources and completions over MCP, and what a registry change tells a client of them.
//!
//! The host decides what a caller sees and reads (`host/offered.rs`); this module only
//! speaks MCP: the SDK's result types are read from the JSON the protocol defines, so
//! every field is spelled as clients expect. A prompt is named as MCP clients see
//! tools (`namespace.prompt`); a stdlib prompt also answers to its bare name.

use std::collections::BTreeMap;

use base64::Engine as _;
use rmcp::model::{
    CompleteRequestParams, CompleteResult, ErrorCode, ErrorData, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Reference,
};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::ToolHost;
use crate::error::OfferError;
use crate::host::{CompletionTarget, Completions};
use crate::names;
use crate::policy::Caller;
use crate::registry::PromptEntry;
use crate::resource::{Body, MAX_URI_BYTES, ResourceContent};

/// MCP's code for a resource that does not exist.
const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

/// An SDK result read from its protocol JSON, marked complete as 2026-07-28 requires
/// (the SDK strips the mark for clients of earlier revisions).
fn from_json<T: DeserializeOwned>(mut value: Value) -> Result<T, ErrorData> {
    value["resultType"] = json!("complete");
    serde_json::from_value(value)
        .map_err(|e| ErrorData::internal_error(format!("an MCP result did not form: {e}"), None))
}

/// How an [`OfferError`] reaches the client.
pub(crate) fn offer_error(error: OfferError) -> ErrorData {
    let message = error.to_string();
    match error {
        OfferError::ResourceNotFound { uri } => {
            ErrorData::new(RESOURCE_NOT_FOUND, message, Some(json!({ "uri": uri })))
        }
        OfferError::PromptNotFound { .. } | OfferError::InvalidArguments { .. } => {
            ErrorData::invalid_params(message, None)
        }
        OfferError::Read { .. } => ErrorData::internal_error(message, None),
    }
}

/// A URI a client sent is at most [`MAX_URI_BYTES`] long (a template variable matches
/// any length; the bound keeps what a session holds small).
pub(crate) fn check_client_uri(uri: &str) -> Result<(), ErrorData> {
    if uri.len() > MAX_URI_BYTES {
        return Err(ErrorData::invalid_params(format!("a resource URI is at most {MAX_URI_BYTES} bytes"), None));
    }
    Ok(())
}

fn prompt_json(entry: &PromptEntry) -> Value {
    let prompt = entry.prompt();
    let arguments: Vec<Value> = prompt
        .arguments
        .iter()
        .map(|argument| json!({ "name": argument.name, "description": argument.description, "required": argument.required }))
        .collect();
    let mut listed = json!({
        "name": names::mcp_name(&entry.full_name),
        "description": prompt.description,
        "arguments": arguments,
    });
    if let Some(title) = &prompt.title {
        listed["title"] = json!(title);
    }
    strip_nulls(listed)
}

pub(crate) fn list_prompts(host: &ToolHost, caller: &Caller) -> Result<ListPromptsResult, ErrorData> {
    let prompts: Vec<Value> = host.prompts(caller).iter().map(prompt_json).collect();
    from_json(json!({ "prompts": prompts }))
}

pub(crate) fn get_prompt(
    host: &ToolHost,
    caller: &Caller,
    name: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<GetPromptResult, ErrorData> {
    let mut strings = BTreeMap::new();
    for (key, value) in arguments.unwrap_or_default() {
        let Value::String(value) = value else {
            return Err(ErrorData::invalid_params(
                format!("the argument `{}` is not a string", crate::text::Escaped(&key)),
                None,
            ));
        };
        strings.insert(key, value);
    }
    let (entry, messages) = host.get_prompt(caller, name, &strings).map_err(offer_error)?;
    let messages: Vec<Value> =
        messages.iter().map(|(role, content)| json!({ "role": role, "content": content.to_mcp() })).collect();
    from_json(json!({ "description": entry.prompt().description, "messages": messages }))
}

pub(crate) fn list_resources(host: &ToolHost, caller: &Caller) -> Result<ListResourcesResult, ErrorData> {
    let resources: Vec<Value> = host
        .resources(caller)
        .iter()
        .map(|entry| {
            let resource = entry.resource();
            strip_nulls(json!({
                "uri": resource.uri,
                "name": resource.name,
                "title": resource.title,
                "description": resource.description,
                "mimeType": resource.mime_type,
                "size": resource.body.len(),
            }))
        })
        .collect();
    from_json(json!({ "resources": resources }))
}

pub(crate) fn list_templates(host: &ToolHost, caller: &Caller) -> Result<ListResourceTemplatesResult, ErrorData> {
    let templates: Vec<Value> = host
        .resource_templates(caller)
        .iter()
        .map(|entry| {
            let template = entry.template();
            strip_nulls(json!({
                "uriTemplate": template.uri_template.as_str(),
                "name": template.name,
                "title": template.title,
                "description": template.description,
                "mimeType": template.mime_type,
            }))
        })
        .collect();
    from_json(json!({ "resourceTemplates": templates }))
}

pub(crate) fn read_result(contents: Vec<ResourceContent>) -> Result<ReadResourceResult, ErrorData> {
    let contents: Vec<Value> = contents
        .into_iter()
        .map(|part| {
            let mut json = json!({ "uri": part.uri, "mimeType": part.mime_type });
            match part.body {
                Body::Text(text) => json["text"] = json!(&*text),
                Body::Blob(bytes) => json["blob"] = json!(base64::engine::general_purpose::STANDARD.encode(&bytes)),
            }
            strip_nulls(json)
        })
        .collect();
    from_json(json!({ "contents": contents }))
}

pub(crate) fn complete(
    host: &ToolHost,
    caller: &Caller,
    request: &CompleteRequestParams,
) -> Result<CompleteResult, ErrorData> {
    let target = match &request.r#ref {
        Reference::Prompt(prompt) => CompletionTarget::Prompt(prompt.name.clone()),
        Reference::Resource(resource) => CompletionTarget::ResourceTemplate(resource.uri.clone()),
        _ => return Err(ErrorData::invalid_params("completion is offered for prompts and resource templates", None)),
    };
    let Completions { values, total } =
        host.complete(caller, &target, &request.argument.name, &request.argument.value).map_err(offer_error)?;
    let has_more = total > values.len();
    from_json(json!({ "completion": { "values": values, "total": total, "hasMore": has_more } }))
}

/// `value` without its null members (optional fields are absent, not null, in MCP).
fn strip_nulls(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.retain(|_, member| !member.is_null());
    }
    value
}
