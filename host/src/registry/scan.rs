//! Building a snapshot from the roots: discover, reuse what is unchanged, load the rest, keep last good versions.
//!
//! Building a registry snapshot from the roots: discover every component file, reuse the
//! ones whose files are unchanged since the previous snapshot, load the rest in
//! parallel, and keep the last good version of a file that no longer loads.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Layer;
use super::discovery::{Discovered, DiscoveredHttp, FileStamp, Fingerprint, discover};
use super::loading::{Loaders, Loading, ProgressFn, ToLoad};
use super::snapshot::{ComponentSlot, HttpSlot, NativeSlot, Parts, Snapshot, UpstreamSlot};
use crate::error::{LoadError, LoadErrorKind};
use crate::sources::{HttpTool, return_freed_memory};
use crate::text::Escaped;
use crate::tool::check_count;

/// Scans `layers` and builds the next snapshot. `previous` lends unchanged slots, the
/// last good versions of files that now fail, and its native tools; without it (the
/// first snapshot) the native tools are `natives`.
pub(crate) async fn build_snapshot(
    loaders: &Arc<Loaders>,
    layers: &[Layer],
    previous: Option<&Snapshot>,
    natives: Vec<NativeSlot>,
    progress: Option<&ProgressFn>,
) -> Snapshot {
    let (scan, loading) = Scan::start(loaders, layers, previous, natives, progress);
    finish_loading(scan, loading).await
}

/// Waits for every file of `scan` to load (or fail) and builds the snapshot.
pub(crate) async fn finish_loading(mut scan: Scan, mut loading: Loading) -> Snapshot {
    while let Some((order, slot)) = loading.next().await {
        scan.fill(order, slot);
    }
    scan.finish()
}

/// What a (re)load found: a slot per discovered file, filled as its load finishes.
pub(crate) struct Scan {
    generation: u64,
    layers: Vec<Layer>,
    slots: Vec<Option<ComponentSlot>>,
    /// Layer and namespace of each slot, filled or not.
    places: Vec<(usize, String)>,
    natives: Vec<NativeSlot>,
    http_tools: Vec<HttpSlot>,
    discovery_errors: Vec<LoadError>,
    /// Carried over with their errors: a reload of files leaves upstream servers as
    /// they are.
    upstreams: Vec<UpstreamSlot>,
    source_errors: Vec<LoadError>,
    loaded_any: bool,
}

impl Scan {
    /// Discovers every file and starts loading the changed ones.
    pub fn start(
        loaders: &Arc<Loaders>,
        layers: &[Layer],
        previous: Option<&Snapshot>,
        natives: Vec<NativeSlot>,
        progress: Option<&ProgressFn>,
    ) -> (Scan, Loading) {
        let mut discovered = Vec::new();
        let mut http_found = Vec::new();
        let mut discovery_errors = Vec::new();
        for (index, layer) in layers.iter().enumerate() {
            let found = discover(index, layer, &|namespace| loaders.serves_namespace(namespace));
            discovered.extend(found.components);
            http_found.extend(found.http);
            discovery_errors.extend(found.errors);
        }
        discovery_errors.extend(apply_lock_pins(loaders, layers, &mut discovered));
        for error in &discovery_errors {
            tracing::warn!("{}", Escaped(&error.to_string()));
        }
        let mut http_tools = load_http_tools(loaders, http_found, previous);
        discovery_errors.extend(refuse_crowded_http_namespaces(&mut http_tools, previous));
        let mut places: Vec<_> = discovered.iter().map(|found| (found.layer, found.namespace.clone())).collect();
        let (mut slots, to_load) = reuse_unchanged(discovered, previous);
        for slot in unreadable_but_served(previous, &discovery_errors) {
            places.push((slot.layer, slot.namespace.clone()));
            slots.push(Some(slot));
        }
        http_tools.extend(unreadable_http_but_served(previous, &discovery_errors));
        let scan = Scan {
            generation: previous.map_or(0, |snapshot| snapshot.generation + 1),
            layers: layers.to_vec(),
            slots,
            places,
            natives: previous.map(|snapshot| snapshot.natives.clone()).unwrap_or(natives),
            http_tools,
            discovery_errors,
            upstreams: previous.map(|snapshot| snapshot.upstreams.clone()).unwrap_or_default(),
            source_errors: previous.map(|snapshot| snapshot.source_errors.clone()).unwrap_or_default(),
            loaded_any: !to_load.is_empty(),
        };
        (scan, Loading::start(loaders, to_load, progress))
    }

    pub fn fill(&mut self, order: usize, slot: ComponentSlot) {
        self.slots[order] = Some(slot);
    }

    /// Namespaces with a file still loading.
    pub fn pending_namespaces(&self) -> BTreeSet<String> {
        self.pending().map(|(_, namespace)| namespace.to_owned()).collect()
    }

    fn pending(&self) -> impl Iterator<Item = (usize, &str)> {
        let unfilled = self.slots.iter().zip(&self.places).filter(|(slot, _)| slot.is_none());
        unfilled.map(|(_, (layer, namespace))| (*layer, namespace.as_str()))
    }

    /// What can be served while files are still loading, as snapshot `generation`: the
    /// loaded files, except that a namespace with a file still loading in some layer
    /// serves nothing from lower layers yet — the file may override any of its tools,
    /// and a tool the operator overrode must never answer, not even during a start.
    pub fn partial(&self, generation: u64) -> Snapshot {
        let pending: Vec<(usize, &str)> = self.pending().collect();
        let overridable = |layer: usize, namespace: &str| pending.iter().any(|(l, ns)| *l < layer && *ns == namespace);
        let components = self.slots.iter().flatten().filter(|slot| !overridable(slot.layer, &slot.namespace));
        let natives = self.natives.iter().filter(|native| !overridable(native.layer, &native.tool.namespace));
        let http_tools = self.http_tools.iter().filter(|slot| !overridable(slot.layer, &slot.namespace));
        let upstreams = self.upstreams.iter().filter(|slot| !overridable(slot.layer, &slot.tool.server));
        Snapshot::build(Parts {
            generation,
            layers: self.layers.clone(),
            components: components.cloned().collect(),
            natives: natives.cloned().collect(),
            http_tools: http_tools.cloned().collect(),
            upstreams: upstreams.cloned().collect(),
            discovery_errors: self.discovery_errors.clone(),
            source_errors: self.source_errors.clone(),
        })
    }

    /// The snapshot once every file is loaded (or failed), with the generation after
    /// the one `start` was given.
    pub fn finish(self) -> Snapshot {
        if self.loaded_any {
            return_freed_memory();
        }
        Snapshot::build(Parts {
            generation: self.generation,
            layers: self.layers,
            components: self.slots.into_iter().flatten().collect(),
            natives: self.natives,
            http_tools: self.http_tools,
            upstreams: self.upstreams,
            discovery_errors: self.discovery_errors,
            source_errors: self.source_errors,
        })
    }

    /// Sets the generation `finish` gives, after partial snapshots took some.
    pub fn set_generation(&mut self, generation: u64) {
        self.generation = generation;
    }
}

/// Puts `toolhost.lock`'s pins on the files they name, and returns an error for each
/// pinned file that is missing from a root this host serves: declared and locked, but
/// not pulled here yet.
fn apply_lock_pins(loaders: &Loaders, layers: &[Layer], discovered: &mut [Discovered]) -> Vec<LoadError> {
    let pins = loaders.pins.load();
    if pins.is_empty() {
        return Vec::new();
    }
    for found in discovered.iter_mut() {
        found.pin = pins.get(&found.wasm).cloned();
    }
    let served = |path: &Path| {
        let namespace = path.parent().and_then(Path::file_name).and_then(|name| name.to_str());
        namespace.is_some_and(|namespace| loaders.serves_namespace(namespace))
            && layers.iter().any(|layer| layer.root.as_deref().is_some_and(|root| path.starts_with(root)))
    };
    let mut missing: Vec<LoadError> = pins
        .iter()
        .filter(|(path, _)| served(path) && !discovered.iter().any(|found| &found.wasm == *path))
        .map(|(path, pin)| {
            let problem = format!("{} pins it, but it is not there: run `toolhost pull`", pin.by.display());
            LoadError::new(path, LoadErrorKind::Io(problem))
        })
        .collect();
    missing.sort_by(|a, b| a.path.cmp(&b.path));
    missing
}

/// The slots of `previous` inside a root or namespace directory that could not be read
/// this time (no file descriptors left, a permission changed): what they served keeps
/// serving, like the last good version of a file that no longer loads, while the
/// directory's error is reported.
fn unreadable_but_served(previous: Option<&Snapshot>, discovery_errors: &[LoadError]) -> Vec<ComponentSlot> {
    let Some(previous) = previous else { return Vec::new() };
    let unreadable = unreadable_dirs(discovery_errors);
    previous.components.iter().filter(|slot| unreadable.iter().any(|dir| slot.path.starts_with(dir))).cloned().collect()
}

/// The directories discovery could not read this time.
fn unreadable_dirs(discovery_errors: &[LoadError]) -> Vec<&Path> {
    discovery_errors
        .iter()
        .filter(|error| matches!(error.kind, LoadErrorKind::Io(_)))
        .map(|error| error.path.as_path())
        .collect()
}

/// The HTTP tools of one namespace directory are one source: past the tools one source
/// may offer ([`check_count`]) the directory is refused with one error naming it, as a
/// component or an upstream server offering too many tools is, and it keeps serving the
/// tools it served before (none, the first time).
fn refuse_crowded_http_namespaces(http_tools: &mut Vec<HttpSlot>, previous: Option<&Snapshot>) -> Vec<LoadError> {
    // By layer and namespace: how many tools load, and the directory they are in.
    let mut serving: HashMap<(usize, String), (usize, PathBuf)> = HashMap::new();
    for slot in http_tools.iter().filter(|slot| slot.loaded.is_some()) {
        let directory = slot.path.parent().unwrap_or(&slot.path);
        serving.entry((slot.layer, slot.namespace.clone())).or_insert((0, directory.to_owned())).0 += 1;
    }
    let refused: HashMap<(usize, String), LoadError> = serving
        .into_iter()
        .filter_map(|(place, (count, directory))| {
            let refused = check_count(count).err()?;
            Some((place, LoadError::new(directory, LoadErrorKind::Tool(refused))))
        })
        .collect();
    if refused.is_empty() {
        return Vec::new();
    }
    let is_crowded = |slot: &HttpSlot| refused.contains_key(&(slot.layer, slot.namespace.clone()));
    http_tools.retain(|slot| !is_crowded(slot));
    let before = previous.map(|snapshot| snapshot.http_tools.iter().filter(|slot| is_crowded(slot)));
    http_tools.extend(before.into_iter().flatten().cloned());
    let errors: Vec<LoadError> = refused.into_values().collect();
    for error in &errors {
        tracing::warn!("{} (what it served before keeps serving)", Escaped(&error.to_string()));
    }
    errors
}

/// The slots of HTTP tool definitions: unchanged files keep their slot; the others are
/// read now (a small TOML file each, no compiling), and one that no longer loads keeps
/// its last good version serving beside its error.
fn load_http_tools(loaders: &Loaders, found: Vec<DiscoveredHttp>, previous: Option<&Snapshot>) -> Vec<HttpSlot> {
    let previous_slots: HashMap<(&Path, usize), &HttpSlot> = previous
        .map(|snapshot| snapshot.http_tools.iter().map(|slot| ((slot.path.as_path(), slot.layer), slot)).collect())
        .unwrap_or_default();
    found
        .into_iter()
        .map(|DiscoveredHttp { layer, namespace, path }| {
            let stamp = FileStamp::of(&path);
            let before = previous_slots.get(&(path.as_path(), layer)).copied();
            if let Some(slot) = before.filter(|slot| slot.stamp.is_some() && slot.stamp == stamp) {
                return slot.clone();
            }
            let last_good = before.and_then(|slot| slot.loaded.clone());
            let (loaded, error) = match HttpTool::load(&path, loaders.defaults, loaders.ceilings) {
                Ok(tool) => (Some(Arc::new(tool)), None),
                Err(error) => {
                    match &last_good {
                        Some(_) => {
                            tracing::warn!("{} (the last good version keeps serving)", Escaped(&error.to_string()))
                        }
                        None => tracing::warn!("{}", Escaped(&error.to_string())),
                    }
                    (last_good, Some(error))
                }
            };
            HttpSlot { layer, namespace, path, stamp, loaded, error }
        })
        .collect()
}

/// The HTTP tools of `previous` inside a directory that could not be read this time:
/// they keep serving, as components there do ([`unreadable_but_served`]).
fn unreadable_http_but_served(previous: Option<&Snapshot>, discovery_errors: &[LoadError]) -> Vec<HttpSlot> {
    let Some(previous) = previous else { return Vec::new() };
    let unreadable = unreadable_dirs(discovery_errors);
    previous.http_tools.iter().filter(|slot| unreadable.iter().any(|dir| slot.path.starts_with(dir))).cloned().collect()
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
        let before = previous_slots.get(&(found.wasm.as_path(), found.layer)).copied();
        let read = before.and_then(|slot| slot.loaded.as_ref()).map_or(&[][..], |loaded| &loaded.offered.files[..]);
        let fingerprint = Fingerprint::of(&found).with_files(read);
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
