//! What a reload changed, for subscribers and MCP clients.

use crate::error::LoadError;
use crate::registry::Snapshot;

/// What a reload changed, by full tool name. Sent to subscribers.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RegistryChange {
    /// Names served now and not before.
    pub added: Vec<String>,
    /// Names served before and not now.
    pub removed: Vec<String>,
    /// Served by another implementation (component version, file, native tool) or
    /// layer than before.
    pub changed: Vec<String>,
    /// Load errors that are new in this reload (the last good version, if any, still
    /// serves).
    pub errors: Vec<LoadError>,
    /// Whether the prompts listed changed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub prompts_changed: bool,
    /// Whether the resources or templates listed changed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub resources_changed: bool,
    /// URIs of fixed resources served with other contents than before, or no longer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resources_updated: Vec<String>,
}

impl RegistryChange {
    /// The difference from `old` to `new`.
    pub fn between(old: &Snapshot, new: &Snapshot) -> RegistryChange {
        let mut change = RegistryChange::default();
        for (name, entry) in &new.tools {
            match old.tools.get(name) {
                None => change.added.push(name.clone()),
                Some(before) if !before.source.same_as(&entry.source) => change.changed.push(name.clone()),
                Some(_) => {}
            }
        }
        change.removed = old.tools.keys().filter(|name| !new.tools.contains_key(*name)).cloned().collect();
        let old_errors: Vec<&LoadError> = old.load_errors().collect();
        change.errors = new.load_errors().filter(|e| !old_errors.contains(e)).cloned().collect();
        change.prompts_changed = old.offered.prompts_differ(&new.offered);
        change.resources_changed = old.offered.resources_differ(&new.offered);
        change.resources_updated = old.offered.updated_resources(&new.offered);
        change
    }

    /// Whether nothing changed at all.
    pub fn is_empty(&self) -> bool {
        !self.tools_changed() && self.errors.is_empty() && !self.offers_changed()
    }

    /// Whether prompts or resources changed: listed, or a resource's contents.
    pub fn offers_changed(&self) -> bool {
        self.prompts_changed || self.resources_changed || !self.resources_updated.is_empty()
    }

    /// Whether the set of tools or their definitions changed (not just errors).
    pub fn tools_changed(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }
}
