//! The two databases behind the storage, with one set of operations.
//!
//! The two databases behind [`super::Storage`], with one set of operations: what a call
//! reads, the leases of atomic operations, the commit of a call's writes, and what an
//! operator inspects.

use std::path::Path;
use std::sync::Arc;

use super::StorageError;
use super::operations::{BucketSummary, Commit, CommitError, Usage};
use super::redis_store::RedisStore;
use super::sqlite_store::SqliteStore;

/// The database.
pub(crate) enum Backend {
    Sqlite(Arc<SqliteStore>),
    Redis(RedisStore),
}

impl Backend {
    pub async fn open_file(path: &Path) -> Result<Backend, StorageError> {
        let path = path.to_owned();
        let store = tokio::task::spawn_blocking(move || SqliteStore::open(&path))
            .await
            .map_err(|e| StorageError::Backend(format!("opening the database: {e}")))??;
        Ok(Backend::Sqlite(Arc::new(store)))
    }

    pub async fn open_redis(url: &str) -> Result<Backend, StorageError> {
        Ok(Backend::Redis(RedisStore::connect(url).await?))
    }

    pub async fn get(&self, bucket: &str, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        match self {
            Backend::Sqlite(store) => store.get(bucket, key),
            Backend::Redis(store) => store.get(bucket, key).await,
        }
    }

    /// The committed values of `keys`, in their order.
    pub async fn get_many(&self, bucket: &str, keys: &[&str]) -> Result<Vec<Option<Vec<u8>>>, StorageError> {
        match self {
            Backend::Sqlite(store) => keys.iter().map(|key| store.get(bucket, key)).collect(),
            Backend::Redis(store) => store.get_many(bucket, keys).await,
        }
    }

    /// The committed size of each key's value, in their order; `None` where there is none.
    pub async fn value_sizes(&self, bucket: &str, keys: &[&str]) -> Result<Vec<Option<u64>>, StorageError> {
        match self {
            Backend::Sqlite(store) => store.value_sizes(bucket, keys),
            Backend::Redis(store) => store.value_sizes(bucket, keys).await,
        }
    }

    /// Up to `limit` keys after `after`, in key order.
    pub async fn keys_after(
        &self,
        bucket: &str,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<String>, StorageError> {
        match self {
            Backend::Sqlite(store) => store.keys_after(bucket, after, limit),
            Backend::Redis(store) => store.keys_after(bucket, after, limit).await,
        }
    }

    pub async fn usage(&self, owner: &str) -> Result<Usage, StorageError> {
        match self {
            Backend::Sqlite(store) => store.usage(owner),
            Backend::Redis(store) => store.usage(owner).await,
        }
    }

    /// Takes (or renews) the lease of a key for `holder` until `ttl_ms` from now; `false`
    /// when another holder's lease is still running.
    pub async fn lease(&self, bucket: &str, key: &str, holder: &str, ttl_ms: u64) -> Result<bool, StorageError> {
        match self {
            Backend::Sqlite(store) => {
                let (bucket, key, holder) = (bucket.to_owned(), key.to_owned(), holder.to_owned());
                off_runtime(store, move |store| store.lease(&bucket, &key, &holder, ttl_ms)).await
            }
            Backend::Redis(store) => store.lease(bucket, key, holder, ttl_ms).await,
        }
    }

    /// Ends every lease of `holder` among `leased`.
    pub async fn release(&self, holder: &str, leased: &[(String, String)]) -> Result<(), StorageError> {
        match self {
            Backend::Sqlite(store) => {
                let holder = holder.to_owned();
                off_runtime(store, move |store| store.release(&holder)).await
            }
            Backend::Redis(store) => store.release(holder, leased).await,
        }
    }

    /// Applies the writes and ends the holder's leases, in one database transaction.
    pub async fn commit(&self, commit: &Arc<Commit>) -> Result<(), CommitError> {
        match self {
            Backend::Sqlite(store) => {
                let commit = commit.clone();
                off_runtime(store, move |store| Ok(store.commit(&commit))).await?
            }
            Backend::Redis(store) => store.commit(commit).await,
        }
    }

    pub async fn buckets(&self) -> Result<Vec<BucketSummary>, StorageError> {
        match self {
            Backend::Sqlite(store) => store.buckets(),
            Backend::Redis(store) => store.buckets().await,
        }
    }

    pub async fn entries(&self, bucket: &str) -> Result<Vec<(String, Vec<u8>)>, StorageError> {
        match self {
            Backend::Sqlite(store) => store.entries(bucket),
            Backend::Redis(store) => store.entries(bucket).await,
        }
    }
}

/// Runs an SQLite write on a blocking thread. A write waits for the file's one write
/// lock (held by another commit while it waits for the disk, or by another process, up
/// to the busy timeout): never on the threads that run calls. Reads do not wait in WAL
/// mode and run where they are asked.
async fn off_runtime<T: Send + 'static>(
    store: &Arc<SqliteStore>,
    write: impl FnOnce(&SqliteStore) -> Result<T, StorageError> + Send + 'static,
) -> Result<T, StorageError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || write(&store))
        .await
        .map_err(|e| StorageError::Backend(format!("database task: {e}")))?
}
