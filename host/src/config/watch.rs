//! Applying edits of `toolhost.toml` and `toolhost.lock` while a host serves: upstream servers, pins, policy and tokens.

use std::path::Path;
use std::time::Duration;

use super::HostConfig;
use crate::ToolHost;
use crate::oci::LOCK_FILE;
use crate::registry::{FileWatch, WatchError, WatchHandle, log_change};
use crate::serve::LiveTokens;

impl HostConfig {
    /// Watches the `toolhost.toml` at `path` that `host` was built from (this
    /// configuration), and `toolhost.lock` beside it, and applies what can change while
    /// serving, after each burst of writes settles for `debounce`: the `[[upstream]]`
    /// servers, as [`ToolHost::set_upstreams`] does, new pins, as
    /// [`ToolHost::set_pins`] does, the `[[policy]]` rules, as [`ToolHost::set_policy`]
    /// does, and the `[[token]]`s and `[oauth]` into `tokens` (the HTTP server's, when there is one).
    /// A file that no longer parses changes nothing and is logged with its line, the
    /// last good configuration serving on; edits of other sections are logged as
    /// needing a restart. Stops when the handle is dropped.
    pub fn watch(
        self,
        host: &ToolHost,
        path: &Path,
        debounce: Duration,
        tokens: Option<LiveTokens>,
    ) -> Result<WatchHandle, WatchError> {
        let path = std::path::absolute(path)
            .map_err(|e| WatchError { path: path.display().to_string(), source: notify::Error::io(e) })?;
        let (Some(dir), Some(file_name)) = (path.parent(), path.file_name()) else {
            let source = notify::Error::generic("not a file path");
            return Err(WatchError { path: path.display().to_string(), source });
        };
        let names = vec![file_name.to_owned(), LOCK_FILE.into()];
        let mut watch = FileWatch::start(dir, names, debounce)?;
        let (host, mut current) = (host.clone(), self);
        let task = tokio::spawn(async move {
            while watch.settled().await {
                match HostConfig::load(&path) {
                    Ok(next) => current = apply(&host, &path, (current, next), tokens.as_ref()).await,
                    Err(error) => {
                        let error = crate::text::Escaped(&error.to_string()).to_string();
                        tracing::warn!("{error}; the configuration in use stays as it was");
                    }
                }
            }
        });
        Ok(WatchHandle::of(task))
    }
}

/// Applies `next` over `current` to `host`, and returns the configuration now in use.
async fn apply(
    host: &ToolHost,
    path: &Path,
    (current, next): (HostConfig, HostConfig),
    tokens: Option<&LiveTokens>,
) -> HostConfig {
    if next == current {
        return current;
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
            return current;
        }
    }
    let pins = next.oci_pins();
    if pins != current.oci_pins() {
        tracing::info!("{LOCK_FILE}: the pins changed");
        log_change(&host.set_pins(pins).await);
    }
    if next.policy != current.policy {
        tracing::info!(rules = next.policy.rules().len(), "{}: the policy changed", path.display());
        host.set_policy(next.policy.clone());
    }
    if let Some(live) = tokens.filter(|_| next.tokens != current.tokens) {
        tracing::info!(tokens = ?next.tokens, "{}: the tokens changed", path.display());
        if next.tokens.is_empty() && !current.tokens.is_empty() {
            tracing::warn!("{}: no [[token]] is left: every request is refused until one is", path.display());
        }
        live.replace(next.tokens.clone());
    }
    let served_as_is = |config: &HostConfig| HostConfig {
        upstreams: Vec::new(),
        oci: Vec::new(),
        lock: Default::default(),
        policy: Default::default(),
        tokens: Default::default(),
        ..config.clone()
    };
    if served_as_is(&next) != served_as_is(&current) {
        tracing::warn!(
            "{}: changes outside [[upstream]], [[policy]], [[tool]], [[quota]], [[token]] and [oauth] take effect at the next start",
            path.display()
        );
    }
    next
}
