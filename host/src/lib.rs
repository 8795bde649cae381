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

// The floors, bottom up (docs/architecture.md; `cargo xtask layers` checks them).
// Floor 1, vocabulary:
pub mod allocator;
mod contract;
mod error;
pub mod names;
pub mod paths;
mod progress;
mod schema;
pub mod text;
mod tool;
mod units;
// Floor 2, mechanisms:
mod definitions;
mod manifest;
mod policy;
mod runtime;
mod sandbox;
pub mod storage;
pub mod trust;
// Floor 3, one folder per kind of tool source:
mod sources;
// Floor 4, what is served:
pub mod oci;
mod registry;
// Floor 5, the host and its call pipeline:
mod host;
// Floor 6, serving tools to their consumers:
pub mod serve;
// Floor 7, what operators write:
mod config;
pub mod scaffold;

pub use crate::config::{ConfigError, DEFAULT_CONFIG, HostConfig};
pub use crate::definitions::ExportFormat;
pub use crate::error::{
    BuildError, CallError, ErrorKind, LoadError, LoadErrorKind, MemoryResource, NativeToolError, SchemaRole,
    SkippedExport, ToolDefError, ToolProblem, Violation, exit,
};
pub use crate::host::{CallOptions, CallRecord, CallReport, ListingVersion, ToolCall, ToolHost, ToolHostBuilder};
pub use crate::manifest::{Manifest, ToolManifest};
pub use crate::policy::{Approval, ApprovalHook, ApprovalRequest, Caller, Permit, Policy, PolicyRule, SessionTools};
pub use crate::progress::{MAX_PROGRESS_MESSAGE, Progress, ProgressHook};
pub use crate::registry::{
    ComponentSlot, Conflict, DEFAULT_ROOT, HttpSlot, Layer, Listing, LoadProgress, NativeSlot, RegistryChange,
    Snapshot, ToolEntry, UpstreamSlot, WatchError, WatchHandle,
};
pub use crate::runtime::{CacheSetting, EngineSettings, MAX_INSTANCES, MIN_MAX_MEMORY, Tier, Tiering};
pub use crate::sandbox::{
    Capabilities, CapturedOutput, DeniedRequest, FileGrant, Grants, HostPattern, LogLine, Resolve, SystemResolver,
    TABLE_ELEMENTS_LIMIT,
};
pub use crate::schema::{ArgumentShape, MAX_INPUT_DEPTH, Schema, WRAPPED_INPUT, too_deep_reason};
pub use crate::sources::{
    Contract, HttpTool, LoadedComponent, NativeTool, PlainFunction, ToolSource, UpstreamTool, is_http_tool_file,
    upstream,
};
pub use crate::tool::{
    Ceilings, DeclaredOutput, Limits, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_TIMEOUT,
    MAX_TOOLS, OutputForm, Overridden, Risk, SourceKind, ToolDef, ToolDescription, ToolError, ToolFilter, ToolHints,
    ToolPolicy,
};
pub use crate::units::{parse_duration, parse_size};
