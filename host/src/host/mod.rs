//! [`ToolHost`] and its builder: one engine, the layers it serves, the snapshot calls
//! read, and everything that changes it (reloads, the watcher, the policy).

pub(crate) mod access;
pub(crate) mod audit;
pub(crate) mod call;
pub(crate) mod first_load;
pub(crate) mod metrics;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use arc_swap::ArcSwap;
use wasmtime::Engine;
use wasmtime::component::Component;

use crate::config::HostConfig;
use crate::error::{BuildError, LoadError};
use crate::host::audit::{Audit, CallRecord};
use crate::host::first_load::FirstLoad;
use crate::host::metrics::{Gauges, Metrics};
use crate::policy::{ApprovalHook, Policy, SessionToolsets};
use crate::registry::scan::{self, LoadProgress, ProgressFn};
use crate::registry::watch::{self, WatchError, WatchHandle};
use crate::registry::{Layer, Listing, NativeSlot, RegistryChange, Snapshot};
use crate::runtime::cache::CompileCache;
use crate::runtime::engine::{EngineSettings, EpochTicker, Tier, Tiering};
use crate::sandbox::TierEngine;
use crate::sandbox::outbound::{Resolve, SystemResolver};
use crate::sources::component::LoadedComponent;
use crate::sources::component::code;
use crate::sources::component::compile::Loader;
use crate::sources::component::optimize::Optimizer;
use crate::sources::http::HttpTool;
use crate::sources::native::{NativeTool, NativeToolError};
use crate::sources::upstream::{self, Supervisors, UpstreamChanges, UpstreamServer, UpstreamStatus};
use crate::storage::{Storage, StorageSetting};
use crate::tool::{Ceilings, Limits};
use crate::trust::{Pin, SigningKeys};

/// What the host shares between loads and calls.
pub(crate) struct Core {
    /// Cranelift's engine: the code of the compile cache, and every component's code in
    /// the end.
    pub optimized: TierEngine,
    /// Winch's engine, for the first calls of a component the cache does not hold;
    /// created when first needed (a host whose cache holds everything never needs it).
    baseline: OnceLock<Option<TierEngine>>,
    settings: EngineSettings,
    pub tiering: Tiering,
    pub defaults: Limits,
    pub ceilings: Ceilings,
    pub cache: Option<CompileCache>,
    /// Code `toolhost compile` made for this engine, read only.
    pub precompiled: Option<CompileCache>,
    /// Replaces baseline code in the background (tiered hosts only).
    pub optimizer: Option<Optimizer>,
    epoch: EpochTicker,
    /// Resolves the names guests send HTTP requests to.
    pub resolver: Arc<dyn Resolve>,
    /// The buckets of `wasi:keyvalue`.
    pub storage: Arc<Storage>,
    /// The only namespaces discovered, when the host serves a few (a one-shot call).
    pub namespaces: Option<Vec<String>>,
    /// Keys one of which must have signed a component's bytes before they are compiled.
    pub signing_keys: SigningKeys,
    /// The digests `toolhost.lock` pins files to; replaced when the lock changes.
    pub pins: ArcSwap<HashMap<PathBuf, Pin>>,
    /// Compiles at once: one per core, since compiling is CPU-bound and more at once
    /// only multiplies the memory held by half-built components.
    pub compile_slots: tokio::sync::Semaphore,
    /// How many compile slots there are.
    pub compile_slot_count: usize,
}

impl Core {
    /// Whether the components of `namespace` are discovered and loaded.
    pub fn serves_namespace(&self, namespace: &str) -> bool {
        self.namespaces.as_ref().is_none_or(|only| only.iter().any(|wanted| wanted == namespace))
    }

    /// Whether a load is compiling now: the background compile waits for spare cores.
    pub fn loads_compiling(&self) -> bool {
        self.compile_slots.available_permits() < self.compile_slot_count
    }

    pub fn loader(self: &Arc<Self>) -> Loader<'_> {
        Loader { core: self }
    }

    /// The engine of `tier`.
    pub fn engine(&self, tier: Tier) -> &TierEngine {
        match tier {
            Tier::Baseline => self.baseline().unwrap_or(&self.optimized),
            Tier::Optimized => &self.optimized,
        }
    }

    /// Winch's engine, unless the host compiles with Cranelift only (or Winch cannot run
    /// here, which is logged once).
    pub fn baseline(&self) -> Option<&TierEngine> {
        if self.tiering == Tiering::OptimizedOnly {
            return None;
        }
        self.baseline
            .get_or_init(|| match TierEngine::new(&self.settings, Tier::Baseline) {
                Ok(baseline) => {
                    self.epoch.add(&baseline.engine);
                    Some(baseline)
                }
                Err(e) => {
                    tracing::warn!("components compile with Cranelift only: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// Optimized code for `hash` from a cache, mapped: the precompiled one first, then
    /// the compile cache. Blocking file I/O (a checksum pass, a mapping).
    pub fn cached_code(&self, hash: &str) -> Option<Component> {
        self.precompiled.iter().chain(&self.cache).find_map(|cache| cache.get(&self.optimized.engine, hash).ok())
    }

    /// The optimizing engine, the clock that interrupts guests, and the background
    /// compiler of a tiered host.
    fn start(
        settings: &EngineSettings,
        caches: Caches,
        defaults: Limits,
        resolver: Arc<dyn Resolve>,
        storage: Arc<Storage>,
        namespaces: Option<Vec<String>>,
        signing_keys: SigningKeys,
    ) -> Result<Arc<Core>, BuildError> {
        let optimized = TierEngine::new(settings, Tier::Optimized)?;
        let epoch = EpochTicker::start(&optimized.engine).map_err(BuildError::EpochThread)?;
        let cache = open_cache(caches.compile, &optimized.engine);
        let precompiled = caches.precompiled.and_then(|dir| open_precompiled(&dir, &optimized.engine));
        let tiering = settings.tiering;
        let compile_slot_count = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16);
        Ok(Arc::new_cyclic(|core| Core {
            optimizer: (tiering == Tiering::Tiered).then(|| Optimizer::start(core.clone(), settings.clone())).and_then(
                |started| {
                    started.inspect_err(|e| tracing::warn!("baseline code stays: no optimizing thread: {e}")).ok()
                },
            ),
            optimized,
            baseline: OnceLock::new(),
            settings: settings.clone(),
            tiering,
            defaults,
            ceilings: settings.ceilings(),
            cache,
            precompiled,
            epoch,
            resolver,
            storage,
            namespaces,
            signing_keys,
            pins: ArcSwap::default(),
            compile_slots: tokio::sync::Semaphore::new(compile_slot_count),
            compile_slot_count,
        }))
    }
}

/// Where compiled code is looked up before compiling.
struct Caches {
    compile: CacheSetting,
    precompiled: Option<PathBuf>,
}

/// Where compiled components are cached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheSetting {
    /// `$TOOLHOST_CACHE_DIR`, `$XDG_CACHE_HOME/toolhost` or `~/.cache/toolhost`.
    #[default]
    Default,
    /// This directory.
    Dir(PathBuf),
    /// No compile cache: every load compiles.
    Disabled,
}

/// How long a build that does not serve while loading waits for upstream servers to
/// be listed (or fail) for the first time.
const FIRST_CONNECT_WAIT: Duration = Duration::from_secs(30);

/// Configures a [`ToolHost`].
#[derive(Clone)]
pub struct ToolHostBuilder {
    layers: Vec<Layer>,
    defaults: Limits,
    engine: EngineSettings,
    cache: CacheSetting,
    progress: Option<ProgressFn>,
    policy: Policy,
    approval: Option<ApprovalHook>,
    metrics: bool,
    resolver: Arc<dyn Resolve>,
    storage: StorageSetting,
    namespaces: Option<Vec<String>>,
    audit_jsonl: Option<PathBuf>,
    max_concurrent_calls: usize,
    serve_while_loading: bool,
    /// Native tools by the name of their layer.
    natives: Vec<(String, NativeTool)>,
    upstreams: Vec<UpstreamServer>,
    signing_keys: SigningKeys,
    precompiled: Option<PathBuf>,
    pins: HashMap<PathBuf, Pin>,
}

impl Default for ToolHostBuilder {
    fn default() -> Self {
        ToolHostBuilder {
            layers: Vec::new(),
            defaults: Limits::default(),
            engine: EngineSettings::default(),
            cache: CacheSetting::default(),
            progress: None,
            policy: Policy::allow_all(),
            approval: None,
            metrics: false,
            resolver: Arc::new(SystemResolver),
            storage: StorageSetting::default(),
            namespaces: None,
            audit_jsonl: None,
            max_concurrent_calls: 64,
            serve_while_loading: false,
            natives: Vec::new(),
            upstreams: Vec::new(),
            signing_keys: SigningKeys::none(),
            precompiled: None,
            pins: HashMap::new(),
        }
    }
}

impl ToolHostBuilder {
    /// Adds a root below the ones added so far (the first root has the highest
    /// precedence), named by [`Layer::for_root`]: `project`, then `layer1`, `layer2`, ….
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        let layer = Layer::for_root(self.layers.len(), root.into());
        self.layers.push(layer);
        self
    }

    /// Adds a named layer below the ones added so far.
    pub fn layer(mut self, layer: Layer) -> Self {
        self.layers.push(layer);
        self
    }

    /// Limits for components whose manifest does not set them.
    pub fn default_limits(mut self, limits: Limits) -> Self {
        self.defaults = limits;
        self
    }

    /// The engine's ceilings and pool size.
    pub fn engine_settings(mut self, settings: EngineSettings) -> Self {
        self.engine = settings;
        self
    }

    /// Called as components load, at start and on every reload.
    pub fn on_progress(mut self, progress: impl Fn(LoadProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Which callers may call which tools (default: everyone, everything).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Discovers and loads only the components of these namespaces (in every layer, so
    /// precedence holds); the others are not even read. For a host that answers one
    /// call: a slow or broken component elsewhere costs it nothing.
    pub fn only_namespaces(mut self, namespaces: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.namespaces = Some(namespaces.into_iter().map(Into::into).collect());
        self
    }

    /// Where the buckets of `wasi:keyvalue` live (default: an SQLite file in the user's
    /// data directory, created on first use).
    pub fn storage(mut self, setting: StorageSetting) -> Self {
        self.storage = setting;
        self
    }

    /// Resolves the host names guests send HTTP requests to (default: the system's
    /// resolver). Every address it answers is still checked before any connection.
    pub fn resolver(mut self, resolver: Arc<dyn Resolve>) -> Self {
        self.resolver = resolver;
        self
    }

    /// Counts calls, latency, fuel, loads and reloads for [`ToolHost::metrics_text`]
    /// (one uncontended lock per call; off by default).
    pub fn metrics(mut self, on: bool) -> Self {
        self.metrics = on;
        self
    }

    /// Decides calls to tools whose manifest sets `requires_approval`. Without a hook
    /// such calls are denied.
    pub fn approval_hook(mut self, hook: ApprovalHook) -> Self {
        self.approval = Some(hook);
        self
    }

    /// Appends a JSON line per call attempt to this file.
    pub fn audit_jsonl(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit_jsonl = Some(path.into());
        self
    }

    /// Calls that may run at once, across all callers (default 64); more wait their
    /// turn. Bounds [`ToolHost::call_many`] too.
    pub fn max_concurrent_calls(mut self, calls: usize) -> Self {
        self.max_concurrent_calls = calls.max(1);
        self
    }

    /// Returns from [`Self::build`] before the components are loaded, and serves each as
    /// soon as it is, while slower ones finish (a server's start). Subscribers hear of
    /// each batch; a call to a tool of a namespace still loading waits for it; see
    /// [`ToolHost::is_loaded`]. Off by default: a built host serves everything it could
    /// load.
    pub fn serve_while_loading(mut self, on: bool) -> Self {
        self.serve_while_loading = on;
        self
    }

    /// Serves a native tool in the layer named `layer` (added with [`Self::layer`], for
    /// example a [`Layer::native`], in the precedence the embedder chooses). A tool whose
    /// layer is missing fails the build.
    pub fn tool(mut self, layer: impl Into<String>, tool: NativeTool) -> Self {
        self.natives.push((layer.into(), tool));
        self
    }

    /// Serves the tools of an upstream MCP server as the namespace `server.name`, in the
    /// layer `server.layer`; [`upstream::DEFAULT_LAYER`](crate::sources::upstream::DEFAULT_LAYER),
    /// when no layer of that name was added, is placed below the directory layers and
    /// above the stdlib. The server is connected in the background; a build that does
    /// not serve while loading waits for its first attempt.
    pub fn upstream(mut self, server: UpstreamServer) -> Self {
        self.upstreams.push(server);
        self
    }

    /// Requires every component to carry a cosign signature by one of these keys
    /// (`<name>.wasm.sig`), checked before its bytes are compiled or looked up in the
    /// compile cache (default: none required). See [`crate::trust`].
    pub fn signing_keys(mut self, keys: SigningKeys) -> Self {
        self.signing_keys = keys;
        self
    }

    /// Pins the component file `file` to `pin.sha256` (as `toolhost.lock` does for
    /// components pulled from a registry): other bytes there are refused before they
    /// are compiled, naming `pin.by`. A manifest's `sha256` pin holds as well.
    pub fn pin(mut self, file: impl Into<PathBuf>, pin: Pin) -> Self {
        self.pins.insert(file.into(), pin);
        self
    }

    /// A cache `toolhost compile` filled for this engine configuration, read (never
    /// written) before the compile cache: replicas mount one read-only and start without
    /// compiling. One made for another engine is ignored, with a warning, and components
    /// are compiled.
    pub fn precompiled_cache(mut self, dir: impl Into<PathBuf>) -> Self {
        self.precompiled = Some(dir.into());
        self
    }

    /// Where to cache compiled components (default: the user's cache directory).
    pub fn compile_cache(mut self, setting: CacheSetting) -> Self {
        self.cache = setting;
        self
    }

    /// Creates the engine and loads every root. Components that fail to load are
    /// reported in [`ToolHost::load_errors`]; the others are served. Fails only when the
    /// host itself cannot run: settings out of range, no epoch thread, an audit log that
    /// cannot be opened.
    pub async fn build(mut self) -> Result<ToolHost, BuildError> {
        // Always there, empty or not: servers declared later go into it too.
        if !self.layers.iter().any(|layer| layer.name == upstream::DEFAULT_LAYER) {
            let above_stdlib = self.layers.iter().position(|layer| layer.stdlib).unwrap_or(self.layers.len());
            self.layers.insert(above_stdlib, Layer::native(upstream::DEFAULT_LAYER));
        }
        let storage = Arc::new(Storage::new(self.storage));
        let core = Core::start(
            &self.engine,
            Caches { compile: self.cache, precompiled: self.precompiled },
            self.defaults,
            self.resolver,
            storage,
            self.namespaces,
            self.signing_keys,
        )?;
        core.pins.store(Arc::new(self.pins));
        let audit = Audit::new(self.audit_jsonl.as_deref())
            .map_err(|source| BuildError::AuditLog { path: self.audit_jsonl.clone().unwrap_or_default(), source })?;
        let mut natives = Vec::with_capacity(self.natives.len());
        for (layer, tool) in self.natives {
            natives.push(native_slot(&self.layers, &layer, tool, self.defaults).map_err(BuildError::NativeTool)?);
        }
        let (scan, loading) = scan::Scan::start(&core, &self.layers, None, natives, self.progress.as_ref());
        let (snapshot, loading, first_load, loaded) = if self.serve_while_loading {
            let (first_load, loaded) = FirstLoad::start(&scan);
            (scan.partial(0), Some((scan, loading)), first_load, Some(loaded))
        } else {
            (scan::finish_loading(scan, loading).await, None, FirstLoad::done(), None)
        };
        let metrics = self.metrics.then(|| {
            let metrics = Metrics::default();
            if loading.is_none() {
                metrics.record_reload(loads_between(None, &snapshot), snapshot.load_errors().count());
            }
            Arc::new(metrics)
        });
        let snapshot = Arc::new(ArcSwap::from_pointee(snapshot));
        drop_idle_code(Arc::downgrade(&snapshot), self.engine.drop_idle_code_after);
        let (changes, _) = tokio::sync::broadcast::channel(64);
        let host = ToolHost {
            core,
            layers: self.layers.into(),
            snapshot,
            reload_lock: Arc::default(),
            changes,
            progress: self.progress,
            policy: Arc::new(ArcSwap::from_pointee(self.policy)),
            policy_generation: Arc::default(),
            sessions: Arc::default(),
            approval: self.approval,
            metrics,
            audit: Arc::new(audit),
            call_slots: Arc::new(tokio::sync::Semaphore::new(self.max_concurrent_calls)),
            call_slot_capacity: self.max_concurrent_calls,
            first_load,
            upstreams: None,
        };
        if let (Some((scan, loading)), Some(loaded)) = (loading, loaded) {
            // Taken before any reload can ask for it: reloads wait for the first load.
            let serialized = host.reload_lock.clone().lock_owned().await;
            tokio::spawn(host.clone().finish_first_load(scan, loading, loaded, serialized));
        }
        // The supervisors get a host that does not own them: the embedder's last clone
        // of this one stops them.
        let host = ToolHost { upstreams: Some(Arc::new(Supervisors::new(host.clone()))), ..host };
        if !self.upstreams.is_empty() {
            host.set_upstreams(self.upstreams).await.map_err(BuildError::NativeTool)?;
            if !self.serve_while_loading {
                host.upstream_first_attempts(FIRST_CONNECT_WAIT).await;
            }
        }
        Ok(host)
    }
}

/// Components of `next` that were compiled or restored for it (not carried over).
pub(crate) fn loads_between(previous: Option<&Snapshot>, next: &Snapshot) -> usize {
    let before: std::collections::HashSet<*const LoadedComponent> = previous
        .into_iter()
        .flat_map(|snapshot| snapshot.components.iter().filter_map(|slot| slot.loaded.as_ref().map(Arc::as_ptr)))
        .collect();
    next.components.iter().filter_map(|slot| slot.loaded.as_ref()).filter(|c| !before.contains(&Arc::as_ptr(c))).count()
}

/// Drops the native code and compiled schemas of the served components that no call
/// used for `idle`, for as long as the host lives.
fn drop_idle_code(snapshot: std::sync::Weak<ArcSwap<Snapshot>>, idle: Duration) {
    sweep_idle(snapshot, idle, "code and compiled schemas of idle components", move |snapshot| {
        let snapshot = snapshot.load();
        let components = snapshot.components.iter().filter_map(|slot| slot.loaded.as_ref());
        components.filter(|component| component.drop_if_idle(idle)).count()
    });
}

impl ToolHost {
    /// How long what can be rebuilt cheaply stays in memory without use
    /// ([`EngineSettings::drop_idle_code_after`]).
    pub(crate) fn idle_after(&self) -> Duration {
        self.core.settings.drop_idle_code_after
    }
}

/// Runs `sweep` over what `owner` holds for as long as it lives, every twelfth of
/// `idle` (so what idles leaves at most that late; a look is a few atomic loads per
/// item, cheap even every few seconds). When a sweep drops anything (`sweep` returns how
/// many), the heap it freed goes back to the OS.
pub(crate) fn sweep_idle<T: Send + Sync + 'static>(
    owner: std::sync::Weak<T>,
    idle: Duration,
    what: &'static str,
    sweep: impl Fn(&T) -> usize + Send + 'static,
) {
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval((idle / 12).max(Duration::from_millis(250)));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            let Some(owner) = owner.upgrade() else { return };
            let dropped = sweep(&owner);
            if dropped > 0 {
                code::return_freed_memory();
                tracing::debug!(dropped, what, "idle memory dropped");
            }
        }
    });
}

/// A native tool placed in the layer named `layer`, with the host's default limits.
fn native_slot(
    layers: &[Layer],
    layer: &str,
    tool: NativeTool,
    defaults: Limits,
) -> Result<NativeSlot, NativeToolError> {
    let index =
        layers.iter().position(|l| l.name == layer).ok_or_else(|| NativeToolError::NoSuchLayer(layer.to_owned()))?;
    Ok(NativeSlot { layer: index, tool: Arc::new(tool.registered(defaults)) })
}

/// The compile cache a setting asks for; one that cannot be used only costs compile
/// time, so the host runs without it and says why.
fn open_cache(setting: CacheSetting, engine: &Engine) -> Option<CompileCache> {
    let dir = match setting {
        CacheSetting::Default => crate::paths::cache_dir()?,
        CacheSetting::Dir(dir) => dir,
        CacheSetting::Disabled => return None,
    };
    CompileCache::open(&dir, engine)
        .inspect_err(|e| tracing::warn!(dir = %dir.display(), "compile cache disabled: {e}"))
        .ok()
}

fn open_precompiled(dir: &Path, engine: &Engine) -> Option<CompileCache> {
    match CompileCache::open_precompiled(dir, engine) {
        Ok(cache) => {
            tracing::info!(dir = %cache.dir().display(), "precompiled code is read from here");
            Some(cache)
        }
        Err(e) => {
            tracing::warn!(dir = %dir.display(), "the precompiled cache is not used, components are compiled: {e}");
            None
        }
    }
}

/// A host serving the tools of its layers. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct ToolHost {
    pub(crate) core: Arc<Core>,
    layers: Arc<[Layer]>,
    pub(crate) snapshot: Arc<ArcSwap<Snapshot>>,
    /// Serializes reloads; calls never take it.
    reload_lock: Arc<tokio::sync::Mutex<()>>,
    changes: tokio::sync::broadcast::Sender<RegistryChange>,
    progress: Option<ProgressFn>,
    pub(crate) policy: Arc<ArcSwap<Policy>>,
    /// Counts changes of the policy and of session tool sets, for
    /// [`ToolHost::listing_version`].
    pub(crate) policy_generation: Arc<AtomicU64>,
    /// Tools switched on and off per session.
    pub(crate) sessions: Arc<SessionToolsets>,
    pub(crate) approval: Option<ApprovalHook>,
    pub(crate) metrics: Option<Arc<Metrics>>,
    pub(crate) audit: Arc<Audit>,
    /// Bounds the calls running at once.
    pub(crate) call_slots: Arc<tokio::sync::Semaphore>,
    /// How many calls may run at once.
    call_slot_capacity: usize,
    /// What the first load has left to do.
    pub(crate) first_load: FirstLoad,
    /// Keeps the upstream servers connected while any clone of this host is alive;
    /// `None` in the supervisors' own clone.
    upstreams: Option<Arc<Supervisors>>,
}

impl ToolHost {
    /// A builder with the defaults: no layers, default limits, everyone may call
    /// everything.
    pub fn builder() -> ToolHostBuilder {
        ToolHostBuilder::default()
    }

    /// The host's store of `wasi:keyvalue` buckets, for the operator's inspection.
    pub fn storage(&self) -> &Storage {
        &self.core.storage
    }

    /// Call records as calls finish, including refused and failed attempts.
    pub fn subscribe_calls(&self) -> tokio::sync::broadcast::Receiver<Arc<CallRecord>> {
        self.audit.subscribe()
    }

    /// The operator's view of everything served: layers, every tool (whoever may call
    /// it), conflicts and load errors.
    pub fn listing(&self) -> Listing {
        Listing::of(&self.snapshot.load())
    }

    /// The snapshot calls currently start on.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Components whose baseline code is still waiting for the background compile that
    /// replaces it with optimized code.
    pub fn optimizations_pending(&self) -> usize {
        self.core.optimizer.as_ref().map_or(0, Optimizer::pending)
    }

    /// The directory this host's compile cache entries go to (`<cache>/<engine key>`:
    /// the key names the engine configuration the code is for), when it has a cache.
    pub fn compile_cache_dir(&self) -> Option<&Path> {
        self.core.cache.as_ref().map(|cache| cache.dir())
    }

    /// Components that could not be loaded, and why.
    pub fn load_errors(&self) -> Vec<LoadError> {
        self.snapshot.load().load_errors().cloned().collect()
    }

    /// Reads and checks one declarative HTTP tool file (`<name>.http.toml`) outside any
    /// registry, for inspection, with this host's default limits.
    pub fn inspect_http_tool(&self, path: &Path) -> Result<HttpTool, LoadError> {
        HttpTool::load(path, self.core.defaults, self.core.ceilings)
    }

    /// Loads one component file outside any registry, for inspection, with the manifest
    /// beside it (`<name>.toml`) when there is one.
    pub async fn inspect_file(&self, path: &Path) -> Result<LoadedComponent, LoadError> {
        let manifest = path.with_extension("toml");
        scan::inspect_file(&self.core, path, manifest.is_file().then_some(manifest.as_path())).await
    }

    /// The layers this host serves, highest precedence first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Rescans every root and publishes a new snapshot: unchanged files are reused,
    /// changed ones reloaded (from the compile cache when their bytes were seen before),
    /// and a file that no longer loads keeps its last good version serving. Subscribers
    /// get the change when there is one.
    pub async fn reload(&self) -> RegistryChange {
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let next =
            scan::build_snapshot(&self.core, &self.layers, Some(&previous), Vec::new(), self.progress.as_ref()).await;
        self.publish(&previous, next)
    }

    /// Replaces every pin [`ToolHostBuilder::pin`] set (a new `toolhost.lock`), and
    /// loads again the files whose pin changed: their new bytes, when they match, are
    /// served; else their last good version keeps serving.
    pub async fn set_pins(&self, pins: impl IntoIterator<Item = (PathBuf, Pin)>) -> RegistryChange {
        self.core.pins.store(Arc::new(pins.into_iter().collect()));
        self.reload().await
    }

    /// Serves `tool` in the layer named `layer` from now on, replacing a native tool of
    /// the same name in that layer. Subscribers and MCP clients hear of the change; calls
    /// in flight finish on the snapshot they started on.
    pub async fn add_tool(&self, layer: &str, tool: NativeTool) -> Result<RegistryChange, NativeToolError> {
        let slot = native_slot(&self.layers, layer, tool, self.core.defaults)?;
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let mut parts = previous.parts();
        let full_name = slot.tool.full_name();
        parts.natives.retain(|native| !(native.layer == slot.layer && native.tool.full_name() == full_name));
        parts.natives.push(slot);
        parts.generation += 1;
        Ok(self.publish(&previous, Snapshot::build(parts)))
    }

    /// Makes `tools` every tool of `namespace` in the layer named `layer`, and `error`
    /// its source's load error (or none), in one change: an upstream server (re)listed,
    /// or gone.
    pub(crate) async fn replace_source(
        &self,
        layer: &str,
        namespace: &str,
        tools: Vec<NativeTool>,
        error: Option<LoadError>,
    ) -> Result<RegistryChange, NativeToolError> {
        let index = self
            .layers
            .iter()
            .position(|l| l.name == layer)
            .ok_or_else(|| NativeToolError::NoSuchLayer(layer.to_owned()))?;
        let slots: Vec<NativeSlot> = tools
            .into_iter()
            .map(|tool| native_slot(&self.layers, layer, tool, self.core.defaults))
            .collect::<Result<_, _>>()?;
        let source_path = upstream::supervisor::section(namespace);
        let _serialized = self.reload_lock.lock().await;
        let previous = self.snapshot.load_full();
        let mut parts = previous.parts();
        parts.natives.retain(|native| !(native.layer == index && native.tool.namespace == namespace));
        parts.natives.extend(slots);
        parts.source_errors.retain(|error| error.path != source_path);
        parts.source_errors.extend(error);
        parts.generation += 1;
        Ok(self.publish(&previous, Snapshot::build(parts)))
    }

    /// Makes `servers` this host's upstream MCP servers: connects the new ones, stops
    /// the ones not among them (their tools go at once), restarts the ones declared
    /// differently, and leaves the others connected. Fails, changing nothing, when a
    /// server names a layer this host does not have. Servers of namespaces the host
    /// does not serve ([`ToolHostBuilder::only_namespaces`]) are left out.
    pub async fn set_upstreams(&self, mut servers: Vec<UpstreamServer>) -> Result<UpstreamChanges, NativeToolError> {
        let Some(supervisors) = &self.upstreams else {
            return Ok(UpstreamChanges::default());
        };
        servers.retain(|server| self.core.serves_namespace(&server.name));
        if let Some(server) = servers.iter().find(|server| !self.layers.iter().any(|l| l.name == server.layer)) {
            return Err(NativeToolError::NoSuchLayer(server.layer.clone()));
        }
        Ok(supervisors.apply(servers).await)
    }

    /// This host's upstream MCP servers, by name, and how each is doing.
    pub async fn upstreams(&self) -> Vec<UpstreamStatus> {
        match &self.upstreams {
            Some(supervisors) => supervisors.statuses().await,
            None => Vec::new(),
        }
    }

    /// Waits until every upstream server has been tried once, or `limit` passed.
    async fn upstream_first_attempts(&self, limit: Duration) {
        if let Some(supervisors) = &self.upstreams {
            supervisors.first_attempts(limit).await;
        }
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

    /// Makes `next` the snapshot calls start on and tells subscribers what changed.
    fn publish(&self, previous: &Snapshot, next: Snapshot) -> RegistryChange {
        let change = RegistryChange::between(previous, &next);
        if let Some(metrics) = &self.metrics {
            metrics.record_reload(loads_between(Some(previous), &next), change.errors.len());
        }
        self.publish_change(next, change)
    }

    /// Publishes `next` and tells subscribers what changed; counts nothing.
    pub(crate) fn publish_change(&self, next: Snapshot, change: RegistryChange) -> RegistryChange {
        self.snapshot.store(Arc::new(next));
        if !change.is_empty() {
            let _ = self.changes.send(change.clone());
        }
        change
    }

    /// The host's numbers in the Prometheus text format, when it was built with
    /// [`ToolHostBuilder::metrics`] on.
    pub fn metrics_text(&self) -> Option<String> {
        let metrics = self.metrics.as_ref()?;
        let snapshot = self.snapshot.load();
        let slots = self.call_slot_capacity;
        let gauges = Gauges {
            slots_in_use: slots.saturating_sub(self.call_slots.available_permits()),
            slots,
            tools: snapshot.tools.len(),
            load_errors: snapshot.load_errors().count(),
        };
        Some(metrics.render(&gauges))
    }

    /// Registry changes, as reloads publish them.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }

    /// Watches every root and reloads after each burst of file changes settles for
    /// `debounce` (or, if changes never settle, after ten debounce periods, at least a
    /// second). A root that does not exist yet is served as soon as it appears, and one
    /// removed and created again keeps being watched. Stops when the handle is dropped.
    pub fn watch(&self, debounce: Duration) -> Result<WatchHandle, WatchError> {
        watch::start(self.clone(), debounce)
    }

    /// Watches the `toolhost.toml` this host was built from (`started_with`, read from
    /// `path`), and `toolhost.lock` beside it, and applies edits of its `[[upstream]]`
    /// servers as [`Self::set_upstreams`] does and new pins as [`Self::set_pins`] does, after each burst of writes settles for `debounce`. A file that no longer
    /// parses changes nothing and is logged with its line; edits of other sections are
    /// logged as needing a restart. Stops when the handle is dropped.
    pub fn watch_config(
        &self,
        path: &Path,
        started_with: HostConfig,
        debounce: Duration,
    ) -> Result<WatchHandle, WatchError> {
        watch::start_config(self.clone(), path, started_with, debounce)
    }
}
