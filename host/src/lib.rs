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
//!   -> guest      toolbox.call(tool, input-json)                  (InputInvalid | Failed | Trap | Timeout | OutOfFuel | MemoryLimit)
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

pub mod audit;
pub mod config;
pub mod contract;
pub mod error;
pub mod names;
pub mod policy;
pub mod registry;
pub mod sandbox;
pub mod scaffold;
pub mod schema;
pub mod serve;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use serde_json::Value;
use wasmtime::Engine;
use wasmtime::component::Linker;

pub use crate::audit::CallRecord;
pub use crate::config::host_config::{ConfigError, HostConfig};
pub use crate::error::{CallError, ErrorKind, LoadError, LoadErrorKind, MemoryResource, Violation};
pub use crate::policy::{Approval, ApprovalHook, ApprovalRequest, Caller, Policy, PolicyRule};
pub use crate::registry::component::{LoadedComponent, ToolDef};
pub use crate::registry::load::LoadProgress;
pub use crate::registry::watch::{WatchError, WatchHandle};
pub use crate::registry::{Layer, RegistryChange, Snapshot, ToolEntry};
pub use crate::sandbox::engine::EngineSettings;
pub use crate::sandbox::grants::{FileGrant, Grants};
pub use crate::sandbox::limits::Limits;
pub use crate::sandbox::limits::MAX_INSTANCES;
pub use crate::sandbox::output::CapturedOutput;
pub use crate::serve::definitions::ExportFormat;

use crate::contract::GuestToolError;
use crate::registry::cache::CompileCache;
use crate::registry::component::Loader;
use crate::registry::load::ProgressFn;
use crate::registry::{cache, load as reload, watch};
use crate::sandbox::limits::Ceilings;
use crate::sandbox::outbound::DeniedRequest;
use crate::sandbox::{Operation, Returned, SandboxState, engine};
use crate::serve::definitions as export;

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
#[derive(Clone)]
pub struct ToolHostBuilder {
    layers: Vec<Layer>,
    defaults: Limits,
    engine: EngineSettings,
    cache: CacheSetting,
    progress: Option<ProgressFn>,
    policy: Policy,
    approval: Option<ApprovalHook>,
    audit_jsonl: Option<PathBuf>,
    max_concurrent_calls: usize,
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
            audit_jsonl: None,
            max_concurrent_calls: 64,
        }
    }
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

    /// Which callers may call which tools (default: everyone, everything).
    pub fn policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
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
        let ceilings = Ceilings::of(&self.engine);
        let core = Arc::new(Core { engine, linker, defaults: self.defaults, ceilings, cache, _epoch: epoch });
        let snapshot = reload::build_snapshot(&core, &self.layers, None, self.progress.as_ref()).await;
        let (changes, _) = tokio::sync::broadcast::channel(64);
        let audit = audit::Audit::new(self.audit_jsonl.as_deref())
            .map_err(|e| anyhow::anyhow!("cannot open the audit log: {e}"))?;
        Ok(ToolHost {
            core,
            layers: self.layers.into(),
            snapshot: Arc::new(ArcSwap::from_pointee(snapshot)),
            reload_lock: Arc::default(),
            changes,
            progress: self.progress,
            policy: Arc::new(ArcSwap::from_pointee(self.policy)),
            approval: self.approval,
            audit: Arc::new(audit),
            call_slots: Arc::new(tokio::sync::Semaphore::new(self.max_concurrent_calls)),
        })
    }
}

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
    policy: Arc<ArcSwap<Policy>>,
    approval: Option<ApprovalHook>,
    audit: Arc<audit::Audit>,
    /// Bounds the calls running at once.
    call_slots: Arc<tokio::sync::Semaphore>,
}

/// One call of a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolCall {
    /// The caller's id for this call, echoed in its result and audit record.
    pub id: String,
    pub name: String,
    pub input: Value,
}

/// Everything known about one call, success or not.
#[derive(Debug, Clone)]
pub struct CallReport {
    pub caller: Caller,
    /// The caller's id for this call (batch calls).
    pub call_id: Option<String>,
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

    /// Calls a tool as the local caller and returns its validated output.
    pub async fn call(&self, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_as(&Caller::local(), name, input).await
    }

    /// Calls a tool on behalf of `caller` and returns its validated output.
    pub async fn call_as(&self, caller: &Caller, name: &str, input: Value) -> Result<Value, CallError> {
        self.call_detailed_as(caller, None, name, input).await.outcome
    }

    /// Calls a tool as the local caller and reports everything about the call.
    pub async fn call_detailed(&self, name: &str, input: Value) -> CallReport {
        self.call_detailed_as(&Caller::local(), None, name, input).await
    }

    /// Calls a tool on behalf of `caller` and reports everything about the call. Every
    /// attempt, refused or failed, produces an audit record.
    pub async fn call_detailed_as(
        &self,
        caller: &Caller,
        call_id: Option<&str>,
        name: &str,
        input: Value,
    ) -> CallReport {
        let started_at = std::time::SystemTime::now();
        let started = Instant::now();
        let snapshot = self.snapshot.load_full();
        let mut report = CallReport {
            caller: caller.clone(),
            call_id: call_id.map(str::to_owned),
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
        report.outcome = self.run_call(&snapshot, caller, name, input, &mut report).await;
        report.duration = started.elapsed();
        if self.audit.is_active() {
            self.audit.record(CallRecord::from_report(&report, started_at));
        }
        report
    }

    /// Runs calls concurrently (bounded by the host's concurrency limit) and returns one
    /// result per call, in order. Never fails as a whole: each report holds its own
    /// success or error.
    pub async fn call_many(&self, caller: &Caller, calls: Vec<ToolCall>) -> Vec<CallReport> {
        use futures::StreamExt;
        let limit = self.call_slots.available_permits().max(1);
        futures::stream::iter(calls)
            .map(|call| async move { self.call_detailed_as(caller, Some(&call.id), &call.name, call.input).await })
            .buffered(limit)
            .collect()
            .await
    }

    /// Call records as calls finish, including refused and failed attempts.
    pub fn subscribe_calls(&self) -> tokio::sync::broadcast::Receiver<Arc<CallRecord>> {
        self.audit.subscribe()
    }

    /// Replaces the caller policy; calls that already passed it are not affected.
    pub fn set_policy(&self, policy: Policy) {
        self.policy.store(Arc::new(policy));
    }

    /// The tools `caller` may call, in a function-calling format.
    pub fn export(&self, format: ExportFormat, caller: &Caller) -> Value {
        let policy = self.policy.load();
        export::export(&self.snapshot.load(), format, |name| policy.check(caller, name).is_ok())
    }

    /// A tool's definition by any accepted name, if `caller` may call it.
    pub fn describe(&self, caller: &Caller, name: &str) -> Result<ToolDescription, CallError> {
        let snapshot = self.snapshot.load();
        let entry = snapshot.resolve(name)?;
        self.policy.load().check(caller, &entry.full_name).map_err(|reason| CallError::PermissionDenied {
            caller: caller.to_string(),
            tool: entry.full_name.clone(),
            reason,
        })?;
        Ok(ToolDescription::of(&snapshot, entry))
    }

    /// Every tool `caller` may call.
    pub fn list(&self, caller: &Caller) -> Vec<ToolDescription> {
        let snapshot = self.snapshot.load();
        let policy = self.policy.load();
        snapshot
            .tools
            .values()
            .filter(|entry| policy.check(caller, &entry.full_name).is_ok())
            .map(|entry| ToolDescription::of(&snapshot, entry))
            .collect()
    }

    async fn run_call(
        &self,
        snapshot: &Snapshot,
        caller: &Caller,
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
        let denied = |reason: String| CallError::PermissionDenied { caller: caller.to_string(), tool: tool(), reason };

        self.policy.load().check(caller, &entry.full_name).map_err(denied)?;
        if component.requires_approval {
            let Some(approve) = &self.approval else {
                return Err(denied("the tool requires approval and no approval hook is configured".into()));
            };
            let request = ApprovalRequest { caller: caller.clone(), tool: tool(), input: input.clone() };
            if let Approval::Denied { reason } = approve(request).await {
                return Err(denied(format!("approval denied: {reason}")));
            }
        }

        def.input_schema.check(&input).map_err(|violations| CallError::InputInvalid { tool: tool(), violations })?;
        let input_text = input.to_string();
        report.input_bytes = input_text.len() as u64;

        let label: Arc<str> = Arc::from(entry.full_name.as_str());
        let _slot = self
            .call_slots
            .acquire()
            .await
            .map_err(|_| CallError::Host { tool: tool(), message: "the host is shutting down".into() })?;
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
    /// `debounce` (or, if changes never settle, after ten debounce periods, at least a
    /// second). A root that does not exist yet is served as soon as it appears, and one
    /// removed and created again keeps being watched. Stops when the handle is dropped.
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

/// A tool as an agent sees it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ToolDescription {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Value,
    pub requires_approval: bool,
    pub layer: String,
    pub component_hash: String,
}

impl ToolDescription {
    fn of(snapshot: &Snapshot, entry: &ToolEntry) -> ToolDescription {
        let def = entry.def();
        ToolDescription {
            name: entry.full_name.clone(),
            description: def.description.clone(),
            input_schema: def.input_schema.json().clone(),
            output_schema: def.output_schema.json().clone(),
            requires_approval: entry.component.requires_approval,
            layer: snapshot.layers[entry.layer].name.clone(),
            component_hash: entry.component.hash.clone(),
        }
    }
}
