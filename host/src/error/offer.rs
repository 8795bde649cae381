//! Why a prompt or a resource could not be given to a client.

use crate::error::CallError;
use crate::text::Escaped;

/// Why a prompt could not be rendered, a resource read or an argument completed. A
/// name or URI the client sent is escaped where the error is shown.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum OfferError {
    /// No prompt the caller may see answers to the name.
    #[error("no prompt named `{}`", Escaped(.name))]
    PromptNotFound {
        /// The name asked for.
        name: String,
    },
    /// No resource or template the caller may see answers to the URI.
    #[error("no resource at `{}`", Escaped(.uri))]
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The prompt refused its arguments.
    #[error("invalid arguments for the prompt `{prompt}`: {problem}")]
    InvalidArguments {
        /// The prompt's full name.
        prompt: String,
        /// What is wrong.
        problem: String,
    },
    /// The tool that reads a template's resources failed.
    #[error("reading `{}` failed: {error}", Escaped(.uri))]
    Read {
        /// The URI asked for.
        uri: String,
        /// How the tool's call ended.
        error: CallError,
    },
}
