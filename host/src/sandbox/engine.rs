//! The one wasmtime [`Engine`] of a host, and the clock that interrupts guests.
//!
//! Every call gets a fresh instance, so instantiation must cost microseconds: the pooling
//! allocator keeps memories, tables and fiber stacks mapped between calls, and
//! copy-on-write memory images make a fresh linear memory nearly free.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::error::BuildError;
use crate::sandbox::limits::{MAX_INSTANCES, TABLE_ELEMENTS_LIMIT};

/// How often the epoch advances. A spinning guest notices a deadline or yields to the
/// async runtime at this granularity, so it bounds both timeout precision and how long a
/// guest can hold an executor thread.
pub const EPOCH_TICK: Duration = Duration::from_millis(5);

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
}

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings { max_memory: 1 << 30, max_instances: 256, max_wasm_stack: 1 << 20 }
    }
}

pub(crate) fn new_engine(settings: &EngineSettings) -> Result<Engine, BuildError> {
    if !(1..=MAX_INSTANCES).contains(&settings.max_instances) {
        return Err(BuildError::Settings(format!(
            "max_instances must be between 1 and {MAX_INSTANCES}, not {}",
            settings.max_instances
        )));
    }
    let max_memory = usize::try_from(settings.max_memory)
        .map_err(|_| BuildError::Settings(format!("max_memory of {} bytes is too large", settings.max_memory)))?;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_component_instances(settings.max_instances)
        // Components built from interpreted languages hold many core instances each.
        .total_core_instances(settings.max_instances * 8)
        .total_memories(settings.max_instances * 2)
        .total_tables(settings.max_instances * 8)
        .total_stacks(settings.max_instances)
        .max_memory_size(max_memory)
        // Interpreted-language guests (Python, JS) carry large function tables.
        .table_elements(TABLE_ELEMENTS_LIMIT)
        // The fiber stack a call runs on: keep its hot top resident too.
        .async_stack_keep_resident(128 << 10)
        // Decommitting a slot flushes TLBs on every core; batch it.
        .decommit_batch_size(16);
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

    let mut config = Config::new();
    config
        .wasm_component_model(true)
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(settings.max_wasm_stack)
        .async_stack_size(settings.max_wasm_stack + (1 << 20))
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
        .memory_init_cow(true);
    Engine::new(&config).map_err(|e| BuildError::Engine(format!("{e:#}")))
}

/// Advances the engine's epoch every [`EPOCH_TICK`] on a background thread until
/// dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EpochTicker {
    pub fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let weak = engine.weak();
        let thread = std::thread::Builder::new().name("toolhost-epoch".into()).spawn({
            let stop = stop.clone();
            move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    match weak.upgrade() {
                        Some(engine) => engine.increment_epoch(),
                        None => return,
                    }
                }
            }
        })?;
        Ok(EpochTicker { stop, thread: Some(thread) })
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
