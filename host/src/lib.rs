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
pub mod limits;
pub mod manifest;
pub mod names;
pub mod outbound;
pub mod registry;
mod sandbox;
pub mod schema;

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
pub use crate::limits::Limits;
pub use crate::registry::{Layer, Snapshot, ToolEntry};

use crate::cache::CompileCache;
use crate::component::Loader;
use crate::contract::GuestToolError;
use crate::manifest::{Ceilings, Manifest};
use crate::outbound::DeniedRequest;
use crate::registry::ComponentSlot;
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
#[derive(Debug, Clone, Default)]
pub struct ToolHostBuilder {
    layers: Vec<Layer>,
    defaults: Limits,
    engine: EngineSettings,
    cache: CacheSetting,
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
        let snapshot = load_layers(&core, self.layers).await;
        Ok(ToolHost { core, snapshot: Arc::new(ArcSwap::from_pointee(snapshot)) })
    }
}

async fn load_layers(core: &Arc<Core>, layers: Vec<Layer>) -> Snapshot {
    let mut discovered = Vec::new();
    let mut discovery_errors = Vec::new();
    for (index, layer) in layers.iter().enumerate() {
        let (found, errors) = registry::discover(index, layer);
        discovered.extend(found);
        discovery_errors.extend(errors);
    }
    let mut tasks = tokio::task::JoinSet::new();
    for (order, found) in discovered.into_iter().enumerate() {
        let core = core.clone();
        tasks.spawn(async move {
            let state = load_file(&core, &found.wasm, found.manifest.as_deref()).await.map(Arc::new);
            if let Err(error) = &state {
                tracing::warn!("{error}");
            }
            (order, ComponentSlot { layer: found.layer, namespace: found.namespace, path: found.wasm, state })
        });
    }
    let mut slots: Vec<(usize, ComponentSlot)> = tasks.join_all().await;
    slots.sort_by_key(|(order, _)| *order);
    Snapshot::build(layers, slots.into_iter().map(|(_, slot)| slot).collect(), discovery_errors)
}

/// The longest call a manifest may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);

async fn load_file(core: &Core, path: &Path, manifest_path: Option<&Path>) -> Result<LoadedComponent, LoadError> {
    let manifest = match manifest_path {
        Some(manifest_path) => manifest::load(manifest_path, core.defaults, core.ceilings)?,
        None => Manifest::default_for(core.defaults),
    };
    let bytes = tokio::fs::read(path).await.map_err(|e| LoadError::new(path, LoadErrorKind::Io(e.to_string())))?;
    core.loader().load_bytes(path, manifest_path, bytes, manifest).await
}

/// A host serving the tools of its layers. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct ToolHost {
    core: Arc<Core>,
    snapshot: Arc<ArcSwap<Snapshot>>,
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
        load_file(&self.core, path, manifest.is_file().then_some(manifest.as_path())).await
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
