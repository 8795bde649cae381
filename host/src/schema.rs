//! JSON Schemas of tools, compiled once at load and checked at the call boundary.

use serde_json::Value;

use crate::error::Violation;

/// At most this many violations are reported per value: enough to fix an input, not
/// so many that a hostile document makes a huge error.
const MAX_VIOLATIONS: usize = 16;

/// A tool's schema in both forms: the JSON the tool declared (for listing and export)
/// and the compiled validator (for calls).
pub struct Schema {
    json: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for Schema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Schema").field("json", &self.json).finish_non_exhaustive()
    }
}

impl Schema {
    /// Parses and compiles schema text. The error says what is wrong, for a LoadError.
    pub fn compile(text: &str) -> Result<Schema, String> {
        let json: Value = serde_json::from_str(text).map_err(|e| format!("schema is not JSON: {e}"))?;
        if !json.is_object() && !json.is_boolean() {
            return Err("schema must be a JSON object or boolean".into());
        }
        // A schema comes from the tool, and validation runs on the host, outside the
        // guest's fuel and clock: `pattern`s use the linear-time `regex` engine, so no
        // pattern can make the host backtrack for ever (no lookaround, no backreferences).
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&json)
            .map_err(|e| format!("invalid JSON Schema: {e}"))?;
        Ok(Schema { json, validator })
    }

    pub fn json(&self) -> &Value {
        &self.json
    }

    /// Checks a value; the common, valid case costs one pass without building errors.
    pub fn check(&self, value: &Value) -> Result<(), Vec<Violation>> {
        if self.validator.is_valid(value) {
            return Ok(());
        }
        let violations: Vec<Violation> = self
            .validator
            .iter_errors(value)
            .take(MAX_VIOLATIONS)
            .map(|error| Violation { pointer: error.instance_path().to_string(), reason: error.to_string() })
            .collect();
        Err(violations)
    }
}

#[cfg(test)]
mod tests {
    use super::Schema;
    use serde_json::json;

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
