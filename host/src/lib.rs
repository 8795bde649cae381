//! toolhost: a host for AI-agent tools written as WebAssembly components.
//!
//! A tool is a WASI 0.2 component that exports the `toolhost:tool` contract (see
//! `wit/tool.wit`). [`ToolHost`] discovers components in layered directories, compiles
//! each once, and runs every call in a fresh, limited sandbox:
//!
//! ```text
//! ToolHost::call(name, input)
//!   -> registry   current snapshot, lookup by full or bare name   (NotFound + close matches)
//!   -> schema     input against the tool's input schema           (InputInvalid + JSON pointer)
//!   -> sandbox    fresh Store with limits and grants, instance from the cached InstancePre
//!   -> guest      toolbox.call(tool, input-json)                  (Failed | Trap | Timeout | OutOfFuel | MemoryLimit)
//!   -> schema     output size, then output against the output schema (OutputTooLarge | OutputInvalid)
//!   -> report     result, fuel, duration, captured output
//! ```
//!
//! Nothing on that path reads component files or compiles code: loading happens before
//! and publishes an immutable [`registry::Snapshot`] that calls read without locks.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let host = toolhost::ToolHost::builder().root("tools").build().await?;
//! let sum = host.call("math/add", serde_json::json!({ "numbers": [1, 2, 3] })).await?;
//! assert_eq!(sum, serde_json::json!({ "value": 6.0 }));
//! # Ok(()) }
//! ```

pub mod cache;
pub mod component;
pub mod contract;
mod engine;
pub mod error;
pub mod grants;
pub mod guest_output;
pub mod host_config;
pub mod limits;
pub mod manifest;
pub mod names;
pub mod outbound;
pub mod registry;
mod reload;
mod sandbox;
pub mod schema;
mod watch;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::Value;
use wasmtime::Engine;
use wasmtime::component::Linker;

pub use crate::component::{LoadedComponent, ToolDef};
pub use crate::engine::EngineSettings;
pub use crate::error::{CallError, ErrorKind, LoadError, LoadErrorKind, Violation};
pub use crate::grants::{FileGrant, Grants};
pub use crate::guest_output::CapturedOutput;
pub use crate::host_config::{ConfigError, HostConfig};
pub use crate::limits::Limits;
pub use crate::registry::{Layer, RegistryChange, Snapshot, ToolEntry};
pub use crate::reload::LoadProgress;
pub use crate::watch::{WatchError, WatchHandle};

use crate::cache::CompileCache;
use crate::component::Loader;
use crate::contract::GuestToolError;
use crate::manifest::Ceilings;
use crate::outbound::DeniedRequest;
use crate::reload::ProgressFn;
use crate::sandbox::{Operation, Returned, SandboxState};

/// What the host shares between loads and calls.
struct Core {
    engine: Engine,
    linker: Linker<SandboxState>,
    defaults: Limits,
    ceilings: Ceilings,
    cache: Option<CompileCache>,
    _epoch: engine::EpochTicker,
}

impl Core {
    fn loader(&self) -> Loader<'_> {
        Loader { engine: &self.engine, linker: &self.linker, cache: self.cache.as_ref() }
    }
}

/// Where compiled components are cached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheSetting {
    /// `$TOOLHOST_CACHE_DIR`, `$XDG_CACHE_HOME/toolhost` or `~/.cache/toolhost`.
    #[default]
    Default,
    Dir(PathBuf),
    Disabled,
}

/// Configures a [`ToolHost`].
#[derive(Clone, Default)]
pub struct ToolHostBuilder {
    layers: Vec<Layer>,
    defaults: Limits,
    engine: EngineSettings,
    cache: CacheSetting,
    progress: Option<ProgressFn>,
}

impl ToolHostBuilder {
    /// Adds a root below the ones added so far (the first root has the highest
    /// precedence). Its layer is named after its position: `layer0`, `layer1`, ….
    pub fn root(mut self, root: impl Into<PathBuf>) -> Self {
        let name = format!("layer{}", self.layers.len());
        self.layers.push(Layer { name, root: root.into(), stdlib: false });
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

    pub fn engine_settings(mut self, settings: EngineSettings) -> Self {
        self.engine = settings;
        self
    }

    /// Called as components load, at start and on every reload.
    pub fn on_progress(mut self, progress: impl Fn(LoadProgress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Where to cache compiled components (default: the user's cache directory).
    pub fn compile_cache(mut self, setting: CacheSetting) -> Self {
        self.cache = setting;
        self
    }

    /// Creates the engine and loads every root. Components that fail to load are
    /// reported in [`ToolHost::load_errors`]; the others are served.
    pub async fn build(self) -> anyhow::Result<ToolHost> {
        let engine = engine::new_engine(&self.engine)?;
        let linker = sandbox::new_linker(&engine)?;
        let epoch = engine::EpochTicker::start(&engine)?;
        let cache_dir = match self.cache {
            CacheSetting::Default => cache::default_dir(),
            CacheSetting::Dir(dir) => Some(dir),
            CacheSetting::Disabled => None,
        };
        let cache = cache_dir.and_then(|dir| match CompileCache::open(&dir, &engine) {
            Ok(cache) => Some(cache),
            Err(e) => {
                tracing::warn!(dir = %dir.display(), "compile cache disabled: {e}");
                None
            }
        });
        let ceilings = Ceilings { memory: self.engine.max_memory, timeout: MAX_TIMEOUT };
        let core = Arc::new(Core { engine, linker, defaults: self.defaults, ceilings, cache, _epoch: epoch });
        let snapshot = reload::build_snapshot(&core, &self.layers, None, self.progress.as_ref()).await;
        let (changes, _) = tokio::sync::broadcast::channel(64);
        Ok(ToolHost {
            core,
            layers: self.layers.into(),
            snapshot: Arc::new(ArcSwap::from_pointee(snapshot)),
            reload_lock: Arc::default(),
            changes,
            progress: self.progress,
        })
    }
}

/// The longest call a manifest may ask for.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// A host serving the tools of its layers. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct ToolHost {
    core: Arc<Core>,
    layers: Arc<[Layer]>,
    snapshot: Arc<ArcSwap<Snapshot>>,
    /// Serializes reloads; calls never take it.
    reload_lock: Arc<tokio::sync::Mutex<()>>,
    changes: tokio::sync::broadcast::Sender<RegistryChange>,
    progress: Option<ProgressFn>,
}

/// Everything known about one call, success or not.
#[derive(Debug, Clone)]
pub struct CallReport {
    /// The name the caller used.
    pub requested: String,
    /// The full name of the tool that answered, when one was found.
    pub tool: Option<String>,
    /// Content hash of the component that answered.
    pub component_hash: Option<String>,
    pub outcome: Result<Value, CallError>,
    pub fuel_consumed: u64,
    pub duration: Duration,
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub captured: CapturedOutput,
    /// Outgoing HTTP requests the component's allow-list refused during the call.
    pub denied_requests: Vec<DeniedRequest>,
}

impl ToolHost {
    pub fn builder() -> ToolHostBuilder {
        ToolHostBuilder::default()
    }

    /// Calls a tool and returns its validated output.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_detailed(name, input).await.outcome
    }

    /// Calls a tool and reports everything about the call.
    pub async fn call_detailed(&self, name: &str, input: Value) -> CallReport {
        let started = Instant::now();
        let snapshot = self.snapshot.load_full();
        let mut report = CallReport {
            requested: name.to_owned(),
            tool: None,
            component_hash: None,
            outcome: Ok(Value::Null),
            fuel_consumed: 0,
            duration: Duration::ZERO,
            input_bytes: 0,
            output_bytes: 0,
            captured: CapturedOutput::default(),
            denied_requests: Vec::new(),
        };
        report.outcome = self.run_call(&snapshot, name, input, &mut report).await;
        report.duration = started.elapsed();
        report
    }

    async fn run_call(
        &self,
        snapshot: &Snapshot,
        name: &str,
        input: Value,
        report: &mut CallReport,
    ) -> Result<Value, CallError> {
        let entry = snapshot.resolve(name)?;
        let def = entry.def();
        let component = &entry.component;
        report.tool = Some(entry.full_name.clone());
        report.component_hash = Some(component.hash.clone());
        let tool = || entry.full_name.clone();

        def.input_schema.check(&input).map_err(|violations| CallError::InputInvalid { tool: tool(), violations })?;
        let input_text = input.to_string();
        report.input_bytes = input_text.len() as u64;

        let label: Arc<str> = Arc::from(entry.full_name.as_str());
        let run = sandbox::run(
            &self.core.engine,
            &component.pre,
            label,
            &component.limits,
            component.grants.clone(),
            Operation::Call { tool: &def.name, input: &input_text },
        )
        .await;
        report.fuel_consumed = run.fuel_consumed;
        log_captured(&entry.full_name, &run.output);
        report.captured = run.output;
        report.denied_requests = run.denied_requests;

        let text = match run.result? {
            Returned::Call(Ok(text)) => text,
            Returned::Call(Err(GuestToolError::InvalidInput(reason))) => {
                return Err(CallError::InputInvalid {
                    tool: tool(),
                    violations: vec![Violation { pointer: String::new(), reason }],
                });
            }
            Returned::Call(Err(GuestToolError::Failed(message))) => {
                return Err(CallError::Failed { tool: tool(), message });
            }
            Returned::Tools(_) => {
                return Err(CallError::Host {
                    tool: tool(),
                    message: "the guest answered a call with a tool list".into(),
                });
            }
        };
        report.output_bytes = text.len() as u64;
        if report.output_bytes > component.limits.max_output {
            return Err(CallError::OutputTooLarge {
                tool: tool(),
                size: report.output_bytes,
                limit: component.limits.max_output,
            });
        }
        let output: Value = serde_json::from_str(&text).map_err(|e| CallError::OutputInvalid {
            tool: tool(),
            violations: vec![Violation { pointer: String::new(), reason: format!("output is not JSON: {e}") }],
        })?;
        def.output_schema.check(&output).map_err(|violations| CallError::OutputInvalid { tool: tool(), violations })?;
        Ok(output)
    }

    /// The snapshot calls currently start on.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// Components that could not be loaded, and why.
    pub fn load_errors(&self) -> Vec<LoadError> {
        self.snapshot.load().load_errors().cloned().collect()
    }

    /// Loads one component file outside any registry, for inspection, with the manifest
    /// beside it (`<name>.toml`) when there is one.
    pub async fn inspect_file(&self, path: &Path) -> Result<LoadedComponent, LoadError> {
        let manifest = path.with_extension("toml");
        reload::load_file(&self.core, path, manifest.is_file().then_some(manifest.as_path())).await
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
        let next = reload::build_snapshot(&self.core, &self.layers, Some(&previous), self.progress.as_ref()).await;
        let change = RegistryChange::between(&previous, &next);
        self.snapshot.store(Arc::new(next));
        if !change.is_empty() {
            let _ = self.changes.send(change.clone());
        }
        change
    }

    /// Registry changes, as reloads publish them.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }

    /// Watches every root and reloads after each burst of file changes settles for
    /// `debounce`. Stops when the handle is dropped.
    pub fn watch(&self, debounce: Duration) -> Result<WatchHandle, WatchError> {
        watch::start(self.clone(), debounce)
    }
}

/// Sends a call's captured stdout and stderr to the host log, marking truncation.
fn log_captured(tool: &str, captured: &CapturedOutput) {
    for (stream, text) in [("stdout", &captured.stdout), ("stderr", &captured.stderr)] {
        if !text.is_empty() {
            tracing::debug!(target: "toolhost::guest", tool, stream, "{}", text.trim_end());
        }
    }
    if captured.dropped_bytes > 0 {
        tracing::info!(target: "toolhost::guest", tool, dropped_bytes = captured.dropped_bytes, "guest output over the per-call log budget was dropped");
    }
}
