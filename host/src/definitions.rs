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

use crate::ToolDescription;
use crate::names;
use crate::schema::{ArgumentShape, WRAPPED_INPUT, argument_shape, local_definition};
use crate::tool::ToolHints;

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

/// The input schema as consumers see it: an object schema with object sub-schemas.
pub fn input_schema(schema: &Value) -> Value {
    let mut shaped = match argument_shape(schema) {
        ArgumentShape::Object => inline_root_reference(schema),
        ArgumentShape::Wrapped => wrap(schema),
    };
    booleans_to_objects(&mut shaped);
    if let Value::Object(map) = &mut shaped {
        map.remove("$schema");
        map.insert("type".into(), json!("object"));
    }
    shaped
}

/// MCP's `outputSchema`: given only when the output is declared an object.
pub fn mcp_output_schema(schema: &Value) -> Option<Value> {
    if schema.get("type") != Some(&json!("object")) {
        return None;
    }
    let mut shaped = schema.clone();
    booleans_to_objects(&mut shaped);
    if let Value::Object(map) = &mut shaped {
        map.remove("$schema");
    }
    Some(shaped)
}

/// An object schema (or `true`) with a root `$ref` to a local definition merged into
/// the root, so a consumer sees the properties where it looks for them.
fn inline_root_reference(schema: &Value) -> Value {
    let Value::Object(root) = schema else { return json!({}) };
    let target = root.get("$ref").and_then(Value::as_str).and_then(|reference| local_definition(schema, reference));
    let Some(Value::Object(target)) = target else { return schema.clone() };
    let mut merged = root.clone();
    merged.remove("$ref");
    for (key, value) in target {
        merged.entry(key.clone()).or_insert_with(|| value.clone());
    }
    Value::Object(merged)
}

/// `{"type":"object","properties":{"input": schema},...}`, with the schema's
/// definitions kept at the root and every local reference pointed at its new place.
fn wrap(schema: &Value) -> Value {
    let mut inner = schema.clone();
    let mut definitions = Map::new();
    if let Value::Object(map) = &mut inner {
        map.remove("$schema");
        for key in ["$defs", "definitions"] {
            if let Some(value) = map.remove(key) {
                definitions.insert(key.to_owned(), value);
            }
        }
    }
    retarget_references(&mut inner);
    let mut wrapper = json!({
        "type": "object",
        "properties": { WRAPPED_INPUT: inner },
        "required": [WRAPPED_INPUT],
        "additionalProperties": false,
    });
    if let Value::Object(map) = &mut wrapper {
        map.extend(definitions);
    }
    wrapper
}

/// Inside a wrapped schema, `#` (the old root) is now `#/properties/input`; references
/// into the definitions, which stay at the root, are unchanged.
fn retarget_references(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                match (key.as_str(), child) {
                    ("$ref", Value::String(reference)) => {
                        let stays = reference.starts_with("#/$defs/") || reference.starts_with("#/definitions/");
                        if let Some(pointer) = reference.strip_prefix('#').filter(|_| !stays) {
                            *reference = format!("#/properties/{WRAPPED_INPUT}{pointer}");
                        }
                    }
                    (_, child) => retarget_references(child),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(retarget_references),
        _ => {}
    }
}

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &["items", "contains", "not", "if", "then", "else", "propertyNames", "contentSchema"];
/// Keywords whose value is a list of schemas (`items` in draft 2019 and before).
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];
/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
/// Keywords whose schema may stay a boolean: every consumer accepts it there.
const BOOLEAN_KEPT: &[&str] = &["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];

/// Rewrites every boolean sub-schema as an object schema (recursively), except in the
/// [`BOOLEAN_KEPT`] keywords, whose object sub-schemas are still visited.
fn booleans_to_objects(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    for (key, value) in map.iter_mut() {
        let key = key.as_str();
        if SCHEMA_MAP_KEYWORDS.contains(&key) {
            if let Value::Object(members) = value {
                members.values_mut().for_each(schema_position);
            }
        } else if SCHEMA_LIST_KEYWORDS.contains(&key) && value.is_array() {
            if let Value::Array(items) = value {
                items.iter_mut().for_each(schema_position);
            }
        } else if SCHEMA_KEYWORDS.contains(&key) {
            schema_position(value);
        } else if BOOLEAN_KEPT.contains(&key) {
            booleans_to_objects(value);
        } else if key == "dependencies"
            && let Value::Object(members) = value
        {
            // Draft 7: a schema, or a list of property names (left as it is).
            members.values_mut().filter(|member| !member.is_array()).for_each(schema_position);
        }
    }
}

fn schema_position(value: &mut Value) {
    match value {
        Value::Bool(true) => *value = json!({}),
        Value::Bool(false) => *value = json!({ "not": {} }),
        other => booleans_to_objects(other),
    }
}

/// The `format` values OpenAI's strict mode supports.
const OPENAI_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// OpenAI parameters: the consumer input schema without `format` annotations OpenAI
/// does not know (schemars writes `double`, `uint64`, …).
fn openai_parameters(mut schema: Value) -> Value {
    fn drop_unknown_formats(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let unknown = map.get("format").and_then(Value::as_str).is_some_and(|f| !OPENAI_FORMATS.contains(&f));
                if unknown {
                    map.remove("format");
                }
                map.values_mut().for_each(drop_unknown_formats);
            }
            Value::Array(items) => items.iter_mut().for_each(drop_unknown_formats),
            _ => {}
        }
    }
    drop_unknown_formats(&mut schema);
    schema
}

/// Keywords OpenAI's strict mode (Structured Outputs) supports.
const OPENAI_STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];
/// Strict mode's published limits: nesting depth and properties in all.
const OPENAI_STRICT_MAX_DEPTH: usize = 10;
const OPENAI_STRICT_MAX_PROPERTIES: usize = 5000;

/// Whether `parameters` satisfy OpenAI's strict mode: only supported keywords, every
/// schema typed (or a union, reference or enumeration), every object closed
/// (`additionalProperties: false`) with every property required, at most 10 levels of
/// nesting and 5000 properties. A tool that does not is exported with
/// `strict: false`, so the provider accepts it and toolhost still validates the call.
pub fn openai_strict(parameters: &Value) -> bool {
    let mut properties = 0;
    strict_subschema(parameters, 0, &mut properties) && properties <= OPENAI_STRICT_MAX_PROPERTIES
}

fn strict_subschema(schema: &Value, depth: usize, properties: &mut usize) -> bool {
    let Value::Object(map) = schema else { return false };
    if depth > OPENAI_STRICT_MAX_DEPTH || map.keys().any(|key| !OPENAI_STRICT_KEYWORDS.contains(&key.as_str())) {
        return false;
    }
    // Every schema says what it is: a type, a union, a reference or its values.
    if !["type", "anyOf", "$ref", "enum", "const"].iter().any(|key| map.contains_key(*key)) {
        return false;
    }
    if map.contains_key("properties") || map.get("type") == Some(&json!("object")) {
        let declared: Vec<&String> =
            map.get("properties").and_then(Value::as_object).map_or(Vec::new(), |p| p.keys().collect());
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
        if map.get("additionalProperties") != Some(&json!(false))
            || declared.iter().any(|name| !required.contains(&name.as_str()))
        {
            return false;
        }
        *properties += declared.len();
    }
    let children = ["properties", "$defs", "definitions"]
        .iter()
        .filter_map(|key| map.get(*key).and_then(Value::as_object))
        .flat_map(|members| members.values())
        .chain(map.get("items"))
        .chain(map.get("anyOf").and_then(Value::as_array).into_iter().flatten());
    let mut all_strict = true;
    for child in children {
        all_strict &= strict_subschema(child, depth + 1, properties);
    }
    all_strict
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boolean_sub_schemas_become_objects_where_a_schema_stands() {
        let shaped = input_schema(&json!({
            "type": "object",
            "properties": { "document": true, "never": false, "list": { "type": "array", "items": true } },
            "additionalProperties": false,
            "$defs": { "any": true },
            "anyOf_inside": true,
        }));
        assert_eq!(shaped["properties"]["document"], json!({}));
        assert_eq!(shaped["properties"]["never"], json!({ "not": {} }));
        assert_eq!(shaped["properties"]["list"]["items"], json!({}));
        assert_eq!(shaped["$defs"]["any"], json!({}));
        assert_eq!(shaped["additionalProperties"], json!(false), "kept: every consumer takes it");
        assert_eq!(shaped["anyOf_inside"], json!(true), "not a schema keyword: left alone");
    }

    #[test]
    fn inputs_that_are_not_plain_objects_are_wrapped_with_their_definitions_at_the_root() {
        let shaped = input_schema(&json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": { "$ref": "#/$defs/item" },
            "contains": { "$ref": "#/items" },
            "$defs": { "item": true },
        }));
        assert_eq!(
            shaped,
            json!({
                "type": "object",
                "properties": { "input": {
                    "type": "array",
                    "items": { "$ref": "#/$defs/item" },
                    "contains": { "$ref": "#/properties/input/items" },
                } },
                "required": ["input"],
                "additionalProperties": false,
                "$defs": { "item": {} },
            })
        );
        assert_eq!(input_schema(&json!(false))["properties"]["input"], json!({ "not": {} }));
    }

    #[test]
    fn object_roots_are_typed_and_a_root_reference_inlined() {
        assert_eq!(input_schema(&json!(true)), json!({ "type": "object" }));
        assert_eq!(input_schema(&json!({ "title": "Any" })), json!({ "title": "Any", "type": "object" }));
        let shaped = input_schema(&json!({
            "$ref": "#/$defs/in",
            "$defs": { "in": { "type": "object", "properties": { "a": { "type": "string" } } } },
        }));
        assert_eq!(shaped["properties"]["a"], json!({ "type": "string" }));
        assert_eq!(shaped.get("$ref"), None);
    }

    #[test]
    fn strict_mode_needs_closed_objects_with_every_property_required() {
        let closed = json!({
            "type": "object",
            "properties": { "a": { "type": "number" }, "b": { "type": "array", "items": { "type": "string" } } },
            "required": ["a", "b"],
            "additionalProperties": false,
        });
        assert!(openai_strict(&closed));
        let mut optional = closed.clone();
        optional["required"] = json!(["a"]);
        assert!(!openai_strict(&optional));
        let mut open = closed.clone();
        open.as_object_mut().unwrap().remove("additionalProperties");
        assert!(!openai_strict(&open));
        let mut unsupported = closed.clone();
        unsupported["properties"]["a"]["not"] = json!({});
        assert!(!openai_strict(&unsupported));
        let mut untyped = closed.clone();
        untyped["properties"]["a"] = json!({});
        assert!(!openai_strict(&untyped), "a schema that accepts anything says nothing strict mode can use");
        assert!(!openai_strict(
            &json!({ "type": "object", "properties": {}, "additionalProperties": false, "oneOf": [] })
        ));
    }

    #[test]
    fn openai_drops_formats_it_does_not_know() {
        let parameters = openai_parameters(json!({ "properties": { "n": { "type": "number", "format": "double" },
                                                                   "at": { "type": "string", "format": "date-time" } } }));
        assert_eq!(parameters["properties"]["n"], json!({ "type": "number" }));
        assert_eq!(parameters["properties"]["at"]["format"], "date-time");
    }

    #[test]
    fn mcp_output_schemas_are_objects_or_absent() {
        assert_eq!(mcp_output_schema(&json!({ "type": "number" })), None);
        assert_eq!(mcp_output_schema(&json!(true)), None);
        assert_eq!(
            mcp_output_schema(&json!({ "type": "object", "properties": { "value": true } })),
            Some(json!({ "type": "object", "properties": { "value": {} } }))
        );
    }
}
