//! Component files loading in parallel, each a slot of the next snapshot once it loaded or failed.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;

use arc_swap::ArcSwap;
use futures::FutureExt;

use super::discovery::{Discovered, Fingerprint};
use super::snapshot::ComponentSlot;
use crate::error::{LoadError, LoadErrorKind};
use crate::sources::{Components, LoadedComponent};
use crate::text::Escaped;
use crate::tool::{Ceilings, Limits};
use crate::trust::Pin;

/// What a scan loads files with, and which of them it serves.
pub(crate) struct Loaders {
    /// Loads, compiles and runs components.
    pub components: Arc<Components>,
    /// The host's default limits, under an HTTP tool's own.
    pub defaults: Limits,
    /// The ceilings no tool's limits may exceed.
    pub ceilings: Ceilings,
    /// The only namespaces discovered, when the host serves a few (a one-shot call).
    pub namespaces: Option<Vec<String>>,
    /// The one tool (of those namespaces) a one-shot call needs: a file whose kept
    /// listing shows it does not offer it is not loaded.
    pub only_tool: Option<String>,
    /// The digests `toolhost.lock` pins files to; replaced when the lock changes.
    pub pins: ArcSwap<HashMap<PathBuf, Pin>>,
}

impl Loaders {
    /// Whether the files of `namespace` are discovered and loaded.
    pub fn serves_namespace(&self, namespace: &str) -> bool {
        self.namespaces.as_ref().is_none_or(|only| only.iter().any(|wanted| wanted == namespace))
    }
}

/// Progress of a (re)load, for operators watching a slow start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadProgress {
    /// `paths`, `total` of them, need loading (unchanged ones are not counted).
    #[allow(missing_docs)]
    Started { total: usize, paths: Vec<PathBuf> },
    /// One finished (loaded or failed); `from_cache` tells whether it skipped compiling.
    #[allow(missing_docs)]
    Loaded { done: usize, total: usize, path: PathBuf, from_cache: bool },
}

pub(crate) type ProgressFn = Arc<dyn Fn(LoadProgress) + Send + Sync>;

/// A component file that needs loading: its place among the slots, what was found, its
/// stamps now, and the version that served it so far.
pub(super) struct ToLoad {
    pub order: usize,
    pub found: Discovered,
    pub fingerprint: Fingerprint,
    pub last_good: Option<Arc<LoadedComponent>>,
}

/// Files loading at once, at most: enough that a few components whose `list-tools` is
/// slow hold up no other file, few enough that a start never runs out of file
/// descriptors. Compiling is bounded separately, by the host's compile slots.
const LOADS_AT_ONCE: usize = 32;

/// Files loading in parallel; dropping it stops them. A component whose `list-tools` is
/// slow holds no compile slot, and costs its own time limit only.
pub(crate) struct Loading {
    tasks: tokio::task::JoinSet<(usize, ComponentSlot)>,
    done: usize,
    total: usize,
    progress: Option<ProgressFn>,
}

impl Loading {
    pub(super) fn start(loaders: &Arc<Loaders>, to_load: Vec<ToLoad>, progress: Option<&ProgressFn>) -> Loading {
        let total = to_load.len();
        if let Some(progress) = progress {
            let paths = to_load.iter().map(|load| load.found.wasm.clone()).collect();
            progress(LoadProgress::Started { total, paths });
        }
        let mut tasks = tokio::task::JoinSet::new();
        let load_slots = Arc::new(tokio::sync::Semaphore::new(LOADS_AT_ONCE));
        for ToLoad { order, found, fingerprint, last_good } in to_load {
            let (loaders, load_slots) = (loaders.clone(), load_slots.clone());
            tasks.spawn(async move {
                let _slot = load_slots.acquire_owned().await;
                if let Some(tool) = &loaders.only_tool
                    && loaders.components.listed_without(&found.wasm, tool).await
                {
                    tracing::debug!(file = %found.wasm.display(), "not loaded: its listing has no `{}`", Escaped(tool));
                    return (order, slot_from(found, fingerprint, Ok(None), last_good));
                }
                let result = load_catching_panics(&loaders.components, &found, last_good.as_deref()).await.map(Some);
                (order, slot_from(found, fingerprint, result, last_good))
            });
        }
        Loading { tasks, done: 0, total, progress: progress.cloned() }
    }

    /// The next file to finish, with its place among the slots; `None` when all have.
    /// Cancel-safe.
    pub async fn next(&mut self) -> Option<(usize, ComponentSlot)> {
        loop {
            // Only a cancelled task fails to join (the runtime is shutting down).
            let Ok((order, slot)) = self.tasks.join_next().await? else { continue };
            self.done += 1;
            if let Some(progress) = &self.progress {
                let from_cache = slot.loaded.as_ref().is_some_and(|c| c.from_cache && slot.error.is_none());
                let (done, total, path) = (self.done, self.total, slot.path.clone());
                progress(LoadProgress::Loaded { done, total, path, from_cache });
            }
            return Some((order, slot));
        }
    }
}

/// A bug in a loader must cost one file, not the file's last good version nor the
/// whole reload: a panic becomes that file's load error.
async fn load_catching_panics(
    components: &Components,
    found: &Discovered,
    previous: Option<&LoadedComponent>,
) -> Result<Arc<LoadedComponent>, LoadError> {
    let load = components.load_file(&found.wasm, found.manifest.as_deref(), found.pin.as_ref(), previous);
    let load = AssertUnwindSafe(load);
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
    result: Result<Option<Arc<LoadedComponent>>, LoadError>,
    last_good: Option<Arc<LoadedComponent>>,
) -> ComponentSlot {
    let (loaded, error) = match result {
        // Stamped after the read: an edit during the load itself is seen at the next
        // change of any of the component's files. `None`: not loaded, on purpose.
        Ok(component) => (component, None),
        Err(error) => {
            match &last_good {
                Some(_) => tracing::warn!("{} (the last good version keeps serving)", Escaped(&error.to_string())),
                None => tracing::warn!("{}", Escaped(&error.to_string())),
            }
            (last_good, Some(error))
        }
    };
    let read = loaded.as_ref().map_or(&[][..], |component| &component.offered.files[..]);
    let fingerprint = fingerprint.with_files(read);
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
