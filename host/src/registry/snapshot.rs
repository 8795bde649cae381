//! The immutable view of everything served: the tools of every loaded component merged
//! by layer precedence, and what changed between two views.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{CallError, LoadError};
use crate::names::{self, NameForm};
use crate::registry::Layer;
use crate::registry::component::{LoadedComponent, ToolDef};
use crate::registry::discovery::Fingerprint;
use crate::registry::merge::{Offer, merge};

/// A component file of a root: the version being served, and why its current file is
/// not (a failed load keeps the last good version serving).
#[derive(Debug, Clone)]
pub struct ComponentSlot {
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// The namespace directory it sits in.
    pub namespace: String,
    /// The component file.
    pub path: PathBuf,
    /// Its manifest, when one sits beside it.
    pub manifest: Option<PathBuf>,
    /// What the files looked like when this slot was loaded; a reload reuses the slot
    /// while it is unchanged.
    pub(crate) fingerprint: Fingerprint,
    /// The version being served, if any version ever loaded.
    pub loaded: Option<Arc<LoadedComponent>>,
    /// Why the file as it is now is not served.
    pub error: Option<LoadError>,
}

/// A tool as served: which component answers it, from which layer, and what it hides.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    /// `namespace/tool`.
    pub full_name: String,
    /// The namespace directory of its component.
    pub namespace: String,
    /// The component that answers it.
    pub component: Arc<LoadedComponent>,
    /// Index of the tool in `component.tools`.
    pub index: usize,
    /// Index of its layer in [`Snapshot::layers`].
    pub layer: usize,
    /// Components of lower layers whose tool of the same full name this one shadows.
    pub overrides: Vec<Overridden>,
}

impl ToolEntry {
    /// The tool's definition in its component.
    pub fn def(&self) -> &ToolDef {
        &self.component.tools[self.index]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
/// A lower layer's tool that a served tool shadows.
pub struct Overridden {
    /// The lower layer's name.
    pub layer: String,
    /// The shadowed component file.
    pub path: PathBuf,
    /// BLAKE3 of the shadowed component, hex.
    pub hash: String,
}

/// Two components of one layer export the same full name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// The name both export.
    pub full_name: String,
    /// The layer both are in.
    pub layer: String,
    /// The component that serves the name (its file name sorts first).
    pub kept: PathBuf,
    /// The component whose tool of that name is not served.
    pub ignored: PathBuf,
}

/// An immutable view of everything served. Calls hold an `Arc` to the snapshot they
/// started on, so a reload never changes a call midway.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Counts the snapshots a host published: 0 for the first, then one more per
    /// reload. A cache of anything derived from a snapshot is keyed by it.
    pub generation: u64,
    /// The layers, highest precedence first.
    pub layers: Vec<Layer>,
    /// Every served tool by full name.
    pub tools: BTreeMap<String, ToolEntry>,
    /// Bare names of stdlib tools, to full names. Names exported by two stdlib
    /// namespaces are ambiguous and left out.
    pub bare_names: HashMap<String, String>,
    /// Every component file found, loaded or not.
    pub components: Vec<ComponentSlot>,
    /// Names two components of one layer both export.
    pub conflicts: Vec<Conflict>,
    /// Problems found while discovering (bad names, unreadable directories).
    pub discovery_errors: Vec<LoadError>,
}

impl Snapshot {
    /// Merges loaded components, given in layer order (highest first) and file order;
    /// [`merge`] decides precedence.
    pub fn build(
        generation: u64,
        layers: Vec<Layer>,
        components: Vec<ComponentSlot>,
        discovery_errors: Vec<LoadError>,
    ) -> Snapshot {
        let loaded: Vec<(&ComponentSlot, &Arc<LoadedComponent>)> =
            components.iter().filter_map(|slot| slot.loaded.as_ref().map(|component| (slot, component))).collect();
        let offers: Vec<Offer<'_>> = loaded
            .iter()
            .map(|(slot, component)| Offer {
                layer: slot.layer,
                namespace: &slot.namespace,
                tools: component.tools.iter().map(|tool| tool.name.as_str()).collect(),
            })
            .collect();
        let merged = merge(&offers, |layer| layers[layer].stdlib);
        let overridden = |offer: usize| {
            let (slot, component) = loaded[offer];
            Overridden {
                layer: layers[slot.layer].name.clone(),
                path: component.path.clone(),
                hash: component.hash.clone(),
            }
        };
        let tools: BTreeMap<String, ToolEntry> = merged
            .winners
            .into_iter()
            .map(|(full_name, winner)| {
                let (slot, component) = loaded[winner.offer];
                let entry = ToolEntry {
                    full_name: full_name.clone(),
                    namespace: slot.namespace.clone(),
                    component: component.clone(),
                    index: winner.tool,
                    layer: slot.layer,
                    overrides: winner.shadows.into_iter().map(overridden).collect(),
                };
                (full_name, entry)
            })
            .collect();
        let conflicts: Vec<Conflict> = merged
            .conflicts
            .into_iter()
            .map(|(full_name, kept, ignored)| Conflict {
                full_name,
                layer: layers[loaded[kept].0.layer].name.clone(),
                kept: loaded[kept].1.path.clone(),
                ignored: loaded[ignored].1.path.clone(),
            })
            .collect();
        log_shadowing(&layers, &tools, &conflicts);
        let bare_names = merged.bare_names;
        Snapshot { generation, layers, tools, bare_names, components, conflicts, discovery_errors }
    }

    /// Finds a tool by full name, by bare name for the stdlib layer, or by an exported
    /// name (`ns__tool`, `ns.tool`).
    pub fn resolve(&self, name: &str) -> Result<&ToolEntry, CallError> {
        self.resolve_form(name).map(|(entry, _)| entry)
    }

    /// [`Snapshot::resolve`], also telling which form the name was in.
    pub fn resolve_form(&self, name: &str) -> Result<(&ToolEntry, NameForm), CallError> {
        if let Some(entry) = self.tools.get(name) {
            return Ok((entry, NameForm::Full));
        }
        if let Some(entry) = self.bare_names.get(name).and_then(|full| self.tools.get(full)) {
            return Ok((entry, NameForm::Bare));
        }
        if let Some(entry) = names::unmap(name).and_then(|full| self.tools.get(&full)) {
            return Ok((entry, NameForm::Exported));
        }
        Err(CallError::NotFound { name: name.to_owned(), suggestions: self.close_matches(name) })
    }

    /// The load error of a component in the namespace `name` (any name form) refers
    /// to: the component that would have served a tool missing from the snapshot.
    pub fn load_error_in_namespace_of(&self, name: &str) -> Option<&LoadError> {
        let full_name = if name.contains('/') { name.to_owned() } else { names::unmap(name)? };
        let (namespace, _tool) = names::split(&full_name)?;
        self.components.iter().filter(|slot| slot.namespace == namespace).find_map(|slot| slot.error.as_ref())
    }

    /// Up to three served names close to `name`, best first.
    pub fn close_matches(&self, name: &str) -> Vec<String> {
        let wanted_tool = names::split(name).map_or(name, |(_, tool)| tool);
        let mut scored: Vec<(f64, &String)> = self
            .tools
            .keys()
            .map(|candidate| {
                let candidate_tool = names::split(candidate).map_or(candidate.as_str(), |(_, tool)| tool);
                let score =
                    strsim::jaro_winkler(name, candidate).max(strsim::jaro_winkler(wanted_tool, candidate_tool));
                (score, candidate)
            })
            .filter(|(score, _)| *score >= 0.8)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
        scored.into_iter().take(3).map(|(_, name)| name.clone()).collect()
    }

    /// Every load error of this snapshot: discovery problems and failed components.
    pub fn load_errors(&self) -> impl Iterator<Item = &LoadError> {
        self.discovery_errors.iter().chain(self.components.iter().filter_map(|slot| slot.error.as_ref()))
    }
}

/// Every shadowing and conflict is worth a line in the operator's log.
fn log_shadowing(layers: &[Layer], tools: &BTreeMap<String, ToolEntry>, conflicts: &[Conflict]) {
    for entry in tools.values() {
        for overridden in &entry.overrides {
            tracing::warn!(
                tool = %entry.full_name,
                layer = %layers[entry.layer].name,
                path = %entry.component.path.display(),
                shadows = %overridden.path.display(),
                shadowed_layer = %overridden.layer,
                "tool shadows a lower layer's tool of the same name"
            );
        }
    }
    for conflict in conflicts {
        tracing::warn!(
            tool = %conflict.full_name,
            layer = %conflict.layer,
            kept = %conflict.kept.display(),
            ignored = %conflict.ignored.display(),
            "two components of one layer export the same tool; the first file by name keeps it"
        );
    }
}
