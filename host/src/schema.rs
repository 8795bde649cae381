//! JSON Schemas of tools: checked, compiled for the call boundary, and how an input travels as arguments.
//!
//! JSON Schemas of tools, checked when a tool is loaded or registered, compiled for the
//! call boundary (again after an idle tool dropped the validator), and how a tool's input
//! travels where a consumer passes arguments as one JSON object.

use std::sync::Arc;

use arc_swap::ArcSwapOption;
use serde_json::Value;

use crate::error::Violation;

/// At most this many violations are reported per value: enough to fix an input, not
/// so many that a hostile document makes a huge error.
const MAX_VIOLATIONS: usize = 16;

/// Levels of arrays and objects a tool's input may nest: far more than any tool's
/// arguments need, and below the 128 at which the transports' JSON parser stops, so every
/// front end refuses a deeper input the same way, as invalid input with its own reason.
pub const MAX_INPUT_DEPTH: usize = 64;

/// Why an input nested deeper than [`MAX_INPUT_DEPTH`] is refused.
pub fn too_deep_reason() -> String {
    format!("nested deeper than {MAX_INPUT_DEPTH} levels of arrays and objects, the limit for a tool's input")
}

/// The violation of an input nested deeper than [`MAX_INPUT_DEPTH`], at the first value
/// past the limit. Checked before the schema, whose validator recurses.
pub(crate) fn nesting_violation(input: &Value) -> Option<Violation> {
    /// The path to the first value past the limit, innermost segment first. Recursion
    /// is safe here: it stops at the limit. Nothing is allocated unless the limit is
    /// passed.
    fn too_deep(value: &Value, levels_left: usize) -> Option<Vec<String>> {
        let found = match value {
            Value::Array(_) | Value::Object(_) if levels_left == 0 => return Some(Vec::new()),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .find_map(|(i, item)| too_deep(item, levels_left - 1).map(|path| (path, i.to_string()))),
            Value::Object(map) => map.iter().find_map(|(key, item)| {
                too_deep(item, levels_left - 1).map(|path| (path, key.replace('~', "~0").replace('/', "~1")))
            }),
            _ => None,
        };
        found.map(|(mut path, segment)| {
            path.push(segment);
            path
        })
    }
    let path = too_deep(input, MAX_INPUT_DEPTH)?;
    let pointer = path.iter().rev().map(|segment| format!("/{segment}")).collect();
    Some(Violation { pointer, reason: too_deep_reason() })
}

/// A tool's schema in both forms: the JSON the tool declared (for listing and export),
/// kept as compact text, and the compiled validator (for calls). Parsed JSON takes
/// several times the memory of its text, and a validator kilobytes for a schema of a few
/// lines, so a host of hundreds of tools keeps neither for a tool it is not calling: a
/// listing parses the text, and a tool that goes idle drops its validator
/// ([`Schema::release`]), which the next check compiles again.
#[derive(Clone)]
pub struct Schema {
    /// Compact JSON, written by `serde_json` from the value it parsed, so it parses again.
    text: Arc<str>,
    /// Decided when the schema is made: a call under an exported name needs it.
    shape: ArgumentShape,
    /// Shared by copies of a tool's definition (a native tool's settings are set on
    /// a copy), so that a release reaches every copy.
    validator: Arc<ArcSwapOption<jsonschema::Validator>>,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").field("json", &self.text).finish_non_exhaustive()
    }
}

impl Schema {
    /// Parses and compiles schema text. The error says what is wrong, for a LoadError.
    pub fn compile(text: &str) -> Result<Schema, String> {
        let json: Value = serde_json::from_str(text).map_err(|e| format!("schema is not JSON: {e}"))?;
        if !json.is_object() && !json.is_boolean() {
            return Err("schema must be a JSON object or boolean".into());
        }
        let validator = build_validator(&json).map_err(|e| match error_location(&json, &e) {
            Some(pointer) => format!("invalid JSON Schema at `{pointer}`: {e}"),
            None => format!("invalid JSON Schema: {e}"),
        })?;
        Ok(Schema {
            text: json.to_string().into(),
            shape: argument_shape(&json),
            validator: Arc::new(ArcSwapOption::from_pointee(validator)),
        })
    }

    /// Parses and checks schema text as [`Schema::compile`] does, without keeping the
    /// validator: the first [`Schema::check`] compiles it again. For the tools of a
    /// component, most of which a host may never call.
    pub fn verify(text: &str) -> Result<Schema, String> {
        let schema = Schema::compile(text)?;
        schema.release();
        Ok(schema)
    }

    /// Drops the compiled validator, for a tool no call used for a while; the next
    /// [`Schema::check`] compiles it again (a few microseconds for a small schema).
    pub fn release(&self) {
        self.validator.store(None);
    }

    /// Whether the validator is compiled (not [released](Schema::release) since the
    /// last check).
    pub fn is_compiled(&self) -> bool {
        self.validator.load().is_some()
    }

    /// The schema as the tool declared it, parsed from the kept text (a microsecond or
    /// two for a small schema). The text is `serde_json`'s own writing of a value it
    /// parsed (floats round-trip), so this cannot fail; if it ever did, the schema would
    /// read as `false`, which refuses every value rather than let one through.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or(Value::Bool(false))
    }

    /// How an input of this schema travels as function-call arguments.
    pub fn argument_shape(&self) -> ArgumentShape {
        self.shape
    }

    /// Checks a value; the common, valid case costs one pass without building errors.
    pub fn check(&self, value: &Value) -> Result<(), Vec<Violation>> {
        let compiled = self.validator.load();
        let recompiled;
        let validator = match compiled.as_deref() {
            Some(validator) => validator,
            None => {
                recompiled = self.recompile()?;
                &*recompiled
            }
        };
        if validator.is_valid(value) {
            return Ok(());
        }
        let violations: Vec<Violation> = validator
            .iter_errors(value)
            .take(MAX_VIOLATIONS)
            .map(|error| Violation { pointer: error.instance_path().to_string(), reason: error.to_string() })
            .collect();
        Err(violations)
    }

    /// The validator again, after a release. The JSON compiled when the schema was
    /// made, so this cannot fail unless the validator's library changed its mind; if it
    /// does, the value is refused rather than let through unchecked.
    fn recompile(&self) -> Result<Arc<jsonschema::Validator>, Vec<Violation>> {
        let validator = build_validator(&self.json()).map(Arc::new).map_err(|e| {
            vec![Violation { pointer: String::new(), reason: format!("the schema no longer compiles: {e}") }]
        })?;
        self.validator.store(Some(validator.clone()));
        Ok(validator)
    }
}

/// A schema comes from the tool, and validation runs on the host, outside the guest's
/// fuel and clock: `pattern`s use the linear-time `regex` engine, so no pattern can make
/// the host backtrack for ever (no lookaround, no backreferences).
fn build_validator(json: &Value) -> Result<jsonschema::Validator, jsonschema::ValidationError<'static>> {
    jsonschema::options().with_pattern_options(jsonschema::PatternOptions::regex()).build(json)
}

/// Where in `schema` the compile error is, as a JSON pointer: a violation of the
/// meta-schema is located by its instance path (the schema is the instance checked), a
/// keyword that does not compile (a `pattern`) by its schema path. Neither locates a
/// reference that does not resolve, whose message names it.
fn error_location(schema: &Value, error: &jsonschema::ValidationError) -> Option<String> {
    [error.instance_path(), error.schema_path()]
        .into_iter()
        .map(|location| location.as_str())
        .find(|pointer| !pointer.is_empty() && schema.pointer(pointer).is_some())
        .map(str::to_owned)
}

/// How a tool's input travels where a consumer passes arguments as one JSON object (an
/// MCP `tools/call`, an OpenAI or Anthropic function call). Decided here, once, for the
/// definitions consumers see and for the calls they make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgumentShape {
    /// The arguments object is the input: the schema describes objects (or any value,
    /// objects included) at its root.
    Object,
    /// The input is the arguments' [`WRAPPED_INPUT`] property: the schema describes
    /// something else (a string, an array, nothing), or constrains its root with
    /// `anyOf`, `oneOf` or `allOf`, which function-calling providers refuse there.
    Wrapped,
}

/// The property a [`ArgumentShape::Wrapped`] input travels in.
pub const WRAPPED_INPUT: &str = "input";

/// The shape of arguments for `schema` (a root `$ref` to a local definition is judged by
/// what it refers to).
pub fn argument_shape(schema: &Value) -> ArgumentShape {
    let root = match schema {
        Value::Bool(true) => return ArgumentShape::Object,
        Value::Object(map) => map,
        _ => return ArgumentShape::Wrapped,
    };
    let target = root.get("$ref").and_then(Value::as_str).and_then(|reference| local_definition(schema, reference));
    let describes_objects = |map: &serde_json::Map<String, Value>| match map.get("type") {
        None => true,
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind == "object"),
        Some(_) => false,
    };
    let combines =
        |map: &serde_json::Map<String, Value>| ["anyOf", "oneOf", "allOf"].iter().any(|k| map.contains_key(*k));
    let target_ok = match target {
        None => true,
        Some(Value::Bool(accepts)) => *accepts,
        Some(Value::Object(target)) => describes_objects(target) && !combines(target),
        Some(_) => false,
    };
    if describes_objects(root) && !combines(root) && target_ok { ArgumentShape::Object } else { ArgumentShape::Wrapped }
}

/// The schema at `#/$defs/NAME` or `#/definitions/NAME` of `root`.
pub(crate) fn local_definition<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if !(pointer.starts_with("/$defs/") || pointer.starts_with("/definitions/")) {
        return None;
    }
    root.pointer(pointer)
}

#[cfg(test)]
mod tests {
    use super::{ArgumentShape, MAX_INPUT_DEPTH, Schema, argument_shape, nesting_violation};
    use serde_json::{Value, json};

    fn nested(levels: usize) -> Value {
        (0..levels)
            .fold(json!(1), |inner, level| if level % 2 == 0 { json!([0, inner]) } else { json!({ "a/b": inner }) })
    }

    #[test]
    fn inputs_nest_up_to_the_limit_and_the_first_value_past_it_is_named() {
        assert_eq!(nesting_violation(&nested(MAX_INPUT_DEPTH)), None);
        assert_eq!(nesting_violation(&json!("flat")), None);
        let violation = nesting_violation(&nested(MAX_INPUT_DEPTH + 1)).expect("too deep");
        assert!(violation.reason.contains("nested deeper than 64 levels"), "{}", violation.reason);
        // The outermost value is the 65th level's container; the pointer leads to the
        // 65th container, through 64 segments that alternate between `/1` and `/a~1b`.
        let segments: Vec<&str> = violation.pointer.split('/').skip(1).collect();
        assert_eq!(segments.len(), MAX_INPUT_DEPTH);
        assert!(segments.iter().all(|segment| ["1", "a~1b"].contains(segment)), "{}", violation.pointer);
        let far_deeper = nesting_violation(&nested(1000)).expect("too deep");
        assert_eq!(far_deeper.pointer.matches('/').count(), MAX_INPUT_DEPTH);
    }

    #[test]
    fn a_released_validator_is_compiled_again_by_the_next_check_of_any_copy() {
        let schema =
            Schema::compile(r#"{ "type": "object", "required": ["n"], "properties": { "n": { "type": "integer" } } }"#)
                .expect("compiles");
        let copy = schema.clone();
        assert!(schema.is_compiled());
        schema.release();
        assert!(!schema.is_compiled() && !copy.is_compiled(), "a release reaches every copy");
        let refused = copy.check(&json!({ "n": "one" })).expect_err("still checked after the release");
        assert_eq!(refused[0].pointer, "/n");
        assert!(schema.is_compiled(), "the check compiled it again, for every copy");
        schema.release();
        assert_eq!(schema.check(&json!({ "n": 1 })), Ok(()));
        assert!(copy.is_compiled());
    }

    #[test]
    fn a_verified_schema_is_checked_at_once_and_compiled_by_its_first_check() {
        assert!(Schema::verify(r#"{ "type": "object", "pattern": "(" }"#).unwrap_err().contains("at `/pattern`"));
        let text = r#"{ "type": "object", "required": ["n"] }"#;
        let schema = Schema::verify(text).expect("a valid schema");
        assert!(!schema.is_compiled());
        assert!(schema.check(&json!({})).is_err());
        assert!(schema.is_compiled());
    }

    #[test]
    fn the_declared_json_comes_back_from_the_kept_text() {
        let declared = json!({
            "type": "object",
            "description": "quotes \" and \\ and \u{7} and ünïcödé",
            "properties": { "x": { "type": "number", "minimum": -1.7976931348623157e308, "multipleOf": 0.1 } },
            "examples": [18446744073709551615u64, -9223372036854775808i64, 5e-324],
            "$defs": { "deep": nested(40) },
        });
        let schema = Schema::verify(&serde_json::to_string_pretty(&declared).unwrap()).expect("a valid schema");
        assert_eq!(schema.json(), declared);
        assert_eq!(schema.argument_shape(), ArgumentShape::Object);
        assert_eq!(Schema::verify(r#"{"type":"string"}"#).unwrap().argument_shape(), ArgumentShape::Wrapped);
    }

    #[test]
    fn inputs_that_are_not_plain_objects_travel_wrapped() {
        for object in [
            json!(true),
            json!({}),
            json!({ "type": "object", "properties": { "a": true } }),
            json!({ "type": ["object", "null"] }),
            json!({ "$ref": "#/$defs/in", "$defs": { "in": { "type": "object" } } }),
        ] {
            assert_eq!(argument_shape(&object), ArgumentShape::Object, "{object}");
        }
        for wrapped in [
            json!(false),
            json!({ "type": "string" }),
            json!({ "type": ["array", "null"] }),
            json!({ "type": "object", "oneOf": [{ "required": ["a"] }, { "required": ["b"] }] }),
            json!({ "anyOf": [{ "type": "object" }] }),
            json!({ "$ref": "#/$defs/in", "$defs": { "in": { "type": "integer" } } }),
        ] {
            assert_eq!(argument_shape(&wrapped), ArgumentShape::Wrapped, "{wrapped}");
        }
    }

    #[test]
    fn violations_point_at_the_offending_value() {
        let schema = Schema::compile(
            r#"{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":false}"#,
        )
        .unwrap();
        assert!(schema.check(&json!({"a": 1})).is_ok());
        let wrong_type = schema.check(&json!({"a": "x"})).unwrap_err();
        assert_eq!(wrong_type[0].pointer, "/a");
        let missing = schema.check(&json!({})).unwrap_err();
        assert_eq!(missing[0].pointer, "");
        assert!(missing[0].reason.contains("\"a\" is a required property"), "{}", missing[0].reason);
        let extra = schema.check(&json!({"a": 1, "b": 2})).unwrap_err();
        assert!(extra[0].reason.contains("Additional properties"), "{}", extra[0].reason);
    }

    #[test]
    fn patterns_run_in_linear_time() {
        // Catastrophic for a backtracking engine: 2^n paths before the final `b` fails.
        let schema = Schema::compile(r#"{"type":"string","pattern":"^(a+)+$"}"#).unwrap();
        assert!(schema.check(&json!("a".repeat(64))).is_ok());
        let hostile = format!("{}b", "a".repeat(100_000));
        assert_eq!(schema.check(&json!(hostile)).unwrap_err()[0].pointer, "");
        // Features only a backtracking engine offers are refused when the tool loads.
        let error = Schema::compile(r#"{"type":"string","pattern":"(a)\\1"}"#).unwrap_err();
        assert!(error.contains("invalid JSON Schema"), "{error}");
    }

    #[test]
    fn broken_schemas_are_refused_with_a_reason() {
        assert!(Schema::compile("{").unwrap_err().contains("not JSON"));
        assert!(Schema::compile("[1]").unwrap_err().contains("object or boolean"));
        assert!(Schema::compile(r#"{"type": 12}"#).unwrap_err().contains("invalid JSON Schema"));
    }
}
