//! What answers a served tool's calls: a component (through the toolbox contract or its
//! plain typed exports), a native Rust function or a declarative HTTP request. The call pipeline dispatches on it;
//! everything before and after dispatch is the same for every kind.

pub mod component;
pub mod http;
pub mod native;
pub mod upstream;

use std::path::Path;
use std::sync::Arc;

use crate::sources::component::LoadedComponent;
use crate::sources::component::plain::PlainFunction;
use crate::sources::http::HttpTool;
use crate::sources::native::NativeTool;
use crate::tool::SourceKind;
use crate::tool::ToolDef;

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
}

impl ToolSource {
    /// The tool's definition.
    pub fn def(&self) -> &ToolDef {
        match self {
            ToolSource::Component { component, index } => &component.tools[*index],
            ToolSource::Native(tool) => &tool.def,
            ToolSource::Http(tool) => &tool.def,
        }
    }

    /// Which kind of implementation answers.
    pub fn kind(&self) -> SourceKind {
        match self {
            ToolSource::Component { component, .. } if component.is_plain() => SourceKind::PlainComponent,
            ToolSource::Component { .. } => SourceKind::Component,
            ToolSource::Native(tool) if tool.upstream.is_some() => SourceKind::McpServer,
            ToolSource::Native(_) => SourceKind::Native,
            ToolSource::Http(_) => SourceKind::Http,
        }
    }

    /// The component, for tools that have one.
    pub fn component(&self) -> Option<&Arc<LoadedComponent>> {
        match self {
            ToolSource::Component { component, .. } => Some(component),
            ToolSource::Native(_) | ToolSource::Http(_) => None,
        }
    }

    /// The exported function behind a plain component's tool.
    pub fn plain_function(&self) -> Option<&PlainFunction> {
        match self {
            ToolSource::Component { component, index } => component.plain_function(*index),
            ToolSource::Native(_) | ToolSource::Http(_) => None,
        }
    }

    /// The component or definition file, for tools that have one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            ToolSource::Component { component, .. } => Some(&component.path),
            ToolSource::Http(tool) => Some(&tool.path),
            ToolSource::Native(_) => None,
        }
    }

    /// The content hash of the component or definition file, for tools that have one.
    pub fn hash(&self) -> Option<&str> {
        match self {
            ToolSource::Component { component, .. } => Some(&component.hash),
            ToolSource::Http(tool) => Some(&tool.hash),
            ToolSource::Native(_) => None,
        }
    }

    /// The upstream MCP server answering for the tool, by its `[[upstream]]` name.
    pub fn upstream(&self) -> Option<&str> {
        match self {
            ToolSource::Native(tool) => tool.upstream.as_deref(),
            _ => None,
        }
    }

    /// Where it comes from, for operators: the file, the upstream server's section of
    /// `toolhost.toml` (`[[upstream]] NAME`), or `native`.
    pub fn origin(&self) -> String {
        match self {
            ToolSource::Component { component, .. } => component.path.display().to_string(),
            ToolSource::Http(tool) => tool.path.display().to_string(),
            ToolSource::Native(tool) => match &tool.upstream {
                Some(server) => crate::sources::upstream::supervisor::section(server).display().to_string(),
                None => "native".to_owned(),
            },
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
            _ => false,
        }
    }
}
