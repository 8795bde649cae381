//! How a served tool, and everything served, look to those who list them: agents
//! ([`ToolDescription`]) and operators ([`Listing`], the JSON of `toolhost list`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::LoadError;
use crate::policy::{Risk, ToolHints, ToolPolicy};
use crate::registry::{Conflict, Layer, Overridden, Snapshot, ToolEntry};
use crate::sources::SourceKind;
use crate::sources::component::OutputForm;

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
    /// BLAKE3 of the component's bytes, hex (`hash` in JSON; none for a native tool).
    #[serde(rename = "hash")]
    pub component_hash: Option<String>,
    /// Lower layers' tools of the same name that this one shadows.
    pub overrides: Vec<Overridden>,
    /// What its output is (omitted in JSON when plain JSON).
    #[serde(skip_serializing_if = "OutputForm::is_json")]
    pub output_form: OutputForm,
}

impl ToolDescription {
    /// The description of a served tool.
    pub fn of(snapshot: &Snapshot, entry: &ToolEntry) -> ToolDescription {
        let def = entry.def();
        ToolDescription {
            name: entry.full_name.clone(),
            description: def.description.clone(),
            input_schema: def.input_schema.json(),
            output_schema: def.output_schema.json(),
            requires_approval: def.policy.requires_approval,
            risk: def.policy.risk,
            hints: def.policy.hints,
            layer: snapshot.layers[entry.layer].name.clone(),
            source: entry.source.kind(),
            file: entry.source.file().map(Path::to_owned),
            component_hash: entry.source.hash().map(str::to_owned),
            overrides: entry.overrides.clone(),
            output_form: def.output_form,
        }
    }
}

impl ToolDescription {
    /// The operator's policy for the tool, as listed.
    pub fn policy(&self) -> ToolPolicy {
        ToolPolicy { requires_approval: self.requires_approval, risk: self.risk, hints: self.hints }
    }
}

/// Everything a snapshot serves and everything it could not, for an operator.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Listing {
    /// The layers, highest precedence first.
    pub layers: Vec<Layer>,
    /// Every served tool, by full name.
    pub tools: Vec<ToolDescription>,
    /// Names two components of one layer both export.
    pub conflicts: Vec<Conflict>,
    /// Why some files or directories are not served.
    pub errors: Vec<LoadError>,
}

impl Listing {
    /// The listing of `snapshot`.
    pub fn of(snapshot: &Snapshot) -> Listing {
        Listing {
            layers: snapshot.layers.clone(),
            tools: snapshot.tools.values().map(|entry| ToolDescription::of(snapshot, entry)).collect(),
            conflicts: snapshot.conflicts.clone(),
            errors: snapshot.load_errors().cloned().collect(),
        }
    }
}
