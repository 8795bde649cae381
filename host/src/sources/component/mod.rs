//! The component source: a loaded component's tools, what its manifest decided, and its code while resident.
//!
//! A loaded component, shared by every call to its tools: the tools it offers, what its
//! manifest decided, and its native code ready to instantiate while it is resident
//! ([`crate::sources::component::code`]).

mod code;
mod compile;
mod imports;
mod listing;
mod load;
mod optimize;
mod plain;
mod preinit;
mod run;

pub(crate) use code::return_freed_memory;
pub(crate) use compile::{check_preamble, content_hash};
pub use plain::PlainFunction;
pub use preinit::{Preinit, PreinitError, preinitialize};
pub(crate) use run::Writes;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::contract;
use crate::error::SkippedExport;
use crate::manifest::Offered;
use crate::runtime::Tier;
use crate::runtime::{Runtime, Tiering};
use crate::sandbox::Resolve;
use crate::sandbox::{Capabilities, Grants};
use crate::tool::Limits;
use crate::tool::ToolDef;
use crate::tool::ToolPolicy;
use crate::trust::SigningKeys;
use crate::trust::Verified;
use code::Resident;
use optimize::Optimizer;

/// The component source: what loading, compiling and running components needs.
pub(crate) struct Components {
    /// The engines, caches and compile slots.
    pub runtime: Arc<Runtime>,
    /// Replaces baseline code in the background (tiered hosts only).
    optimizer: Option<Optimizer>,
    /// Limits of components whose manifest does not set them.
    pub defaults: Limits,
    /// Keys one of which must have signed a component's bytes before they are compiled.
    signing_keys: SigningKeys,
    /// Resolves the names guests send HTTP requests to (a toolbox may, while listing).
    resolver: Arc<dyn Resolve>,
}

impl Components {
    /// The component source of a host with `runtime`; a tiered runtime gets the
    /// background compiler that replaces baseline code.
    pub fn new(runtime: Runtime, defaults: Limits, signing_keys: SigningKeys, resolver: Arc<dyn Resolve>) -> Self {
        let runtime = Arc::new(runtime);
        let optimizer = (runtime.tiering() == Tiering::Tiered)
            .then(|| Optimizer::start(Arc::downgrade(&runtime), runtime.settings().clone()))
            .and_then(|started| {
                started.inspect_err(|e| tracing::warn!("baseline code stays: no optimizing thread: {e}")).ok()
            });
        Components { runtime, optimizer, defaults, signing_keys, resolver }
    }

    /// Components whose baseline code is still waiting for the background compile that
    /// replaces it with optimized code.
    pub fn optimizations_pending(&self) -> usize {
        self.optimizer.as_ref().map_or(0, Optimizer::pending)
    }
}

/// A loaded component.
pub struct LoadedComponent {
    /// The component file.
    pub path: PathBuf,
    /// BLAKE3 of the file's bytes, hex.
    pub hash: String,
    /// Bytes of the file.
    pub size: u64,
    /// How its tools are reached.
    pub contract: Contract,
    /// Interfaces the component imports (what it *could* ask for).
    pub imports: Vec<String>,
    /// The tools it offers, in its order.
    pub tools: Vec<ToolDef>,
    /// Time spent compiling, or loading native code from the compile cache.
    pub compile_time: Duration,
    /// Whether the native code came from the compile cache.
    pub from_cache: bool,
    /// The manifest beside the component, when there is one.
    pub manifest: Option<PathBuf>,
    /// Per-call limits, from the manifest over the host's defaults.
    pub limits: Limits,
    /// What the manifest grants.
    pub grants: Arc<Grants>,
    /// The manifest's policy for its tools (`[policy]`; a tool's own is in its
    /// [`ToolDef`]).
    pub policy: ToolPolicy,
    /// The prompts and resources its manifest offers beside its tools.
    pub offered: Arc<Offered>,
    /// The exported function behind each tool of a plain component (in the order of
    /// `tools`); empty for a toolbox.
    pub(crate) plain: Vec<PlainFunction>,
    /// Its native code, while resident.
    pub(crate) resident: Resident,
    /// What was checked of its bytes before they were compiled: their digest against
    /// the manifest's pin, their signature; `None` when nothing asked for a check.
    pub verified: Option<Verified>,
}

/// How a component's tools are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contract {
    /// It exports `toolhost:tool/toolbox` at this version (e.g. `0.1.0`).
    Toolbox {
        /// The contract version.
        version: String,
    },
    /// It exports plain functions, each a tool; the rest are listed with why not.
    Plain {
        /// Exported functions that are not tools.
        skipped: Vec<SkippedExport>,
    },
}

impl LoadedComponent {
    /// Which capabilities its imports ask for, beside what its manifest grants.
    pub fn capabilities(&self) -> Capabilities {
        Capabilities::of(&self.imports, &self.grants)
    }

    /// Drops what the component rebuilds cheaply once no call used it for `idle`: its
    /// tools' compiled schemas, and its native code when the compile cache holds it.
    /// Says whether it dropped anything.
    pub(crate) fn drop_if_idle(&self, idle: Duration) -> bool {
        if !self.resident.idle_for(idle) {
            return false;
        }
        let schemas = self.tools.iter().flat_map(|tool| [tool.input_schema(), tool.output_schema()]);
        let released = schemas.filter(|schema| schema.is_compiled()).inspect(|schema| schema.release()).count();
        self.resident.evict_if_idle(idle) || released > 0
    }

    /// Whether its tools are plain exported functions.
    pub fn is_plain(&self) -> bool {
        matches!(self.contract, Contract::Plain { .. })
    }

    /// The exported function behind tool `index` of a plain component.
    pub fn plain_function(&self, index: usize) -> Option<&PlainFunction> {
        self.plain.get(index)
    }

    /// The tier of the code calls run now; `None` while none is resident (the next call
    /// maps it from the compile cache).
    pub fn tier(&self) -> Option<Tier> {
        self.resident.tier()
    }
}

impl std::fmt::Debug for LoadedComponent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedComponent")
            .field("path", &self.path)
            .field("hash", &self.hash)
            .field("tools", &self.tools.iter().map(ToolDef::name).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// How `toolhost inspect` shows a component: what it offers, what it imports and what it
/// is granted (configuration keys, never values).
impl serde::Serialize for LoadedComponent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let tools: Vec<Value> = self
            .tools
            .iter()
            .enumerate()
            .map(|(index, tool)| {
                let mut shown = json!({
                    "name": tool.name(),
                    "description": tool.description(),
                    "input_schema": tool.input_schema().json(),
                    "output_schema": tool.output_schema().json(),
                });
                if tool.limits != self.limits {
                    shown["limits"] = json!(tool.limits);
                }
                if tool.policy != self.policy {
                    shown["policy"] = json!(tool.policy);
                }
                if let Some(function) = self.plain_function(index) {
                    shown["export"] = json!(function.interface);
                    shown["wit"] = json!(function.signature);
                }
                shown
            })
            .collect();
        let (contract, skipped) = match &self.contract {
            Contract::Toolbox { version } => (format!("{}@{version}", contract::PACKAGE), None),
            Contract::Plain { skipped } => ("plain exports".to_owned(), Some(skipped)),
        };
        json!({
            "file": self.path,
            "hash": self.hash,
            "verified": self.verified,
            "size_bytes": self.size,
            "compile_ms": self.compile_time.as_secs_f64() * 1000.0,
            "from_compile_cache": self.from_cache,
            "tier": self.tier(),
            "contract": contract,
            "skipped_exports": skipped,
            "manifest": self.manifest,
            "limits": self.limits,
            "policy": self.policy,
            "capabilities": self.capabilities(),
            "imports": self.imports,
            "tools": tools,
        })
        .serialize(serializer)
    }
}
