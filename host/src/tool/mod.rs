//! What a tool is, whatever answers it: its definition, how its output travels, how it fails, its kind of source.
//!
//! What a tool is, whatever answers it: its definition, how its output travels, how it
//! fails on its side, and what kind of source it comes from.

mod description;
mod limits;
mod policy;
mod rules;

pub use description::{Overridden, ToolDescription};
pub use limits::{Ceilings, Limits, MAX_TIMEOUT};
pub use policy::{Risk, ToolFilter, ToolHints, ToolPolicy};
pub(crate) use rules::unreadable;
pub use rules::{
    DeclaredOutput, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_TOOLS, check_count, check_set,
};

use crate::error::{CallError, Violation};
use crate::schema::Schema;
use crate::text::{MAX_MESSAGE, bounded};

/// One tool, whatever its source: what it is called, what it does, its schemas, and
/// what the operator decided about it. Made only by [`ToolDef::new`], which checks the
/// rules every tool obeys.
#[derive(Debug, Clone)]
pub struct ToolDef {
    name: String,
    description: String,
    input_schema: Schema,
    output_schema: Schema,
    output_form: OutputForm,
    /// Per-call limits (the manifest's, per tool where it says so; for tools outside a
    /// sandbox only the timeout and output size apply).
    pub limits: Limits,
    /// What the operator decided about it: approval, risk, hints.
    pub policy: ToolPolicy,
}

impl ToolDef {
    /// The tool's name within its namespace.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it does, for the agent deciding whether to call it.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Its input, checked before every call.
    pub fn input_schema(&self) -> &Schema {
        &self.input_schema
    }

    /// Its output, checked after every call.
    pub fn output_schema(&self) -> &Schema {
        &self.output_schema
    }

    /// What its output is.
    pub fn output_form(&self) -> OutputForm {
        self.output_form
    }
}

/// What a tool's output is, for consumers that can pass it on in its own form.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputForm {
    /// A JSON value, described by the output schema.
    #[default]
    Json,
    /// `{"content": [...]}`: MCP content blocks, as an upstream MCP tool that declares
    /// no output schema answers; an MCP client gets the blocks themselves.
    McpContent,
}

impl OutputForm {
    /// Whether it is plain JSON.
    pub fn is_json(&self) -> bool {
        *self == OutputForm::Json
    }
}

/// How a tool fails on its side, whatever its source; the call pipeline reports it
/// like a guest's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The input fits the schema but makes no sense to the tool.
    #[error("{0}")]
    InvalidInput(String),
    /// The tool tried and failed.
    #[error("{0}")]
    Failed(String),
}

impl ToolError {
    /// The call's error for a failure the tool `tool` reported. Its text is the
    /// source's (a guest's, a remote server's): bounded like every such text.
    pub(crate) fn for_call(self, tool: &str) -> CallError {
        let tool = tool.to_owned();
        match self {
            ToolError::InvalidInput(reason) => CallError::InputInvalid {
                tool,
                violations: vec![Violation { pointer: String::new(), reason: bounded(reason, MAX_MESSAGE) }],
            },
            ToolError::Failed(message) => CallError::Failed { tool, message: bounded(message, MAX_MESSAGE) },
        }
    }
}

/// The kinds of tool source, as listings show them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceKind {
    /// A component exporting the `toolhost:tool/toolbox` contract.
    Component,
    /// A component whose plain typed exports are its tools.
    PlainComponent,
    /// A native Rust tool.
    Native,
    /// A tool of an upstream MCP server.
    McpServer,
    /// A declarative HTTP tool.
    Http,
}
