//! What an operator granted one component. Deny by default: an empty [`Grants`] gives a
//! guest no files, no environment, no network and no configuration.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::sandbox::outbound::HostPattern;

use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

#[derive(Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Host directories visible to the guest.
    pub files: Vec<FileGrant>,
    /// Environment variables, with their values resolved from the host at load.
    pub env: Vec<(String, String)>,
    /// Values the guest reads through `host.config`. May hold secrets: never logged.
    pub config: BTreeMap<String, String>,
    /// Outgoing HTTP destinations (`wasi:http`).
    pub network: Arc<[HostPattern]>,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileGrant {
    /// Absolute, canonical host directory.
    pub host: PathBuf,
    /// Where the guest sees it, e.g. `/data`.
    pub guest: String,
    pub writable: bool,
}

impl Grants {
    /// Preopens the granted directories. wasmtime-wasi resolves every guest path inside
    /// a preopen with `openat`-style lookups (cap-std), so `..`, absolute paths and
    /// symlinks cannot leave it.
    pub(crate) fn apply_files(&self, builder: &mut WasiCtxBuilder) -> Result<(), String> {
        for grant in &self.files {
            let perms = if grant.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            builder
                .preopened_dir(&grant.host, &grant.guest, perms)
                .map_err(|e| format!("granted directory {} cannot be opened: {e}", grant.host.display()))?;
        }
        Ok(())
    }

    /// Names of granted configuration keys, without their values.
    pub fn config_keys(&self) -> impl Iterator<Item = &str> {
        self.config.keys().map(String::as_str)
    }
}

// Config values may be secrets: Debug shows the keys only.
impl std::fmt::Debug for Grants {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Grants")
            .field("files", &self.files)
            .field("env", &self.env.iter().map(|(name, _)| name).collect::<Vec<_>>())
            .field("config", &self.config.keys().collect::<Vec<_>>())
            .field("network", &self.network.iter().map(ToString::to_string).collect::<Vec<_>>())
            .finish()
    }
}
