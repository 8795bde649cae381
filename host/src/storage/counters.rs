//! Counts every host on a Redis store shares, each kept for one window of time: what quotas count.
//!
//! A host on SQLite answers `None`: its counts are its own, kept by the caller in memory,
//! and the database is not touched for them.

use std::time::Duration;

use super::{Backend, Storage, StorageError, StorageSetting};

impl Storage {
    /// Adds `by` (subtracts, when negative) to the counter `key` (kept `ttl` past its
    /// first count) and answers the new count, when the store is shared (Redis); `None`
    /// otherwise.
    pub(crate) async fn count_shared(&self, key: &str, by: i64, ttl: Duration) -> Result<Option<u64>, StorageError> {
        let Some(backend) = self.shared_backend().await? else { return Ok(None) };
        match backend.as_ref() {
            Backend::Redis(store) => store.count(key, by, ttl).await.map(Some),
            Backend::Sqlite(_) => Ok(None),
        }
    }

    /// The counter `key` without counting, when the store is shared; `None` otherwise.
    pub(crate) async fn peek_shared(&self, key: &str) -> Result<Option<u64>, StorageError> {
        let Some(backend) = self.shared_backend().await? else { return Ok(None) };
        match backend.as_ref() {
            Backend::Redis(store) => store.peek(key).await.map(Some),
            Backend::Sqlite(_) => Ok(None),
        }
    }

    /// The database when it is shared (Redis), opened on first use; `None` for SQLite,
    /// which is not opened for counts.
    async fn shared_backend(&self) -> Result<Option<std::sync::Arc<Backend>>, StorageError> {
        match self.setting {
            StorageSetting::Redis(_) => self.backend().await.map(Some),
            _ => Ok(None),
        }
    }
}
