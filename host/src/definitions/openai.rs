//! OpenAI's rules for function parameters: the formats strict mode knows, and when a tool may be strict.

use serde_json::{Value, json};

/// The `format` values OpenAI's strict mode supports.
const OPENAI_FORMATS: &[&str] = &["date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"];

/// OpenAI parameters: the consumer input schema without `format` annotations OpenAI
/// does not know (schemars writes `double`, `uint64`, …).
pub(super) fn openai_parameters(mut schema: Value) -> Value {
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
}
