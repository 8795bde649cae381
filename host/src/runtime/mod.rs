//! The engines components run in, the caches of their compiled code, and the slots compiles take.
//!
//! The engines components run in, the caches of their compiled code, and the slots
//! compiles take.
//!
//! A host has an engine per tier: Cranelift's (the code of the compile cache, and every
//! component's code in the end) and Winch's, created when first needed for components
//! the cache does not hold. Both are configured alike in everything but the compiler,
//! and the epoch ticker interrupts guests of both.

mod cache;
mod engine;
mod listings;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use wasmtime::Engine;
use wasmtime::component::{Component, Linker};

pub(crate) use cache::CompileCache;
pub use engine::{EPOCH_TICK, EngineSettings, MAX_INSTANCES, MIN_MAX_MEMORY, Tier, Tiering};
pub(crate) use engine::{EpochTicker, coarse_now_ms, compiling_engine};

use crate::error::BuildError;
use crate::sandbox::{SandboxState, new_linker};
use crate::tool::Ceilings;

/// An engine of one tier, and everything a guest may import linked for it.
pub(crate) struct TierEngine {
    pub tier: Tier,
    pub engine: Engine,
    pub linker: Linker<SandboxState>,
}

impl TierEngine {
    pub fn new(settings: &EngineSettings, tier: Tier) -> Result<TierEngine, BuildError> {
        let engine = engine::new_engine(settings, tier)?;
        let linker = new_linker(&engine)?;
        Ok(TierEngine { tier, engine, linker })
    }
}

/// Where compiled components are cached.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheSetting {
    /// `$TOOLHOST_CACHE_DIR`, `$XDG_CACHE_HOME/toolhost` or `~/.cache/toolhost`.
    #[default]
    Default,
    /// This directory.
    Dir(PathBuf),
    /// No compile cache: every load compiles.
    Disabled,
}

/// The engines of a host, its caches of compiled code and its compile slots.
pub(crate) struct Runtime {
    /// Cranelift's engine.
    pub optimized: TierEngine,
    /// Winch's engine, created when first needed (a host whose cache holds everything
    /// never needs it).
    baseline: OnceLock<Option<TierEngine>>,
    settings: EngineSettings,
    pub cache: Option<CompileCache>,
    /// Code `toolhost compile` made for this engine, read only.
    precompiled: Option<CompileCache>,
    epoch: EpochTicker,
    /// Compiles at once: one per core, since compiling is CPU-bound and more at once
    /// only multiplies the memory held by half-built components.
    compile_slots: tokio::sync::Semaphore,
    compile_slot_count: usize,
}

impl Runtime {
    /// The optimizing engine, the clock that interrupts guests, and the caches `cache`
    /// and `precompiled` ask for (one that cannot be used only costs compile time, so
    /// the host runs without it and says why).
    pub fn start(
        settings: &EngineSettings,
        cache: CacheSetting,
        precompiled: Option<&Path>,
    ) -> Result<Runtime, BuildError> {
        let optimized = TierEngine::new(settings, Tier::Optimized)?;
        let epoch = EpochTicker::start(&optimized.engine).map_err(BuildError::EpochThread)?;
        let cache = open_cache(cache, &optimized.engine);
        let precompiled = precompiled.and_then(|dir| open_precompiled(dir, &optimized.engine));
        let compile_slot_count = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(2, 16);
        Ok(Runtime {
            optimized,
            baseline: OnceLock::new(),
            settings: settings.clone(),
            cache,
            precompiled,
            epoch,
            compile_slots: tokio::sync::Semaphore::new(compile_slot_count),
            compile_slot_count,
        })
    }

    /// The settings the engines were made with.
    pub fn settings(&self) -> &EngineSettings {
        &self.settings
    }

    /// Which compilers turn components into native code.
    pub fn tiering(&self) -> Tiering {
        self.settings.tiering
    }

    /// The ceilings no tool's limits may exceed on these engines.
    pub fn ceilings(&self) -> Ceilings {
        self.settings.ceilings()
    }

    /// The engine of `tier`.
    pub fn engine(&self, tier: Tier) -> &TierEngine {
        match tier {
            Tier::Baseline => self.baseline().unwrap_or(&self.optimized),
            Tier::Optimized => &self.optimized,
        }
    }

    /// Winch's engine, unless the host compiles with Cranelift only (or Winch cannot run
    /// here, which is logged once).
    pub fn baseline(&self) -> Option<&TierEngine> {
        if self.settings.tiering == Tiering::OptimizedOnly {
            return None;
        }
        self.baseline
            .get_or_init(|| match TierEngine::new(&self.settings, Tier::Baseline) {
                Ok(baseline) => {
                    self.epoch.add(&baseline.engine);
                    Some(baseline)
                }
                Err(e) => {
                    tracing::warn!("components compile with Cranelift only: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// Optimized code for `hash` from a cache, mapped: the precompiled one first, then
    /// the compile cache. Blocking file I/O (a checksum pass, a mapping).
    pub fn cached_code(&self, hash: &str) -> Option<Component> {
        self.precompiled.iter().chain(&self.cache).find_map(|cache| cache.get(&self.optimized.engine, hash).ok())
    }

    /// The listing kept for a component's bytes: the precompiled cache's first, then the
    /// compile cache's. Blocking file I/O.
    pub fn listing(&self, hash: &str) -> Option<(Vec<u8>, &CompileCache)> {
        self.precompiled.iter().chain(&self.cache).find_map(|cache| Some((cache.listing(hash)?, cache)))
    }

    /// Keeps a component's listing in the compile cache. Blocking file I/O.
    pub fn remember_listing(&self, hash: &str, listing: &[u8]) {
        if let Some(cache) = &self.cache {
            cache.remember_listing(hash, listing);
        }
    }

    /// Compiles component bytes with `engine`, in one of the compile slots. CPU-heavy:
    /// runs on the blocking pool.
    pub async fn compile(&self, engine: &TierEngine, bytes: Arc<[u8]>) -> Result<Component, String> {
        let _slot = self.compile_slots.acquire().await.map_err(|_| "the host is shutting down".to_owned())?;
        let engine = engine.engine.clone();
        blocking(move || Component::new(&engine, &bytes).map_err(|e| format!("{e:#}")))
            .await
            .map_err(|e| format!("compilation panicked: {e}"))?
    }

    /// Whether a load is compiling now: a background compile waits for spare cores.
    pub fn loads_compiling(&self) -> bool {
        self.compile_slots.available_permits() < self.compile_slot_count
    }

    /// Writes optimized code to the compile cache and returns the copy mapped from it
    /// (the one in memory when there is no cache, or writing failed), and whether the
    /// cache holds it. File I/O.
    pub fn store(&self, hash: &str, component: Component) -> (Component, bool) {
        match &self.cache {
            Some(cache) => match cache.put(&self.optimized.engine, hash, &component) {
                Some(mapped) => (mapped, true),
                None => (component, false),
            },
            None => (component, false),
        }
    }

    /// Holds every compile slot until the returned permit is dropped, as if loads were
    /// compiling (for tests of what waits for them).
    #[cfg(test)]
    pub async fn hold_compile_slots(&self) -> tokio::sync::SemaphorePermit<'_> {
        self.compile_slots.acquire_many(self.compile_slot_count as u32).await.expect("the slots are open")
    }
}

/// Takes the pages of a component mapped from its entry out of this process's memory,
/// so that its code costs nothing until a call runs it. Reading an entry touches nearly
/// every page of it (a 0.8 MB entry left ~0.78 MB resident), so a host that loaded a
/// hundred components held all their code from the start. The pages are clean copies of
/// the file: wasmtime refuses entries with relocations and never writes to a loaded
/// image, so the next touch maps the same bytes again from the page cache (a minor
/// fault), and the page cache, shared with other processes, keeps them.
fn release_pages(component: &Component) {
    #[cfg(target_os = "linux")]
    {
        let image = component.image_range();
        let len = (image.end as usize).saturating_sub(image.start as usize);
        // SAFETY: `image` is the private mapping of the entry `deserialize_file` made
        // (page-aligned, as every mapping is); dropping its pages changes no byte a
        // reader sees, since none was ever written (see above).
        let released = unsafe { libc::madvise(image.start as *mut libc::c_void, len, libc::MADV_DONTNEED) };
        if released != 0 {
            tracing::debug!("a mapped component's pages stay resident: {}", std::io::Error::last_os_error());
        }
    }
}

/// Runs blocking work of a load (file I/O, parsing, compiling) on tokio's blocking pool,
/// then returns what that thread freed into its allocator cache to the shared arenas
/// ([`crate::allocator::flush_thread_cache`]), where the purge at the end of the load
/// reaches it. A start loads on dozens of those threads at once, and each would
/// otherwise keep its cache while it idles.
pub(crate) async fn blocking<R: Send + 'static>(
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<R, tokio::task::JoinError> {
    tokio::task::spawn_blocking(move || {
        let result = work();
        crate::allocator::flush_thread_cache();
        result
    })
    .await
}

/// The compile cache a setting asks for; one that cannot be used only costs compile
/// time, so the host runs without it and says why.
fn open_cache(setting: CacheSetting, engine: &Engine) -> Option<CompileCache> {
    let dir = match setting {
        CacheSetting::Default => crate::paths::cache_dir()?,
        CacheSetting::Dir(dir) => dir,
        CacheSetting::Disabled => return None,
    };
    CompileCache::open(&dir, engine)
        .inspect_err(|e| tracing::warn!(dir = %dir.display(), "compile cache disabled: {e}"))
        .ok()
}

fn open_precompiled(dir: &Path, engine: &Engine) -> Option<CompileCache> {
    match CompileCache::open_precompiled(dir, engine) {
        Ok(cache) => {
            tracing::info!(dir = %cache.dir().display(), "precompiled code is read from here");
            Some(cache)
        }
        Err(e) => {
            tracing::warn!(dir = %dir.display(), "the precompiled cache is not used, components are compiled: {e}");
            None
        }
    }
}
