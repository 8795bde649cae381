//! Serving while the first load runs: components served as they load, calls to a namespace still loading wait for it.
//!
//! Serving while the first load runs, as a server starts: each component is served as
//! soon as it loads, in small batches, while slower ones finish; subscribers (MCP
//! clients) hear of each batch; a call to a tool of a namespace still loading waits for
//! that namespace rather than being told the tool does not exist.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use super::ToolHost;
use super::changes::loads_between;
use crate::names;
use crate::registry::{Loading, RegistryChange, Scan};

/// Loads that finish within this long of the first one are published together: one
/// `list_changed` per batch rather than one per file.
const BATCH: Duration = Duration::from_millis(50);

/// The namespaces with a file still loading; `None` once the first load is done.
pub(crate) type Pending = Option<Arc<BTreeSet<String>>>;

/// What the first load has left to do, as calls see it.
#[derive(Clone)]
pub(crate) struct FirstLoad {
    pending: watch::Receiver<Pending>,
    /// Set once `pending` was seen `None`, which it then stays: every call asks, and
    /// reading the channel takes its lock, which 8 tasks calling at once contend for.
    done: Arc<AtomicBool>,
}

impl FirstLoad {
    /// A host whose first load finished before it was built.
    pub fn done() -> FirstLoad {
        FirstLoad { pending: watch::channel(None).1, done: Arc::new(AtomicBool::new(true)) }
    }

    /// A first load that has `scan`'s files left; the sender tells what remains.
    pub fn start(scan: &Scan) -> (FirstLoad, watch::Sender<Pending>) {
        let (sender, receiver) = watch::channel(Some(Arc::new(scan.pending_namespaces())));
        (FirstLoad { pending: receiver, done: Arc::new(AtomicBool::new(false)) }, sender)
    }

    pub fn is_done(&self) -> bool {
        if self.done.load(Ordering::Acquire) {
            return true;
        }
        let done = self.pending.borrow().is_none();
        if done {
            self.done.store(true, Ordering::Release);
        }
        done
    }

    /// Waits until no file that may hold the tool `name` (any name form) is loading: its
    /// namespace's files, or every file for a bare stdlib name. Returns at once when the
    /// first load is done or was abandoned.
    pub async fn wait_for(&self, name: &str) {
        if self.is_done() {
            return;
        }
        let full_name = names::unmap(name);
        let namespace = names::split(full_name.as_deref().unwrap_or(name)).map(|(namespace, _)| namespace);
        let mut pending = self.pending.clone();
        let settled = |pending: &Pending| match (pending, namespace) {
            (None, _) => true,
            (Some(loading), Some(namespace)) => !loading.contains(namespace),
            (Some(loading), None) => loading.is_empty(),
        };
        // An error means the load was abandoned (the runtime is shutting down).
        let _ = pending.wait_for(settled).await;
    }

    /// Completes when the first load is done.
    pub async fn wait(&self) {
        let _ = self.pending.clone().wait_for(Option::is_none).await;
    }
}

impl ToolHost {
    /// Publishes what `loading` loads, a batch at a time, then the whole snapshot.
    /// Holds the reload lock throughout, so reloads wait for it.
    pub(crate) async fn finish_first_load(
        self,
        mut scan: Scan,
        mut loading: Loading,
        pending: watch::Sender<Pending>,
        _serialized: tokio::sync::OwnedMutexGuard<()>,
    ) {
        let mut generation = 0;
        let mut publish_at: Option<Instant> = None;
        loop {
            tokio::select! {
                next = loading.next() => match next {
                    Some((order, slot)) => {
                        scan.fill(order, slot);
                        publish_at.get_or_insert_with(|| Instant::now() + BATCH);
                    }
                    None => break,
                },
                () = tokio::time::sleep_until(publish_at.unwrap_or_else(Instant::now)), if publish_at.is_some() => {
                    publish_at = None;
                    generation += 1;
                    let next = scan.partial(generation);
                    let change = RegistryChange::between(&self.snapshot.load(), &next);
                    self.publish_change(next, change);
                    pending.send_replace(Some(Arc::new(scan.pending_namespaces())));
                }
            }
        }
        scan.set_generation(generation + 1);
        let next = scan.finish();
        if let Some(metrics) = &self.metrics {
            metrics.record_reload(loads_between(None, &next), next.load_errors().count());
        }
        let change = RegistryChange::between(&self.snapshot.load(), &next);
        self.publish_change(next, change);
        pending.send_replace(None);
    }

    /// Whether the first load is done: every component file was loaded or failed. Always
    /// true unless the host was built with
    /// [`ToolHostBuilder::serve_while_loading`](crate::ToolHostBuilder::serve_while_loading).
    pub fn is_loaded(&self) -> bool {
        self.first_load.is_done()
    }

    /// Completes when the first load is done (at once unless the host was built with
    /// [`ToolHostBuilder::serve_while_loading`](crate::ToolHostBuilder::serve_while_loading)).
    pub async fn loaded(&self) {
        self.first_load.wait().await;
    }
}
