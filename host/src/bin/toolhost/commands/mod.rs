//! One file per command, each parsing its arguments and calling the library: what every command shares is here.

pub mod call;
pub mod compile;
pub mod export;
pub mod import_policy;
pub mod inspect;
pub mod list;
pub mod new;
pub mod oci;
pub mod paths;
pub mod policy;
pub mod preinit;
pub mod serve;
pub mod storage;
pub mod token;

use std::io::IsTerminal;
use std::path::PathBuf;

use toolhost::{CacheSetting, Caller, HostConfig, Tiering, ToolHost, ToolHostBuilder};

use crate::output::print_progress;

/// The host's layers and settings: the configuration file, then the command line.
#[derive(Clone)]
pub struct HostOptions {
    pub config: Option<PathBuf>,
    pub roots: Vec<PathBuf>,
    pub stdlib: Option<PathBuf>,
    pub cache_dir: Option<PathBuf>,
    pub no_cache: bool,
    pub caller: Caller,
}

/// How long a host lives: one command, or serving until stopped.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Lifetime {
    /// Exits after one answer: compiles with Cranelift at once to fill the compile
    /// cache for the next run (a background compile would be cut short), or with Winch
    /// when no cache keeps the code (see [`one_shot_tiering`]).
    OneShot,
    /// Serves until stopped: the configuration's tiering.
    Serving,
}

impl HostOptions {
    /// The configuration file's settings, or the defaults without one.
    pub fn config(&self) -> anyhow::Result<HostConfig> {
        Ok(HostConfig::find(self.config.as_deref())?.unwrap_or_default())
    }

    /// A host serving the configured layers, or `dir` (and `--root`s) in their place.
    pub async fn build(&self, dir: Option<PathBuf>, lifetime: Lifetime) -> anyhow::Result<ToolHost> {
        Ok(self.builder_from(self.config()?, dir, lifetime).build().await?)
    }

    /// A builder of the configured layers, or `dir` (and `--root`s) in their place.
    pub fn builder_from(&self, config: HostConfig, dir: Option<PathBuf>, lifetime: Lifetime) -> ToolHostBuilder {
        let roots: Vec<PathBuf> = dir.into_iter().chain(self.roots.iter().cloned()).collect();
        let layers = config.layers_with(&roots, self.stdlib.as_deref());
        self.settings(HostConfig { layers, ..config }, lifetime)
    }

    /// A host with the configuration's settings (limits, engine, cache) and no layers
    /// nor upstream servers: inspecting one file loads nothing else.
    /// A file pulled from a registry keeps its pin in `toolhost.lock` (and who signed it).
    pub async fn build_without_layers(&self) -> anyhow::Result<ToolHost> {
        let config = self.config()?;
        let pins = config.oci_pins();
        let bare = HostConfig { layers: Vec::new(), upstreams: Vec::new(), ..config };
        let builder = self.settings(bare, Lifetime::OneShot);
        Ok(pins.into_iter().fold(builder, |builder, (file, pin)| builder.pin(file, pin)).build().await?)
    }

    fn settings(&self, mut config: HostConfig, lifetime: Lifetime) -> ToolHostBuilder {
        if self.no_cache {
            config.cache = CacheSetting::Disabled;
        } else if let Some(dir) = &self.cache_dir {
            config.cache = CacheSetting::Dir(dir.clone());
        }
        let cached = config.cache != CacheSetting::Disabled;
        if lifetime == Lifetime::OneShot {
            config.engine.tiering = one_shot_tiering(cached);
        }
        // A server keeps numbers for `GET /metrics` (a one-shot command has no one to
        // show them to), and answers while slow components are still loading.
        let serving = lifetime == Lifetime::Serving;
        let mut builder = config.builder().metrics(serving).serve_while_loading(serving);
        if std::io::stderr().is_terminal() {
            builder = builder.on_progress(move |progress| print_progress(progress, cached));
        }
        builder
    }
}

/// The compiler of a command that exits after one answer. With a compile cache, Cranelift
/// at once: its code is what the cache keeps, so the next run starts from it. Without
/// one, nothing outlives the command, and Winch makes the code soonest (a first call of
/// the 18 MB Python component: 0.8 s against 8.4 s; Cranelift compiles what Winch cannot).
fn one_shot_tiering(cached: bool) -> Tiering {
    if cached { Tiering::OptimizedOnly } else { Tiering::BaselineOnly }
}
