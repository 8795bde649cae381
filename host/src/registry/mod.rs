//! The tools a host serves: discovered in layered roots, merged by precedence into an immutable snapshot.
//!
//! The tools a host serves: discovered in layered directory roots, merged by precedence
//! into an immutable [`Snapshot`].
//!
//! A root holds `<namespace>/<component>.wasm`, each with an optional `<component>.toml`
//! manifest beside it, and `<namespace>/<tool>.http.toml` HTTP tools ([`crate::sources::http`]). Roots are ordered highest first (project, org, stdlib): a tool of
//! a higher layer shadows the same full name below it, and every shadowing is recorded.
//! Two components of the *same* layer exporting one full name is a conflict: the
//! component whose file name sorts first keeps the name, and the conflict is reported.

mod change;
mod discovery;
mod listing;
mod loading;
mod merge;
mod offered;
mod scan;
mod snapshot;
mod watch;

use std::path::PathBuf;

pub use change::RegistryChange;
pub use listing::Listing;
pub use loading::LoadProgress;
pub(crate) use loading::{Loaders, Loading, ProgressFn};
pub use offered::{PromptEntry, ResourceEntry, ServedOffers};
pub(crate) use scan::{Scan, build_snapshot, finish_loading};
pub use snapshot::{ComponentSlot, Conflict, HttpSlot, NativeSlot, Snapshot, ToolEntry, UpstreamSlot};
pub(crate) use watch::{FileWatch, log_change, watch_roots};
pub use watch::{WatchError, WatchHandle};

/// One directory root and its place in the precedence order.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Layer {
    /// A short name shown to operators, e.g. `project`, `org`, `stdlib`.
    pub name: String,
    /// The directory holding `<namespace>/<component>.wasm`; none for a layer that holds
    /// only native tools.
    pub root: Option<PathBuf>,
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
        Layer { name, root: Some(root), stdlib: false }
    }

    /// A layer of directory `root` named `name`.
    pub fn directory(name: impl Into<String>, root: impl Into<PathBuf>) -> Layer {
        Layer { name: name.into(), root: Some(root.into()), stdlib: false }
    }

    /// The stdlib layer: below all others, its tools also callable by bare name.
    pub fn stdlib(root: PathBuf) -> Layer {
        Layer { name: "stdlib".to_owned(), root: Some(root), stdlib: true }
    }

    /// A layer without a directory, for native tools
    /// ([`ToolHost::add_tool`](crate::ToolHost::add_tool)).
    pub fn native(name: impl Into<String>) -> Layer {
        Layer { name: name.into(), root: None, stdlib: false }
    }
}
