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
        change
    }

    /// Whether nothing changed at all.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty() && self.errors.is_empty()
    }

    /// Whether the set of tools or their definitions changed (not just errors).
    pub fn tools_changed(&self) -> bool {
        !(self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty())
    }
}
