//! The errors a caller of toolhost can act on, and the exit code of each.
//!
//! [`CallError`] is what one tool call can end in; [`LoadError`] is why a component (or
//! its manifest) is not served; [`BuildError`] is why a host could not start at all.
//! Each carries the names and numbers a caller needs to report or retry, never just a
//! string.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use crate::tool::ToolDefError;

/// Why a tool call did not produce a valid output. `tool` is always the full name of
/// the tool (or, for `NotFound`, the name asked for).
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
#[allow(missing_docs)] // The fields are named for what they hold; the variants say when.
pub enum CallError {
    /// No served tool answers to the name; `suggestions` are close served names.
    #[error("no tool named `{name}`{}", suggest(.suggestions))]
    NotFound { name: String, suggestions: Vec<String> },

    /// The caller's policy, or the approval of a tool that needs it, refused the call.
    #[error("caller `{caller}` may not call `{tool}`: {reason}")]
    PermissionDenied { caller: String, tool: String, reason: String },

    /// The input breaks the tool's schema (each violation points at the offending
    /// value), or the tool itself refused input that fits it.
    #[error("invalid input for `{tool}`: {}", Violations(.violations))]
    InputInvalid { tool: String, violations: Vec<Violation> },

    /// The tool answered with output that is not JSON or breaks its own schema.
    #[error("`{tool}` returned output that breaks its own schema: {}", Violations(.violations))]
    OutputInvalid { tool: String, violations: Vec<Violation> },

    /// The tool tried and reported a failure.
    #[error("`{tool}` failed: {message}")]
    Failed { tool: String, message: String },

    /// The guest trapped (a panic, an abort, a stack overflow), with its wasm backtrace.
    #[error("`{tool}` trapped: {message}")]
    Trap { tool: String, message: String, backtrace: String },

    /// The guest burned its whole fuel budget.
    #[error("`{tool}` ran out of its {limit}-unit fuel budget")]
    OutOfFuel { tool: String, limit: u64 },

    /// The call ran past its wall-clock limit.
    #[error("`{tool}` exceeded its {limit:?} time limit")]
    Timeout { tool: String, limit: Duration },

    /// The guest asked for more memory (or table elements) than it may have.
    #[error("`{tool}` exceeded its limit of {limit} {resource}")]
    MemoryLimit { tool: String, resource: MemoryResource, limit: u64 },

    /// The output is larger than the tool's `max_output`.
    #[error("`{tool}` produced {size} bytes of output, over its limit of {limit}")]
    OutputTooLarge { tool: String, size: u64, limit: u64 },

    /// The host could not run the call at all (for example the instance pool is
    /// exhausted); the tool itself is not at fault.
    #[error("the host could not run `{tool}`: {message}")]
    Host { tool: String, message: String },

    /// The caller gave the call up (an MCP client's `notifications/cancelled`, a closed
    /// connection, a dropped future); the guest was stopped at its next epoch tick.
    #[error("the call of `{tool}` was cancelled")]
    Cancelled { tool: String },
}

impl CallError {
    /// A short, stable name for the kind of error, used in audit records, CLI exit codes
    /// and protocol responses.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CallError::NotFound { .. } => ErrorKind::NotFound,
            CallError::PermissionDenied { .. } => ErrorKind::PermissionDenied,
            CallError::InputInvalid { .. } => ErrorKind::InputInvalid,
            CallError::OutputInvalid { .. } => ErrorKind::OutputInvalid,
            CallError::Failed { .. } => ErrorKind::Failed,
            CallError::Trap { .. } => ErrorKind::Trap,
            CallError::OutOfFuel { .. } => ErrorKind::OutOfFuel,
            CallError::Timeout { .. } => ErrorKind::Timeout,
            CallError::MemoryLimit { .. } => ErrorKind::MemoryLimit,
            CallError::OutputTooLarge { .. } => ErrorKind::OutputTooLarge,
            CallError::Host { .. } => ErrorKind::Host,
            CallError::Cancelled { .. } => ErrorKind::Cancelled,
        }
    }
}

/// What a guest ran out of when it hit [`CallError::MemoryLimit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryResource {
    /// Linear memory, in bytes (the manifest's `memory`).
    LinearMemory,
    /// Elements of a table (function references), bounded per table by the engine.
    TableElements,
}

impl fmt::Display for MemoryResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            MemoryResource::LinearMemory => "bytes of linear memory",
            MemoryResource::TableElements => "table elements",
        })
    }
}

/// The kinds of [`CallError`], without their details.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)] // Each is the CallError variant of the same name.
pub enum ErrorKind {
    NotFound,
    PermissionDenied,
    InputInvalid,
    OutputInvalid,
    Failed,
    Trap,
    OutOfFuel,
    Timeout,
    MemoryLimit,
    OutputTooLarge,
    Host,
    Cancelled,
}

impl ErrorKind {
    /// Every kind, in the order of their exit codes.
    pub const ALL: [ErrorKind; 12] = [
        ErrorKind::NotFound,
        ErrorKind::PermissionDenied,
        ErrorKind::InputInvalid,
        ErrorKind::OutputInvalid,
        ErrorKind::Failed,
        ErrorKind::Trap,
        ErrorKind::OutOfFuel,
        ErrorKind::Timeout,
        ErrorKind::MemoryLimit,
        ErrorKind::OutputTooLarge,
        ErrorKind::Host,
        ErrorKind::Cancelled,
    ];

    /// The stable name of the kind, as in audit records, `error[KIND]` lines and MCP
    /// error texts.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not_found",
            ErrorKind::PermissionDenied => "permission_denied",
            ErrorKind::InputInvalid => "input_invalid",
            ErrorKind::OutputInvalid => "output_invalid",
            ErrorKind::Failed => "failed",
            ErrorKind::Trap => "trap",
            ErrorKind::OutOfFuel => "out_of_fuel",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory_limit",
            ErrorKind::OutputTooLarge => "output_too_large",
            ErrorKind::Host => "host",
            ErrorKind::Cancelled => "cancelled",
        }
    }
}

/// The process exit codes of the `toolhost` command, one table for the code and the
/// help text: `0` success, [`exit::HOST`], [`exit::USAGE`], one code per [`ErrorKind`]
/// from 3, and [`exit::LOAD`].
pub mod exit {
    use super::ErrorKind;

    /// The host could not do its job: configuration, I/O, a build failure.
    pub const HOST: u8 = 1;
    /// The command line was wrong (the argument parser's own code).
    pub const USAGE: u8 = 2;
    /// A component failed to load: `inspect`, or a call of a tool missing because its
    /// namespace's component did not load.
    pub const LOAD: u8 = 14;
    /// The call was cancelled (interrupted from the terminal). After [`LOAD`], which
    /// was numbered before cancellation existed.
    pub const CANCELLED: u8 = 15;

    /// The exit code of a failed call.
    pub fn of(kind: ErrorKind) -> u8 {
        if kind == ErrorKind::Cancelled {
            return CANCELLED;
        }
        let position = ErrorKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
        3 + position as u8
    }

    /// Every exit code with what it means, in order.
    pub fn table() -> Vec<(u8, &'static str)> {
        let mut table = vec![(0, "ok"), (HOST, "host error (configuration, I/O)"), (USAGE, "usage error")];
        table.extend(ErrorKind::ALL.iter().map(|kind| (of(*kind), kind.meaning())));
        table.push((LOAD, "component failed to load"));
        table.sort_by_key(|(code, _)| *code);
        table
    }
}

impl ErrorKind {
    /// What the kind means, in a few words, for help texts.
    pub fn meaning(self) -> &'static str {
        match self {
            ErrorKind::NotFound => "not found",
            ErrorKind::PermissionDenied => "permission denied",
            ErrorKind::InputInvalid => "invalid input",
            ErrorKind::OutputInvalid => "invalid output",
            ErrorKind::Failed => "tool failed",
            ErrorKind::Trap => "trap",
            ErrorKind::OutOfFuel => "out of fuel",
            ErrorKind::Timeout => "timeout",
            ErrorKind::MemoryLimit => "memory limit",
            ErrorKind::OutputTooLarge => "output too large",
            ErrorKind::Host => "the host could not run the call",
            ErrorKind::Cancelled => "cancelled",
        }
    }

    /// The `toolhost` exit code of a call that failed with this kind.
    pub fn exit_code(self) -> u8 {
        exit::of(self)
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One way a JSON value breaks a schema.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) to the offending value; empty for the whole document.
    pub pointer: String,
    /// What is wrong with it.
    pub reason: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() { "(root)" } else { &self.pointer };
        write!(f, "at {pointer}: {}", self.reason)
    }
}

struct Violations<'a>(&'a [Violation]);

impl fmt::Display for Violations<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, violation) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{violation}")?;
        }
        Ok(())
    }
}

fn skipped_exports(skipped: &[SkippedExport]) -> String {
    skipped.iter().map(|s| format!("; `{}`: {}", s.export, s.reason)).collect()
}

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    }
}

/// Why a component is not served. Always names the file: the component, or its
/// manifest when that is at fault (`PATH, line N: problem`).
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{}{}{kind}", .path.display(), if matches!(.kind, LoadErrorKind::Manifest { .. }) { ", " } else { ": " })]
pub struct LoadError {
    /// The component file (or directory) at fault.
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: LoadErrorKind,
}

impl LoadError {
    /// A load error of the file at `path`.
    pub fn new(path: impl Into<PathBuf>, kind: LoadErrorKind) -> Self {
        LoadError { path: path.into(), kind }
    }
}

/// Serialized as `{"file": ..., "error": "..."}`, the form `list` and change events use.
impl serde::Serialize for LoadError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("file", &self.path)?;
        map.serialize_entry("error", &self.kind.to_string())?;
        map.end()
    }
}

/// What is wrong with a component file or its manifest.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[allow(missing_docs)] // Each variant's message says what it means.
pub enum LoadErrorKind {
    #[error("cannot read: {0}")]
    Io(String),

    #[error("not a WebAssembly component: {0}")]
    NotAComponent(String),

    #[error("invalid component: {0}")]
    Invalid(String),

    #[error(
        "built against contract {wanted}, but this host supports {}",
        .supported.join(", ")
    )]
    IncompatibleContract { wanted: String, supported: Vec<String> },

    #[error(
        "offers no tools: it exports neither the `toolhost:tool/toolbox` contract nor a function that can be a tool{}",
        skipped_exports(.skipped)
    )]
    NoTools { skipped: Vec<SkippedExport> },

    #[error("cannot be instantiated: {0}")]
    Link(String),

    #[error("`list-tools` failed: {0}")]
    ListTools(String),

    /// A tool breaks a rule every tool obeys (`crate::ToolDef::new`).
    #[error("{0}")]
    Tool(ToolDefError),

    /// The manifest has settings for a tool the component does not offer.
    #[error("tool `{tool}`: {problem}")]
    BadTool { tool: String, problem: String },

    #[error("{0}")]
    BadName(String),

    /// The manifest is wrong; its path is the error's path.
    #[error("line {line}: {problem}")]
    Manifest { line: usize, problem: String },

    /// The bytes are not the ones pinned: the file changed, or the pin is stale.
    #[error("its bytes are {actual}, but {} pins {pinned}", .pinned_by.display())]
    PinMismatch {
        /// The digest the pin asks for.
        pinned: String,
        /// The digest of the bytes read.
        actual: String,
        /// The file holding the pin.
        pinned_by: std::path::PathBuf,
    },

    /// Signatures are required and this component has none that a configured key
    /// made over its bytes.
    #[error("signature: {0}")]
    Signature(String),

    /// An upstream MCP server cannot be reached, died, or offers tools that cannot be
    /// served; the rest of its namespace (if any) is served.
    #[error("upstream MCP server `{server}`: {problem}")]
    Upstream { server: String, problem: String },
}

/// Why a [`ToolHost`](crate::ToolHost) could not be built. Components that fail to load
/// are not build errors: they are [`LoadError`]s and the host serves the rest.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The engine settings are out of range (for example `max_instances`).
    #[error("invalid engine settings: {0}")]
    Settings(String),
    /// wasmtime refused the engine configuration, or linking the host's imports.
    #[error("cannot set up the wasm engine: {0}")]
    Engine(String),
    /// The thread that interrupts guests past their deadline could not start.
    #[error("cannot start the epoch thread: {0}")]
    EpochThread(#[source] std::io::Error),
    /// A native tool given to the builder cannot be served.
    #[error("{0}")]
    NativeTool(#[from] NativeToolError),
    /// The audit log file cannot be opened for appending.
    #[error("cannot open the audit log {}: {source}", .path.display())]
    AuditLog {
        /// The configured audit log file.
        path: PathBuf,
        /// Why it cannot be opened.
        #[source]
        source: std::io::Error,
    },
}

/// An exported function that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedExport {
    /// `function`, or `interface#function`.
    pub export: String,
    /// Why it cannot be a tool.
    pub reason: String,
}

/// Why a native tool cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NativeToolError {
    /// Its definition breaks a rule every tool obeys.
    #[error("native {0}")]
    Definition(#[from] ToolDefError),
    /// Its own limits are above the host's ceilings.
    #[error("native tool `{tool}`: {problem}")]
    Limit {
        /// Its full name.
        tool: String,
        /// Which limit, and the ceiling.
        problem: String,
    },
    /// No layer of the host has this name.
    #[error("no layer named `{0}` (native tools go into a layer the host was built with)")]
    NoSuchLayer(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_exit_code_and_cancelled_follows_load_errors() {
        let codes: Vec<u8> = ErrorKind::ALL.iter().map(|kind| kind.exit_code()).collect();
        assert_eq!(codes, (3..=13).chain([15]).collect::<Vec<u8>>());
        assert_eq!(ErrorKind::InputInvalid.exit_code(), 5);
        let table = exit::table();
        assert_eq!(table.first(), Some(&(0, "ok")));
        assert_eq!(table.last(), Some(&(exit::CANCELLED, "cancelled")));
        let mut sorted: Vec<u8> = table.iter().map(|(code, _)| *code).collect();
        sorted.dedup();
        assert_eq!(sorted, (0..=15).collect::<Vec<u8>>(), "one row per code, in order");
    }
}
