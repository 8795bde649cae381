//! The errors a caller of toolhost can act on.
//!
//! [`CallError`] is what one tool call can end in; [`LoadError`] is why a component (or
//! its manifest) is not served. Both carry the names and numbers a caller needs to
//! report or retry, never just a string.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// Why a tool call did not produce a valid output.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CallError {
    #[error("no tool named `{name}`{}", suggest(.suggestions))]
    NotFound { name: String, suggestions: Vec<String> },

    #[error("caller `{caller}` may not call `{tool}`: {reason}")]
    PermissionDenied { caller: String, tool: String, reason: String },

    #[error("invalid input for `{tool}`: {}", Violations(.violations))]
    InputInvalid { tool: String, violations: Vec<Violation> },

    #[error("`{tool}` returned output that breaks its own schema: {}", Violations(.violations))]
    OutputInvalid { tool: String, violations: Vec<Violation> },

    #[error("`{tool}` failed: {message}")]
    Failed { tool: String, message: String },

    #[error("`{tool}` trapped: {message}")]
    Trap { tool: String, message: String, backtrace: String },

    #[error("`{tool}` ran out of its {limit}-unit fuel budget")]
    OutOfFuel { tool: String, limit: u64 },

    #[error("`{tool}` exceeded its {limit:?} time limit")]
    Timeout { tool: String, limit: Duration },

    #[error("`{tool}` exceeded its limit of {limit} {resource}")]
    MemoryLimit { tool: String, resource: MemoryResource, limit: u64 },

    #[error("`{tool}` produced {size} bytes of output, over its limit of {limit}")]
    OutputTooLarge { tool: String, size: u64, limit: u64 },

    /// The host could not run the call at all (for example the instance pool is
    /// exhausted); the tool itself is not at fault.
    #[error("the host could not run `{tool}`: {message}")]
    Host { tool: String, message: String },
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
}

impl ErrorKind {
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
        }
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

fn suggest(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!(" (did you mean {}?)", suggestions.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
    }
}

/// Why a component is not served. Always names the file.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{}: {kind}", .path.display())]
pub struct LoadError {
    pub path: PathBuf,
    pub kind: LoadErrorKind,
}

impl LoadError {
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

#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
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

    #[error("does not export a toolhost toolbox (expected an export named `{expected}`)")]
    NoToolbox { expected: String },

    #[error("cannot be instantiated: {0}")]
    Link(String),

    #[error("`list-tools` failed: {0}")]
    ListTools(String),

    #[error("tool `{tool}`: {problem}")]
    BadTool { tool: String, problem: String },

    #[error("{0}")]
    BadName(String),

    #[error("manifest {}, line {line}: {problem}", .manifest.display())]
    Manifest { manifest: PathBuf, line: usize, problem: String },
}
