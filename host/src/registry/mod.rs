//! The tools a host serves: discovered in layered directory roots, merged by precedence
//! into an immutable [`Snapshot`].
//!
//! A root holds `<namespace>/<component>.wasm`, each with an optional `<component>.toml`
//! manifest beside it. Roots are ordered highest first (project, org, stdlib): a tool of
//! a higher layer shadows the same full name below it, and every shadowing is recorded.
//! Two components of the *same* layer exporting one full name is a conflict: the
//! component whose file name sorts first keeps the name, and the conflict is reported.

pub mod cache;
mod change;
pub mod component;
mod discovery;
mod listing;
pub(crate) mod load;
mod merge;
mod snapshot;
pub(crate) mod watch;

use std::path::PathBuf;

pub use change::RegistryChange;
pub(crate) use discovery::{Discovered, Fingerprint, discover};
pub use listing::{Listing, ToolDescription};
pub use snapshot::{ComponentSlot, Conflict, Overridden, Snapshot, ToolEntry};

/// One directory root and its place in the precedence order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layer {
    /// A short name shown to operators, e.g. `project`, `org`, `stdlib`.
    pub name: String,
    /// The directory holding `<namespace>/<component>.wasm`.
    pub root: PathBuf,
    /// Tools of a stdlib layer are also callable by their bare name.
    pub stdlib: bool,
}

/// The root served when nothing names one: `./tools`.
pub const DEFAULT_ROOT: &str = "tools";

impl Layer {
    /// The layer of the `position`-th root given without a name (the builder's
    /// [`root`](crate::ToolHostBuilder::root), `--root`): `project` first, then `layer1`,
    /// `layer2`, ….
    pub fn for_root(position: usize, root: PathBuf) -> Layer {
        let name = if position == 0 { "project".to_owned() } else { format!("layer{position}") };
        Layer { name, root, stdlib: false }
    }

    /// The stdlib layer: below all others, its tools also callable by bare name.
    pub fn stdlib(root: PathBuf) -> Layer {
        Layer { name: "stdlib".to_owned(), root, stdlib: true }
    }
}
