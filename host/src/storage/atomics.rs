//! The atomic operations of a call's transaction: increment and compare-and-swap, each holding its key's lease until the call ends.

use std::time::{Duration, Instant};

use super::transaction::{GRACE, MAX_BACKOFF, check_key};
use super::{BucketId, KvError, Quota, Transaction};

impl Transaction {
    /// Adds `delta` to the decimal integer at `key` (absent: 0) and stages the sum; a sum
    /// below `lowest` (an interface whose numbers are unsigned) is refused before
    /// anything is staged.
    pub async fn increment(
        &mut self,
        bucket: &BucketId,
        key: &str,
        delta: i64,
        lowest: i64,
        quota: &Quota,
    ) -> Result<i64, KvError> {
        self.lease(bucket, key).await?;
        let current = match self.get(bucket, key).await? {
            None => 0,
            Some(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| text.trim().parse::<i64>().ok())
                .ok_or_else(|| KvError(format!("the value of `{key}` is not a decimal integer")))?,
        };
        let sum = current
            .checked_add(delta)
            .ok_or_else(|| KvError(format!("incrementing `{key}` by {delta} overflows a 64-bit integer")))?;
        if sum < lowest {
            return Err(KvError(format!("`{key}` holds {current}: adding {delta} makes {sum}, below {lowest}")));
        }
        self.set(bucket, key, sum.to_string().into_bytes(), quota).await?;
        Ok(sum)
    }

    /// Leases `key` for the rest of the call and returns its current value: the start of
    /// a compare-and-swap.
    pub async fn watch(&mut self, bucket: &BucketId, key: &str) -> Result<Option<Vec<u8>>, KvError> {
        self.lease(bucket, key).await?;
        self.get(bucket, key).await
    }

    /// Stages `value` if `key` still holds `expected`; otherwise answers what it holds.
    pub async fn swap(
        &mut self,
        bucket: &BucketId,
        key: &str,
        expected: &Option<Vec<u8>>,
        value: Vec<u8>,
        quota: &Quota,
    ) -> Result<Result<(), Option<Vec<u8>>>, KvError> {
        self.lease(bucket, key).await?;
        let current = self.get(bucket, key).await?;
        if current != *expected {
            return Ok(Err(current));
        }
        self.set(bucket, key, value, quota).await?;
        Ok(Ok(()))
    }

    /// Waits until this call holds the lease of `key`, at most until its deadline.
    async fn lease(&mut self, bucket: &BucketId, key: &str) -> Result<(), KvError> {
        check_key(key)?;
        let leased = (bucket.id.clone(), key.to_owned());
        if self.leased.contains(&leased) {
            return Ok(());
        }
        let mut pause = Duration::from_micros(500);
        loop {
            let ttl = self.deadline.saturating_duration_since(Instant::now()) + GRACE;
            if self.backend.lease(&bucket.id, key, &self.holder, ttl.as_millis() as u64).await? {
                self.leased.insert(leased);
                return Ok(());
            }
            if Instant::now() + pause >= self.deadline {
                return Err(KvError(format!(
                    "key `{key}` stayed leased by another running call until this call's time ran out"
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }
}
