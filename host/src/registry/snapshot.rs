//! The immutable view of everything served: the tools of every loaded component merged
//! by layer precedence, and what changed between two views.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{CallError, LoadError};
use crate::names;
use crate::registry::Layer;
use crate::registry::component::{LoadedComponent, ToolDef};
use crate::registry::discovery::Fingerprint;

/// A component file of a root: the version being served, and why its current file is
/// not (a failed load keeps the last good version serving).
#[derive(Debug, Clone)]
pub struct ComponentSlot {
    pub layer: usize,
    pub namespace: String,
    pub path: PathBuf,
    pub manifest: Option<PathBuf>,
    /// What the files looked like when this slot was loaded; a reload reuses the slot
    /// while it is unchanged.
    pub fingerprint: Fingerprint,
    /// The version being served, if any version ever loaded.
    pub loaded: Option<Arc<LoadedComponent>>,
    /// Why the file as it is now is not served.
    pub error: Option<LoadError>,
}

/// A tool as served: which component answers it, from which layer, and what it hides.
#[derive(Debug, Clone)]
pub struct ToolEntry {
    pub full_name: String,
    pub namespace: String,
    pub component: Arc<LoadedComponent>,
    /// Index of the tool in `component.tools`.
    pub index: usize,
    pub layer: usize,
    /// Components of lower layers whose tool of the same full name this one shadows.
    pub overrides: Vec<Overridden>,
}

impl ToolEntry {
    pub fn def(&self) -> &ToolDef {
        &self.component.tools[self.index]
    }
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Overridden {
    pub layer: String,
    pub path: PathBuf,
    pub hash: String,
}

/// Two components of one layer export the same full name.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    pub full_name: String,
    pub layer: String,
    /// The component that serves the name (its file name sorts first).
    pub kept: PathBuf,
    pub ignored: PathBuf,
}

/// An immutable view of everything served. Calls hold an `Arc` to the snapshot they
/// started on, so a reload never changes a call midway.
#[derive(Debug, Default)]
pub struct Snapshot {
    pub layers: Vec<Layer>,
    pub tools: BTreeMap<String, ToolEntry>,
    /// Bare names of stdlib tools, to full names. Names exported by two stdlib
    /// namespaces are ambiguous and left out.
    pub bare_names: HashMap<String, String>,
    pub components: Vec<ComponentSlot>,
    pub conflicts: Vec<Conflict>,
    /// Problems found while discovering (bad names, unreadable directories).
    pub discovery_errors: Vec<LoadError>,
}

impl Snapshot {
    /// Merges loaded components, given in layer order (highest first) and file order.
    pub fn build(layers: Vec<Layer>, components: Vec<ComponentSlot>, discovery_errors: Vec<LoadError>) -> Snapshot {
        let mut tools: BTreeMap<String, ToolEntry> = BTreeMap::new();
        let mut conflicts = Vec::new();
        for slot in &components {
            let Some(component) = &slot.loaded else { continue };
            for (index, def) in component.tools.iter().enumerate() {
                let full_name = names::full_name(&slot.namespace, &def.name);
                match tools.get_mut(&full_name) {
                    None => {
                        tools.insert(
                            full_name.clone(),
                            ToolEntry {
                                full_name,
                                namespace: slot.namespace.clone(),
                                component: component.clone(),
                                index,
                                layer: slot.layer,
                                overrides: Vec::new(),
                            },
                        );
                    }
                    Some(winner) if winner.layer == slot.layer => conflicts.push(Conflict {
                        full_name,
                        layer: layers[slot.layer].name.clone(),
                        kept: winner.component.path.clone(),
                        ignored: component.path.clone(),
                    }),
                    Some(winner) => winner.overrides.push(Overridden {
                        layer: layers[slot.layer].name.clone(),
                        path: component.path.clone(),
                        hash: component.hash.clone(),
                    }),
                }
            }
        }

        let mut bare_names: HashMap<String, String> = HashMap::new();
        let mut ambiguous: Vec<String> = Vec::new();
        for slot in components.iter().filter(|slot| layers[slot.layer].stdlib) {
            let Some(component) = &slot.loaded else { continue };
            for def in &component.tools {
                let full_name = names::full_name(&slot.namespace, &def.name);
                match bare_names.get(&def.name) {
                    Some(existing) if *existing != full_name => ambiguous.push(def.name.clone()),
                    _ => {
                        bare_names.insert(def.name.clone(), full_name);
                    }
                }
            }
        }
        for name in ambiguous {
            bare_names.remove(&name);
        }

        for entry in tools.values().filter(|entry| !entry.overrides.is_empty()) {
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
        for conflict in &conflicts {
            tracing::warn!(
                tool = %conflict.full_name,
                layer = %conflict.layer,
                kept = %conflict.kept.display(),
                ignored = %conflict.ignored.display(),
                "two components of one layer export the same tool; the first file by name keeps it"
            );
        }
        Snapshot { layers, tools, bare_names, components, conflicts, discovery_errors }
    }

    /// Finds a tool by full name, or by bare name for the stdlib layer.
    pub fn resolve(&self, name: &str) -> Result<&ToolEntry, CallError> {
        if let Some(entry) = self.tools.get(name) {
            return Ok(entry);
        }
        if let Some(entry) = self.bare_names.get(name).and_then(|full| self.tools.get(full)) {
            return Ok(entry);
        }
        // Names as function-calling exports spell them: `ns__tool`, `ns.tool`.
        if let Some(entry) = crate::serve::definitions::unmap(name).and_then(|full| self.tools.get(&full)) {
            return Ok(entry);
        }
        Err(CallError::NotFound { name: name.to_owned(), suggestions: self.close_matches(name) })
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

/// What a reload changed, by full tool name. Sent to subscribers.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RegistryChange {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    /// Served by another component version, file or layer than before.
    pub changed: Vec<String>,
    /// Load errors that are new in this reload (the last good version, if any, still
    /// serves).
    pub errors: Vec<LoadError>,
}

impl RegistryChange {
    pub fn between(old: &Snapshot, new: &Snapshot) -> RegistryChange {
        let mut change = RegistryChange::default();
        for (name, entry) in &new.tools {
            match old.tools.get(name) {
                None => change.added.push(name.clone()),
                Some(before) if !Arc::ptr_eq(&before.component, &entry.component) || before.index != entry.index => {
                    change.changed.push(name.clone())
                }
                Some(_) => {}
            }
        }
        change.removed = old.tools.keys().filter(|name| !new.tools.contains_key(*name)).cloned().collect();
        let old_errors: Vec<&LoadError> = old.load_errors().collect();
        change.errors = new.load_errors().filter(|e| !old_errors.contains(e)).cloned().collect();
        change
    }

    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty() && self.errors.is_empty()
    }

    /// Whether the set of tools or their definitions changed (not just errors).
    pub fn tools_changed(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }
}
