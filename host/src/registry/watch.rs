//! Hot reload: a file watcher over every root, and over a few files of a directory, debounced into bursts.
//!
//! Calls in flight are never disturbed: a reload publishes a new snapshot and calls that
//! started on the old one finish on it. A copy in progress may produce a failed load in
//! between; the last good version keeps serving, and the write that completes the file
//! triggers the reload that serves it ("the final state wins").
//!
//! A root that does not exist (yet) is watched through its nearest existing ancestor, so
//! creating it later, or removing and creating it again, is noticed like any change.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::future::BoxFuture;
use notify::{EventKind, RecursiveMode, Watcher};

use super::RegistryChange;

/// Keeps the watcher alive (its task owns it); dropping it stops watching.
pub struct WatchHandle {
    task: tokio::task::JoinHandle<()>,
}

impl WatchHandle {
    /// The handle of `task`, which owns a watcher: dropping the handle stops it.
    pub(crate) fn of(task: tokio::task::JoinHandle<()>) -> WatchHandle {
        WatchHandle { task }
    }
}

impl Drop for WatchHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Debug, thiserror::Error)]
#[error("cannot watch {path}: {source}")]
/// The file watcher could not be set up.
pub struct WatchError {
    /// What could not be watched.
    pub path: String,
    #[source]
    /// Why.
    pub source: notify::Error,
}

/// What is watched for one root: the root itself, or (while it is missing) the nearest
/// ancestor that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Watched {
    Root,
    Ancestor(PathBuf),
    Nothing,
}

/// Brings the watches in line with which roots exist now.
fn refresh_watches(
    watcher: &mut notify::RecommendedWatcher,
    roots: &[PathBuf],
    watched: &mut HashMap<PathBuf, Watched>,
) -> Result<(), WatchError> {
    for root in roots {
        let before = watched.get(root).cloned().unwrap_or(Watched::Nothing);
        let now = if root.is_dir() {
            // Always (re)added: a root removed and created again within one burst is a
            // new directory that the old watch does not see. Adding is idempotent.
            watcher
                .watch(root, RecursiveMode::Recursive)
                .map_err(|source| WatchError { path: root.display().to_string(), source })?;
            Watched::Root
        } else {
            match nearest_existing_ancestor(root) {
                Some(ancestor) => {
                    if before != Watched::Ancestor(ancestor.clone()) {
                        watcher
                            .watch(&ancestor, RecursiveMode::NonRecursive)
                            .map_err(|source| WatchError { path: ancestor.display().to_string(), source })?;
                    }
                    Watched::Ancestor(ancestor)
                }
                None => Watched::Nothing,
            }
        };
        if let Watched::Ancestor(old) = &before
            && now != before
            && !still_needed(old, watched, root)
        {
            // Gone with the directory, or no longer needed; either way nothing to keep.
            let _ = watcher.unwatch(old);
        }
        if now != before {
            match &now {
                Watched::Root => tracing::debug!(root = %root.display(), "watching root"),
                Watched::Ancestor(ancestor) => tracing::info!(
                    root = %root.display(),
                    ancestor = %ancestor.display(),
                    "root does not exist; watching for it to appear"
                ),
                Watched::Nothing => tracing::warn!(root = %root.display(), "root and every ancestor are missing"),
            }
        }
        watched.insert(root.clone(), now);
    }
    Ok(())
}

/// Whether another root still relies on a watch of `ancestor`.
fn still_needed(ancestor: &Path, watched: &HashMap<PathBuf, Watched>, except: &Path) -> bool {
    watched.iter().any(|(root, w)| root != except && *w == Watched::Ancestor(ancestor.to_owned()))
}

fn nearest_existing_ancestor(path: &Path) -> Option<PathBuf> {
    let absolute = std::path::absolute(path).ok()?;
    absolute.ancestors().skip(1).find(|dir| dir.is_dir()).map(Path::to_owned)
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

/// How often the roots are rescanned when no file watcher can be had.
const POLL_INTERVAL: Duration = Duration::from_secs(2);

/// What a watch of the roots calls after each burst of changes: a reload, whose change
/// it logs.
pub(crate) type Reload = Box<dyn Fn() -> BoxFuture<'static, RegistryChange> + Send + Sync>;

/// Watches `roots` and calls `reload` after each burst of changes settles for
/// `debounce`. When the system refuses a watcher (too few file descriptors, inotify
/// instances or watches), rescans every [`POLL_INTERVAL`] instead and says so: changes
/// are then seen later, never missed, and the host keeps serving.
pub(crate) fn watch_roots(roots: Vec<PathBuf>, debounce: Duration, reload: Reload) -> Result<WatchHandle, WatchError> {
    let (mut watcher, mut receiver) = match signalling_watcher("file watcher", |_| true) {
        Ok(watcher) => watcher,
        Err(error) => return Ok(polling(&error, reload)),
    };
    let mut watched = HashMap::new();
    if let Err(error) = refresh_watches(&mut watcher, &roots, &mut watched) {
        return Ok(polling(&error, reload));
    }
    let task = tokio::spawn(async move {
        while receiver.recv().await.is_some() {
            if !settle(&mut receiver, debounce).await {
                return;
            }
            // A root may have appeared or vanished: watch what exists before rescanning,
            // so that files written into a new root from now on are seen.
            if let Err(error) = refresh_watches(&mut watcher, &roots, &mut watched) {
                tracing::warn!("{}", crate::text::Escaped(&error.to_string()));
            }
            log_change(&reload().await);
        }
    });
    Ok(WatchHandle { task })
}

fn polling(error: &WatchError, reload: Reload) -> WatchHandle {
    tracing::warn!(
        "{}; rescanning the roots every {POLL_INTERVAL:?} instead",
        crate::text::Escaped(&error.to_string())
    );
    let task = tokio::spawn(async move {
        let mut ticks = tokio::time::interval(POLL_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            log_change(&reload().await);
        }
    });
    WatchHandle { task }
}

/// Says what a reload changed, when it changed anything.
pub(crate) fn log_change(change: &RegistryChange) {
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

/// Waits for a burst of events (a copy, a rename, an editor's save) to settle, but not
/// forever: a directory that never goes quiet (a log written beside the tools) must not
/// hold back every reload. `false` when the watcher is gone.
async fn settle(receiver: &mut tokio::sync::mpsc::UnboundedReceiver<()>, debounce: Duration) -> bool {
    let give_up_at = tokio::time::Instant::now() + max_settle(debounce);
    loop {
        let wait = debounce.min(give_up_at.saturating_duration_since(tokio::time::Instant::now()));
        if wait.is_zero() {
            return true;
        }
        match tokio::time::timeout(wait, receiver.recv()).await {
            Ok(Some(())) => continue,
            Ok(None) => return false,
            Err(_quiet) => return true,
        }
    }
}

/// A watch of a few files of one directory: the directory itself is watched, since
/// editors save by writing a new file and renaming it over the old one, which a watch
/// of the old file's inode never sees.
pub(crate) struct FileWatch {
    _watcher: notify::RecommendedWatcher,
    receiver: tokio::sync::mpsc::UnboundedReceiver<()>,
    debounce: Duration,
}

impl FileWatch {
    /// Watches the files of `dir` named `names`.
    pub fn start(dir: &Path, names: Vec<std::ffi::OsString>, debounce: Duration) -> Result<FileWatch, WatchError> {
        let (mut watcher, receiver) = signalling_watcher("configuration watcher", move |event| {
            event.paths.iter().any(|path| path.file_name().is_some_and(|name| names.iter().any(|n| n == name)))
        })?;
        watcher
            .watch(dir, RecursiveMode::NonRecursive)
            .map_err(|source| WatchError { path: dir.display().to_string(), source })?;
        Ok(FileWatch { _watcher: watcher, receiver, debounce })
    }

    /// Completes once a burst of changes of the files has settled; `false` when the
    /// watcher is gone.
    pub async fn settled(&mut self) -> bool {
        self.receiver.recv().await.is_some() && settle(&mut self.receiver, self.debounce).await
    }
}

/// A watcher that signals every relevant event `concerns`, and every watcher error (an
/// event queue overflow may hide changes: the receiver looks again).
fn signalling_watcher(
    name: &'static str,
    concerns: impl Fn(&notify::Event) -> bool + Send + 'static,
) -> Result<(notify::RecommendedWatcher, tokio::sync::mpsc::UnboundedReceiver<()>), WatchError> {
    let (sender, receiver) = tokio::sync::mpsc::unbounded_channel::<()>();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| match event {
        Ok(event) if is_relevant(&event) && concerns(&event) => {
            let _ = sender.send(());
        }
        Ok(_) => {}
        Err(error) => {
            tracing::warn!("{name}: {}; looking again", crate::text::Escaped(&error.to_string()));
            let _ = sender.send(());
        }
    })
    .map_err(|source| WatchError { path: "(watcher)".into(), source })?;
    Ok((watcher, receiver))
}
