//! Pre-initialization: a component run once at build time and written back as the state its initialization left.
//!
//! So that every fresh instance starts where the initialization ended: an interpreter
//! built into a component (RustPython, Boa) spends milliseconds building itself in
//! every instance, and every call is a fresh instance. wasmtime-wizer
//! instruments the component so that its linear memories and mutable globals can be
//! read, this module instantiates it, calls its initialization export once, and wizer
//! rewrites the component with what that left as its initial state. A call then starts
//! from the same immutable image as before, just a later one: isolation is unchanged.
//!
//! What a snapshot cannot hold is a handle: a stream, a file descriptor, a pollable.
//! A handle the initialization kept would dangle in every instance, so a snapshot is
//! refused when the initialization leaves any WASI resource open. Whatever it asked the
//! host for (random bytes, the clock) is frozen into the snapshot. The initialization
//! runs in the sandbox of a call with no grants: no environment, files, network,
//! storage or configuration, and what it prints goes nowhere.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Component, Instance, InstancePre, Lift, WasmList};
use wasmtime::{Config, Engine, OptLevel, Store, Strategy};
use wasmtime_wizer::{ComponentInstanceState, Wizer};

use crate::runtime::EpochTicker;
use crate::sandbox::{Grants, KeptStore, Sandbox, SandboxState, Services, new_linker};
use crate::tool::Limits;

/// How one component is pre-initialized.
#[derive(Debug, Clone)]
pub struct Preinit {
    /// The component-level export to call, of type `func()`.
    pub init_export: String,
    /// How long the initialization may run.
    pub timeout: Duration,
    /// The most linear memory the initialization may grow to, in bytes.
    pub max_memory: u64,
}

impl Default for Preinit {
    fn default() -> Self {
        Preinit {
            init_export: crate::contract::PREINIT_EXPORT.to_owned(),
            timeout: Duration::from_secs(60),
            max_memory: 1 << 30,
        }
    }
}

/// Why a component could not be pre-initialized.
#[derive(Debug, thiserror::Error)]
pub enum PreinitError {
    /// The bytes are not a component wizer can instrument (a core module, a component
    /// whose modules are instantiated twice, code that mutates tables, …).
    #[error("cannot be pre-initialized: {0}")]
    Unsupported(String),
    /// The component has no component-level export of that name and type `func()`.
    #[error("has no export `{export}` of type `func()` to initialize it with ({reason})")]
    NoInitExport {
        /// The export looked for.
        export: String,
        /// What was found instead.
        reason: String,
    },
    /// Compiling or instantiating the instrumented component failed.
    #[error("cannot be instantiated for its initialization: {0}")]
    Instantiate(String),
    /// The initialization trapped, ran out of time or outgrew its memory.
    #[error("its initialization `{export}` failed: {reason}")]
    InitFailed {
        /// The export called.
        export: String,
        /// The trap, with its backtrace.
        reason: String,
    },
    /// The initialization left handles (streams, descriptors, …) that a snapshot
    /// cannot carry: they would dangle in every instance.
    #[error(
        "its initialization `{export}` left {count} WASI resource(s) open (an output stream once it printed, a \
         file, a clock's pollable…); a snapshot cannot carry handles, so the initialization must close them"
    )]
    HeldResources {
        /// The export called.
        export: String,
        /// How many handles were left.
        count: usize,
    },
    /// Reading the instance's state or writing the snapshot failed.
    #[error("its snapshot failed: {0}")]
    Snapshot(String),
}

/// Runs `wasm`'s initialization export once and returns the component rewritten to
/// start from the state it left. The init export stays exported (wasmtime#13168:
/// removing it breaks components whose core module exports the same name, as every
/// wit-bindgen guest's does); calling it again only redoes the initialization.
pub async fn preinitialize(wasm: &[u8], preinit: &Preinit) -> Result<Vec<u8>, PreinitError> {
    let export = preinit.init_export.as_str();
    super::check_preamble(wasm).map_err(|e| PreinitError::Unsupported(e.to_string()))?;
    let mut wizer = Wizer::new();
    wizer.init_func(export).keep_init_func(true);
    let (context, instrumented) =
        wizer.instrument_component(wasm).map_err(|e| PreinitError::Unsupported(format!("{e:#}")))?;

    let engine = init_engine().map_err(PreinitError::Instantiate)?;
    let ticker = EpochTicker::start(&engine).map_err(|e| PreinitError::Instantiate(format!("epoch thread: {e}")))?;
    let component = Component::new(&engine, &instrumented).map_err(|e| PreinitError::Instantiate(format!("{e:#}")))?;
    if component.get_export_index(None, export).is_none() {
        return Err(PreinitError::NoInitExport { export: export.to_owned(), reason: "no export by that name".into() });
    }
    let linker = new_linker(&engine).map_err(|e| PreinitError::Instantiate(e.to_string()))?;
    let pre = linker.instantiate_pre(&component).map_err(|e| PreinitError::Instantiate(format!("{e:#}")))?;

    // Fuel is not counted: the time limit bounds the run.
    let limits = Limits { fuel: u64::MAX, memory: preinit.max_memory, timeout: preinit.timeout, ..Limits::default() };
    let mut kept =
        sandbox(&engine, preinit, &limits).keep_store().map_err(|e| PreinitError::Instantiate(e.to_string()))?;
    let instance = initialize(&mut kept, &pre, preinit).await?;

    // wizer's accessors only read memory and globals.
    kept.lift_limits();
    let mut state = InstanceState { store: &mut kept.store, instance, failure: None };
    let snapshot = wizer.snapshot_component(&context, &mut state).await;
    if let Some(failure) = state.failure {
        return Err(PreinitError::Snapshot(failure));
    }
    drop(ticker);
    let snapshot = snapshot.map_err(|e| PreinitError::Snapshot(format!("{e:#}")))?;
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&snapshot)
        .map_err(|e| PreinitError::Snapshot(format!("the rewritten component does not validate: {e}")))?;
    Ok(snapshot)
}

/// Instantiates the component in `kept`'s store and calls its init export once, within
/// the store's limits: the instance it initialized, holding no resource.
async fn initialize(
    kept: &mut KeptStore,
    pre: &InstancePre<SandboxState>,
    preinit: &Preinit,
) -> Result<Instance, PreinitError> {
    let export = preinit.init_export.as_str();
    let backstop = kept.backstop();
    let store = &mut kept.store;
    let run = async move {
        let instance = pre.instantiate_async(&mut *store).await?;
        let init = instance.get_typed_func::<(), ()>(&mut *store, export)?;
        init.call_async(&mut *store, ()).await.map(|()| instance)
    };
    // The epoch deadline stops a guest running wasm; one blocked in a host call (a
    // sleep, a poll) is stopped here, as a call's is.
    let instance = match tokio::time::timeout(backstop, run).await {
        Ok(Ok(instance)) => instance,
        Ok(Err(e)) => {
            return Err(PreinitError::InitFailed { export: export.to_owned(), reason: kept.failure(e).to_string() });
        }
        Err(_elapsed) => {
            let reason = format!("it ran past its {:?} time limit, waiting in a host call", preinit.timeout);
            return Err(PreinitError::InitFailed { export: export.to_owned(), reason });
        }
    };
    let open = kept.open_resources();
    if open > 0 {
        return Err(PreinitError::HeldResources { export: export.to_owned(), count: open });
    }
    Ok(instance)
}

/// The sandbox of a call with no grants, within `limits`.
fn sandbox<'a>(engine: &'a Engine, preinit: &Preinit, limits: &'a Limits) -> Sandbox<'a> {
    Sandbox {
        engine,
        label: Arc::from(preinit.init_export.as_str()),
        limits,
        grants: Arc::new(Grants::default()),
        services: Services::none(),
    }
}

/// The engine the initialization runs on: Winch, since the instrumented component is
/// compiled to run once; deterministic relaxed SIMD, as the snapshot must not depend on
/// the machine that took it; fuel and epochs, as every sandbox's store counts them.
fn init_engine() -> Result<Engine, String> {
    let mut config = Config::new();
    config
        .strategy(Strategy::Winch)
        .cranelift_opt_level(OptLevel::None)
        .wasm_component_model(true)
        .relaxed_simd_deterministic(true)
        .consume_fuel(true)
        .epoch_interruption(true);
    Engine::new(&config).map_err(|e| format!("{e:#}"))
}

/// wizer's view of the initialized instance: its accessor exports, called through the
/// store. The trait's methods cannot fail, so the first failure is kept and reported
/// after the snapshot, whose bytes are then discarded.
struct InstanceState<'a> {
    store: &'a mut Store<SandboxState>,
    instance: Instance,
    failure: Option<String>,
}

impl InstanceState<'_> {
    async fn call<R: Lift + 'static, V>(
        &mut self,
        interface: &str,
        function: &str,
        read: impl FnOnce(&Store<SandboxState>, R) -> V,
    ) -> Option<V> {
        if self.failure.is_some() {
            return None;
        }
        match self.try_call(interface, function).await {
            Ok(value) => Some(read(self.store, value)),
            Err(e) => {
                self.failure = Some(format!("reading {interface}#{function}: {e}"));
                None
            }
        }
    }

    async fn try_call<R: Lift + 'static>(&mut self, interface: &str, function: &str) -> Result<R, String> {
        let (_, interface_index) =
            self.instance.get_export(&mut *self.store, None, interface).ok_or("no such export instance")?;
        let (_, function_index) = self
            .instance
            .get_export(&mut *self.store, Some(&interface_index), function)
            .ok_or("no such export function")?;
        let typed =
            self.instance.get_typed_func::<(), (R,)>(&mut *self.store, function_index).map_err(|e| format!("{e:#}"))?;
        let (value,) = typed.call_async(&mut *self.store, ()).await.map_err(|e| format!("{e:#}"))?;
        Ok(value)
    }
}

impl ComponentInstanceState for InstanceState<'_> {
    async fn call_func_ret_list_u8(&mut self, instance: &str, func: &str, contents: impl FnOnce(&[u8]) + Send) {
        // Not called on a failure: the snapshot is then discarded.
        self.call(instance, func, |store, list: WasmList<u8>| contents(list.as_le_slice(store))).await;
    }

    async fn call_func_ret_s32(&mut self, instance: &str, func: &str) -> i32 {
        self.call(instance, func, |_, value: i32| value).await.unwrap_or_default()
    }

    async fn call_func_ret_s64(&mut self, instance: &str, func: &str) -> i64 {
        self.call(instance, func, |_, value: i64| value).await.unwrap_or_default()
    }

    async fn call_func_ret_f32(&mut self, instance: &str, func: &str) -> u32 {
        self.call(instance, func, |_, value: f32| value.to_bits()).await.unwrap_or_default()
    }

    async fn call_func_ret_f64(&mut self, instance: &str, func: &str) -> u64 {
        self.call(instance, func, |_, value: f64| value.to_bits()).await.unwrap_or_default()
    }
}
