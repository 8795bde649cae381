//! One sandboxed run: a store with the call's limits, an instance, the guest's work, and how it ended.
//!
//! One fresh sandbox per guest call: a new `Store` with the call's limits, a WASI context
//! holding exactly the component's grants, and an instance from the cached `InstancePre`.

use std::future::Future;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use wasmtime::component::{ComponentExportIndex, InstancePre, ResourceTable, Val};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi_http::WasiHttpCtx;

use crate::client::ClientSession;
use crate::contract::{GuestToolError, GuestToolInfo, PluginPre};
use crate::error::CallError;
use crate::policy::Caller;
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

/// What the host lends a call beyond its grants: name resolution for its outgoing
/// requests, the store behind its buckets and who is calling (neither while a component
/// loads).
pub(crate) struct Services {
    /// Lent only to a component granted the network: with none, every request is
    /// refused before any name is resolved.
    pub resolver: Option<Arc<dyn Resolve>>,
    pub storage: Option<Arc<Storage>>,
    pub caller: Option<Caller>,
    /// What the call may ask of its client, and where its content blocks go.
    pub client: Option<ClientSession>,
}

impl Services {
    /// Nothing lent: for work that is no one's call (a load's listing, a snapshot).
    pub fn none() -> Services {
        Services { resolver: None, storage: None, caller: None, client: None }
    }
}

/// The outcome of one sandboxed run, with what it consumed.
pub(crate) struct Run<T> {
    pub result: Result<T, CallError>,
    pub consumed: Consumed,
}

/// What one sandboxed run consumed and left behind.
pub(crate) struct Consumed {
    /// Fuel the guest burned.
    pub fuel: u64,
    /// What it printed and logged.
    pub output: CapturedOutput,
    /// Outgoing requests the allow-list refused.
    pub denied_requests: Vec<DeniedRequest>,
    /// What the guest wrote to storage, to commit if the call succeeds.
    pub transaction: Option<Transaction>,
}

/// What a run does on its fresh store: instantiate the component, then call it.
trait GuestWork: Send {
    type Output: Send;
    fn run(self, store: &mut Store<SandboxState>) -> impl Future<Output = wasmtime::Result<Self::Output>> + Send;
}

/// `toolbox.list-tools` of a toolbox component, and a spare instance of it made once the
/// listing is done, within the listing's time limit (see [`Sandbox::list_tools`]).
struct ListTools<'a> {
    pre: &'a PluginPre<SandboxState>,
    spare: Sandbox<'a>,
}

/// The longest a spare instance may take, and half the time its listing must have left
/// for one: a component slow to instantiate must not slow or time out its listing.
const SPARE_TIME: Duration = Duration::from_millis(100);

impl GuestWork for ListTools<'_> {
    type Output = (Vec<GuestToolInfo>, Option<KeptStore>);
    async fn run(self, store: &mut Store<SandboxState>) -> wasmtime::Result<Self::Output> {
        let listing_deadline = Instant::now() + self.spare.limits.timeout;
        let plugin = self.pre.instantiate_async(&mut *store).await?;
        let tools = plugin.toolhost_tool_toolbox().call_list_tools(&mut *store).await?;
        // Made while the listing's instance holds its slot, so it takes another. Its time
        // limit stops a guest that computes (at an epoch tick), the timer one that waits.
        if listing_deadline.saturating_duration_since(Instant::now()) < 2 * SPARE_TIME {
            return Ok((tools, None));
        }
        let limits = Limits { timeout: SPARE_TIME, ..*self.spare.limits };
        let Ok(mut spare) = (Sandbox { limits: &limits, ..self.spare }).keep_store() else { return Ok((tools, None)) };
        let made = until_backstop(Instant::now() + SPARE_TIME, self.pre.instantiate_async(&mut spare.store)).await;
        Ok((tools, matches!(made, Some(Ok(_))).then_some(spare)))
    }
}

/// `toolbox.call` of a toolbox component.
struct CallTool<'a> {
    pre: &'a PluginPre<SandboxState>,
    tool: &'a str,
    input: &'a str,
}

impl GuestWork for CallTool<'_> {
    type Output = Result<String, GuestToolError>;
    async fn run(self, store: &mut Store<SandboxState>) -> wasmtime::Result<Self::Output> {
        let plugin = self.pre.instantiate_async(&mut *store).await?;
        plugin.toolhost_tool_toolbox().call_call(&mut *store, self.tool, self.input).await
    }
}

/// One exported function of a plain component, returning `results` values.
struct Invoke<'a> {
    pre: &'a InstancePre<SandboxState>,
    export: &'a ComponentExportIndex,
    params: Vec<Val>,
    results: usize,
}

impl GuestWork for Invoke<'_> {
    type Output = Vec<Val>;
    async fn run(self, store: &mut Store<SandboxState>) -> wasmtime::Result<Self::Output> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        let func = instance
            .get_func(&mut *store, self.export)
            .ok_or_else(|| wasmtime::Error::msg("the exported function is missing from the instance"))?;
        let mut values = vec![Val::Bool(false); self.results];
        func.call_async(&mut *store, &self.params, &mut values).await?;
        Ok(values)
    }
}

/// Where a run happens and under which terms: the engine, who it runs for (in errors),
/// its limits, its grants and what the host lends it.
pub(crate) struct Sandbox<'a> {
    pub engine: &'a Engine,
    pub label: Arc<str>,
    pub limits: &'a Limits,
    pub grants: Arc<Grants>,
    pub services: Services,
}

impl Sandbox<'_> {
    /// `toolbox.list-tools` of a toolbox component, in a fresh store.
    ///
    /// A listing writes more of the guest's memory than most calls (every tool's
    /// schemas), and an instance slot keeps the pages it was ever written resident, to
    /// be reset in place after every later instance: each call in the listing's slot
    /// would reset them again. wasmtime gives a component's next instance the slot
    /// its last instance freed, so a spare instance, made while the listing's holds
    /// its slot and freed after it, leaves calls a slot only instantiation wrote
    /// (`docs/performance.md`). With no slot free for a spare, the listing goes on.
    pub async fn list_tools(self, pre: &PluginPre<SandboxState>) -> Run<Vec<GuestToolInfo>> {
        let (engine, label, limits, grants) = (self.engine, self.label.clone(), self.limits, self.grants.clone());
        let spare = Sandbox { engine, label, limits, grants, services: Services::none() };
        let Run { result, consumed } = run(self, ProgressReports::default(), ListTools { pre, spare }).await;
        // The listing's store is gone by now; the spare's goes here, after it.
        Run { result: result.map(|(tools, _spare)| tools), consumed }
    }

    /// `toolbox.call` of a toolbox component, in a fresh store, its progress reports
    /// going to `progress`.
    pub async fn call_tool(
        self,
        pre: &PluginPre<SandboxState>,
        tool: &str,
        input: &str,
        progress: Option<ProgressHook>,
    ) -> Run<Result<String, GuestToolError>> {
        run(self, ProgressReports::new(progress), CallTool { pre, tool, input }).await
    }

    /// One exported function of a plain component, in a fresh store: its `results`
    /// values.
    pub async fn invoke(
        self,
        pre: &InstancePre<SandboxState>,
        export: &ComponentExportIndex,
        params: Vec<Val>,
        results: usize,
    ) -> Run<Vec<Val>> {
        run(self, ProgressReports::default(), Invoke { pre, export, params, results }).await
    }
}

/// A store of a sandbox that its caller keeps after the guest ran: for work that reads
/// the instance afterwards (a pre-initialization's snapshot).
pub(crate) struct KeptStore {
    pub store: Store<SandboxState>,
    limits: Limits,
}

impl Sandbox<'_> {
    /// A fresh store of this sandbox, its limits already running.
    pub fn keep_store(self) -> Result<KeptStore, CallError> {
        let Sandbox { engine, label, limits, grants, services } = self;
        let output = OutputSink::new(limits.max_log);
        let deadline = Instant::now() + limits.timeout;
        let store =
            new_store(engine, label.clone(), (limits, deadline), grants, &output, ProgressReports::default(), services)
                .map_err(|message| CallError::Host { tool: label.to_string(), message })?;
        Ok(KeptStore { store, limits: *limits })
    }
}

impl KeptStore {
    /// What `error`, from the guest's run in this store, means in a caller's terms.
    pub fn failure(&self, error: wasmtime::Error) -> CallError {
        classify(error, self.store.data(), &self.limits)
    }

    /// How long to wait for a run in this store before giving up on it: its time limit,
    /// which its epoch deadline enforces while the guest runs wasm, and a grace for a
    /// guest blocked in a host call, which no deadline reaches.
    pub fn backstop(&self) -> Duration {
        self.limits.timeout + BACKSTOP_GRACE
    }

    /// How many resources (streams, descriptors, pollables, …) the guest holds open.
    pub fn open_resources(&mut self) -> usize {
        self.store.data_mut().table.iter_mut().count()
    }

    /// Lifts the limits of the run for work that follows it (reading the instance's
    /// state): no deadline, no fuel count.
    pub fn lift_limits(&mut self) {
        let _ = self.store.set_fuel(u64::MAX);
        self.store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Continue(u64::MAX / 2)));
    }
}

/// Instantiates the component in a fresh store and runs `work` on it.
async fn run<W: GuestWork>(sandbox: Sandbox<'_>, progress: ProgressReports, work: W) -> Run<W::Output> {
    let Sandbox { engine, label, limits, grants, services } = sandbox;
    let output = OutputSink::new(limits.max_log);
    // One reading of the clock for both the guest's deadline and the backstop's.
    let deadline = Instant::now() + limits.timeout;
    let mut store = match new_store(engine, label.clone(), (limits, deadline), grants, &output, progress, services) {
        Ok(store) => store,
        Err(message) => {
            let consumed = Consumed { fuel: 0, output: output.take(), denied_requests: Vec::new(), transaction: None };
            return Run { result: Err(CallError::Host { tool: label.to_string(), message }), consumed };
        }
    };
    // Boxed: the guest's futures are large, and the caller's future should not carry them.
    let outcome = until_backstop(deadline + BACKSTOP_GRACE, Box::pin(work.run(&mut store))).await;
    let fuel_consumed = limits.fuel.saturating_sub(store.get_fuel().unwrap_or(0));
    let result = match outcome {
        Some(Ok(returned)) => Ok(returned),
        Some(Err(error)) => Err(classify(error, store.data(), limits)),
        None => Err(CallError::Timeout { tool: label.to_string(), limit: limits.timeout }),
    };
    let transaction = store.data_mut().storage.take_transaction();
    let denied_requests = store.data().outbound.denied();
    Run { result, consumed: Consumed { fuel: fuel_consumed, output: output.take(), denied_requests, transaction } }
}

/// `work`'s output, or `None` if it is still waiting at `backstop`. The timer is armed
/// only once `work` waits: most calls never do (the guest runs to its answer in one
/// poll), and a timer would cost each of them its registration with the runtime.
async fn until_backstop<F: Future>(backstop: Instant, work: F) -> Option<F::Output> {
    let mut work = std::pin::pin!(work);
    let mut timer = std::pin::pin!(None::<tokio::time::Sleep>);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(output) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        if timer.is_none() {
            timer.set(Some(tokio::time::sleep_until(backstop.into())));
        }
        match timer.as_mut().as_pin_mut().map(|timer| timer.poll(cx)) {
            Some(Poll::Ready(())) => Poll::Ready(None),
            _ => Poll::Pending,
        }
    })
    .await
}

/// A store holding exactly the grants, bounded by the limits: fuel, memory and tables
/// through the limiter, and the wall-clock `deadline` checked at every epoch tick.
fn new_store(
    engine: &Engine,
    label: Arc<str>,
    (limits, deadline): (&Limits, Instant),
    grants: Arc<Grants>,
    output: &OutputSink,
    progress: ProgressReports,
    services: Services,
) -> Result<Store<SandboxState>, String> {
    let agent = services.caller.as_ref().map_or("", |caller| caller.agent.as_str());
    let state = SandboxState {
        wasi: grants.wasi_context(output, limits.memory)?,
        http: WasiHttpCtx::new(),
        outbound: OutboundHttp::new(grants.network.clone(), services.resolver),
        storage: CallStorage::new(services.storage, &grants.storage, agent, limits.timeout),
        table: ResourceTable::new(),
        limiter: CallLimiter::new(limits.memory),
        output: output.clone(),
        caller: services.caller.clone().filter(|_| grants.caller),
        client: services.client,
        grants,
        label,
        progress,
    };
    let mut store = Store::new(engine, state);
    store.limiter(|state| &mut state.limiter);
    // Cannot fail: fuel is enabled on every engine this crate builds.
    let _ = store.set_fuel(limits.fuel);
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

#[cfg(test)]
mod tests {
    use std::future::pending;
    use std::time::{Duration, Instant};

    use super::until_backstop;

    #[tokio::test]
    async fn work_that_answers_at_once_arms_no_timer_and_keeps_its_answer() {
        // A backstop already past: only an armed timer could fire it.
        let past = Instant::now() - Duration::from_millis(1);
        assert_eq!(until_backstop(past, async { 7 }).await, Some(7));
    }

    #[tokio::test]
    async fn work_that_waits_is_given_up_at_the_backstop() {
        let started = Instant::now();
        let backstop = started + Duration::from_millis(50);
        assert_eq!(until_backstop(backstop, pending::<u32>()).await, None);
        assert!(started.elapsed() >= Duration::from_millis(50), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn work_that_waits_and_then_answers_before_the_backstop_keeps_its_answer() {
        let backstop = Instant::now() + Duration::from_secs(30);
        let work = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            "answer"
        };
        assert_eq!(until_backstop(backstop, work).await, Some("answer"));
    }
}
