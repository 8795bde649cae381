//! Registry timings that take seconds, measured as medians of a few runs (criterion's
//! ten-sample minimum would make the cold start alone take minutes):
//!
//! - `100 components callable, cold cache`: every component compiled from scratch (by
//!   Winch first), and until all of them run Cranelift's code; the same with Cranelift
//!   only; the 18 MB Python component likewise;
//! - `100 components callable, warm cache`: a restart that finds every component cached;
//! - `write to new version answering`: from writing a file under a watched root to the
//!   first call answered by the new version, for a manifest change and for new bytes
//!   (of the 472 KB `hostile` component, and of the 237 KB math toolbox).
//!
//! Run with `cargo xtask bench` (or `just bench`).

use std::time::{Duration, Instant};

use serde_json::json;
use toolhost::{CacheSetting, EngineSettings, Tiering, ToolHost};
use toolhost_tests::{ToolsDir, component, wait_until_optimized, with_custom_section, write_atomically};

const COMPONENTS: usize = 100;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn report(name: &str, samples: Vec<Duration>) {
    let runs = samples.len();
    println!("registry/{name:<45} median {:>10.2?}  ({runs} runs)", median(samples));
}

/// `COMPONENTS` distinct copies of the math toolbox, in namespaces `ns0`…; `salt` makes
/// their bytes unique to this run.
fn hundred_components(salt: &str) -> ToolsDir {
    let tools = ToolsDir::new();
    let math = std::fs::read(component("math")).unwrap();
    for i in 0..COMPONENTS {
        let bytes = with_custom_section(&math, "bench", format!("{salt}-{i}").as_bytes());
        tools.write(&format!("ns{i}"), "math.wasm", &bytes);
    }
    tools
}

/// Starts a host of `tools` with `tiering`, calls every component once, and returns how
/// long until all of them answered and how long until all of them run optimized code.
async fn start_and_call(tools: &ToolsDir, cache: &std::path::Path, tiering: Tiering) -> (Duration, Duration) {
    let started = Instant::now();
    let host = ToolHost::builder()
        .root(tools.path())
        .engine_settings(EngineSettings { tiering, ..EngineSettings::default() })
        .compile_cache(CacheSetting::Dir(cache.to_owned()))
        .build()
        .await
        .unwrap();
    for i in 0..COMPONENTS {
        host.call(&format!("ns{i}/add"), json!({ "numbers": [1] })).await.unwrap();
    }
    let callable = started.elapsed();
    wait_until_optimized(&host).await;
    (callable, started.elapsed())
}

/// The 18 MB Python component (CPython inside) from a cold cache: until it answers, and
/// until it runs optimized code.
async fn python_cold(tiering: Tiering) -> (Duration, Duration) {
    let tools = ToolsDir::new();
    tools.install_polyglot("py_dates", "dates");
    let started = Instant::now();
    let host = ToolHost::builder()
        .root(tools.path())
        .engine_settings(EngineSettings { tiering, ..EngineSettings::default() })
        .compile_cache(CacheSetting::Disabled)
        .build()
        .await
        .unwrap();
    host.call("dates/weekday", json!({ "date": "2026-11-24" })).await.unwrap();
    let callable = started.elapsed();
    wait_until_optimized(&host).await;
    (callable, started.elapsed())
}

async fn wait_for_version(host: &ToolHost, version: &str) {
    let expected = json!({ "value": version });
    loop {
        if host.call("hostile/config", json!({ "name": "version" })).await.ok() == Some(expected.clone()) {
            return;
        }
        tokio::task::yield_now().await;
    }
}

/// A host (tiered, the default) of `tools` with its compile cache in `cache`.
async fn host_with_cache(tools: &ToolsDir, cache: &std::path::Path) -> ToolHost {
    ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Dir(cache.to_owned())).build().await.unwrap()
}

/// From writing new bytes of the math toolbox (237 KB, a small component) to its first
/// call answered by them, 15 times, polling every millisecond and pausing 300 ms between
/// writes (the background compile of the version before has the spare core).
async fn small_new_bytes(nonce: &str, debounce: Duration) -> Vec<Duration> {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    let wasm = tools.install("math", "math", "math");
    let math = std::fs::read(component("math")).unwrap();
    let host = host_with_cache(&tools, cache.path()).await;
    let _watch = host.watch(debounce).unwrap();
    let served_hash = |host: &ToolHost| host.snapshot().components[0].loaded.as_ref().map(|c| c.hash.clone());
    let mut samples = Vec::new();
    for version in 1..=15 {
        let before = served_hash(&host);
        let started = Instant::now();
        write_atomically(&wasm, &with_custom_section(&math, "bench", format!("{nonce}-small-{version}").as_bytes()));
        while served_hash(&host) == before || host.call("math/add", json!({ "numbers": [1, 2] })).await.is_err() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        samples.push(started.elapsed());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    samples
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let nonce = format!("{:?}", Instant::now());
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        let (mut optimized, mut cranelift_only) = (Vec::new(), Vec::new());
        for run in 0..3 {
            let cache = tempfile::tempdir().unwrap();
            let tools = hundred_components(&format!("{nonce}-{run}"));
            let (callable, all_optimized) = start_and_call(&tools, cache.path(), Tiering::Tiered).await;
            cold.push(callable);
            optimized.push(all_optimized);
            if run == 0 {
                for _ in 0..5 {
                    warm.push(start_and_call(&tools, cache.path(), Tiering::Tiered).await.0);
                }
            }
            let cache = tempfile::tempdir().unwrap();
            let tools = hundred_components(&format!("{nonce}-{run}-cranelift"));
            cranelift_only.push(start_and_call(&tools, cache.path(), Tiering::OptimizedOnly).await.0);
        }
        report("100 components callable, cold cache", cold);
        report("100 components optimized, cold cache", optimized);
        report("100 components callable, cold, Cranelift only", cranelift_only);
        report("100 components callable, warm cache", warm);

        let (mut python, mut python_optimized, mut python_cranelift) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            let (callable, all_optimized) = python_cold(Tiering::Tiered).await;
            python.push(callable);
            python_optimized.push(all_optimized);
            python_cranelift.push(python_cold(Tiering::OptimizedOnly).await.0);
        }
        report("18 MB Python component callable, cold", python);
        report("18 MB Python component optimized, cold", python_optimized);
        report("18 MB Python callable, cold, Cranelift only", python_cranelift);

        let cache = tempfile::tempdir().unwrap();
        let tools = ToolsDir::new();
        let wasm = tools.install("hostile", "hostile", "hostile");
        let manifest = tools.manifest("hostile", "hostile", "[grants]\nconfig = { version = \"0\" }\n");
        let hostile = std::fs::read(component("hostile")).unwrap();
        let host = host_with_cache(&tools, cache.path()).await;
        let debounce = Duration::from_millis(20);
        let watch = host.watch(debounce).unwrap();
        let mut manifest_change = Vec::new();
        let mut new_bytes = Vec::new();
        for version in 1..=20 {
            let text = format!("[grants]\nconfig = {{ version = \"{version}\" }}\n");
            let started = Instant::now();
            if version % 2 == 0 {
                write_atomically(
                    &wasm,
                    &with_custom_section(&hostile, "bench", format!("{nonce}-{version}").as_bytes()),
                );
                write_atomically(&manifest, text.as_bytes());
                wait_for_version(&host, &version.to_string()).await;
                new_bytes.push(started.elapsed());
            } else {
                write_atomically(&manifest, text.as_bytes());
                wait_for_version(&host, &version.to_string()).await;
                manifest_change.push(started.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        report(&format!("write to answer: manifest (debounce {debounce:?})"), manifest_change);
        report(&format!("write to answer: new bytes, compiled (debounce {debounce:?})"), new_bytes);
        // The small component's host runs alone.
        drop((watch, host));
        report(
            &format!("write to answer: new bytes, small (debounce {debounce:?})"),
            small_new_bytes(&nonce, debounce).await,
        );
    });
}
