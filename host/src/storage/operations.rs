//! What every database behind the storage is asked and answers: staged writes, a commit, usage, and a bucket's summary.

use super::{Quota, StorageError};

/// A staged change of one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// The key holds this value.
    Set(Vec<u8>),
    /// The key is gone.
    Delete,
}

/// One call's writes, committed together or not at all.
pub(crate) struct Commit {
    /// Who holds the leases of the call's atomic operations.
    pub holder: String,
    pub writes: Vec<StagedWrite>,
    /// The quota each owner written to must stay within; an owner not listed has none
    /// (the operator's own writes).
    pub quotas: Vec<(String, Quota)>,
    /// Keys the holder leased, `(bucket id, key)`.
    pub leased: Vec<(String, String)>,
}

/// One key's change in a [`Commit`].
pub(crate) struct StagedWrite {
    pub bucket: String,
    pub owner: String,
    pub key: String,
    pub write: Write,
}

/// Why a commit did not happen; nothing of it was written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CommitError {
    /// Another running call leases a key this one writes: retried until it is free.
    #[error("key `{key}` of bucket `{bucket}` is leased by another running call")]
    Leased {
        /// The bucket's stored id.
        bucket: String,
        /// The leased key.
        key: String,
    },
    /// The writes would take an owner past its quota.
    #[error("storage quota of {owner}: {problem}")]
    Quota {
        /// The component identity, or `shared:name`.
        owner: String,
        /// What the writes would have made of its usage.
        problem: String,
    },
    /// The database failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
}

/// What an owner keeps.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    /// Bytes of keys and values together.
    pub bytes: u64,
    /// Number of keys.
    pub keys: u64,
}

impl Usage {
    /// The problem with this usage under `quota`, if any.
    pub fn over(&self, quota: &Quota) -> Option<String> {
        if self.keys > quota.max_keys {
            Some(format!("{} keys, over the limit of {}", self.keys, quota.max_keys))
        } else if self.bytes > quota.max_bytes {
            Some(format!("{} bytes, over the limit of {}", self.bytes, quota.max_bytes))
        } else {
            None
        }
    }
}

/// A bucket holding data, as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct BucketSummary {
    /// Its stored id (`namespace/file:name` or `shared:name`).
    pub bucket: String,
    /// Number of keys.
    pub keys: u64,
    /// Bytes of its keys and values.
    pub bytes: u64,
}

/// Milliseconds since the Unix epoch, the clock of leases.
pub(crate) fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}
