//! The tools a host serves: discovered in layered directory roots, merged by precedence
//! into an immutable [`Snapshot`].
//!
//! A root holds `<namespace>/<component>.wasm`, each with an optional `<component>.toml`
//! manifest beside it. Roots are ordered highest first (project, org, stdlib): a tool of
//! a higher layer shadows the same full name below it, and every shadowing is recorded.
//! Two components of the *same* layer exporting one full name is a conflict: the
//! component whose file name sorts first keeps the name, and the conflict is reported.

pub mod cache;
pub mod component;
mod discovery;
pub(crate) mod load;
mod snapshot;
pub(crate) mod watch;

use std::path::PathBuf;

pub use discovery::{Discovered, FileStamp, Fingerprint, discover};
pub use snapshot::{ComponentSlot, Conflict, Overridden, RegistryChange, Snapshot, ToolEntry};

/// One directory root and its place in the precedence order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layer {
    /// A short name shown to operators, e.g. `project`, `org`, `stdlib`.
    pub name: String,
    pub root: PathBuf,
    /// Tools of a stdlib layer are also callable by their bare name.
    pub stdlib: bool,
}
