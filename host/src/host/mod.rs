//! [`ToolHost`]: the layers it serves, the snapshot calls read, and what changes it.
//!
//! A call is [`ToolHost::call_with`] (`call.rs`, the pipeline); who sees what is
//! `access.rs`; a host is made by [`ToolHostBuilder`] (`builder.rs`) and changed by
//! reloads, native tools and upstream servers (`changes.rs`, `upstreams.rs`). Every
//! `impl ToolHost` is in this folder, and its fields are private to it.

mod access;
mod approval;
mod audit;
mod builder;
mod call;
mod changes;
mod first_load;
mod idle;
mod metrics;
mod offered;
mod quotas;
mod report;
mod upstreams;
mod waiting;

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use arc_swap::ArcSwap;

pub use access::ListingVersion;
pub use audit::CallRecord;
pub use builder::ToolHostBuilder;
pub use offered::{CompletionTarget, Completions};
pub use report::{CallOptions, CallReport, ToolCall};
pub use waiting::{AnswerError, MAX_REASON, OperatorAnswer, WaitingApproval};

pub(crate) use idle::sweep_idle;

use crate::error::LoadError;
use crate::policy::{ApprovalHook, Caller, Policy, SessionToolsets};
use crate::registry::{Layer, Listing, Loaders, ProgressFn, RegistryChange, Snapshot};
use crate::sandbox::Resolve;
use crate::sources::{HttpTool, LoadedComponent, Supervisors};
use crate::storage::Storage;
use audit::Audit;
use first_load::FirstLoad;
use metrics::{Gauges, Metrics};

/// A host serving the tools of its layers. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct ToolHost {
    /// What loads the files of the roots, and which of them are served.
    loaders: Arc<Loaders>,
    /// Resolves the names outgoing requests go to.
    resolver: Arc<dyn Resolve>,
    /// The buckets of `wasi:keyvalue`.
    storage: Arc<Storage>,
    layers: Arc<[Layer]>,
    snapshot: Arc<ArcSwap<Snapshot>>,
    /// Serializes reloads; calls never take it.
    reload_lock: Arc<tokio::sync::Mutex<()>>,
    changes: tokio::sync::broadcast::Sender<RegistryChange>,
    progress: Option<ProgressFn>,
    policy: Arc<ArcSwap<Policy>>,
    /// Counts changes of the policy and of session tool sets, for
    /// [`ToolHost::listing_version`].
    policy_generation: Arc<AtomicU64>,
    /// Tools switched on and off per session.
    sessions: Arc<SessionToolsets>,
    approval: Option<ApprovalHook>,
    metrics: Option<Arc<Metrics>>,
    audit: Arc<Audit>,
    /// What this process counts of the agents' quotas.
    quota_counts: Arc<quotas::QuotaCounts>,
    /// Bounds the calls running at once.
    call_slots: Arc<tokio::sync::Semaphore>,
    /// How many calls may run at once.
    call_slot_capacity: usize,
    /// What the first load has left to do.
    first_load: FirstLoad,
    /// The calls of this process waiting for an operator's answer at the console.
    waiting: Arc<waiting::Waiting>,
    /// Keeps the upstream servers connected while any clone of this host is alive;
    /// `None` in the clone that publishes what they list.
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
        &self.storage
    }

    /// Call records as calls finish, including refused and failed attempts.
    pub fn subscribe_calls(&self) -> tokio::sync::broadcast::Receiver<Arc<CallRecord>> {
        self.audit.subscribe()
    }

    /// Registry changes, as reloads publish them.
    pub fn subscribe(&self) -> tokio::sync::broadcast::Receiver<RegistryChange> {
        self.changes.subscribe()
    }

    /// The operator's view of everything served: layers, every tool (whoever may call
    /// it), conflicts and load errors.
    pub fn listing(&self) -> Listing {
        let mut listing = Listing::of(&self.snapshot.load());
        let policy = self.policy.load();
        for tool in &mut listing.tools {
            *tool = tool.clone().with_policy(policy.tool_policy(&tool.name, &tool.policy()));
        }
        listing
    }

    /// The snapshot calls currently start on.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.load_full()
    }

    /// The layers this host serves, highest precedence first.
    pub fn layers(&self) -> &[Layer] {
        &self.layers
    }

    /// Components that could not be loaded, and why.
    pub fn load_errors(&self) -> Vec<LoadError> {
        self.snapshot.load().load_errors().cloned().collect()
    }

    /// Components whose baseline code is still waiting for the background compile that
    /// replaces it with optimized code.
    pub fn optimizations_pending(&self) -> usize {
        self.loaders.components.optimizations_pending()
    }

    /// The directory this host's compile cache entries go to (`<cache>/<engine key>`:
    /// the key names the engine configuration the code is for), when it has a cache.
    pub fn compile_cache_dir(&self) -> Option<&Path> {
        self.loaders.components.runtime.cache.as_ref().map(|cache| cache.dir())
    }

    /// Whether the compile cache holds the optimized code of `component`.
    pub fn compile_cache_holds(&self, component: &LoadedComponent) -> bool {
        self.loaders.components.runtime.cache.as_ref().is_some_and(|cache| cache.holds(&component.hash))
    }

    /// Reads and checks one declarative HTTP tool file (`<name>.http.toml`) outside any
    /// registry, for inspection, with this host's default limits.
    pub fn inspect_http_tool(&self, path: &Path) -> Result<HttpTool, LoadError> {
        HttpTool::load(path, self.loaders.defaults, self.loaders.ceilings)
    }

    /// Loads one component file outside any registry, for inspection, with the manifest
    /// beside it (`<name>.toml`) when there is one.
    pub async fn inspect_file(&self, path: &Path) -> Result<LoadedComponent, LoadError> {
        let lock_pin = self.loaders.pins.load().get(path).cloned();
        self.loaders.components.inspect_file(path, lock_pin.as_ref()).await
    }

    /// The host's numbers in the Prometheus text format, when it was built with
    /// [`ToolHostBuilder::metrics`] on: every tool's.
    pub fn metrics_text(&self) -> Option<String> {
        self.metrics_text_where(|_| true)
    }

    /// The host's numbers as [`ToolHost::metrics_text`], with the series of only the
    /// tools `caller` may see (the totals are the host's): what an agent's token reads.
    pub fn metrics_text_for(&self, caller: &Caller) -> Option<String> {
        self.metrics_text_where(|tool| self.may_see_name(caller, tool))
    }

    fn metrics_text_where(&self, shown: impl Fn(&str) -> bool) -> Option<String> {
        let metrics = self.metrics.as_ref()?;
        let snapshot = self.snapshot.load();
        let slots = self.call_slot_capacity;
        let gauges = Gauges {
            slots_in_use: slots.saturating_sub(self.call_slots.available_permits()),
            slots,
            tools: snapshot.tools.len(),
            load_errors: snapshot.load_errors().count(),
            upstreams_serving: snapshot.upstreams.iter().map(|slot| &slot.tool.server).collect::<BTreeSet<_>>().len(),
            upstreams_failed: snapshot.unreachable_servers().count(),
        };
        Some(metrics.render(&gauges, shown))
    }
}
