//! The background compile that replaces baseline code with optimized code.
//!
//! A component the compile cache did not hold answers its first calls with Winch's code.
//! Each such component is queued here; one thread, at a lower scheduling priority than
//! the threads serving calls, compiles it with Cranelift (single-threaded, so it takes
//! a spare core, not every core), once no load is compiling (a core busy with a baseline
//! compile is not spare: that compile makes a component callable), in an engine of its
//! own that has no instance pool,
//! writes the code to the compile cache, and installs it as the component's code in
//! the host's optimizing engine. Calls that started on the baseline code finish on it; the
//! next ones get the optimized code. A failure only leaves the baseline code serving.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Weak};
use std::time::Duration;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::LoadedComponent;
use super::code::Code;
use crate::runtime::{EngineSettings, Runtime, compiling_engine};

/// How much less the compiling thread gets scheduled than the threads serving calls
/// (a `nice` increment).
const BACKGROUND_NICENESS: i32 = 10;

/// Baseline code to replace: the bytes to compile again.
pub(crate) struct Upgrade {
    pub bytes: Arc<[u8]>,
}

/// The queue of components waiting for optimized code, and its worker thread.
pub(crate) struct Optimizer {
    jobs: Sender<Job>,
    pending: Arc<AtomicUsize>,
}

struct Job {
    component: Weak<LoadedComponent>,
    upgrade: Upgrade,
}

impl Optimizer {
    /// Starts the worker; it stops when the optimizer and the host are gone.
    pub fn start(runtime: Weak<Runtime>, settings: EngineSettings) -> std::io::Result<Optimizer> {
        let (jobs, queue) = channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let counter = pending.clone();
        std::thread::Builder::new()
            .name("toolhost-optimize".into())
            .spawn(move || work(&runtime, &settings, &queue, &counter))?;
        Ok(Optimizer { jobs, pending })
    }

    /// Queues `component`'s baseline code for replacement.
    pub fn enqueue(&self, component: &Arc<LoadedComponent>, upgrade: Upgrade) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.jobs.send(Job { component: Arc::downgrade(component), upgrade }).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Components queued or being compiled.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
    }
}

fn work(runtime: &Weak<Runtime>, settings: &EngineSettings, queue: &Receiver<Job>, pending: &AtomicUsize) {
    lower_priority();
    // Made for the first job: a host whose cache holds everything never needs it.
    let mut compiler = None;
    while let Ok(job) = queue.recv() {
        wait_while_loads_compile(runtime);
        optimize(runtime, settings, &mut compiler, &job);
        pending.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often the background compile looks whether loads still compile.
const LOADS_POLL: Duration = Duration::from_millis(10);

/// Returns once no load holds a compile slot, or the host is gone. Many components
/// loading from a cold cache are callable sooner this way: the background compile took
/// a fifth of the CPU they had, despite its lower priority. The host is not held while
/// waiting, so a host dropped meanwhile frees its engines at once.
fn wait_while_loads_compile(runtime: &Weak<Runtime>) {
    while runtime.upgrade().is_some_and(|runtime| runtime.loads_compiling()) {
        std::thread::sleep(LOADS_POLL);
    }
}

/// Compiles the component of `job` with Cranelift and installs the code. Neither the
/// host nor the component is held while compiling (a component holds its engine): a
/// host dropped meanwhile frees its engines and their instance pools at once, and the
/// code is thrown away when done. A component replaced meanwhile by a version of the
/// same bytes (its manifest changed) still gets the code written to the compile cache,
/// where that version's own job finds it.
fn optimize(
    runtime: &Weak<Runtime>,
    settings: &EngineSettings,
    compiler: &mut Option<Result<Engine, String>>,
    job: &Job,
) {
    // A component replaced or removed before its turn needs no better code.
    let Some((path, hash)) = job.component.upgrade().map(|component| (component.path.clone(), component.hash.clone()))
    else {
        return;
    };
    let file = path.display();
    if let Some(host) = runtime.upgrade()
        && let Some(mapped) = host.cached_code(&hash)
    {
        install(&host, job, &mapped, true);
        return;
    }
    if runtime.strong_count() == 0 {
        return;
    }
    let compiler = match compiler.get_or_insert_with(|| compiling_engine(settings).map_err(|e| e.to_string())) {
        Ok(compiler) => compiler,
        Err(e) => {
            tracing::warn!(%file, "no optimizing compile: {e}; the baseline code keeps serving");
            return;
        }
    };
    let compiled = match Component::new(compiler, &job.upgrade.bytes) {
        Ok(compiled) => compiled,
        Err(e) => {
            tracing::warn!(%file, "the optimizing compile failed; the baseline code keeps serving: {e:#}");
            return;
        }
    };
    let Some(host) = runtime.upgrade() else { return };
    if host.cache.is_none() && job.component.strong_count() == 0 {
        return;
    }
    match adopt(&host, &hash, &compiled) {
        Ok((adopted, cached)) => install(&host, job, &adopted, cached),
        Err(e) => tracing::warn!(%file, "the optimized code cannot be loaded; the baseline code keeps serving: {e}"),
    }
}

/// Makes `compiled` (code of the optimizing engine) the code of the job's component, if
/// it is still served.
fn install(runtime: &Runtime, job: &Job, compiled: &Component, cached: bool) {
    let Some(component) = job.component.upgrade() else { return };
    let file = component.path.display();
    match Code::link(&runtime.optimized, compiled, &component.contract, &component.tools) {
        Ok(code) => {
            component.resident.install(code, cached);
            tracing::debug!(%file, "optimized code installed");
        }
        Err(e) => tracing::warn!(%file, "the optimized code cannot be linked; the baseline code keeps serving: {e}"),
    }
}

/// `compiled` as code of the host's optimizing engine, and whether the compile cache
/// holds it: mapped from the cache entry it is written to, or copied without one.
fn adopt(runtime: &Runtime, hash: &str, compiled: &Component) -> Result<(Component, bool), String> {
    if let Some(mapped) = runtime.cache.as_ref().and_then(|cache| cache.put(&runtime.optimized.engine, hash, compiled))
    {
        return Ok((mapped, true));
    }
    let bytes = compiled.serialize().map_err(|e| format!("{e:#}"))?;
    // SAFETY: `bytes` were serialized just now, in this process, by an engine configured
    // like the optimizing engine but for how instances are allocated, which compiled
    // code does not depend on; wasmtime checks that every setting it does depend on
    // matches.
    let component =
        unsafe { Component::deserialize(&runtime.optimized.engine, &bytes) }.map_err(|e| format!("{e:#}"))?;
    Ok((component, false))
}

/// Makes this thread yield to the threads serving calls (Linux schedules threads, so
/// `setpriority` of thread id 0 is this thread alone).
fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: setpriority has no memory-safety preconditions; failure leaves the
    // priority as it was.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, BACKGROUND_NICENESS);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use serde_json::json;

    use serde_json::Value;

    use super::super::Components;
    use super::*;
    use crate::runtime::CacheSetting;
    use crate::sandbox::SystemResolver;
    use crate::sources::{Produced, RunContext};
    use crate::storage::{Storage, StorageSetting};
    use crate::tool::Limits;
    use crate::trust::SigningKeys;

    /// A plain component exporting `spin: func() -> u32`, whose many large functions keep
    /// Cranelift busy for seconds (Winch, for a fraction of that).
    fn slow_to_optimize(functions: usize, steps: usize) -> Vec<u8> {
        let mut module = String::from("(core module $m\n");
        for f in 0..functions {
            module.push_str(&format!("(func $f{f} (param i32) (result i32) (local i32 i32 i32)\n"));
            for k in 0..steps {
                module.push_str(&format!(
                    "local.get 0 i32.const {k} i32.mul local.get 1 i32.add local.tee 1 \
                     local.get 2 i32.xor local.tee 2 local.get 3 i32.rotl local.set 3\n"
                ));
            }
            module.push_str("local.get 1 local.get 2 i32.add local.get 3 i32.add)\n");
        }
        module.push_str("(func (export \"spin\") (result i32) i32.const 7 call $f0))\n");
        let component = format!(
            "(component {module} (core instance $i (instantiate $m)) \
             (func (export \"spin\") (result u32) (canon lift (core func $i \"spin\"))))"
        );
        wat::parse_str(component).expect("the component's text parses")
    }

    /// The component source of a tiered host, its compile cache in `cache`.
    fn components(cache: Option<&std::path::Path>) -> Components {
        let settings = EngineSettings { tiering: crate::runtime::Tiering::Tiered, ..EngineSettings::default() };
        let cache = cache.map_or(CacheSetting::Disabled, |dir| CacheSetting::Dir(dir.to_owned()));
        let runtime = Runtime::start(&settings, cache, None).unwrap();
        Components::new(runtime, Limits::default(), SigningKeys::none(), Arc::new(SystemResolver))
    }

    /// `bytes` as `<dir>/slow/<name>.wasm`, loaded by `components`.
    async fn load(components: &Components, dir: &std::path::Path, bytes: &[u8]) -> Arc<LoadedComponent> {
        std::fs::create_dir_all(dir.join("slow")).unwrap();
        let path = dir.join("slow/spin.wasm");
        std::fs::write(&path, bytes).unwrap();
        components.load_file(&path, None, None, None).await.unwrap()
    }

    /// Calls the component's `spin`.
    async fn spin(components: &Components, component: &Arc<LoadedComponent>, storage: &Arc<Storage>) -> Value {
        let resolver: Arc<dyn crate::sandbox::Resolve> = Arc::new(SystemResolver);
        let input_bytes = std::sync::atomic::AtomicU64::new(0);
        let caller = crate::policy::Caller::local();
        let client = crate::client::ClientSession::new(None, Default::default(), Arc::from("slow/spin"), u64::MAX);
        let context = RunContext {
            components,
            resolver: &resolver,
            storage,
            caller: &caller,
            progress: None,
            client: &client,
            input_bytes: &input_bytes,
        };
        let ran = components.run(component, 0, ("slow/spin", &json!({})), &context).await;
        match ran.produced {
            Ok(Produced::Value(value)) => value,
            Ok(Produced::Text(text)) => panic!("a plain component answered text: {text}"),
            Err(error) => panic!("spin failed: {error}"),
        }
    }

    fn storage(dir: &std::path::Path) -> Arc<Storage> {
        Arc::new(Storage::new(StorageSetting::File(dir.join("storage.sqlite3"))))
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_source_dropped_during_a_background_compile_frees_its_engines_at_once() {
        let tools = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        let bytes = slow_to_optimize(300, 300);
        let components = components(Some(cache.path()));
        let component = load(&components, tools.path(), &bytes).await;
        assert_eq!(components.optimizations_pending(), 1, "the baseline code serves while Cranelift compiles");
        assert!(spin(&components, &component, &storage(tools.path())).await.is_u64(), "the baseline code answers");
        let baseline = components.runtime.baseline().expect("a baseline engine");
        let engines = [components.runtime.optimized.engine.weak(), baseline.engine.weak()];

        let dropped = Instant::now();
        drop((components, component));
        while engines.iter().any(|engine| engine.upgrade().is_some()) {
            assert!(dropped.elapsed() < Duration::from_secs(60), "the engines outlived their host by a minute");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let freed_after = dropped.elapsed();

        // The compile the dropped source left running takes this long, as measured now.
        let settings = EngineSettings::default();
        let compiler = compiling_engine(&settings).unwrap();
        let started = Instant::now();
        Component::new(&compiler, &bytes).unwrap();
        let compile = started.elapsed();
        assert!(
            freed_after * 4 < compile,
            "the engines were freed {freed_after:?} after the source was dropped; the compile takes {compile:?}"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_background_compile_waits_while_a_load_compiles() {
        let tools = tempfile::tempdir().unwrap();
        let bytes = slow_to_optimize(2, 20);
        let components = components(None);
        let component = load(&components, tools.path(), &bytes).await;
        let optimizer = components.optimizer.as_ref().expect("a tiered source optimizes");
        let until_optimized = |limit: Duration| async move {
            let started = Instant::now();
            while optimizer.pending() > 0 && started.elapsed() < limit {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            optimizer.pending() == 0
        };
        assert!(until_optimized(Duration::from_secs(60)).await, "the first background compile finished");

        // A load compiling in every slot: the component queued again waits for it.
        let slots = components.runtime.hold_compile_slots().await;
        assert!(components.runtime.loads_compiling());
        optimizer.enqueue(&component, Upgrade { bytes: bytes.into() });
        assert!(!until_optimized(Duration::from_millis(500)).await, "compiled while every core compiled a load");
        drop(slots);
        assert!(!components.runtime.loads_compiling());
        assert!(until_optimized(Duration::from_secs(60)).await, "compiled once the loads were done");
        assert_eq!(component.resident.tier(), Some(crate::runtime::Tier::Optimized));
        assert!(spin(&components, &component, &storage(tools.path())).await.is_u64());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn optimized_code_replaces_the_baseline_with_and_without_a_compile_cache() {
        for cache in [Some(tempfile::tempdir().unwrap()), None] {
            let tools = tempfile::tempdir().unwrap();
            let components = components(cache.as_ref().map(|dir| dir.path()));
            let component = load(&components, tools.path(), &slow_to_optimize(2, 20)).await;
            let storage = storage(tools.path());
            let first = spin(&components, &component, &storage).await;
            let started = Instant::now();
            while components.optimizations_pending() > 0 {
                assert!(started.elapsed() < Duration::from_secs(60), "the optimizing compile did not finish");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            assert_eq!(component.resident.tier(), Some(crate::runtime::Tier::Optimized), "cache: {}", cache.is_some());
            assert_eq!(spin(&components, &component, &storage).await, first, "the same answer from either code");
        }
    }
}
