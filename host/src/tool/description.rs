//! How a served tool looks to those who list it: what it does, its schemas, and where it comes from.
//!
//! How a served tool looks to those who list it: what it does, its schemas as declared,
//! and where it comes from.

use std::path::PathBuf;

use serde_json::Value;

use super::{OutputForm, Risk, SourceKind, ToolHints, ToolPolicy};

/// A tool as it is listed: what it does, its schemas as declared, and where it comes
/// from.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolDescription {
    /// The full name, `namespace/tool`.
    pub name: String,
    /// What the tool does, written for the agent that decides whether to call it.
    pub description: String,
    /// JSON Schema of the input, as the tool declared it.
    pub input_schema: Value,
    /// JSON Schema of the output, as the tool declared it.
    pub output_schema: Value,
    /// Calls must pass the host's approval hook first.
    pub requires_approval: bool,
    /// How much harm a call can do.
    pub risk: Risk,
    /// How it behaves (read-only, destructive, idempotent, open-world), where said.
    pub hints: ToolHints,
    /// The layer serving the tool.
    pub layer: String,
    /// What kind of implementation answers it.
    pub source: SourceKind,
    /// The component file serving the tool (none for a native tool).
    pub file: Option<PathBuf>,
    /// BLAKE3 of the component's bytes, `blake3:<hex>` (`hash` in JSON; none for a native tool).
    #[serde(rename = "hash")]
    pub component_hash: Option<String>,
    /// Lower layers' tools of the same name that this one shadows.
    pub overrides: Vec<Overridden>,
    /// What its output is (omitted in JSON when plain JSON).
    #[serde(skip_serializing_if = "OutputForm::is_json")]
    pub output_form: OutputForm,
}

impl ToolDescription {
    /// The operator's policy for the tool, as listed.
    pub fn policy(&self) -> ToolPolicy {
        ToolPolicy { requires_approval: self.requires_approval, risk: self.risk, hints: self.hints }
    }

    /// The same tool under `policy` (what the operator's configuration says of it).
    pub fn with_policy(mut self, policy: ToolPolicy) -> ToolDescription {
        self.requires_approval = policy.requires_approval;
        self.risk = policy.risk;
        self.hints = policy.hints;
        self
    }
}

/// A lower layer's tool that a served tool shadows.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Overridden {
    /// The lower layer's name.
    pub layer: String,
    /// What the shadowed tool is.
    pub source: SourceKind,
    /// Where it comes from: its component file, or `native`.
    pub origin: String,
    /// BLAKE3 of the shadowed component, `blake3:<hex>` (none for a native tool).
    pub hash: Option<String>,
}
