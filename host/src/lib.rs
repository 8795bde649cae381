//! toolhost: a host for AI-agent tools written as WebAssembly components.
//!
//! A tool is a WASI 0.2 component that exports the `toolhost:tool` contract (see
//! `wit/tool.wit`). [`ToolHost`] discovers components in layered directories, compiles
//! each once, and runs every call in a fresh, limited sandbox. The house has three
//! stages, each a folder of this crate:
//!
//! - **load** (`config/`, `registry/`): `toolhost.toml` and each component's manifest;
//!   discovery in layered roots, compilation (cached on disk), precedence, hot reload.
//!   Loading publishes an immutable [`Snapshot`] that calls read without locks.
//!   Upstream MCP servers (`upstream/`) are namespaces too: kept connected, their tools
//!   served like native ones and governed by the same pipeline.
//! - **call** (`call.rs` over `sandbox/`): the pipeline below, a fresh sandbox per call
//!   with fuel, memory and time limits and only the capabilities granted.
//! - **serve** (`serve/`): one tool definition for every consumer (MCP, OpenAI,
//!   Anthropic) and the MCP server over stdio and Streamable HTTP.
//!
//! ```text
//! ToolHost::call(name, input)                                       call.rs
//!   -> resolve    current snapshot, by full, bare or exported name  NotFound + close matches
//!   -> authorize  caller policy, then approval                      PermissionDenied
//!   -> validate   input against the tool's input schema             InputInvalid + JSON pointer
//!   -> sandbox    fresh Store with limits and grants, instance from the cached InstancePre
//!   -> guest      toolbox.call(tool, input-json)                    InputInvalid | Failed | Trap | Timeout | OutOfFuel | MemoryLimit
//!   -> check      output size, then output against the output schema  OutputTooLarge | OutputInvalid
//!   -> commit     the call's wasi:keyvalue writes, all together (storage/)
//!   -> record     audit record, success or not; the CallReport
//! ```
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! let host = toolhost::ToolHost::builder().root("tools").build().await?;
//! let sum = host.call("math/add", serde_json::json!({ "numbers": [1, 2, 3] })).await?;
//! assert_eq!(sum, serde_json::json!({ "value": 6.0 }));
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod allocator;
mod config;
mod contract;
mod definitions;
mod error;
mod host;
mod manifest;
pub mod names;
pub mod oci;
pub mod paths;
mod policy;
mod progress;
mod registry;
mod runtime;
mod sandbox;
pub mod scaffold;
mod schema;
pub mod serve;
mod sources;
pub mod storage;
pub mod text;
mod tool;
pub mod trust;
mod units;

pub use crate::sources::upstream;

pub use crate::config::{ConfigError, DEFAULT_CONFIG, HostConfig, Manifest, ToolManifest, parse_duration, parse_size};
pub use crate::definitions::ExportFormat;
pub use crate::error::{BuildError, CallError, ErrorKind, LoadError, LoadErrorKind, MemoryResource, Violation, exit};
pub use crate::host::access::ListingVersion;
pub use crate::host::audit::CallRecord;
pub use crate::host::call::{CallOptions, CallReport, ToolCall};
pub use crate::host::{CacheSetting, ToolHost, ToolHostBuilder};
pub use crate::policy::{Approval, ApprovalHook, ApprovalRequest, Caller, Permit, Policy, PolicyRule, SessionTools};
pub use crate::progress::{MAX_PROGRESS_MESSAGE, Progress, ProgressHook};
pub use crate::registry::scan::LoadProgress;
pub use crate::registry::watch::{WatchError, WatchHandle};
pub use crate::registry::{
    ComponentSlot, Conflict, DEFAULT_ROOT, HttpSlot, Layer, Listing, NativeSlot, RegistryChange, Snapshot, ToolEntry,
    ToolSource,
};
pub use crate::runtime::engine::{EngineSettings, Tier, Tiering};
pub use crate::sandbox::grants::{Capabilities, FileGrant, Grants};
pub use crate::sandbox::limits::{MAX_INSTANCES, MIN_MAX_MEMORY, TABLE_ELEMENTS_LIMIT};
pub use crate::sandbox::outbound::{DeniedRequest, HostPattern};
pub use crate::sandbox::outbound::{Resolve, SystemResolver};
pub use crate::sandbox::output::{CapturedOutput, LogLine};
pub use crate::schema::{ArgumentShape, MAX_INPUT_DEPTH, Schema, WRAPPED_INPUT, too_deep_reason};
pub use crate::sources::component::plain::{PlainFunction, SkippedExport};
pub use crate::sources::component::{Contract, LoadedComponent};
pub use crate::sources::http::{HttpTool, is_http_tool_file};
pub use crate::sources::native::{NativeTool, NativeToolError};
pub use crate::tool::ToolError;
pub use crate::tool::{Ceilings, Limits, MAX_TIMEOUT};
pub use crate::tool::{OutputForm, ToolDef};
pub use crate::tool::{Overridden, SourceKind, ToolDescription};
pub use crate::tool::{Risk, ToolFilter, ToolHints, ToolPolicy};
