//! The engine as the yardstick: toolhost's trivial call against a bare-wasmtime harness
//! that does only what a fresh-instance call must, on the same engine and component.
//!
//! Both sides run the `math` example toolbox's `add` on `{"numbers":[1,2]}`, compiled by
//! Cranelift on an engine built from the same `wasmtime::Config`
//! (`EngineSettings::optimized_engine_config`, the one the host builds its engine from:
//! pooling allocator, fuel, epochs, memory limits), on one tokio runtime, each warmed by
//! one call before anything is measured. The harness, per call: a new `Store` holding a
//! WASI context that grants nothing, the host's fuel and epoch deadline (with the host's
//! deadline callback, and a clock ticking as often as the host's), an instance from an
//! `InstancePre` prepared once (WASI and the contract's host imports linked as the host
//! links them, the latter answering nothing), `toolbox.call` through the same typed
//! bindings the host uses, then the drop. What toolhost adds on top is what the ratios
//! measure: lookup, policy, input and output validation, JSON in and out, captured
//! output, the memory limiter, the timeout backstop, the call report.
//!
//! - `engine/bare_harness_call`, `engine/toolhost_math_add_trivial`: one call at a time.
//! - `engine/*_1000_calls_8_tasks`: throughput, 8 concurrent tasks of 125 calls each.
//!
//! After criterion, one line per pair reads its medians back and prints the ratio
//! toolhost/bare against the targets of issue 39 (a trivial call within 15% of the bare
//! harness, throughput at least 90% of it). Criterion measures one side for seconds, then
//! the other, and a 2-core machine's load moves between them; so the two sides then also
//! take turns, round by round, a fraction of a second each, and the median and spread of
//! the rounds' ratios are printed: that comparison is made in the same moments.
//! Last, where valgrind is installed, the instructions of one call of each side, which
//! the machine's load does not move (`engine/instructions.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use criterion::{Criterion, SamplingMode, Throughput, criterion_group};
use serde_json::{Value, json};
use toolhost::{CacheSetting, EPOCH_TICK, EngineSettings, Limits, Tiering, ToolHost};
use toolhost_tests::{ToolsDir, component};
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Engine, Store, Trap, UpdateDeadline};
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

// The contract's typed bindings, bound as the host binds them (host/src/contract.rs):
// exports async, the host's imports sync (the host's `elicit` and `sample` are async,
// which no trivial call reaches).
#[allow(dead_code)]
mod bindings {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "plugin",
        exports: { default: async },
    });
}

use bindings::toolhost::tool::host as contract;
use bindings::{Plugin, PluginPre};
use instructions::Side;

#[path = "engine/instructions.rs"]
mod instructions;

const GROUP: &str = "engine";
const BARE_CALL: &str = "bare_harness_call";
const TOOLHOST_CALL: &str = "toolhost_math_add_trivial";
const BARE_TASKS: &str = "bare_harness_1000_calls_8_tasks";
const TOOLHOST_TASKS: &str = "toolhost_math_add_1000_calls_8_tasks";

const TASKS: usize = 8;
const CALLS_PER_TASK: usize = 125;
const TOOL: &str = "add";
const INPUT: &str = r#"{"numbers":[1,2]}"#;

/// The data of one harness call's store: a WASI context and its resources, nothing else.
struct BareState {
    wasi: WasiCtx,
    table: ResourceTable,
}

impl WasiView for BareState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

/// The refusal of every `toolhost:tool/host` function that can refuse.
const NOT_PROVIDED: &str = "the bare harness provides no host functions";

// The `toolhost:tool/host` imports answer nothing (a trivial `add` calls none of them),
// linked as the host links its own, through the bindings, rather than with
// `Linker::define_unknown_imports_as_traps`: that stubs every import it finds no exact
// name for, and `wasmtime-wasi` defines WASI 0.2.12 where the component imports 0.2.6,
// so it would stub WASI with traps too.
impl bindings::toolhost::tool::types::Host for BareState {}

impl contract::Host for BareState {
    fn log(&mut self, _level: contract::LogLevel, _message: String) {}

    fn config(&mut self, _key: String) -> Option<String> {
        None
    }

    fn progress(&mut self, _done: u64, _total: Option<u64>, _message: Option<String>) {}

    fn caller(&mut self) -> Option<contract::CallerInfo> {
        None
    }

    fn add_content(&mut self, _block: contract::Content) -> Result<(), String> {
        Err(NOT_PROVIDED.to_owned())
    }

    fn elicit(
        &mut self,
        _message: String,
        _requested_schema: String,
    ) -> Result<contract::ElicitAnswer, contract::ClientError> {
        Err(contract::ClientError::Unsupported(NOT_PROVIDED.to_owned()))
    }

    fn sample(
        &mut self,
        _request: contract::SamplingRequest,
    ) -> Result<contract::SamplingReply, contract::ClientError> {
        Err(contract::ClientError::Unsupported(NOT_PROVIDED.to_owned()))
    }
}

/// The bare-wasmtime harness: the `math` component on the host's optimized engine
/// configuration, linked and pre-instantiated once.
struct Bare {
    pre: PluginPre<BareState>,
    limits: Limits,
}

impl Bare {
    fn new(settings: &EngineSettings) -> Bare {
        let config = settings.optimized_engine_config().expect("the host's engine configuration");
        let engine = Engine::new(&config).expect("engine");
        let math = Component::from_file(&engine, component("math")).expect("compile math");
        let mut linker: Linker<BareState> = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker).expect("link WASI");
        Plugin::add_to_linker::<_, HasSelf<_>>(&mut linker, |state| state).expect("link the contract's imports");
        let pre = linker.instantiate_pre(&math).expect("pre-instantiate math");
        let pre = PluginPre::new(pre).expect("math exports the toolbox");
        start_epoch_clock(&engine);
        Bare { pre, limits: Limits::default() }
    }

    /// One call of `tool` on `input` in a fresh store and instance, as the host sets a
    /// store up (host/src/sandbox/store.rs, `new_store`): fuel, and a deadline checked
    /// at every epoch tick that otherwise yields to the executor.
    async fn call(&self, tool: &str, input: &str) -> String {
        let state = BareState { wasi: WasiCtxBuilder::new().build(), table: ResourceTable::new() };
        let mut store = Store::new(self.pre.engine(), state);
        store.set_fuel(self.limits.fuel).expect("fuel is enabled");
        let deadline = Instant::now() + self.limits.timeout;
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline { Err(Trap::Interrupt.into()) } else { Ok(UpdateDeadline::Yield(1)) }
        });
        let plugin = self.pre.instantiate_async(&mut store).await.expect("instantiate");
        match plugin.toolhost_tool_toolbox().call_call(&mut store, tool, input).await.expect("call") {
            Ok(output) => output,
            Err(failure) => panic!("{tool} failed: {failure:?}"),
        }
    }
}

/// Advances the epoch of `engine` as the host's clock does, until the engine is dropped.
fn start_epoch_clock(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("bare-epoch".into())
        .spawn(move || {
            loop {
                std::thread::sleep(EPOCH_TICK);
                match engine.upgrade() {
                    Some(engine) => engine.increment_epoch(),
                    None => return,
                }
            }
        })
        .expect("epoch thread");
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime")
}

/// Cranelift's code on both sides, compiled in memory on both sides.
fn settings() -> EngineSettings {
    EngineSettings { tiering: Tiering::OptimizedOnly, ..EngineSettings::default() }
}

/// A host serving the `math` toolbox from a directory of its own, kept as long as the host.
fn toolhost(rt: &tokio::runtime::Runtime, settings: &EngineSettings) -> (ToolHost, ToolsDir) {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let host = rt
        .block_on(
            ToolHost::builder()
                .root(tools.path())
                .engine_settings(settings.clone())
                .compile_cache(CacheSetting::Disabled)
                .build(),
        )
        .expect("host");
    (host, tools)
}

fn yardstick(c: &mut Criterion) {
    let rt = runtime();
    let settings = settings();
    let (host, _tools) = toolhost(&rt, &settings);
    let bare = Arc::new(Bare::new(&settings));

    // One call of each before anything is measured, and the same answer from both.
    let expected = json!({ "value": 3.0 });
    let from_host = rt.block_on(host.call("math/add", json!({ "numbers": [1, 2] })));
    let from_bare = rt.block_on(bare.call(TOOL, INPUT));
    assert_eq!(from_host, Ok(expected.clone()));
    assert_eq!(serde_json::from_str::<Value>(&from_bare).expect("the harness's output is JSON"), expected);

    let mut group = c.benchmark_group(GROUP);
    group.measurement_time(Duration::from_secs(5));
    group.bench_function(BARE_CALL, |b| b.to_async(&rt).iter(|| async { bare.call(TOOL, INPUT).await }));
    group.bench_function(TOOLHOST_CALL, |b| {
        b.to_async(&rt).iter(|| async { host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap() })
    });

    // Throughput on every core: 1000 calls from 8 concurrent tasks per iteration.
    group.throughput(Throughput::Elements((TASKS * CALLS_PER_TASK) as u64));
    group.sample_size(20).sampling_mode(SamplingMode::Flat).measurement_time(Duration::from_secs(10));
    group.bench_function(BARE_TASKS, |b| b.to_async(&rt).iter(|| eight_tasks(&host, &bare, false)));
    group.bench_function(TOOLHOST_TASKS, |b| b.to_async(&rt).iter(|| eight_tasks(&host, &bare, true)));
    group.finish();
    take_turns(&rt, &host, &bare);
}

/// Rounds in which each side runs in turn; the first side alternates.
const ROUNDS: usize = 21;
/// Sequential calls per side and round.
const TURN_CALLS: usize = 5000;

/// The lines `take_turns` prints after criterion's summary.
static TURNS: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// The two sides in turns: per round, `TURN_CALLS` sequential calls, then one batch of
/// 8 tasks × 125 calls, each side timed right after the other.
fn take_turns(rt: &tokio::runtime::Runtime, host: &ToolHost, bare: &Arc<Bare>) {
    let (mut single, mut batch) = (Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let sides = if round % 2 == 0 { [true, false] } else { [false, true] };
        let mut times = [(Duration::ZERO, Duration::ZERO); 2];
        for toolhost in sides {
            // One `block_on` for all of them, as criterion runs an iteration's batch.
            let started = Instant::now();
            rt.block_on(async {
                for _ in 0..TURN_CALLS {
                    if toolhost {
                        host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap();
                    } else {
                        bare.call(TOOL, INPUT).await;
                    }
                }
            });
            let sequential = started.elapsed();
            let started = Instant::now();
            rt.block_on(eight_tasks(host, bare, toolhost));
            times[usize::from(toolhost)] = (sequential, started.elapsed());
        }
        let [(bare_single, bare_batch), (host_single, host_batch)] = times;
        single.push(host_single.as_secs_f64() / bare_single.as_secs_f64());
        // Throughput ratio: the bare harness's time over toolhost's.
        batch.push(bare_batch.as_secs_f64() / host_batch.as_secs_f64());
    }
    let summary = |ratios: &mut Vec<f64>| {
        ratios.sort_by(f64::total_cmp);
        (ratios[ratios.len() / 2], ratios[0], ratios[ratios.len() - 1])
    };
    let ((single, low, high), (tasks, tasks_low, tasks_high)) = (summary(&mut single), summary(&mut batch));
    let mut lines = TURNS.lock().unwrap_or_else(|e| e.into_inner());
    lines.push(format!(
        "engine/trivial call, taking turns ({ROUNDS} rounds of {TURN_CALLS} calls): ratio {single:.2} \
         (rounds {low:.2}–{high:.2}; target ≤ 1.15)"
    ));
    lines.push(format!(
        "engine/8 tasks, taking turns ({ROUNDS} rounds of 1000 calls): ratio {tasks:.2} \
         (rounds {tasks_low:.2}–{tasks_high:.2}; target ≥ 0.9)"
    ));
}

/// 8 concurrent tasks of 125 calls each, on toolhost or on the bare harness.
async fn eight_tasks(host: &ToolHost, bare: &Arc<Bare>, toolhost: bool) {
    let tasks: Vec<_> = (0..TASKS)
        .map(|_| {
            let (host, bare) = (host.clone(), bare.clone());
            tokio::spawn(async move {
                for _ in 0..CALLS_PER_TASK {
                    if toolhost {
                        host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap();
                    } else {
                        bare.call(TOOL, INPUT).await;
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
}

criterion_group!(benches, yardstick);

fn main() {
    if let Some((side, calls)) = instructions::asked() {
        return calls_of_one_side(side, calls);
    }
    let started = SystemTime::now();
    benches();
    Criterion::default().configure_from_args().final_summary();
    print_ratios(started);
    for line in TURNS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
        println!("{line}");
    }
    println!("{}", instructions::count());
}

/// One of the runs `instructions::count` makes under callgrind: a warm-up call and then
/// `calls` calls of one side, on a small pool (valgrind cannot reserve the address space
/// of the default one).
fn calls_of_one_side(side: Side, calls: u64) {
    let rt = runtime();
    let settings = EngineSettings { max_instances: 4, ..settings() };
    match side {
        Side::Toolhost => {
            let (host, _tools) = toolhost(&rt, &settings);
            rt.block_on(async {
                for _ in 0..=calls {
                    host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap();
                }
            });
        }
        Side::Bare => {
            let bare = Bare::new(&settings);
            rt.block_on(async {
                for _ in 0..=calls {
                    bare.call(TOOL, INPUT).await;
                }
            });
        }
    }
}

/// One line per pair: toolhost against the bare harness, from the medians criterion
/// wrote in this run.
fn print_ratios(started: SystemTime) {
    let dir = criterion_dir().join(GROUP);
    let median = |name: &str| median_ns(&dir.join(name).join("new").join("estimates.json"), started);
    let unmeasured = |pair: &str| eprintln!("{pair}: not measured in this run (no new estimates in {})", dir.display());
    match (median(TOOLHOST_CALL), median(BARE_CALL)) {
        (Some(toolhost), Some(bare)) => println!(
            "engine/trivial call: toolhost {:.2} µs, bare wasmtime {:.2} µs, ratio {:.2} (target ≤ 1.15)",
            toolhost / 1e3,
            bare / 1e3,
            toolhost / bare
        ),
        _ => unmeasured("engine/trivial call"),
    }
    match (median(TOOLHOST_TASKS), median(BARE_TASKS)) {
        (Some(toolhost), Some(bare)) => {
            // Medians of one iteration of 1000 calls, in nanoseconds.
            let per_second = |ns: f64| (TASKS * CALLS_PER_TASK) as f64 * 1e9 / ns;
            println!(
                "engine/8 tasks: toolhost {:.0} calls/s, bare {:.0} calls/s, ratio {:.2} (target ≥ 0.9)",
                per_second(toolhost),
                per_second(bare),
                per_second(toolhost) / per_second(bare)
            );
        }
        _ => unmeasured("engine/8 tasks"),
    }
}

/// The median point estimate, in nanoseconds, of an `estimates.json` written since
/// `since` (an older one is a previous run's, left by a filter that skipped this one).
fn median_ns(estimates: &Path, since: SystemTime) -> Option<f64> {
    let modified = std::fs::metadata(estimates).and_then(|metadata| metadata.modified()).ok()?;
    if modified < since {
        return None;
    }
    let estimates: Value = serde_json::from_slice(&std::fs::read(estimates).ok()?).ok()?;
    estimates["median"]["point_estimate"].as_f64()
}

/// Where criterion writes, found as criterion finds it: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else the `criterion` directory of the target directory
/// `cargo metadata` names (criterion asks with dependencies, which names the same
/// directory), else `target/criterion`.
fn criterion_dir() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let from_metadata = std::env::var_os("CARGO").and_then(|cargo| {
        let output = Command::new(cargo).args(["metadata", "--format-version", "1", "--no-deps"]).output().ok()?;
        let metadata: Value = serde_json::from_slice(&output.stdout).ok()?;
        metadata["target_directory"].as_str().map(PathBuf::from)
    });
    from_metadata.map_or_else(|| PathBuf::from("target/criterion"), |target| target.join("criterion"))
}
