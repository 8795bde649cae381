//! The rules every tool obeys, whatever its source: one constructor checks them, and a refusal reads the same from every source.
//!
//! A component's `list-tools`, a plain component's exports, a native tool, an
//! `.http.toml` file and an upstream MCP server's `tools/list` all make their tools with
//! [`ToolDef::new`], and a set of tools published together passes [`check_set`]:
//!
//! | rule | bound |
//! |---|---|
//! | name | `names::validate_tool` (a namespace: `names::validate_namespace`) |
//! | tools one source offers | [`MAX_TOOLS`], each name once |
//! | description | [`MAX_DESCRIPTION_BYTES`] |
//! | each schema | [`MAX_SCHEMA_BYTES`] of JSON text, [`MAX_SCHEMA_DEPTH`] levels of arrays and objects, valid JSON Schema |
//! | output | JSON described by its schema, or MCP content blocks (`{"content": [...]}`) |
//!
//! What a source declares is its text (a guest's, a remote server's): a refusal bounds
//! the name it quotes, and whoever prints it escapes it.

use serde_json::json;

use super::{Limits, OutputForm, ToolDef, ToolPolicy};
use crate::error::{SchemaRole, ToolDefError, ToolProblem};
use crate::names;
use crate::schema::Schema;
use crate::text::{MAX_MESSAGE, bounded};

/// Most tools one source may offer: a component, an upstream server, the native tools
/// of one namespace in a layer, the HTTP tools of one namespace directory.
pub const MAX_TOOLS: usize = 256;
/// Longest JSON Schema text a tool may declare (each of input and output), in bytes.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Longest tool description, in bytes: it goes to every model that lists the tool.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;
/// Levels of arrays and objects a schema may nest: as many as an input may, and below
/// the 128 at which JSON parsers stop, so every source's deep schema is refused alike.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// What a tool says its output is.
#[derive(Debug, Clone, Copy)]
pub enum DeclaredOutput<'a> {
    /// JSON, described by this schema text.
    Json(&'a str),
    /// MCP content blocks, `{"content": [...]}` (an upstream tool with no output schema).
    McpContent,
}

impl ToolDef {
    /// A tool as its source declares it: `name` (within its namespace), what it does, its
    /// input schema and its output, checked against the rules every tool obeys. Its
    /// limits and policy are the defaults until its source sets them.
    pub fn new(
        name: &str,
        description: &str,
        input_schema: &str,
        output: DeclaredOutput<'_>,
    ) -> Result<ToolDef, ToolDefError> {
        let refuse = |problem| ToolDefError::of(name, problem);
        names::validate_tool(name).map_err(|e| refuse(ToolProblem::Name(bounded(e, MAX_MESSAGE))))?;
        check_description(description).map_err(refuse)?;
        let input_schema = schema(SchemaRole::Input, input_schema).map_err(refuse)?;
        let (output_schema, output_form) = match output {
            DeclaredOutput::Json(text) => (schema(SchemaRole::Output, text).map_err(refuse)?, OutputForm::Json),
            DeclaredOutput::McpContent => (content_schema(), OutputForm::McpContent),
        };
        Ok(ToolDef {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema,
            output_schema,
            limits: Limits::default(),
            policy: ToolPolicy::default(),
            output_form,
        })
    }

    /// Its description replaced (by the operator's manifest), within the same rule.
    pub fn set_description(&mut self, description: &str) -> Result<(), ToolDefError> {
        check_description(description).map_err(|problem| ToolDefError::of(&self.name, problem))?;
        self.description = description.to_owned();
        Ok(())
    }

    /// Its output travels as MCP content blocks from now on; its output schema stays the
    /// one declared, which every output is still checked against.
    pub fn with_mcp_content_output(mut self) -> ToolDef {
        self.output_form = OutputForm::McpContent;
        self
    }
}

/// The tools one source publishes together: at most [`MAX_TOOLS`], each name once.
pub fn check_set<'a>(names: impl ExactSizeIterator<Item = &'a str>) -> Result<(), ToolDefError> {
    let count = names.len();
    check_count(count)?;
    let mut seen = std::collections::HashSet::with_capacity(count);
    for name in names {
        if !seen.insert(name) {
            return Err(ToolDefError::of(name, ToolProblem::Duplicate));
        }
    }
    Ok(())
}

/// How many tools one source may offer: at most [`MAX_TOOLS`]. Apart from
/// [`check_set`] for a source that counts its tools before it has them all (a listing
/// that comes in pages, files found one by one).
pub fn check_count(count: usize) -> Result<(), ToolDefError> {
    match count {
        count if count > MAX_TOOLS => Err(ToolDefError::TooMany { count, limit: MAX_TOOLS }),
        _ => Ok(()),
    }
}

fn check_description(description: &str) -> Result<(), ToolProblem> {
    match description.len() {
        size if size > MAX_DESCRIPTION_BYTES => Err(ToolProblem::Description { size, limit: MAX_DESCRIPTION_BYTES }),
        _ => Ok(()),
    }
}

/// A schema within the size and depth rules, checked as JSON Schema (compiled for good
/// by the tool's first call: a tool never called holds no validator).
fn schema(role: SchemaRole, text: &str) -> Result<Schema, ToolProblem> {
    if text.len() > MAX_SCHEMA_BYTES {
        return Err(ToolProblem::SchemaSize { role, size: text.len(), limit: MAX_SCHEMA_BYTES });
    }
    if nesting_depth(text) > MAX_SCHEMA_DEPTH {
        return Err(ToolProblem::SchemaDepth { role, limit: MAX_SCHEMA_DEPTH });
    }
    Schema::verify(text).map_err(|reason| ToolProblem::Schema { role, reason: bounded(reason, MAX_MESSAGE) })
}

/// Why a tool whose definition could not be read at all (a remote server's, too deep
/// for its parser) is refused: the size or depth rule its schemas' text breaks, else
/// `reason`, as the reader gave it.
pub(crate) fn unreadable(tool: &str, schemas: [(SchemaRole, Option<&str>); 2], reason: &str) -> ToolDefError {
    for (role, text) in schemas {
        let Some(text) = text else { continue };
        if text.len() > MAX_SCHEMA_BYTES {
            return ToolDefError::of(tool, ToolProblem::SchemaSize { role, size: text.len(), limit: MAX_SCHEMA_BYTES });
        }
        if nesting_depth(text) > MAX_SCHEMA_DEPTH {
            return ToolDefError::of(tool, ToolProblem::SchemaDepth { role, limit: MAX_SCHEMA_DEPTH });
        }
    }
    ToolDefError::of(tool, ToolProblem::Unreadable(bounded(reason.to_owned(), MAX_MESSAGE)))
}

/// The output schema of MCP content blocks: `{"content": [...]}`.
fn content_schema() -> Schema {
    let json = json!({
        "type": "object",
        "properties": { "content": { "type": "array", "items": { "type": "object" } } },
        "required": ["content"],
    });
    Schema::verify(&json.to_string()).expect("the content blocks' schema is valid")
}

/// How deep arrays and objects nest in JSON text, read without parsing it (a parser
/// stops, or recurses, where this only counts).
fn nesting_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> String {
        format!("{}{}", "[".repeat(levels), "]".repeat(levels))
    }

    #[test]
    fn depth_counts_arrays_and_objects_outside_strings() {
        assert_eq!(nesting_depth("{}"), 1);
        assert_eq!(nesting_depth(r#"{"a": [1, {"b": "}}}{{{[["}]}"#), 3);
        assert_eq!(nesting_depth(r#"{"a": "\"{"}"#), 1);
        assert!(nesting_depth(&nested(70)) > MAX_SCHEMA_DEPTH);
    }

    #[test]
    fn every_rule_refuses_with_its_own_words() {
        let json = DeclaredOutput::Json("{}");
        let problem = |result: Result<ToolDef, ToolDefError>| result.unwrap_err().problem().cloned();
        assert!(matches!(problem(ToolDef::new("Bad Name", "", "{}", json)), Some(ToolProblem::Name(_))));
        let long = "x".repeat(MAX_DESCRIPTION_BYTES + 1);
        assert_eq!(
            problem(ToolDef::new("ok", &long, "{}", json)),
            Some(ToolProblem::Description { size: MAX_DESCRIPTION_BYTES + 1, limit: MAX_DESCRIPTION_BYTES })
        );
        let huge = format!(r#"{{"description":"{}"}}"#, "x".repeat(MAX_SCHEMA_BYTES));
        assert!(matches!(
            problem(ToolDef::new("ok", "", &huge, json)),
            Some(ToolProblem::SchemaSize { role: SchemaRole::Input, .. })
        ));
        assert_eq!(
            problem(ToolDef::new("ok", "", "{}", DeclaredOutput::Json(&nested(70)))),
            Some(ToolProblem::SchemaDepth { role: SchemaRole::Output, limit: MAX_SCHEMA_DEPTH })
        );
        assert!(matches!(
            problem(ToolDef::new("ok", "", r#"{"type": 3}"#, json)),
            Some(ToolProblem::Schema { role: SchemaRole::Input, .. })
        ));
        let error = ToolDef::new(&"\u{1b}".repeat(100_000), "", "{}", json).unwrap_err().to_string();
        assert!(error.len() < MAX_MESSAGE + 300, "a declared name cannot make an error huge: {}", error.len());
        let content = ToolDef::new("ok", "", "{}", DeclaredOutput::McpContent).unwrap();
        assert_eq!(content.output_form, OutputForm::McpContent);
    }

    #[test]
    fn a_set_holds_each_name_once_and_at_most_the_limit() {
        let many: Vec<String> = (0..=MAX_TOOLS).map(|i| format!("tool{i}")).collect();
        assert_eq!(
            check_set(many.iter().map(String::as_str)),
            Err(ToolDefError::TooMany { count: MAX_TOOLS + 1, limit: MAX_TOOLS })
        );
        assert_eq!(check_set(["a", "b", "a"].into_iter()).unwrap_err().to_string(), "tool `a`: it is offered twice");
        assert!(check_set(many[..MAX_TOOLS].iter().map(String::as_str)).is_ok());
    }
}
