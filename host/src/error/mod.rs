//! The errors a caller of toolhost can act on, and the exit code of each.
//!
//! [`CallError`] is what one tool call can end in; [`LoadError`] is why a component (or
//! its manifest) is not served; [`BuildError`] is why a host could not start at all.
//! Each carries the names and numbers a caller needs to report or retry, never just a
//! string.

mod kind;
mod load;
mod offer;
mod tool;

use std::fmt;
use std::time::Duration;

pub use kind::{ErrorKind, exit};
pub use load::{BuildError, Interfaces, LoadError, LoadErrorKind, SkippedExport};
pub use offer::OfferError;
pub use tool::{NativeToolError, SchemaRole, ToolDefError, ToolProblem};

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

    /// The calling agent is over a quota of the operator's (`[[quota]]`): nothing ran,
    /// and the same call may succeed after `retry_after`.
    #[error("{agent} is over its quota ({quota}) for `{tool}`; retry in {}s", retry_after.as_secs().max(1))]
    QuotaExceeded { tool: String, agent: String, quota: String, retry_after: Duration },

    /// The caller gave the call up (an MCP client's `notifications/cancelled`, a closed
    /// connection, a dropped future); the guest was stopped at its next epoch tick.
    #[error("the call of `{tool}` was cancelled")]
    Cancelled { tool: String },
}

impl CallError {
    /// Whole seconds (at least one) after which the same call may succeed, for an error
    /// that says so: a quota's.
    pub fn retry_after_secs(&self) -> Option<u64> {
        match self {
            CallError::QuotaExceeded { retry_after, .. } => Some(retry_after.as_secs().max(1)),
            _ => None,
        }
    }

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
            CallError::QuotaExceeded { .. } => ErrorKind::QuotaExceeded,
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

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    }
}
