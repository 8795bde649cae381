//! The wasmtime engines of a host, and the clock that interrupts guests.
//!
//! Every call gets a fresh instance, so instantiation must cost microseconds: the pooling
//! allocator keeps memories, tables and fiber stacks mapped between calls, and
//! copy-on-write memory images make a fresh linear memory nearly free.
//!
//! Two compilers, two tiers ([`Tiering`]): a component that is not in the compile cache
//! is first compiled by Winch, wasmtime's baseline compiler, in a fraction of the time,
//! and answers calls at once; Cranelift, the optimizing compiler, then compiles it in the
//! background and its code replaces the baseline code. An engine compiles with one
//! compiler only, so a host has one engine per tier, configured alike in everything else:
//! fuel, epochs, memory limits and the pool behave the same on both.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use wasmtime::{Config, Engine, EngineWeak, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig, Strategy};

use crate::error::BuildError;
use crate::sandbox::TABLE_ELEMENTS_LIMIT;
use crate::tool::{Ceilings, MAX_TIMEOUT};

/// The most instances one engine may keep alive at once. Each costs address space (a
/// `max_memory` slot) and the pool reserves several core instances, memories and tables
/// per component instance.
pub const MAX_INSTANCES: u32 = 4096;

/// The least `max_memory` an engine takes: one WebAssembly page. Below it no component
/// with a memory could ever run.
pub const MIN_MAX_MEMORY: u64 = 64 << 10;

/// How often the epoch advances. A spinning guest notices a deadline or yields to the
/// async runtime at this granularity, so it bounds both timeout precision and how long a
/// guest can hold an executor thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

/// Unused slots kept warm (resident, reset in place) for the components called most
/// recently.
const WARM_SLOTS: u32 = 16;

/// Which compilers a host uses for components the compile cache does not hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Tiering {
    /// Baseline (Winch) code first, replaced by optimized (Cranelift) code compiled in
    /// the background; a component Winch cannot compile is compiled by Cranelift at once.
    #[default]
    Tiered,
    /// Cranelift only: slower to become callable, nothing left to compile afterwards
    /// (one-shot commands, which exit before a background compile would finish).
    OptimizedOnly,
    /// Winch only, never optimized (for tests of the baseline tier).
    BaselineOnly,
}

/// The compiler of an engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    /// Winch: compiles fast, runs slower.
    Baseline,
    /// Cranelift: compiles slower, runs fast; the only code the compile cache holds.
    Optimized,
}

/// Engine-wide settings; per-call limits live in [`crate::Limits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineSettings {
    /// Upper bound for any component's linear memory; a manifest may ask for less, never
    /// more. Also the size of each slot of the memory pool.
    pub max_memory: u64,
    /// Instances that can be alive at once (calls in flight plus loads).
    pub max_instances: u32,
    /// Native stack a guest may use before it traps with a stack overflow.
    pub max_wasm_stack: usize,
    /// Which compilers turn components into native code.
    pub tiering: Tiering,
    /// A component's native code that no call used for this long is dropped when the
    /// compile cache holds it; the next call maps it again (about a millisecond for a
    /// small component).
    pub drop_idle_code_after: Duration,
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            max_memory: 1 << 30,
            max_instances: 256,
            max_wasm_stack: 1 << 20,
            tiering: Tiering::default(),
            drop_idle_code_after: Duration::from_secs(60),
        }
    }
}

impl EngineSettings {
    /// The ceilings no tool's limits may exceed on an engine of these settings.
    pub fn ceilings(&self) -> Ceilings {
        Ceilings { memory: self.max_memory, timeout: MAX_TIMEOUT }
    }
}

impl std::str::FromStr for Tiering {
    type Err = String;
    fn from_str(text: &str) -> Result<Tiering, String> {
        match text {
            "tiered" => Ok(Tiering::Tiered),
            "optimized" => Ok(Tiering::OptimizedOnly),
            "baseline" => Ok(Tiering::BaselineOnly),
            other => Err(format!("unknown tiering `{other}` (tiered, optimized or baseline)")),
        }
    }
}

impl EngineSettings {
    /// The configuration of the optimizing (Cranelift) engine of a host of these
    /// settings, instance pool included: the one place that decides it. The host builds
    /// its engine from it, and `tests/benches/engine.rs` builds the bare-wasmtime
    /// yardstick from it, so that the two run on the same engine.
    #[doc(hidden)]
    pub fn optimized_engine_config(&self) -> Result<Config, BuildError> {
        pooled_config(self, Tier::Optimized)
    }
}

/// An engine of one tier.
pub(crate) fn new_engine(settings: &EngineSettings, tier: Tier) -> Result<Engine, BuildError> {
    let config = match tier {
        Tier::Optimized => settings.optimized_engine_config()?,
        Tier::Baseline => pooled_config(settings, Tier::Baseline)?,
    };
    Engine::new(&config).map_err(|e| BuildError::Engine(format!("{e:#}")))
}

/// An engine that only compiles, for the background compile of a tiered host: its code
/// loads into the optimizing engine (instances are allocated differently, which compiled
/// code does not depend on), and it reserves no instance pool, so a compile that
/// outlives its host holds no pool.
pub(crate) fn compiling_engine(settings: &EngineSettings) -> Result<Engine, BuildError> {
    let mut config = settings.optimized_engine_config()?;
    config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
    Engine::new(&config).map_err(|e| BuildError::Engine(format!("{e:#}")))
}

/// The configuration of an engine of `tier`, with the instance pool it runs with.
fn pooled_config(settings: &EngineSettings, tier: Tier) -> Result<Config, BuildError> {
    let (mut config, pool) = engine_config(settings, tier)?;
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Ok(config)
}

/// The configuration of an engine of `tier`, and the instance pool it runs with.
fn engine_config(settings: &EngineSettings, tier: Tier) -> Result<(Config, PoolingAllocationConfig), BuildError> {
    if !(1..=MAX_INSTANCES).contains(&settings.max_instances) {
        return Err(BuildError::Settings(format!(
            "max_instances must be between 1 and {MAX_INSTANCES}, not {}",
            settings.max_instances
        )));
    }
    if settings.max_memory < MIN_MAX_MEMORY {
        return Err(BuildError::Settings(format!(
            "max_memory must be at least {MIN_MAX_MEMORY} bytes (one WebAssembly page), not {}",
            settings.max_memory
        )));
    }
    let pool = instance_pool(settings)?;
    let mut config = Config::new();
    match tier {
        // Winch compiles the guest's functions; the trampolines between host and guest
        // are Cranelift's, and optimizing them took a third of a baseline compile. The
        // optimized tier replaces them with the rest of the code.
        Tier::Baseline => config.strategy(Strategy::Winch).cranelift_opt_level(OptLevel::None),
        // In a tiered host Cranelift compiles in the background, on one thread, so that
        // calls keep the other cores; alone, it compiles on every core.
        Tier::Optimized => {
            config.strategy(Strategy::Cranelift).parallel_compilation(settings.tiering != Tiering::Tiered)
        }
    };
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(settings.max_wasm_stack)
        .async_stack_size(settings.max_wasm_stack + (1 << 20))
        .memory_init_cow(true);
    Ok((config, pool))
}

/// The pool of instances, memories, tables and stacks every call takes one of.
fn instance_pool(settings: &EngineSettings) -> Result<PoolingAllocationConfig, BuildError> {
    let max_memory = usize::try_from(settings.max_memory)
        .map_err(|_| BuildError::Settings(format!("max_memory of {} bytes is too large", settings.max_memory)))?;
    let slots = settings.max_instances;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(slots)
        // Components built from interpreted languages hold many core instances each.
        .total_core_instances(slots * 8)
        .total_memories(slots * 2)
        .total_tables(slots * 8)
        .total_stacks(slots)
        .max_memory_size(max_memory)
        // Interpreted-language guests (Python, JS) carry large function tables.
        .table_elements(TABLE_ELEMENTS_LIMIT)
        // The fiber stack a call runs on is reused as the last call left it, and stays
        // resident: wasmtime zeroes stacks only when asked (`async_stack_zeroing`), and
        // a guest cannot address the host's stack, only its own linear memory. (How much
        // of a stack to keep resident, `async_stack_keep_resident`, applies to zeroing.)
        // A slot goes back to the pool as soon as it is reset, not in a batch: a slot
        // waiting in the decommit queue keeps its memory image, and the image keeps the
        // module's whole compiled code mapped past the drop of idle code (in an idle host
        // of 100 components, 4 components' code, 3 MB, stayed mapped that way). With
        // PAGEMAP_SCAN a reset rarely leaves anything to decommit, so a batch saves little.
        .decommit_batch_size(1)
        // A slot keeps the pages its last call dirtied resident, to be reset in place
        // next time. Every component loaded gets a slot for listing its tools, so
        // without a bound an idle host would keep one warm slot per component it ever
        // loaded; past this many, the least recently used is reused instead.
        .max_unused_warm_slots(WARM_SLOTS);
    // A fresh instance per call must not pay page faults for the pages the last call
    // dirtied. With Linux's PAGEMAP_SCAN (6.7+) wasmtime resets only the dirty pages of
    // the resident prefix in place, so a large prefix is cheap and covers a Rust guest's
    // shadow stack (its first MiB) and first heap pages. Without it the prefix is reset
    // with a full memset, so it stays small.
    if PoolingAllocationConfig::is_pagemap_scan_available() {
        pool.pagemap_scan(wasmtime::Enabled::Yes).linear_memory_keep_resident(2 << 20).table_keep_resident(64 << 10);
    } else {
        pool.linear_memory_keep_resident(64 << 10).table_keep_resident(16 << 10);
    }

    Ok(pool)
}

/// Milliseconds since the process first asked, as of the last tick of any host's
/// epoch clock: a time for bookkeeping on the call path (when a component's code was
/// last used) that costs an atomic load rather than a reading of the system clock.
/// It lags by at most a tick while a host runs, and stands still while none does.
pub(crate) fn coarse_now_ms() -> u64 {
    COARSE_NOW_MS.load(Ordering::Relaxed)
}

static COARSE_NOW_MS: AtomicU64 = AtomicU64::new(0);

/// Moves [`coarse_now_ms`] to now (never back: several hosts' clocks may tick).
fn advance_coarse_clock() {
    static START: OnceLock<Instant> = OnceLock::new();
    let elapsed = START.get_or_init(Instant::now).elapsed();
    COARSE_NOW_MS.fetch_max(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX), Ordering::Relaxed);
}

/// Advances the epoch of every engine of a host every [`EPOCH_TICK`] on a background
/// thread until dropped, and with it [`coarse_now_ms`].
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    engines: Arc<Mutex<Vec<EngineWeak>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EpochTicker {
    pub fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let engines = Arc::new(Mutex::new(vec![engine.weak()]));
        let thread = std::thread::Builder::new().name("toolhost-epoch".into()).spawn({
            let (stop, engines) = (stop.clone(), engines.clone());
            move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    advance_coarse_clock();
                    let engines = engines.lock().unwrap_or_else(|e| e.into_inner());
                    let mut alive = false;
                    for engine in engines.iter().filter_map(EngineWeak::upgrade) {
                        engine.increment_epoch();
                        alive = true;
                    }
                    if !alive {
                        return;
                    }
                }
            }
        })?;
        Ok(EpochTicker { stop, engines, thread: Some(thread) })
    }

    /// Moves the clock of `engine` too, from now on.
    pub fn add(&self, engine: &Engine) {
        self.engines.lock().unwrap_or_else(|e| e.into_inner()).push(engine.weak());
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_needs_room_for_one_page_of_memory() {
        let settings = |max_memory| EngineSettings { max_memory, ..EngineSettings::default() };
        let refused = new_engine(&settings(MIN_MAX_MEMORY - 1), Tier::Optimized).unwrap_err();
        assert!(refused.to_string().contains("at least 65536 bytes"), "{refused}");
        assert!(new_engine(&settings(MIN_MAX_MEMORY), Tier::Optimized).is_ok());
    }
}
