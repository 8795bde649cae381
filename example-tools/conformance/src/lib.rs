//! `conformance`: the fixture tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) calls, written with the SDK as any tool would be:
//! content blocks of every kind, an error, progress, log lines to the client, and the
//! client's powers (sampling, elicitation) as the operator granted them in
//! `manifest.toml`. The manifest also declares the suite's prompts and resources
//! (`test_template_data` reads its resource template). Served as a stdlib layer, they
//! answer to the bare names the suite uses (`test_simple_text`).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolhost_guest::client::{self, Answer, Content, SamplingRequest};
use toolhost_guest::{ToolError, toolbox};

/// A 1×1 PNG (the suite's `TEST_IMAGE_BASE64`).
const PNG: [u8; 70] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00,
    0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0d, 0x49,
    0x44, 0x41, 0x54, 0x78, 0xda, 0x63, 0xfc, 0xcf, 0xc0, 0xf0, 0x1f, 0x00, 0x05, 0x05, 0x02, 0x00, 0x5f, 0xc8, 0xf1,
    0xd2, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
];

/// A WAV file with one silent sample (the suite's `TEST_AUDIO_BASE64`).
const WAV: [u8; 44] = [
    0x52, 0x49, 0x46, 0x46, 0x26, 0x00, 0x00, 0x00, 0x57, 0x41, 0x56, 0x45, 0x66, 0x6d, 0x74, 0x20, 0x10, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x01, 0x00, 0x40, 0x1f, 0x00, 0x00, 0x00, 0x7d, 0x00, 0x00, 0x02, 0x00, 0x10, 0x00, 0x64, 0x61,
    0x74, 0x61, 0x02, 0x00, 0x00, 0x00,
];

/// No input.
#[derive(Deserialize, JsonSchema)]
struct Nothing {}

#[derive(Deserialize, JsonSchema)]
struct Prompt {
    /// What to ask the client's model.
    prompt: String,
}

#[derive(Deserialize, JsonSchema)]
struct Item {
    /// Which item.
    id: String,
}

#[derive(Deserialize, JsonSchema)]
struct Question {
    /// What to ask the person.
    message: String,
}

fn show(block: Content) -> Result<(), ToolError> {
    client::add_content(block).map_err(ToolError::failed)
}

/// What the person answered, as the suite's reference server says it.
fn answered(answer: Answer) -> String {
    match answer {
        Answer::Accept(values) => format!("action=accept, content={values}"),
        Answer::Decline => "action=decline".to_owned(),
        Answer::Cancel => "action=cancel".to_owned(),
    }
}

toolbox! {
    /// Returns a simple text response.
    fn test_simple_text(_input: Nothing) -> Result<String, ToolError> {
        Ok("This is a simple text response for testing.".to_owned())
    }

    /// Returns a 1x1 PNG image.
    fn test_image_content(_input: Nothing) -> Result<(), ToolError> {
        show(Content::image(PNG, "image/png"))
    }

    /// Returns a short WAV sound.
    fn test_audio_content(_input: Nothing) -> Result<(), ToolError> {
        show(Content::audio(WAV, "audio/wav"))
    }

    /// Returns an embedded text resource.
    fn test_embedded_resource(_input: Nothing) -> Result<(), ToolError> {
        show(Content::resource_text(
            "test://embedded-resource",
            Some("text/plain"),
            "This is an embedded resource content.",
        ))
    }

    /// Returns text, an image and an embedded resource together.
    fn test_multiple_content_types(_input: Nothing) -> Result<(), ToolError> {
        show(Content::text("Multiple content types test:"))?;
        show(Content::image(PNG, "image/png"))?;
        show(Content::resource_text(
            "test://mixed-content-resource",
            Some("application/json"),
            r#"{"test":"data","value":123}"#,
        ))
    }

    /// Logs three lines to the client while it runs.
    fn test_tool_with_logging(_input: Nothing) -> Result<String, ToolError> {
        toolhost_guest::log::info("Tool execution started");
        std::thread::sleep(Duration::from_millis(50));
        toolhost_guest::log::info("Tool processing data");
        std::thread::sleep(Duration::from_millis(50));
        toolhost_guest::log::info("Tool execution completed");
        Ok("Tool with logging executed successfully".to_owned())
    }

    /// The data of one item, as JSON text: what reads of the resource template
    /// `test://template/{id}/data` return (the manifest names this tool as its reader).
    fn test_template_data(input: Item) -> Result<String, ToolError> {
        let data = json!({ "id": input.id, "templateTest": true, "data": format!("Data for ID: {}", input.id) });
        Ok(data.to_string())
    }

    /// Always fails, to show how a tool's error reaches the client.
    fn test_error_handling(_input: Nothing) -> Result<(), ToolError> {
        Err(ToolError::failed("This tool intentionally returns an error for testing"))
    }

    /// Reports progress three times (0, 50 and 100 of 100), past the host's pacing of
    /// one report per 100 ms.
    fn test_tool_with_progress(_input: Nothing) -> Result<String, ToolError> {
        for step in [0, 50, 100] {
            if step > 0 {
                std::thread::sleep(Duration::from_millis(120));
            }
            toolhost_guest::progress(step, Some(100), Some(&format!("Completed step {step} of 100")));
        }
        Ok("progress reported".to_owned())
    }

    /// Asks the client's model the prompt and returns its answer.
    fn test_sampling(input: Prompt) -> Result<String, ToolError> {
        let reply = client::sample(&SamplingRequest::user(input.prompt, 100))?;
        Ok(format!("LLM response: {}", reply.text))
    }

    /// Asks the person for a user name and an email address.
    fn test_elicitation(input: Question) -> Result<String, ToolError> {
        let form = json!({
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        });
        Ok(format!("User response: {}", answered(client::elicit(&input.message, &form)?)))
    }

    /// Asks the person a form whose fields have defaults (SEP-1034).
    fn test_elicitation_sep1034_defaults(_input: Nothing) -> Result<String, ToolError> {
        let form = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User age", "default": 30},
                "score": {"type": "number", "description": "User score", "default": 95.5},
                "status": {
                    "type": "string",
                    "description": "User status",
                    "enum": ["active", "inactive", "pending"],
                    "default": "active",
                },
                "verified": {"type": "boolean", "description": "Verification status", "default": true},
            },
            "required": [],
        });
        let answer = client::elicit("Please review and update the form fields with defaults", &form)?;
        Ok(format!("Elicitation completed: {}", answered(answer)))
    }

    /// Asks the person a form of every kind of enum (SEP-1330).
    fn test_elicitation_sep1330_enums(_input: Nothing) -> Result<String, ToolError> {
        let titled = |pairs: &[(&str, &str)]| -> Value {
            pairs.iter().map(|(value, title)| json!({"const": value, "title": title})).collect()
        };
        let form = json!({
            "type": "object",
            "properties": {
                "untitledSingle": {
                    "type": "string",
                    "description": "Select one option",
                    "enum": ["option1", "option2", "option3"],
                },
                "titledSingle": {
                    "type": "string",
                    "description": "Select one option with titles",
                    "oneOf": titled(&[("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")]),
                },
                "legacyEnum": {
                    "type": "string",
                    "description": "Select one option (legacy)",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "description": "Select multiple options",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "description": "Select multiple options with titles",
                    "minItems": 1,
                    "maxItems": 3,
                    "items": {"anyOf": titled(&[("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])},
                },
            },
            "required": [],
        });
        let answer = client::elicit("Please select options from the enum fields", &form)?;
        Ok(format!("Elicitation completed: {}", answered(answer)))
    }
}
