//! Building a registry snapshot from the roots: discover every component file, reuse the
//! ones whose files are unchanged since the previous snapshot, load the rest in
//! parallel, and keep the last good version of a file that no longer loads.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt;

use crate::config::{Manifest, load_manifest};
use crate::error::{LoadError, LoadErrorKind};
use crate::host::Core;
use crate::registry::component::LoadedComponent;
use crate::registry::loader::Upgrade;
use crate::registry::resident;
use crate::registry::{self, ComponentSlot, Discovered, Fingerprint, Layer, NativeSlot, Parts, Snapshot};
use crate::text::Escaped;

/// Progress of a (re)load, for operators watching a slow start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadProgress {
    /// `total` component files need loading (unchanged ones are not counted).
    /// `total` component files need loading (unchanged ones are not counted).
    #[allow(missing_docs)]
    Started { total: usize },
    /// One finished (loaded or failed); `from_cache` tells whether it skipped compiling.
    #[allow(missing_docs)]
    Loaded { done: usize, total: usize, path: PathBuf, from_cache: bool },
}

pub(crate) type ProgressFn = Arc<dyn Fn(LoadProgress) + Send + Sync>;

/// Scans `layers` and builds the next snapshot. `previous` lends unchanged slots, the
/// last good versions of files that now fail, and its native tools; without it (the
/// first snapshot) the native tools are `natives`.
pub(crate) async fn build_snapshot(
    core: &Arc<Core>,
    layers: &[Layer],
    previous: Option<&Snapshot>,
    natives: Vec<NativeSlot>,
    progress: Option<&ProgressFn>,
) -> Snapshot {
    let mut discovered = Vec::new();
    let mut discovery_errors = Vec::new();
    for (index, layer) in layers.iter().enumerate() {
        let (found, errors) = registry::discover(index, layer, &|namespace| core.serves_namespace(namespace));
        discovered.extend(found);
        discovery_errors.extend(errors);
    }
    let (mut slots, to_load) = reuse_unchanged(discovered, previous);
    let loaded_any = !to_load.is_empty();
    for (order, slot) in load_changed(core, to_load, progress).await {
        slots[order] = Some(slot);
    }
    if loaded_any {
        resident::return_freed_memory();
    }
    Snapshot::build(Parts {
        generation: previous.map_or(0, |snapshot| snapshot.generation + 1),
        layers: layers.to_vec(),
        components: slots.into_iter().flatten().collect(),
        natives: previous.map(|snapshot| snapshot.natives.clone()).unwrap_or(natives),
        discovery_errors,
    })
}

/// A component file that needs loading: its place among the slots, what was found, its
/// stamps now, and the version that served it so far.
struct ToLoad {
    order: usize,
    found: Discovered,
    fingerprint: Fingerprint,
    last_good: Option<Arc<LoadedComponent>>,
}

/// The slots whose files are unchanged since `previous` (in discovery order, `None`
/// where a file needs loading), and the files that do.
fn reuse_unchanged(
    discovered: Vec<Discovered>,
    previous: Option<&Snapshot>,
) -> (Vec<Option<ComponentSlot>>, Vec<ToLoad>) {
    let previous_slots: HashMap<(&Path, usize), &ComponentSlot> = previous
        .map(|snapshot| snapshot.components.iter().map(|slot| ((slot.path.as_path(), slot.layer), slot)).collect())
        .unwrap_or_default();
    let mut slots = Vec::with_capacity(discovered.len());
    let mut to_load = Vec::new();
    for (order, found) in discovered.into_iter().enumerate() {
        let fingerprint = Fingerprint::of(&found);
        let before = previous_slots.get(&(found.wasm.as_path(), found.layer)).copied();
        match before {
            Some(slot) if slot.fingerprint == fingerprint && slot.manifest == found.manifest => {
                slots.push(Some(slot.clone()));
            }
            _ => {
                slots.push(None);
                to_load.push(ToLoad {
                    order,
                    found,
                    fingerprint,
                    last_good: before.and_then(|slot| slot.loaded.clone()),
                });
            }
        }
    }
    (slots, to_load)
}

/// Loads the files in parallel, at most one per core, reporting progress as each
/// finishes; returns each slot with its order.
async fn load_changed(
    core: &Arc<Core>,
    to_load: Vec<ToLoad>,
    progress: Option<&ProgressFn>,
) -> Vec<(usize, ComponentSlot)> {
    let total = to_load.len();
    if let Some(progress) = progress {
        progress(LoadProgress::Started { total });
    }
    // Compiling is CPU-bound: more loads at once than cores only multiplies the memory
    // held by half-built components.
    let parallel_loads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16);
    let load_slots = Arc::new(tokio::sync::Semaphore::new(parallel_loads));
    let mut tasks = tokio::task::JoinSet::new();
    for ToLoad { order, found, fingerprint, last_good } in to_load {
        let core = core.clone();
        let load_slots = load_slots.clone();
        tasks.spawn(async move {
            let _slot = load_slots.acquire_owned().await;
            let result = load_catching_panics(&core, &found).await;
            (order, slot_from(found, fingerprint, result, last_good))
        });
    }
    let mut loaded = Vec::with_capacity(total);
    while let Some(joined) = tasks.join_next().await {
        // Only a cancelled task fails to join (the runtime is shutting down).
        let Ok((order, slot)) = joined else { continue };
        if let Some(progress) = progress {
            let from_cache = slot.loaded.as_ref().is_some_and(|c| c.from_cache && slot.error.is_none());
            progress(LoadProgress::Loaded { done: loaded.len() + 1, total, path: slot.path.clone(), from_cache });
        }
        loaded.push((order, slot));
    }
    loaded
}

/// A bug in a loader must cost one file, not the file's last good version nor the
/// whole reload: a panic becomes that file's load error.
async fn load_catching_panics(core: &Arc<Core>, found: &Discovered) -> Result<Arc<LoadedComponent>, LoadError> {
    let load = AssertUnwindSafe(load_file(core, &found.wasm, found.manifest.as_deref()));
    load.catch_unwind().await.unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Err(LoadError::new(&found.wasm, LoadErrorKind::Invalid(format!("the loader failed: {message}"))))
    })
}

fn slot_from(
    found: Discovered,
    fingerprint: Fingerprint,
    result: Result<Arc<LoadedComponent>, LoadError>,
    last_good: Option<Arc<LoadedComponent>>,
) -> ComponentSlot {
    let (loaded, error) = match result {
        Ok(component) => (Some(component), None),
        Err(error) => {
            match &last_good {
                Some(_) => tracing::warn!("{} (the last good version keeps serving)", Escaped(&error.to_string())),
                None => tracing::warn!("{}", Escaped(&error.to_string())),
            }
            (last_good, Some(error))
        }
    };
    ComponentSlot {
        layer: found.layer,
        namespace: found.namespace,
        path: found.wasm,
        manifest: found.manifest,
        fingerprint,
        loaded,
        error,
    }
}

/// Loads one component file with the manifest beside it, to be served: baseline code
/// is queued for the background compile that replaces it.
pub(crate) async fn load_file(
    core: &Arc<Core>,
    path: &Path,
    manifest_path: Option<&Path>,
) -> Result<Arc<LoadedComponent>, LoadError> {
    let (component, upgrade) = read_and_load(core, path, manifest_path).await?;
    let component = Arc::new(component);
    if let (Some(upgrade), Some(optimizer)) = (upgrade, &core.optimizer) {
        optimizer.enqueue(&component, upgrade);
    }
    Ok(component)
}

/// Loads one component file with the manifest beside it, to be looked at, not served.
pub(crate) async fn inspect_file(
    core: &Arc<Core>,
    path: &Path,
    manifest_path: Option<&Path>,
) -> Result<LoadedComponent, LoadError> {
    read_and_load(core, path, manifest_path).await.map(|(component, _)| component)
}

async fn read_and_load(
    core: &Arc<Core>,
    path: &Path,
    manifest_path: Option<&Path>,
) -> Result<(LoadedComponent, Option<Upgrade>), LoadError> {
    let manifest = match manifest_path {
        Some(manifest_path) => load_manifest(manifest_path, core.defaults, core.ceilings)?,
        None => Manifest::default_for(core.defaults),
    };
    let bytes = tokio::fs::read(path).await.map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
    core.loader().load_bytes(path, manifest_path, bytes, manifest).await
}
