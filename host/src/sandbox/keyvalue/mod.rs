//! `wasi:keyvalue` for guests: the buckets their manifest grants, through the call's transaction, deny by default.
//!
//! `wasi:keyvalue` (0.2.0-draft2, and 0.2.0-draft in [`draft`]) for guests: the buckets
//! their manifest grants, through the call's [`Transaction`]. Deny by default: without
//! `[grants.storage]` every `open` answers `access-denied`.

mod draft;

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};

use crate::error::BuildError;
use crate::storage::{BucketId, KvError, Storage, StorageGrant, Transaction};

wasmtime::component::bindgen!({
    path: "../wit/deps/keyvalue",
    world: "wasi:keyvalue/imports",
    imports: { default: async | trappable },
    with: {
        "wasi:keyvalue/store.bucket": KvBucket,
        "wasi:keyvalue/atomics.cas": KvCas,
    },
});

use wasi::keyvalue::{atomics, batch, store};

/// An open bucket of a guest.
pub struct KvBucket {
    id: BucketId,
}

/// A compare-and-swap a guest started: the key and the value it saw.
pub struct KvCas {
    bucket: BucketId,
    key: String,
    seen: Option<Vec<u8>>,
}

/// What one call may do with storage, and its writes so far.
pub(crate) struct CallStorage {
    /// The host's store; `None` while a component is being loaded (listing its tools).
    storage: Option<Arc<Storage>>,
    /// The buckets and compare-and-swaps the guest holds (a table of their own: only
    /// `wasi:keyvalue` makes and reads them).
    table: ResourceTable,
    grant: StorageGrant,
    /// The calling agent: every bucket not seen by all agents holds its own contents.
    agent: String,
    time_limit: Duration,
    transaction: Option<Transaction>,
    /// The keys 0.2.0-draft's numeric list-keys cursors stand for, by number.
    draft_cursors: Vec<String>,
}

impl CallStorage {
    pub fn new(storage: Option<Arc<Storage>>, grant: &StorageGrant, agent: &str, time_limit: Duration) -> CallStorage {
        // A component granted no bucket is refused every `open` by an empty grant: its
        // own is not copied (the owner's name would be an allocation on every call).
        let grant = if grant.grants_any() { grant.clone() } else { StorageGrant::default() };
        CallStorage {
            storage,
            table: ResourceTable::new(),
            grant,
            agent: agent.to_owned(),
            time_limit,
            transaction: None,
            draft_cursors: Vec::new(),
        }
    }

    /// The call's writes, to commit when the call succeeds; `None` when it wrote and
    /// leased nothing.
    pub fn take_transaction(&mut self) -> Option<Transaction> {
        self.transaction.take().filter(|transaction| !transaction.is_empty())
    }

    /// The number of the 0.2.0-draft cursor that stands for `last` (the key a page
    /// ended at): the same number for the same key, so listing again from the start
    /// costs nothing; `None` past [`draft::MAX_DRAFT_CURSORS`].
    fn draft_cursor(&mut self, last: String) -> Option<u64> {
        let cursors = &mut self.draft_cursors;
        let number = match cursors.iter().position(|key| *key == last) {
            Some(number) => number,
            None if cursors.len() < draft::MAX_DRAFT_CURSORS => {
                cursors.push(last);
                cursors.len() - 1
            }
            None => return None,
        };
        Some(number as u64)
    }

    fn transaction(&mut self) -> Result<&mut Transaction, KvError> {
        self.transaction.as_mut().ok_or_else(|| KvError("no bucket is open".into()))
    }
}

/// Links both drafts of `wasi:keyvalue`, answered by the [`CallStorage`] each store's
/// data holds (`storage` finds it).
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    storage: fn(&mut T) -> &mut CallStorage,
) -> Result<(), BuildError> {
    let failed = |e: wasmtime::Error| BuildError::Engine(format!("linking wasi:keyvalue: {e:#}"));
    Imports::add_to_linker::<_, HasSelf<CallStorage>>(linker, storage).map_err(failed)?;
    draft::add_to_linker(linker, storage).map_err(failed)
}

fn to_wit(error: KvError) -> store::Error {
    store::Error::Other(error.0)
}

type Answer<T> = wasmtime::Result<Result<T, store::Error>>;

impl CallStorage {
    fn bucket_id(&self, bucket: &Resource<KvBucket>) -> wasmtime::Result<BucketId> {
        Ok(self.table.get(bucket)?.id.clone())
    }

    /// Both drafts' `increment`: the sum staged, or refused below `lowest`.
    async fn increment_at_least(
        &mut self,
        bucket: &Resource<KvBucket>,
        key: &str,
        delta: i64,
        lowest: i64,
    ) -> wasmtime::Result<Result<i64, KvError>> {
        let id = self.bucket_id(bucket)?;
        let quota = self.grant.quota;
        Ok(async { self.transaction()?.increment(&id, key, delta, lowest, &quota).await }.await)
    }
}

impl store::Host for CallStorage {
    async fn open(&mut self, identifier: String) -> Answer<Resource<KvBucket>> {
        let Some(id) = self.grant.bucket(&identifier, &self.agent) else {
            return Ok(Err(store::Error::AccessDenied));
        };
        if self.transaction.is_none() {
            let Some(storage) = self.storage.clone() else {
                return Ok(Err(store::Error::Other("storage is not available while the component is loading".into())));
            };
            match storage.backend().await {
                Ok(backend) => self.transaction = Some(Transaction::new(backend, self.time_limit)),
                Err(e) => return Ok(Err(store::Error::Other(format!("storage is unavailable: {e}")))),
            }
        }
        Ok(Ok(self.table.push(KvBucket { id })?))
    }
}

impl store::HostBucket for CallStorage {
    async fn get(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<Option<Vec<u8>>> {
        let id = self.bucket_id(&bucket)?;
        Ok(async { self.transaction()?.get(&id, &key).await }.await.map_err(to_wit))
    }

    async fn set(&mut self, bucket: Resource<KvBucket>, key: String, value: Vec<u8>) -> Answer<()> {
        let id = self.bucket_id(&bucket)?;
        let quota = self.grant.quota;
        Ok(async { self.transaction()?.set(&id, &key, value, &quota).await }.await.map_err(to_wit))
    }

    async fn delete(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<()> {
        let id = self.bucket_id(&bucket)?;
        Ok(async { self.transaction()?.delete(&id, &key).await }.await.map_err(to_wit))
    }

    async fn exists(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<bool> {
        let id = self.bucket_id(&bucket)?;
        Ok(async { Ok(self.transaction()?.get(&id, &key).await?.is_some()) }.await.map_err(to_wit))
    }

    async fn list_keys(&mut self, bucket: Resource<KvBucket>, cursor: Option<String>) -> Answer<store::KeyResponse> {
        let id = self.bucket_id(&bucket)?;
        let page = async { self.transaction()?.list_keys(&id, cursor).await }.await;
        Ok(page.map(|(keys, cursor)| store::KeyResponse { keys, cursor }).map_err(to_wit))
    }

    async fn drop(&mut self, bucket: Resource<KvBucket>) -> wasmtime::Result<()> {
        self.table.delete(bucket)?;
        Ok(())
    }
}

impl atomics::Host for CallStorage {
    async fn increment(&mut self, bucket: Resource<KvBucket>, key: String, delta: i64) -> Answer<i64> {
        Ok(self.increment_at_least(&bucket, &key, delta, i64::MIN).await?.map_err(to_wit))
    }

    async fn swap(&mut self, cas: Resource<KvCas>, value: Vec<u8>) -> wasmtime::Result<Result<(), atomics::CasError>> {
        let KvCas { bucket, key, seen } = self.table.delete(cas)?;
        let quota = self.grant.quota;
        let swapped = async { self.transaction()?.swap(&bucket, &key, &seen, value, &quota).await }.await;
        match swapped {
            Ok(Ok(())) => Ok(Ok(())),
            Ok(Err(current)) => {
                let fresh = self.table.push(KvCas { bucket, key, seen: current })?;
                Ok(Err(atomics::CasError::CasFailed(fresh)))
            }
            Err(e) => Ok(Err(atomics::CasError::StoreError(to_wit(e)))),
        }
    }
}

impl atomics::HostCas for CallStorage {
    async fn new(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<Resource<KvCas>> {
        let id = self.bucket_id(&bucket)?;
        let seen = async { self.transaction()?.watch(&id, &key).await }.await;
        match seen {
            Ok(seen) => Ok(Ok(self.table.push(KvCas { bucket: id, key, seen })?)),
            Err(e) => Ok(Err(to_wit(e))),
        }
    }

    async fn current(&mut self, cas: Resource<KvCas>) -> Answer<Option<Vec<u8>>> {
        Ok(Ok(self.table.get(&cas)?.seen.clone()))
    }

    async fn drop(&mut self, cas: Resource<KvCas>) -> wasmtime::Result<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

impl batch::Host for CallStorage {
    async fn get_many(
        &mut self,
        bucket: Resource<KvBucket>,
        keys: Vec<String>,
    ) -> Answer<Vec<(String, Option<Vec<u8>>)>> {
        let id = self.bucket_id(&bucket)?;
        Ok(async { self.transaction()?.get_many(&id, keys).await }.await.map_err(to_wit))
    }

    async fn set_many(&mut self, bucket: Resource<KvBucket>, key_values: Vec<(String, Vec<u8>)>) -> Answer<()> {
        let id = self.bucket_id(&bucket)?;
        let quota = self.grant.quota;
        Ok(async { self.transaction()?.set_many(&id, key_values, &quota).await }.await.map_err(to_wit))
    }

    async fn delete_many(&mut self, bucket: Resource<KvBucket>, keys: Vec<String>) -> Answer<()> {
        let id = self.bucket_id(&bucket)?;
        Ok(async { self.transaction()?.delete_many(&id, keys).await }.await.map_err(to_wit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_draft_cursor_is_numbered_once_per_key_and_bounded() {
        let mut call = CallStorage::new(None, &StorageGrant::default(), "local", Duration::from_secs(1));
        assert_eq!(call.draft_cursor("/a".into()), Some(0));
        assert_eq!(call.draft_cursor("/b".into()), Some(1));
        assert_eq!(call.draft_cursor("/a".into()), Some(0), "listing again from the start adds nothing");
        for n in 2..draft::MAX_DRAFT_CURSORS {
            assert_eq!(call.draft_cursor(format!("/{n}")), Some(n as u64));
        }
        assert_eq!(call.draft_cursor("/one-more".into()), None);
        assert_eq!(call.draft_cursor("/b".into()), Some(1), "known pages still answer");
    }
}
