//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{ComponentExportIndex, InstancePre, ResourceTable, Val};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi_http::WasiHttpCtx;

use crate::contract::{GuestToolError, GuestToolInfo, PluginPre};
use crate::error::CallError;
use crate::progress::{ProgressHook, ProgressReports};
use crate::sandbox::grants::Grants;
use crate::sandbox::keyvalue::CallStorage;
use crate::sandbox::limits::CallLimiter;
use crate::sandbox::outbound::{DeniedRequest, OutboundHttp, Resolve};
use crate::sandbox::output::{CapturedOutput, OutputSink};
use crate::sandbox::state::SandboxState;
use crate::storage::{Storage, Transaction};
use crate::text::{MAX_MESSAGE, bounded};
use crate::tool::Limits;

/// Extra time granted to the async backstop beyond the epoch deadline, so that a guest
/// spinning in wasm is stopped by its own deadline (a clean trap) and the backstop only
/// catches guests blocked in a host call.
const BACKSTOP_GRACE: Duration = Duration::from_millis(50);

/// What to run inside the sandbox, and on which instance.
pub(crate) enum Operation<'a> {
    /// `toolbox.list-tools` of a toolbox component.
    ListTools(&'a PluginPre<SandboxState>),
    /// `toolbox.call` of a toolbox component, whose progress reports go to `progress`.
    Call { pre: &'a PluginPre<SandboxState>, tool: &'a str, input: &'a str, progress: Option<ProgressHook> },
    /// One exported function of a plain component.
    Invoke { pre: &'a InstancePre<SandboxState>, export: &'a ComponentExportIndex, params: Vec<Val>, results: usize },
}

/// What the host lends a call beyond its grants: name resolution for its outgoing
/// requests, and the store behind its buckets (none while a component loads).
pub(crate) struct Services {
    pub resolver: Arc<dyn Resolve>,
    pub storage: Option<Arc<Storage>>,
}

/// What the guest returned.
pub(crate) enum Returned {
    Tools(Vec<GuestToolInfo>),
    Call(Result<String, GuestToolError>),
    Values(Vec<Val>),
}

/// The outcome of one sandboxed run, with what it consumed.
pub(crate) struct Run {
    pub result: Result<Returned, CallError>,
    pub fuel_consumed: u64,
    pub output: CapturedOutput,
    /// Outgoing requests the allow-list refused.
    pub denied_requests: Vec<DeniedRequest>,
    /// What the guest wrote to storage, to commit if the call succeeds.
    pub transaction: Option<Transaction>,
}

/// Instantiates the component in a fresh store and runs one operation.
pub(crate) async fn run(
    engine: &Engine,
    label: Arc<str>,
    limits: &Limits,
    grants: Arc<Grants>,
    services: Services,
    operation: Operation<'_>,
) -> Run {
    let output = OutputSink::new(limits.max_log);
    let progress = match &operation {
        Operation::Call { progress, .. } => ProgressReports::new(progress.clone()),
        Operation::ListTools(_) | Operation::Invoke { .. } => ProgressReports::default(),
    };
    let mut store = match new_store(engine, label.clone(), limits, grants, &output, progress, services) {
        Ok(store) => store,
        Err(message) => {
            return Run {
                result: Err(CallError::Host { tool: label.to_string(), message }),
                fuel_consumed: 0,
                output: output.take(),
                denied_requests: Vec::new(),
                transaction: None,
            };
        }
    };
    let guest = async {
        match operation {
            Operation::ListTools(pre) => {
                let plugin = pre.instantiate_async(&mut store).await?;
                plugin.toolhost_tool_toolbox().call_list_tools(&mut store).await.map(Returned::Tools)
            }
            Operation::Call { pre, tool, input, .. } => {
                let plugin = pre.instantiate_async(&mut store).await?;
                plugin.toolhost_tool_toolbox().call_call(&mut store, tool, input).await.map(Returned::Call)
            }
            Operation::Invoke { pre, export, params, results } => {
                let instance = pre.instantiate_async(&mut store).await?;
                let func = instance
                    .get_func(&mut store, export)
                    .ok_or_else(|| wasmtime::Error::msg("the exported function is missing from the instance"))?;
                let mut values = vec![Val::Bool(false); results];
                func.call_async(&mut store, &params, &mut values).await?;
                Ok(Returned::Values(values))
            }
        }
    };
    // Boxed: the guest's futures are large, and the caller's future should not carry them.
    let outcome = tokio::time::timeout(limits.timeout + BACKSTOP_GRACE, Box::pin(guest)).await;

    let fuel_consumed = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let result = match outcome {
        Ok(Ok(returned)) => Ok(returned),
        Ok(Err(error)) => Err(classify(error, store.data(), limits)),
        Err(_elapsed) => Err(CallError::Timeout { tool: label.to_string(), limit: limits.timeout }),
    };
    let transaction = store.data_mut().storage.take_transaction();
    Run { result, fuel_consumed, output: output.take(), denied_requests: store.data().outbound.denied(), transaction }
}

/// A store holding exactly the grants, bounded by the limits: fuel, memory and tables
/// through the limiter, and a wall-clock deadline checked at every epoch tick.
fn new_store(
    engine: &Engine,
    label: Arc<str>,
    limits: &Limits,
    grants: Arc<Grants>,
    output: &OutputSink,
    progress: ProgressReports,
    services: Services,
) -> Result<Store<SandboxState>, String> {
    let state = SandboxState {
        wasi: grants.wasi_context(output, limits.memory)?,
        http: WasiHttpCtx::new(),
        outbound: OutboundHttp::new(grants.network.clone(), services.resolver),
        storage: CallStorage::new(services.storage, &grants.storage, limits.timeout),
        table: ResourceTable::new(),
        limiter: CallLimiter::new(limits.memory),
        output: output.clone(),
        grants,
        label,
        progress,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // Cannot fail: fuel is enabled on every engine this crate builds.
    let _ = store.set_fuel(limits.fuel);
    let deadline = Instant::now() + limits.timeout;
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |_| {
        if Instant::now() >= deadline {
            Err(Trap::Interrupt.into())
        } else {
            // Give the executor thread back at every tick, so a spinning guest never
            // starves other tasks.
            Ok(UpdateDeadline::Yield(1))
        }
    });
    Ok(store)
}

/// Turns a wasmtime error from instantiation or the call into the caller's terms.
fn classify(error: wasmtime::Error, state: &SandboxState, limits: &Limits) -> CallError {
    let tool = state.label.to_string();
    let trap = error.downcast_ref::<Trap>();
    // Fuel and time come first: a guest stopped by them may also have been refused
    // memory earlier, and handled that refusal itself.
    match trap {
        Some(Trap::OutOfFuel) => return CallError::OutOfFuel { tool, limit: limits.fuel },
        Some(Trap::Interrupt) => return CallError::Timeout { tool, limit: limits.timeout },
        _ => {}
    }
    if let Some((resource, limit)) = state.limiter.refused {
        return CallError::MemoryLimit { tool, resource, limit };
    }
    if let Some(exhausted) = error.downcast_ref::<wasmtime::PoolConcurrencyLimitError>() {
        return CallError::Host { tool, message: format!("no free instance slot: {exhausted}") };
    }
    let backtrace = error.downcast_ref::<wasmtime::WasmBacktrace>().map(|bt| bt.to_string()).unwrap_or_default();
    let mut message = match trap {
        Some(trap) => trap.to_string(),
        None => format!("{error:#}"),
    };
    // A Rust guest prints its panic message to stderr before it aborts. Kept on one line,
    // so that the error is one line.
    let stderr = state.output.stderr_tail(2048);
    let stderr = stderr.lines().map(str::trim).filter(|line| !line.is_empty()).collect::<Vec<_>>().join(" ");
    if !stderr.is_empty() {
        message.push_str(&format!(" (guest stderr: {stderr})"));
    }
    CallError::Trap { tool, message: bounded(message, MAX_MESSAGE), backtrace: bounded(backtrace, MAX_BACKTRACE) }
}

/// Longest backtrace kept, in bytes: function names come from the guest.
const MAX_BACKTRACE: usize = 16 * 1024;
