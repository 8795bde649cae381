//! Hot reload: a file watcher over every root, debounced into [`ToolHost::reload`].
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

use notify::{EventKind, RecursiveMode, Watcher};

use crate::{HostConfig, ToolHost};

/// Keeps the watcher alive (its task owns it); dropping it stops watching.
pub struct WatchHandle {
    task: tokio::task::JoinHandle<()>,
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

/// Watches the roots; when the system refuses a watcher (too few file descriptors,
/// inotify instances or watches), rescans them every [`POLL_INTERVAL`] instead and
/// says so: changes are then seen later, never missed, and the host keeps serving.
pub(crate) fn start(host: ToolHost, debounce: Duration) -> Result<WatchHandle, WatchError> {
    match start_watcher(host.clone(), debounce) {
        Ok(handle) => Ok(handle),
        Err(error) => {
            tracing::warn!(
                "{}; rescanning the roots every {POLL_INTERVAL:?} instead",
                crate::text::Escaped(&error.to_string())
            );
            Ok(start_polling(host))
        }
    }
}

fn start_polling(host: ToolHost) -> WatchHandle {
    let task = tokio::spawn(async move {
        let mut ticks = tokio::time::interval(POLL_INTERVAL);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            log_change(&host.reload().await);
        }
    });
    WatchHandle { task }
}

fn log_change(change: &crate::RegistryChange) {
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

/// Watches `toolhost.toml` at `path`, and `toolhost.lock` beside it, and applies what
/// can change while serving: the `[[upstream]]` servers (started, stopped, restarted as
/// their declarations changed) and the lock's pins (the files whose pin moved are
/// loaded again).
/// A file that no longer parses is reported with its line and changes nothing; other
/// edits are reported as taking effect at the next start. `started_with` is the
/// configuration the host was built from.
pub(crate) fn start_config(
    host: ToolHost,
    path: &Path,
    started_with: HostConfig,
    debounce: Duration,
) -> Result<WatchHandle, WatchError> {
    let path = std::path::absolute(path)
        .map_err(|e| WatchError { path: path.display().to_string(), source: notify::Error::io(e) })?;
    let (Some(dir), Some(file_name)) = (path.parent().map(Path::to_owned), path.file_name().map(ToOwned::to_owned))
    else {
        return Err(WatchError { path: path.display().to_string(), source: notify::Error::generic("not a file path") });
    };
    let lock_name = std::ffi::OsString::from(crate::oci::lock::LOCK_FILE);
    // The directory, not the file: editors save by writing a new file and renaming it
    // over the old one, which a watch of the old file's inode never sees.
    let (mut watcher, mut receiver) = signalling_watcher("configuration watcher", move |event| {
        event.paths.iter().any(|p| p.file_name() == Some(&file_name) || p.file_name() == Some(&lock_name))
    })?;
    watcher
        .watch(&dir, RecursiveMode::NonRecursive)
        .map_err(|source| WatchError { path: dir.display().to_string(), source })?;

    let task = tokio::spawn(async move {
        let _watcher = watcher;
        let mut current = started_with;
        while receiver.recv().await.is_some() {
            if !settle(&mut receiver, debounce).await {
                return;
            }
            let next = match HostConfig::load(&path) {
                Ok(next) => next,
                Err(error) => {
                    let error = crate::text::Escaped(&error.to_string()).to_string();
                    tracing::warn!("{error}; the configuration in use stays as it was");
                    continue;
                }
            };
            if next == current {
                continue;
            }
            match host.set_upstreams(next.upstreams.clone()).await {
                Ok(changes) if !changes.is_empty() => tracing::info!(
                    started = ?changes.started,
                    stopped = ?changes.stopped,
                    restarted = ?changes.restarted,
                    "upstream MCP servers changed"
                ),
                Ok(_) => {}
                Err(error) => {
                    tracing::warn!("{}: {error}; the upstream servers stay as they were", path.display());
                    continue;
                }
            }
            let pins = next.oci_pins();
            if pins != current.oci_pins() {
                tracing::info!("{}: the pins changed", crate::oci::lock::LOCK_FILE);
                log_change(&host.set_pins(pins).await);
            }
            let served_as_is = |config: &HostConfig| HostConfig {
                upstreams: Vec::new(),
                oci: Vec::new(),
                lock: Default::default(),
                ..config.clone()
            };
            let restart_needed = served_as_is(&next) != served_as_is(&current);
            if restart_needed {
                tracing::warn!(
                    "{}: changes outside [[upstream]] take effect when the host starts again",
                    path.display()
                );
            }
            current = next;
        }
    });
    Ok(WatchHandle { task })
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

fn start_watcher(host: ToolHost, debounce: Duration) -> Result<WatchHandle, WatchError> {
    let (mut watcher, mut receiver) = signalling_watcher("file watcher", |_| true)?;
    let roots: Vec<PathBuf> = host.layers().iter().filter_map(|layer| layer.root.clone()).collect();
    let mut watched = HashMap::new();
    refresh_watches(&mut watcher, &roots, &mut watched)?;

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
            log_change(&host.reload().await);
        }
    });
    Ok(WatchHandle { task })
}
