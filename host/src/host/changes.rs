//! How what a host serves changes: reloads of the roots, native tools added and removed, an upstream server listed again.
//!
//! Each change builds the next snapshot under the reload lock, publishes it (calls in
//! flight finish on the one they started on) and tells subscribers what changed.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;

use super::ToolHost;
use crate::error::{LoadError, NativeToolError};
use crate::registry::{
    Layer, NativeSlot, RegistryChange, Snapshot, UpstreamSlot, WatchError, WatchHandle, build_snapshot, watch_roots,
};
use crate::sources::{LoadedComponent, NativeTool, UpstreamTool, section};
use crate::tool::{Ceilings, Limits, check_set};
use crate::trust::Pin;

impl ToolHost {
    /// Rescans every root and publishes a new snapshot: unchanged files are reused,
    /// changed ones reloaded (from the compile cache when their bytes were seen before),
    /// and a file that no longer loads keeps its last good version serving. Subscribers
    /// get the change when there is one.
    pub async fn reload(&self) -> RegistryChange {
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let next =
            build_snapshot(&self.loaders, &self.layers, Some(&previous), Vec::new(), self.progress.as_ref()).await;
        self.publish(&previous, next)
    }

    /// Replaces every pin [`ToolHostBuilder::pin`](crate::ToolHostBuilder::pin) set (a
    /// new `toolhost.lock`), and loads again the files whose pin changed: their new
    /// bytes, when they match, are served; else their last good version keeps serving.
    pub async fn set_pins(&self, pins: impl IntoIterator<Item = (PathBuf, Pin)>) -> RegistryChange {
        self.loaders.pins.store(Arc::new(pins.into_iter().collect()));
        self.reload().await
    }

    /// Serves `tool` in the layer named `layer` from now on, replacing a native tool of
    /// the same name in that layer. Subscribers and MCP clients hear of the change; calls
    /// in flight finish on the snapshot they started on. A namespace of a layer holds at
    /// most as many native tools as one source may offer.
    pub async fn add_tool(&self, layer: &str, tool: NativeTool) -> Result<RegistryChange, NativeToolError> {
        let slot = native_slot(&self.layers, layer, tool, (self.loaders.defaults, self.loaders.ceilings))?;
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let mut parts = previous.parts();
        let full_name = slot.tool.full_name();
        parts.natives.retain(|native| !(native.layer == slot.layer && native.tool.full_name() == full_name));
        parts.natives.push(slot);
        check_native_sets(&self.layers, &parts.natives)?;
        parts.generation += 1;
        Ok(self.publish(&previous, Snapshot::build(parts)))
    }

    /// Stops serving the native tool `full_name` of the layer named `layer`; `None` when
    /// there is none.
    pub async fn remove_tool(&self, layer: &str, full_name: &str) -> Option<RegistryChange> {
        let index = self.layers.iter().position(|l| l.name == layer)?;
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let mut parts = previous.parts();
        let before = parts.natives.len();
        parts.natives.retain(|native| !(native.layer == index && native.tool.full_name() == full_name));
        if parts.natives.len() == before {
            return None;
        }
        parts.generation += 1;
        Some(self.publish(&previous, Snapshot::build(parts)))
    }

    /// Makes `tools` every tool of the upstream server `namespace` in the layer named
    /// `layer`, and `errors` its load errors, in one change: the server (re)listed, or
    /// gone.
    pub(super) async fn replace_source(
        &self,
        layer: &str,
        namespace: &str,
        tools: Vec<UpstreamTool>,
        errors: Vec<LoadError>,
    ) -> Result<RegistryChange, NativeToolError> {
        let index = layer_index(&self.layers, layer)?;
        let slots = tools.into_iter().map(|tool| UpstreamSlot { layer: index, tool: Arc::new(tool) });
        let source_path = section(namespace);
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let mut parts = previous.parts();
        parts.upstreams.retain(|upstream| upstream.tool.server != namespace);
        parts.upstreams.extend(slots);
        parts.source_errors.retain(|error| error.path != source_path);
        parts.source_errors.extend(errors);
        parts.generation += 1;
        Ok(self.publish(&previous, Snapshot::build(parts)))
    }

    /// Makes `next` the snapshot calls start on and tells subscribers what changed.
    fn publish(&self, previous: &Snapshot, next: Snapshot) -> RegistryChange {
        let change = RegistryChange::between(previous, &next);
        if let Some(metrics) = &self.metrics {
            metrics.record_reload(loads_between(Some(previous), &next), change.errors.len());
        }
        self.publish_change(next, change)
    }

    /// Publishes `next` and tells subscribers what changed; counts nothing.
    pub(super) fn publish_change(&self, next: Snapshot, change: RegistryChange) -> RegistryChange {
        self.snapshot.store(Arc::new(next));
        if !change.is_empty() {
            let _ = self.changes.send(change.clone());
        }
        change
    }

    /// Watches every root and reloads after each burst of file changes settles for
    /// `debounce` (or, if changes never settle, after ten debounce periods, at least a
    /// second). A root that does not exist yet is served as soon as it appears, and one
    /// removed and created again keeps being watched. Stops when the handle is dropped.
    pub fn watch(&self, debounce: Duration) -> Result<WatchHandle, WatchError> {
        let roots: Vec<PathBuf> = self.layers.iter().filter_map(|layer| layer.root.clone()).collect();
        let host = self.clone();
        watch_roots(roots, debounce, Box::new(move || host.clone().reload_owned().boxed()))
    }

    async fn reload_owned(self) -> RegistryChange {
        self.reload().await
    }
}

/// Components of `next` that were compiled or restored for it (not carried over).
pub(super) fn loads_between(previous: Option<&Snapshot>, next: &Snapshot) -> usize {
    let before: HashSet<*const LoadedComponent> = previous
        .into_iter()
        .flat_map(|snapshot| snapshot.components.iter().filter_map(|slot| slot.loaded.as_ref().map(Arc::as_ptr)))
        .collect();
    next.components.iter().filter_map(|slot| slot.loaded.as_ref()).filter(|c| !before.contains(&Arc::as_ptr(c))).count()
}

/// A native tool placed in the layer named `layer`, with the host's default limits.
pub(super) fn native_slot(
    layers: &[Layer],
    layer: &str,
    tool: NativeTool,
    (defaults, ceilings): (Limits, Ceilings),
) -> Result<NativeSlot, NativeToolError> {
    Ok(NativeSlot { layer: layer_index(layers, layer)?, tool: Arc::new(tool.registered(defaults, ceilings)?) })
}

/// The native tools of each namespace of each layer, as one source: at most as many as
/// one source may offer.
pub(super) fn check_native_sets(layers: &[Layer], natives: &[NativeSlot]) -> Result<(), NativeToolError> {
    let mut sets: std::collections::BTreeMap<(usize, &str), Vec<&str>> = Default::default();
    for native in natives {
        sets.entry((native.layer, native.tool.namespace.as_str())).or_default().push(native.tool.def.name());
    }
    for ((layer, namespace), names) in sets {
        check_set(names.into_iter()).map_err(|refused| NativeToolError::Set {
            namespace: namespace.to_owned(),
            layer: layers[layer].name.clone(),
            refused,
        })?;
    }
    Ok(())
}

fn layer_index(layers: &[Layer], layer: &str) -> Result<usize, NativeToolError> {
    layers.iter().position(|l| l.name == layer).ok_or_else(|| NativeToolError::NoSuchLayer(layer.to_owned()))
}
