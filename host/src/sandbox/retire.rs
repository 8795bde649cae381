//! Dropping a used store off the call path.
//!
//! Dropping a store gives its instance slot back to the pool, and the pool resets the
//! slot then: it finds and restores every page of linear memory the call wrote (Linux's
//! `PAGEMAP_SCAN`), flushes the fiber stack and returns the tables. That is a third of a
//! trivial call's cost and none of it is the caller's business: the answer is ready
//! before it starts. So a finished store goes to one background thread that drops it,
//! and the caller gets its answer first.
//!
//! Isolation does not change: a slot is reset before the pool hands it out again, on
//! whichever thread drops its store. Nor can a retired store cost a call its instance
//! slot: the queue is short, and every engine's pool holds [`RESERVED_SLOTS`] more slots
//! than its `max_instances` for the stores waiting in it. A store that finds the queue
//! full is dropped where it is, as before.

use std::sync::OnceLock;
use std::sync::mpsc::{SyncSender, TrySendError, sync_channel};

use wasmtime::Store;

use crate::sandbox::state::SandboxState;

/// Stores waiting to be dropped, at most.
const QUEUE: usize = 32;

/// Instance slots an engine's pool holds beyond its `max_instances`: one per store the
/// queue can hold, and one for the store being dropped.
pub(crate) const RESERVED_SLOTS: u32 = QUEUE as u32 + 1;

/// Drops `store` soon, on the retiring thread, or now when its queue is full.
pub(super) fn retire(store: Store<SandboxState>) {
    let Some(queue) = queue() else { return };
    match queue.try_send(store) {
        Ok(()) => {}
        // Dropped here, on the caller's thread, as without the queue.
        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
    }
}

/// The queue of the process's one retiring thread, started on first use; `None` if the
/// thread cannot be started (then stores are dropped where they are).
fn queue() -> Option<&'static SyncSender<Store<SandboxState>>> {
    static QUEUE_SENDER: OnceLock<Option<SyncSender<Store<SandboxState>>>> = OnceLock::new();
    QUEUE_SENDER
        .get_or_init(|| {
            let (sender, receiver) = sync_channel::<Store<SandboxState>>(QUEUE);
            std::thread::Builder::new()
                .name("toolhost-retire".into())
                .spawn(move || {
                    while let Ok(store) = receiver.recv() {
                        drop(store);
                    }
                })
                .inspect_err(|e| tracing::warn!("stores are dropped on the call path: no retiring thread: {e}"))
                .ok()
                .map(|_| sender)
        })
        .as_ref()
}
