//! One definition of a tool for every consumer: MCP's `Tool`, OpenAI's function tool, Anthropic's tool.
//!
//! One definition of a tool for every consumer: MCP's `Tool`, OpenAI's function tool and
//! Anthropic's tool, built here and nowhere else, for [`ToolHost::export`]
//! (`toolhost export`) and the MCP server's `tools/list` alike.
//!
//! Consumers get the tool's schemas reshaped to their rules, never weakened; calls are
//! still checked against the schemas the tool declared:
//!
//! - **Boolean sub-schemas become objects** (`true` → `{}`, `false` → `{"not": {}}`)
//!   wherever a schema stands: under `properties`, `items`, `$defs`, `allOf`, …. MCP's
//!   `Tool` schema wants objects there (a client built on the TypeScript SDK rejects the
//!   whole tool list otherwise). `additionalProperties`, `unevaluatedProperties`,
//!   `additionalItems` and `unevaluatedItems` keep their booleans: every consumer takes
//!   them, and OpenAI's strict mode requires `additionalProperties: false`.
//! - **The root describes an object**, because every consumer passes arguments as one
//!   object: `type: "object"` is set, a root `$ref` to a local definition is inlined, and
//!   an input whose [`ArgumentShape`] is `Wrapped` (a string, an array, a root
//!   `anyOf`/`oneOf`/`allOf`, which Anthropic refuses at the top level) becomes
//!   `{"type": "object", "properties": {"input": SCHEMA}, "required": ["input"],
//!   "additionalProperties": false}` for every consumer alike. A call under an exported
//!   name then takes the input from `input` ([`crate::ToolHost::call`]).
//! - `$schema` is dropped at the root: providers refuse the dialect marker inside
//!   `parameters`/`input_schema`.
//! - **OpenAI:** `format` values outside those strict mode supports are dropped (they are
//!   annotations, not constraints), and `strict: true` is set exactly when the parameters
//!   satisfy strict mode ([`openai_strict`]).
//! - **MCP** `outputSchema` is given only for a tool whose output schema describes an
//!   object at its root, as MCP requires; other outputs travel as text.
//!
//! Names follow each provider's rules through [`crate::names`].

use serde_json::{Map, Value, json};

mod openai;
mod results;
mod schemas;

pub use results::tool_result;

use crate::names;
use crate::tool::{ToolDescription, ToolHints};
use openai::{openai_parameters, openai_strict};
use schemas::{input_schema, mcp_output_schema};

/// A consumer of tool definitions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    /// OpenAI function tools (Chat Completions `tools` array).
    OpenAi,
    /// Anthropic tools (Messages API `tools` array).
    Anthropic,
    /// An MCP `tools/list` result.
    Mcp,
}

impl std::str::FromStr for ExportFormat {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "openai" => Ok(ExportFormat::OpenAi),
            "anthropic" => Ok(ExportFormat::Anthropic),
            "mcp" => Ok(ExportFormat::Mcp),
            other => Err(format!("unknown export format `{other}` (openai, anthropic or mcp)")),
        }
    }
}

/// Every tool in `format`: a JSON array for OpenAI and Anthropic, a `tools/list` result
/// object for MCP.
pub fn export<'a>(tools: impl IntoIterator<Item = &'a ToolDescription>, format: ExportFormat) -> Value {
    let tools: Vec<Value> = tools.into_iter().map(|tool| definition(tool, format)).collect();
    match format {
        ExportFormat::Mcp => json!({ "tools": tools }),
        _ => Value::Array(tools),
    }
}

/// One tool's definition for `format`.
pub fn definition(tool: &ToolDescription, format: ExportFormat) -> Value {
    let input = input_schema(&tool.input_schema);
    match format {
        ExportFormat::OpenAi => {
            let parameters = openai_parameters(input);
            let strict = openai_strict(&parameters);
            json!({
                "type": "function",
                "function": {
                    "name": names::function_name(&tool.name),
                    "description": tool.description,
                    "parameters": parameters,
                    "strict": strict,
                },
            })
        }
        ExportFormat::Anthropic => json!({
            "name": names::function_name(&tool.name),
            "description": tool.description,
            "input_schema": input,
        }),
        ExportFormat::Mcp => {
            let mut definition = json!({
                "name": names::mcp_name(&tool.name),
                "title": tool.name,
                "description": tool.description,
                "inputSchema": input,
            });
            // Content blocks travel as content: the tool declares no structured output.
            if let Some(output) = mcp_output_schema(&tool.output_schema).filter(|_| tool.output_form.is_json()) {
                definition["outputSchema"] = output;
            }
            if let Some(annotations) = mcp_annotations(&tool.hints) {
                definition["annotations"] = annotations;
            }
            definition["_meta"] = json!({
                "toolhost/risk": tool.risk,
                "toolhost/requiresApproval": tool.requires_approval,
            });
            definition
        }
    }
}

/// MCP's tool annotations for the hints an operator set; unset ones are left to the
/// protocol's defaults.
fn mcp_annotations(hints: &ToolHints) -> Option<Value> {
    let annotations: Map<String, Value> = [
        ("readOnlyHint", hints.read_only),
        ("destructiveHint", hints.destructive),
        ("idempotentHint", hints.idempotent),
        ("openWorldHint", hints.open_world),
    ]
    .into_iter()
    .filter_map(|(key, hint)| Some((key.to_owned(), Value::Bool(hint?))))
    .collect();
    (!annotations.is_empty()).then_some(Value::Object(annotations))
}
