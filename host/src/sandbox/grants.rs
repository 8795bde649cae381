//! What an operator granted one component, and the WASI context that holds exactly that.
//! Deny by default: an empty [`Grants`] gives a guest no files, no environment, no
//! network and no configuration, and no grant ever gives raw sockets.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use crate::client::ClientPowers;
use crate::sandbox::outbound::HostPattern;
use crate::sandbox::output::OutputSink;
use crate::storage::StorageGrant;

/// Everything one component may reach.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Grants {
    /// Host directories visible to the guest.
    pub files: Vec<FileGrant>,
    /// Environment variables, with their values resolved from the host at load.
    pub env: Vec<(String, String)>,
    /// Values the guest reads through `host.config` and `wasi:config/store`. May hold
    /// secrets: never logged.
    pub config: BTreeMap<String, String>,
    /// Outgoing HTTP destinations (`wasi:http`).
    pub network: Arc<[HostPattern]>,
    /// Buckets of `wasi:keyvalue`, and the component's quota.
    pub storage: StorageGrant,
    /// Whether `host.caller` tells the guest who is calling (agent and session).
    pub caller: bool,
    /// The calling client's powers the guest may use (`host.elicit`, `host.sample`, its
    /// `host.log` lines reaching the client).
    pub client: ClientPowers,
}

/// A host directory a guest sees. Serializes as `{"guest", "host", "mode": "ro"|"rw"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileGrant {
    /// Absolute, canonical host directory.
    pub host: PathBuf,
    /// Where the guest sees it, e.g. `/data`.
    pub guest: String,
    /// Whether the guest may create, write and delete in it.
    pub writable: bool,
}

impl serde::Serialize for FileGrant {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("guest", &self.guest)?;
        map.serialize_entry("host", &self.host)?;
        map.serialize_entry("mode", if self.writable { "rw" } else { "ro" })?;
        map.end()
    }
}

impl Grants {
    /// The WASI context of one call: captured stdout and stderr, the granted
    /// environment and directories, and nothing else.
    ///
    /// wasmtime-wasi resolves every guest path inside a preopen with `openat`-style
    /// lookups (cap-std), so `..`, absolute paths and symlinks cannot leave it. Raw
    /// sockets and name lookup are switched off here, explicitly, rather than left to a
    /// library default: outgoing traffic goes through `wasi:http` and its allow-list only.
    ///
    /// The host allocates the random bytes a guest asks for before handing them over:
    /// no more than `memory_limit`, which the guest could not receive anyway.
    pub(crate) fn wasi_context(&self, output: &OutputSink, memory_limit: u64) -> Result<WasiCtx, String> {
        let mut builder = WasiCtxBuilder::new();
        builder.stdout(output.stdout()).stderr(output.stderr()).max_random_size(memory_limit);
        builder
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }));
        for (name, value) in &self.env {
            builder.env(name, value);
        }
        for grant in &self.files {
            let perms = if grant.writable { FsPerms::ReadWrite } else { FsPerms::ReadOnly };
            builder
                .preopened_dir(&grant.host, &grant.guest, perms)
                .map_err(|e| format!("granted directory {} cannot be opened: {e}", grant.host.display()))?;
        }
        Ok(builder.build())
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
            .field("storage", &self.storage)
            .field("caller", &self.caller)
            .field("client", &self.client)
            .finish()
    }
}

/// For each capability: whether a component imports the interfaces that ask for it, and
/// what its manifest grants. Never holds a granted value, only names.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Capabilities {
    /// `wasi:filesystem`: the granted directories.
    pub filesystem: Capability<Vec<FileGrant>>,
    /// `wasi:http`: the granted destinations.
    pub http: Capability<Vec<String>>,
    /// `wasi:cli/environment`: the granted variable names.
    pub environment: Capability<Vec<String>>,
    /// `toolhost:tool/host.config` and `wasi:config/store`: the granted keys.
    pub config: Capability<Vec<String>>,
    /// `wasi:keyvalue`: the granted buckets (`shared:` before a shared one, ` (all
    /// agents)` after one whose contents every agent sees alike).
    pub storage: Capability<Vec<String>>,
    /// `toolhost:tool/host.caller`: whether the guest may learn who is calling.
    pub caller: Capability<bool>,
    /// `toolhost:tool/host.elicit`, `.sample`, `.log`: the client's powers granted.
    pub client: Capability<ClientPowers>,
    /// `wasi:sockets`: never granted.
    pub sockets: Capability<&'static str>,
}

/// One capability of [`Capabilities`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Capability<G> {
    /// Whether the component imports an interface of this capability.
    pub imported: bool,
    /// What the operator granted.
    pub granted: G,
}

impl Capabilities {
    /// Which of `imports` (interface names) ask for which capability, beside `grants`.
    pub fn of(imports: &[String], grants: &Grants) -> Capabilities {
        let imported = |prefix: &str| imports.iter().any(|import| import.starts_with(prefix));
        Capabilities {
            filesystem: Capability { imported: imported("wasi:filesystem/"), granted: grants.files.clone() },
            http: Capability {
                imported: imported("wasi:http/"),
                granted: grants.network.iter().map(ToString::to_string).collect(),
            },
            environment: Capability {
                imported: imported("wasi:cli/environment"),
                granted: grants.env.iter().map(|(name, _)| name.clone()).collect(),
            },
            config: Capability {
                imported: imported("toolhost:tool/host") || imported("wasi:config/store"),
                granted: grants.config_keys().map(str::to_owned).collect(),
            },
            storage: Capability { imported: imported("wasi:keyvalue/"), granted: granted_buckets(&grants.storage) },
            caller: Capability { imported: imported("toolhost:tool/host"), granted: grants.caller },
            client: Capability { imported: imported("toolhost:tool/host"), granted: grants.client },
            sockets: Capability {
                imported: imported("wasi:sockets/"),
                granted: "never: raw sockets are not granted in this version",
            },
        }
    }
}

/// The buckets a storage grant names, as [`Capabilities::storage`] shows them.
fn granted_buckets(grant: &StorageGrant) -> Vec<String> {
    let private = grant.buckets.iter().map(|name| (name.clone(), name));
    let shared = grant.shared.iter().map(|name| (format!("shared:{name}"), name));
    private
        .chain(shared)
        .map(|(shown, name)| match grant.all_agents.contains(name) {
            true => format!("{shown} (all agents)"),
            false => shown,
        })
        .collect()
}
