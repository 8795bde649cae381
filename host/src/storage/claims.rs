//! Claims made once across every host on a store, and forgotten once no one could make them again.
//!
//! They are what makes an approval single-use across replicas.
//!
//! A claim lives in the host's own bucket (no guest can name it) with the time after
//! which it may be forgotten, the end of its seal's validity: a retry after that is
//! refused as expired anyway. Each host deletes the claims past their time at most once
//! an hour, the first time an hour after it started (claims written by an older
//! version, without a time, are forgotten then too).

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::transaction::Transaction;
use super::{BucketId, Quota, Storage, StorageError, Write};

/// How often a host forgets the claims past their time.
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

fn claims_bucket() -> BucketId {
    BucketId { owner: "toolhost".to_owned(), id: "toolhost:used".to_owned() }
}

fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs()
}

impl Storage {
    /// Claims `token`, once across every host on this store: `true` for the first
    /// claim, `false` ever after, until `forget_after` has passed.
    pub async fn claim_once(&self, token: &str, forget_after: SystemTime) -> Result<bool, StorageError> {
        let until = unix_seconds(forget_after).to_string().into_bytes();
        if !self.set_if_absent(&claims_bucket(), token, until).await? {
            return Ok(false);
        }
        let due = {
            let mut swept = self.claims_swept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let due = swept.elapsed() >= SWEEP_EVERY;
            if due {
                *swept = Instant::now();
            }
            due
        };
        if due && let Err(problem) = self.forget_claims_past(SystemTime::now()).await {
            tracing::warn!("cannot forget used approvals: {}", crate::text::Escaped(&problem.to_string()));
        }
        Ok(true)
    }

    /// Sets `key` of `bucket` (one of the host's own) to `value` unless it holds one
    /// already, at once for every host on this store: `true` when this call set it.
    pub(crate) async fn set_if_absent(
        &self,
        bucket: &BucketId,
        key: &str,
        value: Vec<u8>,
    ) -> Result<bool, StorageError> {
        let mut transaction = Transaction::new(self.backend().await?, Duration::from_secs(10));
        let unlimited = Quota { max_bytes: u64::MAX, max_keys: u64::MAX, max_value: u64::MAX };
        let swapped =
            transaction.swap(bucket, key, &None, value, &unlimited).await.map_err(|e| StorageError::Backend(e.0))?;
        if swapped.is_err() {
            return Ok(false);
        }
        transaction.commit(&[]).await.map_err(|e| StorageError::Backend(e.to_string()))?;
        Ok(true)
    }

    /// Deletes the claims whose time to be forgotten is before `now` (and those without
    /// a time); returns how many.
    pub(crate) async fn forget_claims_past(&self, now: SystemTime) -> Result<usize, StorageError> {
        let bucket = claims_bucket();
        let now = unix_seconds(now);
        let past: Vec<(String, Write)> = self
            .entries(&bucket)
            .await?
            .into_iter()
            .filter(|(_, until)| {
                std::str::from_utf8(until)
                    .ok()
                    .and_then(|until| until.parse::<u64>().ok())
                    .is_none_or(|until| until < now)
            })
            .map(|(token, _)| (token, Write::Delete))
            .collect();
        let count = past.len();
        if count > 0 {
            self.write(&bucket, past).await?;
        }
        Ok(count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::StorageSetting;

    #[tokio::test]
    async fn a_claim_is_made_once_and_forgotten_after_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::new(StorageSetting::File(dir.path().join("state.db")));
        let now = SystemTime::now();
        let (soon, later) = (now + Duration::from_secs(60), now + Duration::from_secs(3600));
        assert!(storage.claim_once("approval:a", soon).await.unwrap());
        assert!(storage.claim_once("approval:b", later).await.unwrap());
        assert!(!storage.claim_once("approval:a", soon).await.unwrap(), "claimed twice");
        // Nothing is past its time yet.
        assert_eq!(storage.forget_claims_past(now).await.unwrap(), 0);
        assert!(!storage.claim_once("approval:a", soon).await.unwrap());
        // Two minutes on, `a` is forgotten and `b` is not.
        assert_eq!(storage.forget_claims_past(now + Duration::from_secs(120)).await.unwrap(), 1);
        assert!(!storage.claim_once("approval:b", later).await.unwrap());
        assert!(storage.claim_once("approval:a", soon).await.unwrap());
    }
}
