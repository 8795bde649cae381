//! What answers a tool's calls, one folder per kind of source, and the one dispatch that runs a call of any of them.
//!
//! A component (through the toolbox contract or its plain typed exports), a native Rust
//! function, a declarative HTTP request or an upstream MCP server: each kind runs its
//! own calls and reports what it produced and consumed in the same [`Ran`]. Everything
//! before and after the dispatch (policy, approval, validation, the output checks, the
//! audit record) is the call pipeline's, the same for every kind.

mod component;
mod http;
mod native;
pub mod upstream;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

pub(crate) use component::{Components, check_preamble, content_hash, return_freed_memory};
pub use component::{Contract, LoadedComponent, PlainFunction, Preinit, PreinitError, preinitialize};
pub use http::{HttpTool, is_http_tool_file};
pub use native::{CallContext, NativeTool};
pub use upstream::{
    ChildSandbox, DEFAULT_LAYER as DEFAULT_UPSTREAM_LAYER, Secret, UpstreamChanges, UpstreamServer, UpstreamStatus,
    UpstreamTool, UpstreamTransport,
};
pub(crate) use upstream::{Publication, Supervisors, section};

use crate::client::{ClientPowers, ClientSession};
use crate::error::CallError;
use crate::policy::Caller;
use crate::progress::ProgressHook;
use crate::sandbox::{CapturedOutput, DeniedRequest, Resolve};
use crate::storage::Storage;
use crate::tool::{SourceKind, ToolDef};

/// The implementation behind a tool.
#[derive(Debug, Clone)]
pub enum ToolSource {
    /// Tool `index` of a component file.
    Component {
        /// The component.
        component: Arc<LoadedComponent>,
        /// Index of the tool in `component.tools`.
        index: usize,
    },
    /// A native tool the embedder registered.
    Native(Arc<NativeTool>),
    /// A declarative HTTP tool (`<name>.http.toml`).
    Http(Arc<HttpTool>),
    /// A tool of an upstream MCP server.
    Upstream(Arc<UpstreamTool>),
}

/// What a source produced, before the output checks.
pub(crate) enum Produced {
    /// JSON text, as a toolbox component returns it.
    Text(String),
    /// A JSON value, as the other sources return it.
    Value(Value),
}

/// One run of a tool by its source: what it produced, or why not, and what it consumed.
pub(crate) struct Ran {
    pub produced: Result<Produced, CallError>,
    /// Fuel the guest burned (0 outside a sandbox).
    pub fuel_consumed: u64,
    /// What the guest printed and logged.
    pub captured: CapturedOutput,
    /// Outgoing HTTP requests the allow-list refused.
    pub denied_requests: Vec<DeniedRequest>,
    /// Storage writes to make visible once the output passed its checks.
    pub writes: Option<component::Writes>,
}

impl Ran {
    /// A run that ended before the tool ran, with `error`.
    pub fn refused(error: CallError) -> Ran {
        Ran::produced(Err(error))
    }

    /// A run of a source outside any sandbox: what it produced.
    pub fn produced(produced: Result<Produced, CallError>) -> Ran {
        Ran {
            produced,
            fuel_consumed: 0,
            captured: CapturedOutput::default(),
            denied_requests: Vec::new(),
            writes: None,
        }
    }
}

/// What the host lends a call of any source.
pub(crate) struct RunContext<'a> {
    pub components: &'a Components,
    /// Resolves the names outgoing requests go to.
    pub resolver: &'a Arc<dyn Resolve>,
    /// The buckets of `wasi:keyvalue`.
    pub storage: &'a Arc<Storage>,
    /// Who is calling: the buckets it sees, and what a tool granted to know it learns.
    pub caller: &'a Caller,
    /// Where the tool's progress reports go.
    pub progress: Option<&'a ProgressHook>,
    /// What the tool may ask of the calling client, and where its content blocks go.
    pub client: &'a ClientSession,
    /// Bytes of the input handed to the tool, set before the tool runs: a call dropped
    /// while it runs is still recorded with them.
    pub input_bytes: &'a AtomicU64,
}

/// Bytes of `input` as JSON text.
fn json_size(input: &Value) -> u64 {
    serde_json::to_vec(input).map_or(0, |bytes| bytes.len() as u64)
}

impl ToolSource {
    /// Runs a call of the tool `full_name` with `input` (valid for its input schema).
    pub(crate) async fn run(&self, full_name: &str, input: Value, context: &RunContext<'_>) -> Ran {
        // A component measures the input as it writes it for the guest.
        if !matches!(self, ToolSource::Component { .. }) {
            context.input_bytes.store(json_size(&input), Ordering::Relaxed);
        }
        match self {
            ToolSource::Component { component, index } => {
                context.components.run(component, *index, (full_name, &input), context).await
            }
            // Boxed: an HTTP request's or an upstream server's future is several times
            // a component call's, and every call's future would carry the largest.
            ToolSource::Native(tool) => Box::pin(tool.run(full_name, input, context)).await,
            ToolSource::Http(tool) => Box::pin(tool.run(full_name, &input, context)).await,
            ToolSource::Upstream(tool) => Box::pin(tool.run(full_name, input, context.progress)).await,
        }
    }

    /// The tool's definition.
    pub fn def(&self) -> &ToolDef {
        match self {
            ToolSource::Component { component, index } => &component.tools[*index],
            ToolSource::Native(tool) => &tool.def,
            ToolSource::Http(tool) => &tool.def,
            ToolSource::Upstream(tool) => &tool.def,
        }
    }

    /// The client's powers its code may use, before the caller's policy narrows them:
    /// what a component's manifest grants; every power for a native tool given the call
    /// context (it runs with the host's trust), none for other native tools; none for
    /// HTTP tools and upstream servers.
    pub fn client_powers(&self) -> ClientPowers {
        match self {
            ToolSource::Component { component, .. } => component.grants.client,
            ToolSource::Native(tool) => tool.client_powers(),
            ToolSource::Http(_) | ToolSource::Upstream(_) => ClientPowers::NONE,
        }
    }

    /// Which kind of implementation answers.
    pub fn kind(&self) -> SourceKind {
        match self {
            ToolSource::Component { component, .. } if component.is_plain() => SourceKind::PlainComponent,
            ToolSource::Component { .. } => SourceKind::Component,
            ToolSource::Native(_) => SourceKind::Native,
            ToolSource::Http(_) => SourceKind::Http,
            ToolSource::Upstream(_) => SourceKind::McpServer,
        }
    }

    /// The component, for tools that have one.
    pub fn component(&self) -> Option<&Arc<LoadedComponent>> {
        match self {
            ToolSource::Component { component, .. } => Some(component),
            _ => None,
        }
    }

    /// The exported function behind a plain component's tool.
    pub fn plain_function(&self) -> Option<&PlainFunction> {
        match self {
            ToolSource::Component { component, index } => component.plain_function(*index),
            _ => None,
        }
    }

    /// The component or definition file, for tools that have one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ToolSource::Component { component, .. } => Some(&component.path),
            ToolSource::Http(tool) => Some(&tool.path),
            ToolSource::Native(_) | ToolSource::Upstream(_) => None,
        }
    }

    /// The content hash of the component or definition file, for tools that have one.
    pub fn hash(&self) -> Option<&str> {
        match self {
            ToolSource::Component { component, .. } => Some(&component.hash),
            ToolSource::Http(tool) => Some(&tool.hash),
            ToolSource::Native(_) | ToolSource::Upstream(_) => None,
        }
    }

    /// The upstream MCP server answering for the tool, by its `[[upstream]]` name.
    pub fn upstream(&self) -> Option<&str> {
        match self {
            ToolSource::Upstream(tool) => Some(&tool.server),
            _ => None,
        }
    }

    /// Where it comes from, for operators: the file, the upstream server's section of
    /// `toolhost.toml` (`[[upstream]] NAME`), or `native`.
    pub fn origin(&self) -> String {
        match self {
            ToolSource::Component { component, .. } => component.path.display().to_string(),
            ToolSource::Http(tool) => tool.path.display().to_string(),
            ToolSource::Native(_) => "native".to_owned(),
            ToolSource::Upstream(tool) => upstream::section(&tool.server).display().to_string(),
        }
    }

    /// Whether both are the same implementation of the same tool (a reload that kept it).
    pub fn same_as(&self, other: &ToolSource) -> bool {
        match (self, other) {
            (ToolSource::Component { component: a, index: i }, ToolSource::Component { component: b, index: j }) => {
                Arc::ptr_eq(a, b) && i == j
            }
            (ToolSource::Native(a), ToolSource::Native(b)) => Arc::ptr_eq(a, b),
            (ToolSource::Http(a), ToolSource::Http(b)) => Arc::ptr_eq(a, b),
            (ToolSource::Upstream(a), ToolSource::Upstream(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}
