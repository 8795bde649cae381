//! toolhost: a host for AI-agent tools written as WebAssembly components.
//!
//! A tool is a WASI 0.2 component that exports the `toolhost:tool` contract (see
//! `wit/tool.wit`), a plain component whose typed exports are tools, a native Rust
//! function, an HTTP API declared in a `.http.toml` file, or a tool of an upstream MCP
//! server. [`ToolHost`] finds them in layered directories and its configuration, and
//! runs every call through one pipeline; a component's call runs in a fresh, limited
//! sandbox. The crate is built in floors, each importing only the ones below
//! (`docs/architecture.md`):
//!
//! - **vocabulary** (`tool/`, `error/`, `names.rs`, `schema.rs`, …): what a tool is, and
//!   the rules every tool obeys whatever its source ([`ToolDef::new`]);
//! - **mechanisms** (`runtime/`, `sandbox/`, `manifest/`, `policy/`, `storage/`,
//!   `definitions/`, …): the engines, the sandbox, what operators write per component,
//!   one tool definition for every consumer (MCP, OpenAI, Anthropic);
//! - **sources** (`sources/`): one folder per kind of tool source, each loading its tools
//!   and running a call of one ([`ToolSource`]);
//! - **registry** (`registry/`, `oci/`): discovery in layered roots, precedence, reloads;
//!   loading publishes an immutable [`Snapshot`] that calls read without locks;
//! - **host** (`host/`): [`ToolHost`], its builder, and the call pipeline below;
//! - **serve** (`serve/`): the MCP server over stdio and Streamable HTTP;
//! - **config** (`config/`): `toolhost.toml`, which builds and watches a host.
//!
//! ```text
//! ToolHost::call(name, input)                                       host/call.rs
//!   -> resolve    current snapshot, by full, bare or exported name  NotFound + close matches
//!   -> authorize  caller policy, then approval                      PermissionDenied
//!   -> validate   input against the tool's input schema             InputInvalid + JSON pointer
//!   -> run        ToolSource::run (sources/mod.rs): a component in a fresh Store with
//!                 limits and grants, a native future, an HTTP request, an upstream call
//!                                                                   InputInvalid | Failed | Trap | Timeout | OutOfFuel | MemoryLimit
//!   -> check      output size, then output against the output schema  OutputTooLarge | OutputInvalid
//!   -> commit     the call's wasi:keyvalue writes, all together (storage/)
//!   -> record     audit record, success or not; the CallReport (host/report.rs)
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
mod client;
mod content;
mod contract;
mod error;
pub mod names;
pub mod paths;
mod progress;
mod prompt;
pub mod redact;
mod resource;
mod schema;
mod secret;
pub mod text;
mod tls;
mod tool;
mod units;
// Floor 2, mechanisms:
pub mod definitions;
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

pub use crate::client::{
    Client, ClientError, ClientHook, ClientPower, ClientPowers, ClientRequest, ClientSession, ClientUse, ElicitAnswer,
    LogLevel, MAX_FORM_BYTES, MAX_REQUESTS_PER_CALL, MAX_SAMPLING_BYTES, Role, SamplingReply, SamplingRequest,
};
pub use crate::config::{ConfigError, DEFAULT_CONFIG, HostConfig};
pub use crate::content::{Content, ResourceContents};
pub use crate::contract::PREINIT_EXPORT;
pub use crate::definitions::ExportFormat;
pub use crate::error::{
    BuildError, CallError, ErrorKind, Interfaces, LoadError, LoadErrorKind, MemoryResource, NativeToolError,
    OfferError, SchemaRole, SkippedExport, ToolDefError, ToolProblem, Violation, exit,
};
pub use crate::host::{
    AnswerError, CallOptions, CallRecord, CallReport, CompletionTarget, Completions, ListingVersion, OperatorAnswer,
    ToolCall, ToolHost, ToolHostBuilder, WaitingApproval,
};
pub use crate::manifest::{ImportedPolicy, MAX_POLICY_BYTES, Manifest, Offered, ToolManifest, import_wassette_policy};
pub use crate::policy::{
    AgentQuota, Approval, ApprovalHook, ApprovalRecord, ApprovalRequest, ApproveVia, Approver, Caller, Explanation,
    Permit, Policy, PolicyRule, SessionTools, ToolRule,
};
pub use crate::progress::{MAX_PROGRESS_MESSAGE, Progress, ProgressHook};
pub use crate::prompt::{
    MAX_COMPLETIONS, MessageContent, Prompt, PromptArgument, PromptMessage, ResourceBody, Template,
};
pub use crate::registry::{
    ComponentSlot, Conflict, DEFAULT_ROOT, HttpSlot, Layer, Listing, LoadProgress, NativeSlot, PromptEntry,
    RegistryChange, ResourceEntry, ServedOffers, Snapshot, ToolEntry, UpstreamSlot, WatchError, WatchHandle,
};
pub use crate::resource::{Body, Resource, ResourceContent, ResourceTemplate, UriTemplate};
pub use crate::runtime::{CacheSetting, EPOCH_TICK, EngineSettings, MAX_INSTANCES, MIN_MAX_MEMORY, Tier, Tiering};
pub use crate::sandbox::{
    Capabilities, Capability, CapturedOutput, DeniedRequest, FileGrant, Grants, HostPattern, LogLine, Resolve,
    SystemResolver, TABLE_ELEMENTS_LIMIT,
};
pub use crate::schema::{ArgumentShape, MAX_INPUT_DEPTH, Schema, WRAPPED_INPUT, too_deep_reason};
pub use crate::sources::{
    CallContext, Contract, HttpTool, LoadedComponent, NativeTool, PlainFunction, Preinit, PreinitError, ToolSource,
    UpstreamTool, is_http_tool_file, preinitialize, upstream,
};
pub use crate::tool::{
    Ceilings, DeclaredOutput, Limits, MAX_DESCRIPTION_BYTES, MAX_SCHEMA_BYTES, MAX_SCHEMA_DEPTH, MAX_TIMEOUT,
    MAX_TOOLS, OutputForm, Overridden, Risk, SourceKind, ToolDef, ToolDescription, ToolError, ToolFilter, ToolHints,
    ToolPolicy,
};
pub use crate::units::{parse_duration, parse_size};
