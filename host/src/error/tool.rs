//! Why a tool is refused, whatever its source, and why a native tool cannot be registered.

use crate::text::bounded;

/// How much of a refused tool's name an error quotes.
const NAME_SHOWN: usize = 64;

/// Which of a tool's schemas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaRole {
    /// The input schema.
    Input,
    /// The output schema.
    Output,
}

impl std::fmt::Display for SchemaRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SchemaRole::Input => "input",
            SchemaRole::Output => "output",
        })
    }
}

/// Why a source's tools are refused. The same rule broken reads the same whatever the
/// source; each source says where (the file, the server, the native tool).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolDefError {
    /// More tools than one source may offer.
    #[error("it offers {count} tools; at most {limit} are served from one source")]
    TooMany {
        /// How many it offers.
        count: usize,
        /// How many one source may offer.
        limit: usize,
    },
    /// One tool breaks a rule.
    #[error("tool `{tool}`: {problem}")]
    Tool {
        /// The tool's name as declared (at most 64 bytes of it, the rest counted).
        tool: String,
        /// The rule it breaks.
        problem: ToolProblem,
    },
}

/// The rule a tool's definition breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolProblem {
    /// Its name (or its namespace's) breaks the name rule.
    #[error("{0}")]
    Name(String),
    /// Its source offers two tools of this name.
    #[error("it is offered twice")]
    Duplicate,
    /// Its description is too long.
    #[error("its description is {size} bytes; at most {limit} are accepted")]
    Description {
        /// Bytes of the description.
        size: usize,
        /// The most a description may have.
        limit: usize,
    },
    /// A schema's text is too long.
    #[error("its {role} schema is {size} bytes; at most {limit} are accepted")]
    SchemaSize {
        /// Which schema.
        role: SchemaRole,
        /// Bytes of its JSON text.
        size: usize,
        /// The most a schema's text may have.
        limit: usize,
    },
    /// A schema nests too deep.
    #[error("its {role} schema nests deeper than {limit} levels of arrays and objects")]
    SchemaDepth {
        /// Which schema.
        role: SchemaRole,
        /// The most levels a schema may nest.
        limit: usize,
    },
    /// Its definition could not be read (a remote server's).
    #[error("its definition cannot be read: {0}")]
    Unreadable(String),
    /// A schema is not valid JSON Schema.
    #[error("its {role} schema: {reason}")]
    Schema {
        /// Which schema.
        role: SchemaRole,
        /// What is wrong with it.
        reason: String,
    },
}

impl ToolDefError {
    /// `problem` of the tool named `tool` (as declared).
    pub fn of(tool: &str, problem: ToolProblem) -> ToolDefError {
        ToolDefError::Tool { tool: bounded(tool.to_owned(), NAME_SHOWN), problem }
    }

    /// The rule broken, when one tool broke it.
    pub fn problem(&self) -> Option<&ToolProblem> {
        match self {
            ToolDefError::Tool { problem, .. } => Some(problem),
            ToolDefError::TooMany { .. } => None,
        }
    }
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
    /// The native tools of one namespace in one layer, one source, break a rule of a
    /// source's set of tools (too many, a name twice).
    #[error("native tools of the namespace `{namespace}` in the layer `{layer}`: {refused}")]
    Set {
        /// The namespace.
        namespace: String,
        /// The layer's name.
        layer: String,
        /// The rule broken.
        refused: ToolDefError,
    },
    /// No layer of the host has this name.
    #[error("no layer named `{0}` (native tools go into a layer the host was built with)")]
    NoSuchLayer(String),
}
