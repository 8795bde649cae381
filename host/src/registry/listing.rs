//! How everything a snapshot serves looks to an operator (`toolhost list`), and how one tool looks to an agent.
//!
//! How a served tool, and everything served, look to those who list them: agents
//! ([`ToolDescription`]) and operators ([`Listing`], the JSON of `toolhost list`).

use std::path::Path;

use crate::error::LoadError;
use crate::registry::{Conflict, Layer, Snapshot, ToolEntry};
use crate::tool::ToolDescription;

impl Snapshot {
    /// How `entry`, a tool of this snapshot, is listed.
    pub fn describe(&self, entry: &ToolEntry) -> ToolDescription {
        let def = entry.def();
        ToolDescription {
            name: entry.full_name.clone(),
            description: def.description().to_owned(),
            input_schema: def.input_schema().json(),
            output_schema: def.output_schema().json(),
            requires_approval: def.policy.requires_approval,
            risk: def.policy.risk,
            hints: def.policy.hints,
            layer: self.layers[entry.layer].name.clone(),
            source: entry.source.kind(),
            file: entry.source.file().map(Path::to_owned),
            component_hash: entry.source.hash().map(str::to_owned),
            overrides: entry.overrides.clone(),
            output_form: def.output_form(),
        }
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
            tools: snapshot.tools.values().map(|entry| snapshot.describe(entry)).collect(),
            conflicts: snapshot.conflicts.clone(),
            errors: snapshot.load_errors().cloned().collect(),
        }
    }
}
