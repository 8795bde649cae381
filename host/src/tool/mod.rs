//! What a tool is, whatever answers it: its definition, how its output travels, how it
//! fails on its side, and what kind of source it comes from.

mod description;
mod limits;
mod policy;

pub use description::{Overridden, ToolDescription};
pub use limits::{Ceilings, Limits, MAX_TIMEOUT};
pub use policy::{Risk, ToolFilter, ToolHints, ToolPolicy};

use crate::schema::Schema;

/// One tool, whatever its source: what it is called, what it does, its schemas, and
/// what the operator decided about it.
#[derive(Debug, Clone)]
pub struct ToolDef {
    /// The tool's name within its namespace.
    pub name: String,
    /// What it does, for the agent deciding whether to call it.
    pub description: String,
    /// Its input, checked before every call.
    pub input_schema: Schema,
    /// Its output, checked after every call.
    pub output_schema: Schema,
    /// Per-call limits (the manifest's, per tool where it says so; for tools outside a
    /// sandbox only the timeout and output size apply).
    pub limits: Limits,
    /// What the operator decided about it: approval, risk, hints.
    pub policy: ToolPolicy,
    /// What its output is.
    pub output_form: OutputForm,
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

/// The kinds of [`ToolSource`], as listings show them.
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
