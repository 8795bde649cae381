//! The builder of a [`ToolHost`]: its layers, settings and tools, and the start that loads them.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;

use super::ToolHost;
use super::audit::Audit;
use super::changes::{check_native_sets, loads_between, native_slot};
use super::first_load::FirstLoad;
use super::idle;
use super::metrics::Metrics;
use crate::error::BuildError;
use crate::policy::{ApprovalHook, Policy};
use crate::registry::{Layer, LoadProgress, Loaders, NativeSlot, ProgressFn, Scan, Snapshot, finish_loading};
use crate::runtime::{CacheSetting, EngineSettings, Runtime};
use crate::sandbox::{Resolve, SystemResolver};
use crate::sources::{Components, DEFAULT_UPSTREAM_LAYER, NativeTool, UpstreamServer};
use crate::storage::{Storage, StorageSetting};
use crate::tool::{Ceilings, Limits};
use crate::trust::{Pin, SigningKeys};

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
    only_tool: Option<String>,
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
            only_tool: None,
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

    /// Loads only what a call of `namespace/tool` needs, for a host that answers that one
    /// call: the files of `namespace` (as [`Self::only_namespaces`]), less those the
    /// compile cache's listings show do not offer `tool`. Precedence and same-layer
    /// conflicts hold, since only a file offering `tool` can take part in either; a file
    /// never listed before is loaded (its code compiled) to learn its tools.
    pub fn only_tool(mut self, namespace: &str, tool: &str) -> Self {
        self.namespaces = Some(vec![namespace.to_owned()]);
        self.only_tool = Some(tool.to_owned());
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
    /// layer is missing, whose timeout is over the host's ceiling, or whose name another
    /// tool of that layer has fails the build; so do more than
    /// [`MAX_TOOLS`](crate::MAX_TOOLS) native tools of one namespace in one layer.
    pub fn tool(mut self, layer: impl Into<String>, tool: NativeTool) -> Self {
        self.natives.push((layer.into(), tool));
        self
    }

    /// Serves the tools of an upstream MCP server as the namespace `server.name`, in the
    /// layer `server.layer`; [`upstream::DEFAULT_LAYER`](crate::upstream::DEFAULT_LAYER),
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
        if !self.layers.iter().any(|layer| layer.name == DEFAULT_UPSTREAM_LAYER) {
            let above_stdlib = self.layers.iter().position(|layer| layer.stdlib).unwrap_or(self.layers.len());
            self.layers.insert(above_stdlib, Layer::native(DEFAULT_UPSTREAM_LAYER));
        }
        let loaders = self.loaders()?;
        let audit = Audit::new(self.audit_jsonl.as_deref())
            .map_err(|source| BuildError::AuditLog { path: self.audit_jsonl.clone().unwrap_or_default(), source })?;
        let natives = native_slots(&self.layers, std::mem::take(&mut self.natives), (self.defaults, loaders.ceilings))?;
        let (scan, loading) = Scan::start(&loaders, &self.layers, None, natives, self.progress.as_ref());
        let (snapshot, loading, first_load) = if self.serve_while_loading {
            let (first_load, loaded) = FirstLoad::start(&scan);
            (scan.partial(0), Some((scan, loading, loaded)), first_load)
        } else {
            (finish_loading(scan, loading).await, None, FirstLoad::done())
        };
        let metrics = self.metrics.then(|| {
            let metrics = Metrics::default();
            if loading.is_none() {
                metrics.record_reload(loads_between(None, &snapshot), snapshot.load_errors().count());
            }
            Arc::new(metrics)
        });
        let upstreams = std::mem::take(&mut self.upstreams);
        let serve_while_loading = self.serve_while_loading;
        let host = self.host(loaders, snapshot, audit, metrics, first_load);
        if let Some((scan, loading, loaded)) = loading {
            // Taken before any reload can ask for it: reloads wait for the first load.
            let serialized = host.reload_lock.clone().lock_owned().await;
            tokio::spawn(host.clone().finish_first_load(scan, loading, loaded, serialized));
        }
        let host = host.with_upstream_supervisors();
        if !upstreams.is_empty() {
            host.set_upstreams(upstreams).await.map_err(BuildError::NativeTool)?;
            if !serve_while_loading {
                host.upstream_first_attempts(FIRST_CONNECT_WAIT).await;
            }
        }
        Ok(host)
    }

    /// The engines, the component source and what scans load files with.
    fn loaders(&mut self) -> Result<Arc<Loaders>, BuildError> {
        let runtime = Runtime::start(&self.engine, self.cache.clone(), self.precompiled.as_deref())?;
        let ceilings = runtime.ceilings();
        let keys = std::mem::replace(&mut self.signing_keys, SigningKeys::none());
        let components = Components::new(runtime, self.defaults, keys, self.resolver.clone());
        Ok(Arc::new(Loaders {
            components: Arc::new(components),
            defaults: self.defaults,
            ceilings,
            namespaces: self.namespaces.take(),
            only_tool: self.only_tool.take(),
            pins: ArcSwap::from_pointee(std::mem::take(&mut self.pins)),
        }))
    }

    /// The host serving `snapshot` first, its idle code dropped as it idles.
    fn host(
        self,
        loaders: Arc<Loaders>,
        snapshot: Snapshot,
        audit: Audit,
        metrics: Option<Arc<Metrics>>,
        first_load: FirstLoad,
    ) -> ToolHost {
        let snapshot = Arc::new(ArcSwap::from_pointee(snapshot));
        idle::drop_idle_code(Arc::downgrade(&snapshot), self.engine.drop_idle_code_after);
        ToolHost {
            loaders,
            resolver: self.resolver,
            layers: self.layers.into(),
            snapshot,
            reload_lock: Arc::default(),
            changes: tokio::sync::broadcast::channel(64).0,
            progress: self.progress,
            policy: Arc::new(ArcSwap::from_pointee(self.policy)),
            policy_generation: Arc::default(),
            sessions: Arc::default(),
            quota_counts: Arc::default(),
            approval: self.approval,
            metrics,
            audit: Arc::new(audit),
            storage: Arc::new(Storage::new(self.storage)),
            call_slots: Arc::new(tokio::sync::Semaphore::new(self.max_concurrent_calls)),
            call_slot_capacity: self.max_concurrent_calls,
            first_load,
            waiting: Arc::default(),
            upstreams: None,
        }
    }
}

/// The native tools given to the builder, in the layers they name.
fn native_slots(
    layers: &[Layer],
    natives: Vec<(String, NativeTool)>,
    limits: (Limits, Ceilings),
) -> Result<Vec<NativeSlot>, BuildError> {
    let slots: Vec<NativeSlot> =
        natives.into_iter().map(|(layer, tool)| native_slot(layers, &layer, tool, limits)).collect::<Result<_, _>>()?;
    check_native_sets(layers, &slots)?;
    Ok(slots)
}
