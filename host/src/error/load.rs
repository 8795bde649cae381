//! Why a file or a source is not served, and why a host could not start at all.

use std::path::PathBuf;

use super::{NativeToolError, ToolDefError};

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

/// Serialized as `{"file": ..., "error": "..."}`, the form `list` and change events use,
/// with what the component imports and exports when an import is what failed.
impl serde::Serialize for LoadError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("file", &self.path)?;
        map.serialize_entry("error", &self.kind.to_string())?;
        if let LoadErrorKind::Import { interfaces, .. } = &self.kind {
            map.serialize_entry("imports", &interfaces.imports)?;
            map.serialize_entry("exports", &interfaces.exports)?;
        }
        map.end()
    }
}

/// What a component imports and exports, by name: shown even when it cannot be served.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Interfaces {
    /// The names it imports (`wasi:config/store@0.2.0-draft`, …).
    pub imports: Vec<String>,
    /// The names it exports (`toolhost:tool/toolbox@0.1.1`, a plain function, …).
    pub exports: Vec<String>,
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

    /// An import toolhost does not provide, or provides in another shape; `problem`
    /// says which, and what toolhost provides instead.
    #[error("cannot be instantiated: it imports `{import}`, {problem}")]
    Import { import: String, problem: String, interfaces: Interfaces },

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

/// An exported function that is not served, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SkippedExport {
    /// `function`, or `interface#function`.
    pub export: String,
    /// Why it cannot be a tool.
    pub reason: String,
}

fn skipped_exports(skipped: &[SkippedExport]) -> String {
    skipped.iter().map(|s| format!("; `{}`: {}", s.export, s.reason)).collect()
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
