//! Tool definitions in the shapes function-calling APIs accept as is.
//!
//! Names: OpenAI and Anthropic allow `[a-zA-Z0-9_-]{1,64}`, MCP allows
//! `[A-Za-z0-9_.-]{1,128}`; neither allows `/`. toolhost names are lowercase words joined
//! by single `_` or `-` (see [`crate::names`]), so `namespace/tool` maps reversibly:
//!
//! | format | `math/add` becomes |
//! |---|---|
//! | `openai`, `anthropic` | `math__add` |
//! | `mcp` | `math.add` |
//!
//! [`ToolHost::call`](crate::ToolHost::call) accepts all three forms back.

use serde_json::{Value, json};

use crate::registry::Snapshot;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportFormat {
    OpenAi,
    Anthropic,
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

/// `math/add` → `math__add`.
pub fn function_name(full_name: &str) -> String {
    full_name.replacen('/', "__", 1)
}

/// `math/add` → `math.add`.
pub fn mcp_name(full_name: &str) -> String {
    full_name.replacen('/', ".", 1)
}

/// The full name behind an exported name (`math__add` or `math.add`), if it is one.
pub fn unmap(name: &str) -> Option<String> {
    if name.contains('/') {
        return None;
    }
    let (namespace, tool) = name.split_once("__").or_else(|| name.split_once('.'))?;
    Some(format!("{namespace}/{tool}"))
}

/// Every tool of `snapshot` (for which `include` holds) in `format`: a JSON array for
/// OpenAI and Anthropic, a `tools/list` result object for MCP.
pub fn export(snapshot: &Snapshot, format: ExportFormat, include: impl Fn(&str) -> bool) -> Value {
    let tools = snapshot.tools.values().filter(|entry| include(&entry.full_name)).map(|entry| {
        let def = entry.def();
        let input = object_schema(def.input_schema.json());
        match format {
            ExportFormat::OpenAi => json!({
                "type": "function",
                "function": {
                    "name": function_name(&entry.full_name),
                    "description": def.description,
                    "parameters": input,
                },
            }),
            ExportFormat::Anthropic => json!({
                "name": function_name(&entry.full_name),
                "description": def.description,
                "input_schema": input,
            }),
            ExportFormat::Mcp => {
                let mut tool = json!({
                    "name": mcp_name(&entry.full_name),
                    "title": entry.full_name,
                    "description": def.description,
                    "inputSchema": input,
                });
                if let Some(output) = mcp_output_schema(def.output_schema.json()) {
                    tool["outputSchema"] = output;
                }
                tool
            }
        }
    });
    let tools: Vec<Value> = tools.collect();
    match format {
        ExportFormat::Mcp => json!({ "tools": tools }),
        _ => Value::Array(tools),
    }
}

/// Function-calling APIs want the parameters as an object schema. A tool schema that is
/// `true`/`{}` (anything) becomes an open object schema; others pass through without the
/// `$schema` dialect marker, which some providers reject inside `parameters`.
pub fn object_schema(schema: &Value) -> Value {
    match schema {
        Value::Bool(true) => json!({ "type": "object" }),
        Value::Object(map) if map.is_empty() => json!({ "type": "object" }),
        Value::Object(map) => {
            let mut map = map.clone();
            map.remove("$schema");
            Value::Object(map)
        }
        other => other.clone(),
    }
}

/// MCP's `outputSchema` must describe an object (its `structuredContent`); a tool whose
/// output is not declared as one gets no `outputSchema`.
pub fn mcp_output_schema(schema: &Value) -> Option<Value> {
    (schema.get("type") == Some(&json!("object"))).then(|| schema.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_map_both_ways() {
        assert_eq!(function_name("math/add"), "math__add");
        assert_eq!(mcp_name("text/word_count"), "text.word_count");
        assert_eq!(unmap("math__add").as_deref(), Some("math/add"));
        assert_eq!(unmap("text.word_count").as_deref(), Some("text/word_count"));
        assert_eq!(unmap("my-ns__regex_find").as_deref(), Some("my-ns/regex_find"));
        assert_eq!(unmap("add"), None);
        assert_eq!(unmap("math/add"), None);
    }
}
