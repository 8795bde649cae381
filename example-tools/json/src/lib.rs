//! `json`: read and change JSON documents with standard, exact operations
//! (RFC 6901 pointers, RFC 6902 patches, RFC 7396 merge patches).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolhost_guest::{ToolError, toolbox};

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Query {
    /// Any JSON value.
    document: Value,
    /// An RFC 6901 JSON Pointer such as `/items/0/name`; the empty string is the whole
    /// document.
    pointer: String,
}

#[derive(Serialize, JsonSchema)]
struct Found {
    /// Whether the pointer names a value in the document.
    found: bool,
    /// The value, or `null` when not found.
    value: Value,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Patch {
    document: Value,
    /// An RFC 6902 JSON Patch: a list of `add`, `remove`, `replace`, `move`, `copy` and
    /// `test` operations, applied all or nothing.
    patch: Vec<Value>,
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Merge {
    document: Value,
    /// An RFC 7396 merge patch: objects merge recursively, `null` removes a key.
    merge: Value,
}

#[derive(Serialize, JsonSchema)]
struct Document {
    document: Value,
}

toolbox! {
    /// Reads the value at a JSON Pointer (RFC 6901) in a document.
    fn get(input: Query) -> Result<Found, ToolError> {
        if !input.pointer.is_empty() && !input.pointer.starts_with('/') {
            return Err(ToolError::invalid_input(format!(
                "`{}` is not a JSON Pointer: it must be empty or start with `/`",
                input.pointer
            )));
        }
        Ok(match input.document.pointer(&input.pointer) {
            Some(value) => Found { found: true, value: value.clone() },
            None => Found { found: false, value: Value::Null },
        })
    }

    /// Applies a JSON Patch (RFC 6902) to a document and returns the result. If any
    /// operation fails (including a failed `test`), nothing is applied.
    fn patch(input: Patch) -> Result<Document, ToolError> {
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(input.patch))
            .map_err(|e| ToolError::invalid_input(format!("not a JSON Patch: {e}")))?;
        let mut document = input.document;
        json_patch::patch(&mut document, &patch).map_err(ToolError::invalid_input)?;
        Ok(Document { document })
    }

    /// Applies a JSON Merge Patch (RFC 7396) to a document and returns the result.
    fn merge(input: Merge) -> Result<Document, ToolError> {
        let mut document = input.document;
        json_patch::merge(&mut document, &input.merge);
        Ok(Document { document })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_must_start_with_a_slash_and_misses_are_not_errors() {
        let found = get(Query { document: json!({ "a": [1, 2] }), pointer: "/a/1".into() }).unwrap();
        assert_eq!((found.found, found.value), (true, json!(2)));
        let missing = get(Query { document: json!({}), pointer: "/nope".into() }).unwrap();
        assert_eq!((missing.found, missing.value), (false, Value::Null));
        assert!(matches!(get(Query { document: json!({}), pointer: "a".into() }), Err(ToolError::InvalidInput(_))));
    }

    #[test]
    fn a_patch_applies_all_or_nothing() {
        let document = json!({ "a": 1 });
        let failing =
            vec![json!({ "op": "add", "path": "/b", "value": 2 }), json!({ "op": "test", "path": "/a", "value": 9 })];
        let outcome = patch(Patch { document: document.clone(), patch: failing });
        assert!(matches!(outcome, Err(ToolError::InvalidInput(_))));
        let applied = patch(Patch { document, patch: vec![json!({ "op": "add", "path": "/b", "value": 2 })] }).unwrap();
        assert_eq!(applied.document, json!({ "a": 1, "b": 2 }));
    }

    #[test]
    fn a_merge_patch_removes_keys_with_null() {
        let merged =
            merge(Merge { document: json!({ "a": { "b": 1, "c": 2 } }), merge: json!({ "a": { "c": null } }) });
        assert_eq!(merged.unwrap().document, json!({ "a": { "b": 1 } }));
    }
}
