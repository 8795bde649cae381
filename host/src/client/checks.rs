//! The bounds and checks of what a tool asks its client and what the client answers.

use serde_json::Value;

use super::{ClientError, ElicitAnswer, SamplingReply, SamplingRequest};
use crate::schema::Schema;
use crate::text::{Escaped, MAX_MESSAGE, bounded};

/// The most requests (elicitation, sampling) one call may make of its client; past it
/// each answers `failed` at once, unrecorded but counted.
pub const MAX_REQUESTS_PER_CALL: usize = 64;
/// The largest form a tool may ask, as JSON text.
pub const MAX_FORM_BYTES: usize = 64 * 1024;
/// The most text a sampling request may carry (its messages and system prompt).
pub const MAX_SAMPLING_BYTES: usize = 1024 * 1024;

/// The form `schema` as a schema to check answers with, when it is a form MCP
/// elicitation can show: an object schema whose properties are strings, numbers,
/// integers, booleans or string enums.
pub(super) fn check_form(schema: &Value) -> Result<Schema, String> {
    let size = schema.to_string().len();
    if size > MAX_FORM_BYTES {
        return Err(format!("the form is {size} bytes of JSON, over the {MAX_FORM_BYTES} a question may take"));
    }
    let object = schema.as_object().filter(|o| o.get("type") == Some(&Value::from("object")));
    let Some(object) = object else {
        return Err("the form is not an object schema (`{\"type\": \"object\", \"properties\": …}`)".to_owned());
    };
    let properties = object.get("properties").and_then(Value::as_object);
    for (name, property) in properties.into_iter().flatten() {
        let kind = property.get("type").and_then(Value::as_str);
        let primitive = matches!(kind, Some("string" | "number" | "integer" | "boolean"))
            || (kind == Some("array") && property.pointer("/items/enum").is_some())
            || (kind == Some("array") && property.pointer("/items/anyOf").is_some());
        if !primitive {
            return Err(format!("form field `{}` is not a string, number, integer, boolean or enum", Escaped(name)));
        }
    }
    Schema::compile(&schema.to_string()).map_err(|problem| format!("the form is not a valid schema: {problem}"))
}

/// An answer within [`MAX_SAMPLING_BYTES`] whose accepted values match the form: the
/// client's word is checked like a tool's input.
pub(super) fn check_answer(form: &Schema, answer: ElicitAnswer) -> Result<ElicitAnswer, ClientError> {
    let ElicitAnswer::Accept(values) = &answer else { return Ok(answer) };
    let size = values.to_string().len();
    if size > MAX_SAMPLING_BYTES {
        return Err(ClientError::Failed(format!("the client's answer is {size} bytes, over {MAX_SAMPLING_BYTES}")));
    }
    match form.check(values) {
        Ok(()) => Ok(answer),
        Err(violations) => {
            let first = violations.first().map(|v| format!("at `{}`: {}", v.pointer, v.reason)).unwrap_or_default();
            Err(ClientError::Failed(bounded(
                format!("the client's answer does not match the form {first}"),
                MAX_MESSAGE,
            )))
        }
    }
}

/// A reply within [`MAX_SAMPLING_BYTES`].
pub(super) fn check_reply(reply: SamplingReply) -> Result<SamplingReply, ClientError> {
    let size = reply.text.len() + reply.model.len();
    if size > MAX_SAMPLING_BYTES {
        return Err(ClientError::Failed(format!("the model's answer is {size} bytes, over {MAX_SAMPLING_BYTES}")));
    }
    Ok(reply)
}

/// Whether a sampling request has a message and stays within [`MAX_SAMPLING_BYTES`].
pub(super) fn check_sampling(request: &SamplingRequest) -> Result<(), String> {
    if request.messages.is_empty() {
        return Err("a sampling request needs at least one message".to_owned());
    }
    let texts = request.messages.iter().map(|(_, text)| text.len());
    let size: usize = texts.chain(request.system_prompt.as_ref().map(String::len)).sum();
    if size > MAX_SAMPLING_BYTES {
        return Err(format!("the request holds {size} bytes of text, over the {MAX_SAMPLING_BYTES} a request may"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::Role;
    use serde_json::json;

    #[test]
    fn requests_to_the_client_are_bounded() {
        let huge = json!({"type": "object", "description": "x".repeat(MAX_FORM_BYTES)});
        assert!(check_form(&huge).unwrap_err().contains("over the 65536"));
        let long = SamplingRequest {
            messages: vec![(Role::User, "x".repeat(MAX_SAMPLING_BYTES / 2)); 3],
            system_prompt: None,
            max_tokens: 1,
        };
        assert!(check_sampling(&long).unwrap_err().contains("over the 1048576"));
        let empty = SamplingRequest { messages: vec![], system_prompt: None, max_tokens: 1 };
        assert!(check_sampling(&empty).is_err());
    }

    #[test]
    fn only_flat_forms_are_asked() {
        check_form(&json!({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}))
            .unwrap();
        assert!(check_form(&json!({"type": "string"})).is_err());
        let nested = check_form(&json!({"type": "object", "properties": {"address": {"type": "object"}}}));
        assert!(nested.unwrap_err().contains("`address`"));
    }
}
