//! State that outlives a call, through the standard `wasi:keyvalue` interface: typed
//! values in the buckets the operator granted (`[grants] storage = ["notes"]` in the
//! tool's manifest).
//!
//! ```no_run
//! use toolhost_guest::storage::Storage;
//! # fn demo() -> Result<(), toolhost_guest::storage::StorageError> {
//! let notes = Storage::open("notes")?;
//! notes.set("greeting", &"hello")?;
//! let greeting: Option<String> = notes.get("greeting")?;
//! let visits = notes.increment("visits", 1)?;
//! notes.update("log", |log: Option<String>| Some(log.unwrap_or_default() + "."))?;
//! # Ok(()) }
//! ```
//!
//! The host commits a call's writes together when the call succeeds, and drops them when
//! it fails; the call itself reads its own writes at once. Values are JSON, so other
//! tools and `toolhost storage get` can read them.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::ToolError;
use crate::bindings::wasi::keyvalue::{atomics, store};

pub use crate::bindings::wasi::keyvalue::store::Bucket as RawBucket;

/// Why a storage operation failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StorageError {
    /// The manifest does not grant this bucket.
    AccessDenied(String),
    /// The host does not know this bucket.
    NoSuchStore(String),
    /// The host's message: a quota, a lease, the database.
    Other(String),
    /// A stored value is not the JSON of the type asked for.
    Decode { key: String, message: String },
}

impl std::fmt::Display for StorageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StorageError::AccessDenied(bucket) => write!(f, "bucket `{bucket}` is not granted to this tool"),
            StorageError::NoSuchStore(bucket) => write!(f, "no bucket `{bucket}`"),
            StorageError::Other(message) => write!(f, "storage: {message}"),
            StorageError::Decode { key, message } => write!(f, "the value of `{key}` cannot be read: {message}"),
        }
    }
}

impl std::error::Error for StorageError {}

impl From<StorageError> for ToolError {
    fn from(e: StorageError) -> ToolError {
        ToolError::Failed(e.to_string())
    }
}

fn from_wit(error: store::Error, bucket: &str) -> StorageError {
    match error {
        store::Error::AccessDenied => StorageError::AccessDenied(bucket.to_owned()),
        store::Error::NoSuchStore => StorageError::NoSuchStore(bucket.to_owned()),
        store::Error::Other(message) => StorageError::Other(message),
    }
}

/// An open bucket.
pub struct Storage {
    name: String,
    bucket: RawBucket,
}

impl Storage {
    /// Opens the bucket `name`, if the manifest grants it.
    pub fn open(name: &str) -> Result<Storage, StorageError> {
        let bucket = store::open(name).map_err(|e| from_wit(e, name))?;
        Ok(Storage { name: name.to_owned(), bucket })
    }

    fn failed(&self, error: store::Error) -> StorageError {
        from_wit(error, &self.name)
    }

    /// The value at `key`, read as JSON into `T`.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StorageError> {
        match self.get_bytes(key)? {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(&bytes)
                .map(Some)
                .map_err(|e| StorageError::Decode { key: key.to_owned(), message: e.to_string() }),
        }
    }

    /// Stores `value` at `key` as JSON.
    pub fn set<T: Serialize + ?Sized>(&self, key: &str, value: &T) -> Result<(), StorageError> {
        let bytes = serde_json::to_vec(value)
            .map_err(|e| StorageError::Decode { key: key.to_owned(), message: e.to_string() })?;
        self.set_bytes(key, &bytes)
    }

    /// The bytes at `key`.
    pub fn get_bytes(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.bucket.get(key).map_err(|e| self.failed(e))
    }

    /// Stores bytes at `key`.
    pub fn set_bytes(&self, key: &str, value: &[u8]) -> Result<(), StorageError> {
        self.bucket.set(key, value).map_err(|e| self.failed(e))
    }

    /// Removes `key`; nothing happens when it is absent.
    pub fn delete(&self, key: &str) -> Result<(), StorageError> {
        self.bucket.delete(key).map_err(|e| self.failed(e))
    }

    /// Whether `key` holds a value.
    pub fn exists(&self, key: &str) -> Result<bool, StorageError> {
        self.bucket.exists(key).map_err(|e| self.failed(e))
    }

    /// Every key, in key order (all pages).
    pub fn keys(&self) -> Result<Vec<String>, StorageError> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.bucket.list_keys(cursor.as_deref()).map_err(|e| self.failed(e))?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(keys),
            }
        }
    }

    /// Adds `delta` to the integer at `key` (absent counts as 0) and returns the sum.
    /// No other call changes the key until this call ends, so the sum is this call's
    /// own: counters made with it never repeat.
    pub fn increment(&self, key: &str, delta: i64) -> Result<i64, StorageError> {
        atomics::increment(&self.bucket, key, delta).map_err(|e| self.failed(e))
    }

    /// Replaces the JSON value at `key` with what `change(current)` returns, or leaves it
    /// as it is when that is `None`; no other call's write of the key comes in between.
    /// Returns the value written, if any.
    pub fn update<T: Serialize + DeserializeOwned>(
        &self,
        key: &str,
        change: impl FnOnce(Option<T>) -> Option<T>,
    ) -> Result<Option<T>, StorageError> {
        let cas = atomics::Cas::new(&self.bucket, key).map_err(|e| self.failed(e))?;
        let current = match cas.current().map_err(|e| self.failed(e))? {
            None => None,
            Some(bytes) => Some(
                serde_json::from_slice(&bytes)
                    .map_err(|e| StorageError::Decode { key: key.to_owned(), message: e.to_string() })?,
            ),
        };
        let Some(next) = change(current) else { return Ok(None) };
        let bytes = serde_json::to_vec(&next)
            .map_err(|e| StorageError::Decode { key: key.to_owned(), message: e.to_string() })?;
        match atomics::swap(cas, &bytes) {
            Ok(()) => Ok(Some(next)),
            Err(atomics::CasError::StoreError(e)) => Err(self.failed(e)),
            Err(atomics::CasError::CasFailed(_)) => {
                Err(StorageError::Other(format!("`{key}` changed during the update; try again")))
            }
        }
    }

    /// The bucket of the standard interface, for what this wrapper does not cover.
    pub fn raw(&self) -> &RawBucket {
        &self.bucket
    }
}
