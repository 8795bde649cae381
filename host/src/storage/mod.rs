//! State that outlives a call: the `wasi:keyvalue` buckets of components, in SQLite or Redis.
//!
//! State that outlives a call: the `wasi:keyvalue` buckets of components, kept in a real
//! database — SQLite in one file by default, Redis when several hosts share state.
//!
//! A call never writes to the database directly. Its writes collect in a
//! [`Transaction`] (read-your-writes for the call itself) and are committed in one
//! database transaction when the guest returns and its output passed its checks; a call
//! the sandbox stops (trap, timeout, fuel, memory, cancellation) leaves nothing behind.
//! Atomic operations lease their key until the call ends, so that increments and
//! compare-and-swaps never lose an update; docs/storage.md states the isolation level.
//!
//! Who may open what is decided by a component's manifest ([`StorageGrant`]): buckets are
//! private to the component's identity (`namespace/file`), except those the operator names
//! as shared, and quotas bound what one component may keep. Every bucket holds one set of
//! contents per calling agent, except those the operator names as seen by all agents.

mod atomics;
mod backend;
mod bucket;
mod claims;
mod counters;
mod operations;
mod redis_store;
mod sqlite_store;
mod transaction;

use std::path::PathBuf;
use std::sync::Arc;

pub(crate) use backend::Backend;
pub use bucket::{BucketId, is_bucket_name};
pub use operations::{BucketSummary, CommitError, Usage, Write};
pub(crate) use transaction::{KvError, Transaction};

/// Where a host keeps its state (`[storage]` in `toolhost.toml`).
#[derive(Clone, PartialEq, Eq, Default)]
pub enum StorageSetting {
    /// `storage.sqlite3` in the user's data directory ([`crate::paths::data_dir`]).
    #[default]
    Default,
    /// An SQLite database file.
    File(PathBuf),
    /// A Redis (or Valkey) server, shared by every host pointed at it.
    Redis(String),
}

/// Shows a Redis URL's password as `***`: configurations are printed in logs and
/// errors.
impl std::fmt::Debug for StorageSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageSetting::Default => f.write_str("Default"),
            StorageSetting::File(path) => f.debug_tuple("File").field(path).finish(),
            StorageSetting::Redis(url) => f.debug_tuple("Redis").field(&redis_store::redacted(url)).finish(),
        }
    }
}

/// Why the store could not be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StorageError {
    /// The database could not be opened or created.
    #[error("the storage database {}: {message}", .path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The Redis server could not be reached or refused a command.
    #[error("redis {url}: {message}")]
    Redis {
        /// The server's URL, without its password.
        url: String,
        /// What went wrong.
        message: String,
    },
    /// A database operation failed.
    #[error("storage: {0}")]
    Backend(String),
    /// No user data directory is known for the default database.
    #[error("no storage location: set `[storage] path` in toolhost.toml, or HOME or XDG_DATA_HOME")]
    NoDataDir,
}

/// Most a component may keep, across its private buckets (and, for each shared bucket,
/// what the bucket may hold when this component writes to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// Bytes of keys and values together.
    pub max_bytes: u64,
    /// Number of keys.
    pub max_keys: u64,
    /// Bytes of one value.
    pub max_value: u64,
}

impl Default for Quota {
    fn default() -> Quota {
        Quota { max_bytes: 64 << 20, max_keys: 100_000, max_value: 1 << 20 }
    }
}

/// What a manifest grants of storage (`[grants.storage]`). Nothing by default.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StorageGrant {
    /// The component's identity, `namespace/file`: its private buckets belong to it, so
    /// that a new version of the file keeps its data.
    pub owner: String,
    /// Buckets private to this component.
    pub buckets: Vec<String>,
    /// Buckets shared with every component whose manifest names them too.
    pub shared: Vec<String>,
    /// Buckets (of `buckets` or `shared`) whose contents every agent sees alike; each
    /// other bucket holds one set of contents per calling agent.
    pub all_agents: Vec<String>,
    /// What the component may keep (per agent, in the buckets each agent has its own
    /// contents of).
    pub quota: Quota,
}

impl StorageGrant {
    /// Whether any bucket is granted: a component granted none is refused every `open`
    /// without the host's store.
    pub(crate) fn grants_any(&self) -> bool {
        !self.buckets.is_empty() || !self.shared.is_empty()
    }

    /// The bucket a guest's `open(name)` reaches in a call by `agent`, if granted.
    pub(crate) fn bucket(&self, name: &str, agent: &str) -> Option<BucketId> {
        let scope = if self.all_agents.iter().any(|b| b == name) { None } else { Some(agent) };
        if self.buckets.iter().any(|b| b == name) {
            Some(BucketId::private(&self.owner, scope, name))
        } else if self.shared.iter().any(|b| b == name) {
            Some(BucketId::shared(scope, name))
        } else {
            None
        }
    }

    /// The owners a call by `agent` may write to, each with the quota a commit applies.
    pub(crate) fn quotas(&self, agent: &str) -> Vec<(String, Quota)> {
        let mut quotas: Vec<(String, Quota)> = Vec::new();
        for name in self.buckets.iter().chain(&self.shared) {
            let Some(bucket) = self.bucket(name, agent) else { continue };
            if !quotas.iter().any(|(owner, _)| *owner == bucket.owner) {
                quotas.push((bucket.owner, self.quota));
            }
        }
        quotas
    }
}

/// The host's store: opened on first use, so that a host whose components never use
/// storage never creates a database.
pub struct Storage {
    setting: StorageSetting,
    backend: tokio::sync::OnceCell<Arc<Backend>>,
    /// When this host last forgot the claims past their time ([`claims`]).
    claims_swept: std::sync::Mutex<std::time::Instant>,
}

impl Storage {
    /// A store at `setting`, not opened yet.
    pub fn new(setting: StorageSetting) -> Storage {
        let claims_swept = std::sync::Mutex::new(std::time::Instant::now());
        Storage { setting, backend: tokio::sync::OnceCell::new(), claims_swept }
    }

    /// Where the state lives, for messages: a file path or a Redis URL (its password
    /// hidden).
    pub fn location(&self) -> String {
        match &self.setting {
            StorageSetting::Default => default_path().map_or_else(|e| e.to_string(), |p| p.display().to_string()),
            StorageSetting::File(path) => path.display().to_string(),
            StorageSetting::Redis(url) => redis_store::redacted(url),
        }
    }

    /// The open database, opening it on first use. A failure is retried by the next use.
    pub(crate) async fn backend(&self) -> Result<Arc<Backend>, StorageError> {
        self.backend
            .get_or_try_init(|| async {
                let backend = match &self.setting {
                    StorageSetting::Default => Backend::open_file(&default_path()?).await?,
                    StorageSetting::File(path) => Backend::open_file(path).await?,
                    StorageSetting::Redis(url) => Backend::open_redis(url).await?,
                };
                Ok(Arc::new(backend))
            })
            .await
            .cloned()
    }

    /// Every bucket holding data, with its size.
    pub async fn buckets(&self) -> Result<Vec<BucketSummary>, StorageError> {
        self.backend().await?.buckets().await
    }

    /// Every key and value of a bucket, in key order.
    pub async fn entries(&self, bucket: &BucketId) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        self.backend().await?.entries(&bucket.id).await
    }

    /// One value.
    pub async fn get(&self, bucket: &BucketId, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.backend().await?.get(&bucket.id, key).await
    }

    /// Sets or deletes keys of one bucket in one transaction, as the operator (no quota
    /// applies; leases held by running calls are waited for).
    pub async fn write(&self, bucket: &BucketId, writes: Vec<(String, Write)>) -> Result<(), StorageError> {
        let mut transaction = Transaction::new(self.backend().await?, std::time::Duration::from_secs(10));
        for (key, write) in writes {
            transaction.stage(bucket, key, write);
        }
        transaction.commit(&[]).await.map_err(|e| StorageError::Backend(e.to_string()))
    }

    /// Usage of one owner (a component identity or a shared bucket).
    pub async fn usage(&self, owner: &str) -> Result<Usage, StorageError> {
        self.backend().await?.usage(owner).await
    }
}

fn default_path() -> Result<PathBuf, StorageError> {
    crate::paths::data_dir().map(|dir| dir.join("storage.sqlite3")).ok_or(StorageError::NoDataDir)
}
