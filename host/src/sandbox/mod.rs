//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.
//!
//! Everything a call can consume is bounded here: fuel (instructions), linear memory and
//! tables (through [`CallLimiter`]), wall-clock time (epoch deadline plus an async
//! timeout for time spent blocked in host calls), and captured output.

pub(crate) mod engine;
pub mod grants;
pub mod limits;
pub mod outbound;
pub mod output;

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::contract::{self, GuestToolError, GuestToolInfo, LogLevel, Plugin, PluginPre};
use crate::error::{CallError, MemoryResource};
use crate::sandbox::grants::Grants;
use crate::sandbox::limits::Limits;
use crate::sandbox::outbound::{DeniedRequest, OutboundHttp};
use crate::sandbox::output::{CapturedOutput, OutputSink, level_name};

/// Extra time granted to the async backstop beyond the epoch deadline, so that a guest
/// spinning in wasm is stopped by its own deadline (a clean trap) and the backstop only
/// catches guests blocked in a host call.
const BACKSTOP_GRACE: Duration = Duration::from_millis(50);

/// The data of one call's `Store`.
pub(crate) struct SandboxState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    outbound: OutboundHttp,
    table: ResourceTable,
    limiter: CallLimiter,
    output: OutputSink,
    grants: Arc<Grants>,
    /// `namespace/tool` (or the file, while listing tools), for log lines.
    label: Arc<str>,
}

impl WasiView for SandboxState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl WasiHttpView for SandboxState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView { ctx: &mut self.http, table: &mut self.table, hooks: &mut self.outbound }
    }
}

impl contract::toolhost::tool::types::Host for SandboxState {}

impl contract::toolhost::tool::host::Host for SandboxState {
    fn log(&mut self, level: LogLevel, message: String) {
        if self.output.log(level, &message) {
            tracing::event!(target: "toolhost::guest", tracing::Level::DEBUG, tool = %self.label, level = level_name(level), "{message}");
        }
    }

    fn config(&mut self, key: String) -> Option<String> {
        self.grants.config.get(&key).cloned()
    }
}

/// Links everything a guest may import. What a call can actually *do* through these
/// imports is decided per call by its [`WasiCtx`], which starts empty.
pub(crate) fn new_linker(engine: &Engine) -> anyhow::Result<Linker<SandboxState>> {
    let mut linker = Linker::new(engine);
    wasmtime_wasi::p2::add_to_linker_async(&mut linker).map_err(|e| anyhow::anyhow!("{e}"))?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker).map_err(|e| anyhow::anyhow!("{e}"))?;
    Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(linker)
}

/// Memory and table growth bounded per call. Remembers a refusal, because a guest
/// whose allocation fails usually aborts with a generic trap, and the caller deserves to
/// hear "memory limit", not "unreachable".
pub(crate) struct CallLimiter {
    memory_limit: u64,
    memory_in_use: u64,
    pub refused: Option<(MemoryResource, u64)>,
}

impl CallLimiter {
    fn new(memory_limit: u64) -> Self {
        CallLimiter { memory_limit, memory_in_use: 0, refused: None }
    }
}

/// Elements one table may hold; the same bound as the pool's table slots.
pub(crate) const TABLE_ELEMENTS_LIMIT: usize = 1 << 16;

impl ResourceLimiter for CallLimiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        let growth = desired.saturating_sub(current) as u64;
        match self.memory_in_use.checked_add(growth) {
            Some(total) if total <= self.memory_limit => {
                self.memory_in_use = total;
                Ok(true)
            }
            _ => {
                self.refused = Some((MemoryResource::LinearMemory, self.memory_limit));
                Ok(false)
            }
        }
    }

    fn table_growing(&mut self, _current: usize, desired: usize, _maximum: Option<usize>) -> wasmtime::Result<bool> {
        if desired <= TABLE_ELEMENTS_LIMIT {
            return Ok(true);
        }
        self.refused = Some((MemoryResource::TableElements, TABLE_ELEMENTS_LIMIT as u64));
        Ok(false)
    }
}

/// What to run inside the sandbox.
pub(crate) enum Operation<'a> {
    ListTools,
    Call { tool: &'a str, input: &'a str },
}

pub(crate) enum Returned {
    Tools(Vec<GuestToolInfo>),
    Call(Result<String, GuestToolError>),
}

/// The outcome of one sandboxed run, with what it consumed.
pub(crate) struct Run {
    pub result: Result<Returned, CallError>,
    pub fuel_consumed: u64,
    pub output: CapturedOutput,
    /// Outgoing requests the allow-list refused.
    pub denied_requests: Vec<DeniedRequest>,
}

/// Instantiates the component in a fresh store and runs one operation.
pub(crate) async fn run(
    engine: &Engine,
    pre: &PluginPre<SandboxState>,
    label: Arc<str>,
    limits: &Limits,
    grants: Arc<Grants>,
    operation: Operation<'_>,
) -> Run {
    let output = OutputSink::new(limits.max_log);
    let wasi = match build_wasi(&grants, &output) {
        Ok(wasi) => wasi,
        Err(message) => {
            return Run {
                result: Err(CallError::Host { tool: label.to_string(), message }),
                fuel_consumed: 0,
                output: output.take(),
                denied_requests: Vec::new(),
            };
        }
    };
    let state = SandboxState {
        wasi,
        http: WasiHttpCtx::new(),
        outbound: OutboundHttp::new(grants.network.clone()),
        table: ResourceTable::new(),
        limiter: CallLimiter::new(limits.memory),
        output: output.clone(),
        grants,
        label: label.clone(),
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

    let guest = async {
        let plugin = pre.instantiate_async(&mut store).await?;
        let toolbox = plugin.toolhost_tool_toolbox();
        match operation {
            Operation::ListTools => toolbox.call_list_tools(&mut store).await.map(Returned::Tools),
            Operation::Call { tool, input } => toolbox.call_call(&mut store, tool, input).await.map(Returned::Call),
        }
    };
    let outcome = tokio::time::timeout(limits.timeout + BACKSTOP_GRACE, guest).await;

    let fuel_consumed = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let result = match outcome {
        Ok(Ok(returned)) => Ok(returned),
        Ok(Err(error)) => Err(classify(error, store.data(), limits)),
        Err(_elapsed) => Err(CallError::Timeout { tool: label.to_string(), limit: limits.timeout }),
    };
    Run { result, fuel_consumed, output: output.take(), denied_requests: store.data().outbound.denied() }
}

fn build_wasi(grants: &Grants, output: &OutputSink) -> Result<WasiCtx, String> {
    let mut builder = WasiCtxBuilder::new();
    builder.stdout(output.stdout()).stderr(output.stderr());
    for (name, value) in &grants.env {
        builder.env(name, value);
    }
    grants.apply_files(&mut builder)?;
    Ok(builder.build())
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
    CallError::Trap { tool, message, backtrace }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_refuses_growth_past_its_limits_and_remembers_which() {
        let mut limiter = CallLimiter::new(1 << 20);
        assert!(limiter.memory_growing(0, 1 << 20, None).unwrap());
        assert_eq!(limiter.refused, None);
        assert!(!limiter.memory_growing(1 << 20, (1 << 20) + 65536, None).unwrap());
        assert_eq!(limiter.refused, Some((MemoryResource::LinearMemory, 1 << 20)));

        let mut limiter = CallLimiter::new(1 << 20);
        assert!(limiter.table_growing(0, TABLE_ELEMENTS_LIMIT, None).unwrap());
        assert!(!limiter.table_growing(TABLE_ELEMENTS_LIMIT, TABLE_ELEMENTS_LIMIT + 1, None).unwrap());
        assert_eq!(limiter.refused, Some((MemoryResource::TableElements, TABLE_ELEMENTS_LIMIT as u64)));
    }

    #[test]
    fn growth_that_would_overflow_is_refused_not_wrapped() {
        let mut limiter = CallLimiter::new(u64::MAX);
        assert!(limiter.memory_growing(0, usize::MAX, None).unwrap());
        assert!(!limiter.memory_growing(0, usize::MAX, None).unwrap());
    }
}
