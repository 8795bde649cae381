//! A tool's schemas reshaped to the rules of consumers, never weakened: an object at the root, objects where a schema stands.

use serde_json::{Map, Value, json};

use crate::schema::{ArgumentShape, WRAPPED_INPUT, argument_shape, local_definition};

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
    fn mcp_output_schemas_are_objects_or_absent() {
        assert_eq!(mcp_output_schema(&json!({ "type": "number" })), None);
        assert_eq!(mcp_output_schema(&json!(true)), None);
        assert_eq!(
            mcp_output_schema(&json!({ "type": "object", "properties": { "value": true } })),
            Some(json!({ "type": "object", "properties": { "value": {} } }))
        );
    }
}
