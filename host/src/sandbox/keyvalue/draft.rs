//! `wasi:keyvalue` 0.2.0-draft, the first 0.2 draft (wasmCloud served it before draft2):
//! the same buckets, grants and transaction as 0.2.0-draft2, each function answered by
//! its draft2 counterpart. What differs: list-keys cursors are numbers (here, indexes
//! into the keys the call's earlier pages ended at, so a cursor is good for the call
//! that got it), `increment` takes and returns unsigned numbers, `get-many` answers
//! `none` for a missing key, and there is no compare-and-swap.

use wasmtime::component::{HasSelf, Linker, Resource};

use super::{CallStorage, KvBucket, batch as batch2, store as store2, to_wit};

mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit/keyvalue-0.2.0-draft",
        world: "wasi:keyvalue/imports",
        imports: { default: async | trappable },
        with: { "wasi:keyvalue/store.bucket": crate::sandbox::keyvalue::KvBucket },
    });
}

use bindings::wasi::keyvalue::{atomics, batch, store};

pub(super) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    storage: fn(&mut T) -> &mut CallStorage,
) -> wasmtime::Result<()> {
    bindings::Imports::add_to_linker::<_, HasSelf<CallStorage>>(linker, storage)
}

type Answer<T> = wasmtime::Result<Result<T, store::Error>>;

/// How many distinct list-keys pages one call may hold cursors for: the keys they stand
/// for are kept in host memory, outside the guest's limit.
pub(super) const MAX_DRAFT_CURSORS: usize = 4096;

fn to_draft(error: store2::Error) -> store::Error {
    match error {
        store2::Error::NoSuchStore => store::Error::NoSuchStore,
        store2::Error::AccessDenied => store::Error::AccessDenied,
        store2::Error::Other(message) => store::Error::Other(message),
    }
}

fn answer<T, U>(answered: wasmtime::Result<Result<T, store2::Error>>, into: impl FnOnce(T) -> U) -> Answer<U> {
    Ok(answered?.map(into).map_err(to_draft))
}

impl store::Host for CallStorage {
    async fn open(&mut self, identifier: String) -> Answer<Resource<KvBucket>> {
        answer(store2::Host::open(self, identifier).await, |bucket| bucket)
    }
}

impl store::HostBucket for CallStorage {
    async fn get(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<Option<Vec<u8>>> {
        answer(store2::HostBucket::get(self, bucket, key).await, |value| value)
    }

    async fn set(&mut self, bucket: Resource<KvBucket>, key: String, value: Vec<u8>) -> Answer<()> {
        answer(store2::HostBucket::set(self, bucket, key, value).await, |()| ())
    }

    async fn delete(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<()> {
        answer(store2::HostBucket::delete(self, bucket, key).await, |()| ())
    }

    async fn exists(&mut self, bucket: Resource<KvBucket>, key: String) -> Answer<bool> {
        answer(store2::HostBucket::exists(self, bucket, key).await, |exists| exists)
    }

    async fn list_keys(&mut self, bucket: Resource<KvBucket>, cursor: Option<u64>) -> Answer<store::KeyResponse> {
        let after = match cursor {
            None => None,
            Some(n) => match usize::try_from(n).ok().and_then(|n| self.draft_cursors.get(n)) {
                Some(key) => Some(key.clone()),
                None => {
                    let unknown =
                        format!("no list-keys cursor {n} in this call (a cursor is good for the call that got it)");
                    return Ok(Err(store::Error::Other(unknown)));
                }
            },
        };
        let page = match store2::HostBucket::list_keys(self, bucket, after).await? {
            Ok(page) => page,
            Err(e) => return Ok(Err(to_draft(e))),
        };
        let cursor = match page.cursor {
            None => None,
            Some(last) => match self.draft_cursor(last) {
                Some(number) => Some(number),
                None => {
                    let many = format!("more than {MAX_DRAFT_CURSORS} list-keys pages in one call");
                    return Ok(Err(store::Error::Other(many)));
                }
            },
        };
        Ok(Ok(store::KeyResponse { keys: page.keys, cursor }))
    }

    async fn drop(&mut self, bucket: Resource<KvBucket>) -> wasmtime::Result<()> {
        store2::HostBucket::drop(self, bucket).await
    }
}

impl atomics::Host for CallStorage {
    async fn increment(&mut self, bucket: Resource<KvBucket>, key: String, delta: u64) -> Answer<u64> {
        let Ok(delta) = i64::try_from(delta) else {
            return Ok(Err(store::Error::Other(format!("a delta of {delta} is over {}", i64::MAX))));
        };
        // This draft's numbers are unsigned: a key a draft2 guest made negative answers an
        // error and keeps its value, even for a guest that ignores the error.
        let sum = self.increment_at_least(&bucket, &key, delta, 0).await?;
        Ok(sum.map(|sum| sum.unsigned_abs()).map_err(|e| to_draft(to_wit(e))))
    }
}

impl batch::Host for CallStorage {
    async fn get_many(
        &mut self,
        bucket: Resource<KvBucket>,
        keys: Vec<String>,
    ) -> Answer<Vec<Option<(String, Vec<u8>)>>> {
        answer(batch2::Host::get_many(self, bucket, keys).await, |pairs| {
            pairs.into_iter().map(|(key, value)| value.map(|value| (key, value))).collect()
        })
    }

    async fn set_many(&mut self, bucket: Resource<KvBucket>, key_values: Vec<(String, Vec<u8>)>) -> Answer<()> {
        answer(batch2::Host::set_many(self, bucket, key_values).await, |()| ())
    }

    async fn delete_many(&mut self, bucket: Resource<KvBucket>, keys: Vec<String>) -> Answer<()> {
        answer(batch2::Host::delete_many(self, bucket, keys).await, |()| ())
    }
}
