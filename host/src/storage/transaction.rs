//! One call's view of the store, and its writes until they commit.
//!
//! Reads see the latest committed value, or the call's own staged write of the key
//! (read committed, with read-your-writes). Writes are staged here and committed
//! together after the call succeeded; dropped otherwise. An atomic operation
//! (`increment`, `cas::new`) first leases its key for the rest of the call: no other
//! call commits that key until this one ends, so an increment returns the value it will
//! commit and a compare-and-swap compares with a value nobody else can change meanwhile.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::backend::Backend;
use super::operations::{Commit, CommitError, StagedWrite, Usage, Write};
use super::{BucketId, Quota, StorageError};

/// Keys per `list-keys` page.
const PAGE: usize = 1000;
/// Longest key, in bytes.
pub(crate) const MAX_KEY: usize = 1024;
/// Beyond the call's own deadline, how long its lease lasts when the host dies with it,
/// and how long its commit may wait for another call's lease.
pub(super) const GRACE: Duration = Duration::from_secs(1);
/// Longest pause between two attempts to take a leased key (or to commit past one).
pub(super) const MAX_BACKOFF: Duration = Duration::from_millis(20);

/// Why a guest's storage operation failed: `wasi:keyvalue`'s `error::other`, with what
/// the guest can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KvError(pub String);

impl From<StorageError> for KvError {
    fn from(e: StorageError) -> KvError {
        KvError(e.to_string())
    }
}

/// A staged write, and the size of the committed value it replaces (for quotas).
struct Staged {
    write: Write,
    replaced: Option<u64>,
}

pub(crate) struct Transaction {
    pub(super) backend: Arc<Backend>,
    /// Unique per call: the owner of its leases.
    pub(super) holder: String,
    staged: BTreeMap<(BucketId, String), Staged>,
    /// `(bucket id, key)` leased by this call.
    pub(super) leased: BTreeSet<(String, String)>,
    /// Each owner's committed usage, read at the call's first write that grows it.
    usage: BTreeMap<String, Usage>,
    /// Bytes and keys the staged writes add to each owner's usage.
    growth: BTreeMap<String, (i64, i64)>,
    pub(super) deadline: Instant,
    finished: bool,
}

impl Transaction {
    /// A transaction of a call that may run for `time_limit`.
    pub fn new(backend: Arc<Backend>, time_limit: Duration) -> Transaction {
        Transaction {
            backend,
            holder: holder_id(),
            staged: BTreeMap::new(),
            leased: BTreeSet::new(),
            usage: BTreeMap::new(),
            growth: BTreeMap::new(),
            deadline: Instant::now() + time_limit,
            finished: false,
        }
    }

    pub async fn get(&self, bucket: &BucketId, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.get_many(bucket, vec![key.to_owned()]).await?.pop().and_then(|(_, value)| value))
    }

    /// The values of `keys`, the call's own writes included; the committed ones in one
    /// round trip to the database.
    pub async fn get_many(
        &self,
        bucket: &BucketId,
        keys: Vec<String>,
    ) -> Result<Vec<(String, Option<Vec<u8>>)>, KvError> {
        keys.iter().try_for_each(|key| check_key(key))?;
        let unstaged: Vec<&str> = keys.iter().filter(|key| !self.is_staged(bucket, key)).map(String::as_str).collect();
        let mut committed = self.backend.get_many(&bucket.id, &unstaged).await?.into_iter();
        let mut values = Vec::with_capacity(keys.len());
        for key in keys {
            let value = match self.staged.get(&(bucket.clone(), key.clone())) {
                Some(Staged { write: Write::Set(value), .. }) => Some(value.clone()),
                Some(Staged { write: Write::Delete, .. }) => None,
                None => committed.next().flatten(),
            };
            values.push((key, value));
        }
        Ok(values)
    }

    /// Stages a value, refused when it would take the bucket's owner past `quota`.
    pub async fn set(&mut self, bucket: &BucketId, key: &str, value: Vec<u8>, quota: &Quota) -> Result<(), KvError> {
        self.set_many(bucket, vec![(key.to_owned(), value)], quota).await
    }

    /// Stages values in order; the first one that would take the bucket's owner past
    /// `quota` is refused, and the ones after it are not staged.
    pub async fn set_many(
        &mut self,
        bucket: &BucketId,
        key_values: Vec<(String, Vec<u8>)>,
        quota: &Quota,
    ) -> Result<(), KvError> {
        for (key, value) in &key_values {
            check_key(key)?;
            if value.len() as u64 > quota.max_value {
                return Err(KvError(format!(
                    "a value of {} bytes is over this component's limit of {} bytes per value",
                    value.len(),
                    quota.max_value
                )));
            }
        }
        let keys: Vec<&str> = key_values.iter().map(|(key, _)| key.as_str()).collect();
        let replaced = self.replaced(bucket, &keys).await?;
        for ((key, value), replaced) in key_values.into_iter().zip(replaced) {
            let grows = (key.len() + value.len()) as i64 - replaced.map_or(0, |size| key.len() as i64 + size as i64);
            if grows > 0 {
                let mut usage = self.committed_usage(&bucket.owner).await?;
                let (bytes, keys) = self.growth.get(&bucket.owner).copied().unwrap_or_default();
                // This write replaces the call's own earlier write of the key, if any.
                let (before, keys_before) = self.staged_contribution(bucket, &key);
                usage.bytes = (usage.bytes as i64 + bytes - before + grows).max(0) as u64;
                usage.keys = (usage.keys as i64 + keys - keys_before + i64::from(replaced.is_none())).max(0) as u64;
                if let Some(problem) = usage.over(quota) {
                    return Err(KvError(format!("storage quota: this write would make {problem}")));
                }
            }
            self.stage_with(bucket, key, Write::Set(value), replaced);
        }
        Ok(())
    }

    pub async fn delete(&mut self, bucket: &BucketId, key: &str) -> Result<(), KvError> {
        self.delete_many(bucket, vec![key.to_owned()]).await
    }

    pub async fn delete_many(&mut self, bucket: &BucketId, keys: Vec<String>) -> Result<(), KvError> {
        keys.iter().try_for_each(|key| check_key(key))?;
        let replaced = self.replaced(bucket, &keys.iter().map(String::as_str).collect::<Vec<_>>()).await?;
        for (key, replaced) in keys.into_iter().zip(replaced) {
            self.stage_with(bucket, key, Write::Delete, replaced);
        }
        Ok(())
    }

    /// Stages a write without quota checks: the operator's.
    pub fn stage(&mut self, bucket: &BucketId, key: String, write: Write) {
        self.stage_with(bucket, key, write, None);
    }

    fn stage_with(&mut self, bucket: &BucketId, key: String, write: Write, replaced: Option<u64>) {
        let (before_bytes, before_keys) = self.staged_contribution(bucket, &key);
        let (after_bytes, after_keys) = {
            let replaced = self.staged.get(&(bucket.clone(), key.clone())).map_or(replaced, |staged| staged.replaced);
            contribution(&key, &write, replaced)
        };
        let growth = self.growth.entry(bucket.owner.clone()).or_default();
        growth.0 += after_bytes - before_bytes;
        growth.1 += after_keys - before_keys;
        self.staged
            .entry((bucket.clone(), key))
            .and_modify(|staged| staged.write = write.clone())
            .or_insert(Staged { write, replaced });
    }

    fn is_staged(&self, bucket: &BucketId, key: &str) -> bool {
        self.staged.contains_key(&(bucket.clone(), key.to_owned()))
    }

    /// What the staged write of `key`, if any, adds to its owner's bytes and keys.
    fn staged_contribution(&self, bucket: &BucketId, key: &str) -> (i64, i64) {
        self.staged
            .get(&(bucket.clone(), key.to_owned()))
            .map_or((0, 0), |staged| contribution(key, &staged.write, staged.replaced))
    }

    /// The committed size of the value a first write of each key replaces; the ones the
    /// call has not written yet in one round trip to the database.
    async fn replaced(&self, bucket: &BucketId, keys: &[&str]) -> Result<Vec<Option<u64>>, KvError> {
        let unstaged: Vec<&str> = keys.iter().copied().filter(|key| !self.is_staged(bucket, key)).collect();
        let mut committed = self.backend.value_sizes(&bucket.id, &unstaged).await?.into_iter();
        Ok(keys
            .iter()
            .map(|key| match self.staged.get(&(bucket.clone(), (*key).to_owned())) {
                Some(staged) => staged.replaced,
                None => committed.next().flatten(),
            })
            .collect())
    }

    /// The owner's usage as committed when this call first needed it. The commit checks
    /// the quota again against the usage of that moment, atomically; this early answer
    /// lets the guest see the error at the write that causes it.
    async fn committed_usage(&mut self, owner: &str) -> Result<Usage, KvError> {
        if let Some(usage) = self.usage.get(owner) {
            return Ok(*usage);
        }
        let usage = self.backend.usage(owner).await?;
        self.usage.insert(owner.to_owned(), usage);
        Ok(usage)
    }

    /// One page of keys in key order, the call's own staged writes included.
    pub async fn list_keys(
        &self,
        bucket: &BucketId,
        cursor: Option<String>,
    ) -> Result<(Vec<String>, Option<String>), KvError> {
        let committed = self.backend.keys_after(&bucket.id, cursor.as_deref(), PAGE).await?;
        let next = (committed.len() == PAGE).then(|| committed.last().cloned()).flatten();
        let mut keys: BTreeSet<String> = committed.into_iter().collect();
        let after = cursor.unwrap_or_default();
        for ((staged_bucket, key), staged) in &self.staged {
            let in_page = *key > after && next.as_ref().is_none_or(|last| key <= last);
            if staged_bucket != bucket || !in_page {
                continue;
            }
            match staged.write {
                Write::Set(_) => keys.insert(key.clone()),
                Write::Delete => keys.remove(key),
            };
        }
        Ok((keys.into_iter().collect(), next))
    }

    /// Whether the call wrote or leased anything.
    pub fn is_empty(&self) -> bool {
        self.staged.is_empty() && self.leased.is_empty()
    }

    /// Commits the staged writes in one database transaction and ends the leases.
    /// `quotas` bound each owner written to. A key another running call leases is
    /// waited for, a little past this call's deadline.
    pub async fn commit(mut self, quotas: &[(String, Quota)]) -> Result<(), CommitError> {
        self.finished = true;
        if self.staged.is_empty() {
            let leased: Vec<_> = std::mem::take(&mut self.leased).into_iter().collect();
            return Ok(self.backend.release(&self.holder, &leased).await?);
        }
        let writes: Vec<StagedWrite> = std::mem::take(&mut self.staged)
            .into_iter()
            .map(|((bucket, key), staged)| StagedWrite {
                bucket: bucket.id,
                owner: bucket.owner,
                key,
                write: staged.write,
            })
            .collect();
        let owners: BTreeSet<&str> = writes.iter().map(|w| w.owner.as_str()).collect();
        let quotas = quotas.iter().filter(|(owner, _)| owners.contains(owner.as_str())).cloned().collect();
        let commit = Arc::new(Commit {
            holder: self.holder.clone(),
            writes,
            quotas,
            leased: std::mem::take(&mut self.leased).into_iter().collect(),
        });
        let give_up = self.deadline.max(Instant::now()) + GRACE;
        let mut pause = Duration::from_micros(500);
        loop {
            match self.backend.commit(&commit).await {
                Err(CommitError::Leased { .. }) if Instant::now() + pause < give_up => {
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(MAX_BACKOFF);
                }
                outcome => {
                    if outcome.is_err() {
                        let _ = self.backend.release(&commit.holder, &commit.leased).await;
                    }
                    return outcome;
                }
            }
        }
    }
}

impl Drop for Transaction {
    /// A call that did not commit ends its leases now rather than at their expiry.
    fn drop(&mut self) {
        if self.finished || self.leased.is_empty() {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let backend = self.backend.clone();
        let holder = std::mem::take(&mut self.holder);
        let leased: Vec<_> = std::mem::take(&mut self.leased).into_iter().collect();
        runtime.spawn(async move {
            if let Err(e) = backend.release(&holder, &leased).await {
                tracing::warn!("ending the leases of a call that did not commit: {e}");
            }
        });
    }
}

/// What a staged write adds to its owner's bytes and keys, against the committed value
/// of `replaced` bytes it replaces (`None`: no committed value).
fn contribution(key: &str, write: &Write, replaced: Option<u64>) -> (i64, i64) {
    let before = replaced.map_or(0, |size| key.len() as i64 + size as i64);
    match (write, replaced) {
        (Write::Set(value), replaced) => ((key.len() + value.len()) as i64 - before, i64::from(replaced.is_none())),
        (Write::Delete, Some(_)) => (-before, -1),
        (Write::Delete, None) => (0, 0),
    }
}

pub(super) fn check_key(key: &str) -> Result<(), KvError> {
    if key.len() > MAX_KEY {
        return Err(KvError(format!("a key of {} bytes is longer than the limit of {MAX_KEY}", key.len())));
    }
    Ok(())
}

/// A lease holder id, unique across processes and hosts.
fn holder_id() -> String {
    let mut bytes = [0u8; 16];
    // Without OS randomness a clash is still unlikely: the pid and the clock tell calls apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ (u128::from(std::process::id()) << 96)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
