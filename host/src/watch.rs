//! Hot reload: a file watcher over every root, debounced into [`ToolHost::reload`].
//!
//! Calls in flight are never disturbed: a reload publishes a new snapshot and calls that
//! started on the old one finish on it. A copy in progress may produce a failed load in
//! between; the last good version keeps serving, and the write that completes the file
//! triggers the reload that serves it ("the final state wins").

use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher};

use crate::ToolHost;

/// Keeps the watcher alive; dropping it stops watching.
pub struct WatchHandle {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path}: {source}")]
pub struct WatchError {
    pub path: String,
    #[source]
    pub source: notify::Error,
}

/// Whether an event can change what a root serves.
fn is_relevant(event: &notify::Event) -> bool {
    match event.kind {
        // Opening or reading a file changes nothing; closing one after writing does.
        EventKind::Access(notify::event::AccessKind::Close(notify::event::AccessMode::Write)) => true,
        EventKind::Access(_) => false,
        _ => true,
    }
}

/// The longest a reload waits for events to stop: ten debounce periods, at least a
/// second.
fn max_settle(debounce: Duration) -> Duration {
    (debounce * 10).max(Duration::from_secs(1))
}

pub(crate) fn start(host: ToolHost, debounce: Duration) -> Result<WatchHandle, WatchError> {
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
        Ok(event) if is_relevant(&event) => {
            let _ = sender.send(());
        }
        Ok(_) => {}
        // A watcher error (e.g. an event queue overflow) may hide changes: rescan.
        Err(error) => {
            tracing::warn!("file watcher: {error}; rescanning");
            let _ = sender.send(());
        }
    })
    .map_err(|source| WatchError { path: "(watcher)".into(), source })?;
    for layer in host.layers() {
        if layer.root.is_dir() {
            watcher
                .watch(&layer.root, RecursiveMode::Recursive)
                .map_err(|source| WatchError { path: layer.root.display().to_string(), source })?;
        } else {
            tracing::warn!(root = %layer.root.display(), layer = %layer.name, "root does not exist; not watched");
        }
    }
    let task = tokio::spawn(async move {
        while receiver.recv().await.is_some() {
            // Wait for the burst of events (a copy, a rename, an editor's save) to settle,
            // but not forever: a directory that never goes quiet (a log written beside
            // the tools) must not hold back every reload.
            let give_up_at = tokio::time::Instant::now() + max_settle(debounce);
            loop {
                let wait = debounce.min(give_up_at.saturating_duration_since(tokio::time::Instant::now()));
                if wait.is_zero() {
                    break;
                }
                match tokio::time::timeout(wait, receiver.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_quiet) => break,
                }
            }
            let change = host.reload().await;
            if !change.is_empty() {
                tracing::info!(
                    added = ?change.added,
                    removed = ?change.removed,
                    changed = ?change.changed,
                    errors = change.errors.len(),
                    "tools reloaded"
                );
            }
        }
    });
    Ok(WatchHandle { _watcher: watcher, task })
}
