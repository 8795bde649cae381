//! End-to-end costs of the host, on components built from source by this crate's build
//! script. Run with `cargo xtask bench` (or `just bench`), which prints the medians.
//!
//! - `call/*`: one call through the whole path: lookup, input validation, fresh store
//!   and instance, guest call, output validation.
//! - `load/*`: from a component file to callable tools, compiled by Winch (baseline) or
//!   Cranelift (optimized), or from the compile cache.
//! - `interpreter/*`: the stdlib's `code/python` and `code/javascript` on a trivial
//!   program and on one that uses the standard modules, as installed (pre-initialized by
//!   `toolhost preinit`) and as built (each call initializing its interpreter), from a
//!   warm compile cache; the report's `duration_us` is printed beside criterion's times.
//! - `verify/*`: what a pin (one SHA-256 pass) and a cosign signature add to the load of
//!   a 0.9 MB and an 18 MB component.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost::trust::{self, Pin, Sha256, SigningKeys};
use toolhost::{CacheSetting, EngineSettings, Tiering, ToolHost};
use toolhost_tests::{
    ToolsDir, built_component, component, cosign_keygen, cosign_sign, polyglot_component, shipped_manifest,
};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime")
}

fn calls(c: &mut Criterion) {
    let rt = runtime();
    let tools = ToolsDir::with_examples();
    let host = rt.block_on(ToolHost::builder().root(tools.path()).build()).expect("host");
    let mut group = c.benchmark_group("call");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("math_add_trivial", |b| {
        b.to_async(&rt).iter(|| async { host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap() })
    });
    group.bench_function("text_slugify", |b| {
        b.to_async(&rt).iter(|| async { host.call("text/slugify", json!({ "text": "Hello, World!" })).await.unwrap() })
    });
    // Throughput on every core: 1000 calls from 8 concurrent tasks per iteration.
    group.throughput(criterion::Throughput::Elements(1000));
    group.bench_function("math_add_1000_calls_8_tasks", |b| {
        b.to_async(&rt).iter(|| async {
            let tasks: Vec<_> = (0..8)
                .map(|_| {
                    let host = host.clone();
                    tokio::spawn(async move {
                        for _ in 0..125 {
                            host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap();
                        }
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        })
    });
    group.throughput(criterion::Throughput::Elements(1));
    group.bench_function("input_rejected_by_schema", |b| {
        b.to_async(&rt).iter(|| async { host.call("math/add", json!({ "numbers": "x" })).await.unwrap_err() })
    });
    // The same trivial call on a host that keeps metrics (as `serve` does): the cost of
    // counting is the difference from `math_add_trivial`.
    let counted = rt.block_on(ToolHost::builder().root(tools.path()).metrics(true).build()).expect("host");
    group.bench_function("math_add_trivial_with_metrics", |b| {
        b.to_async(&rt).iter(|| async { counted.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap() })
    });
    group.finish();

    // What authenticating one HTTP request costs: the presented token's digest, then a
    // constant-time comparison with each configured one (here 16 agents).
    let tokens = (0..16).fold(toolhost::serve::Tokens::none(), |tokens, i| {
        tokens.with_token(format!("agent-{i}"), &format!("th_token_of_agent_{i:02}_padding_to_43_chars_"))
    });
    c.bench_function("auth/bearer_token_of_16", |b| {
        b.iter(|| tokens.agent_for("th_token_of_agent_15_padding_to_43_chars_").unwrap().len())
    });
}

fn loads(c: &mut Criterion) {
    let rt = runtime();
    let math = component("math");
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    // Compiling: no cache at all, so every iteration compiles, with each compiler.
    for (name, tiering) in [
        ("one_component_compile_baseline", Tiering::BaselineOnly),
        ("one_component_compile_optimized", Tiering::OptimizedOnly),
    ] {
        let settings = EngineSettings { tiering, ..EngineSettings::default() };
        let host = rt
            .block_on(ToolHost::builder().engine_settings(settings).compile_cache(CacheSetting::Disabled).build())
            .expect("host");
        group.bench_function(name, |b| b.to_async(&rt).iter(|| async { host.inspect_file(&math).await.unwrap() }));
    }
    // From a warm cache (filled with Cranelift's code, the only code it holds): read,
    // checksum and map the native code, instantiate once to list the tools, compile the
    // schemas.
    let cache = tempfile::tempdir().expect("cache dir");
    let settings = EngineSettings { tiering: Tiering::OptimizedOnly, ..EngineSettings::default() };
    let cached = rt
        .block_on(
            ToolHost::builder()
                .engine_settings(settings)
                .compile_cache(CacheSetting::Dir(cache.path().to_owned()))
                .build(),
        )
        .expect("host");
    rt.block_on(cached.inspect_file(&math)).expect("fills the cache");
    group.bench_function("one_component_warm_cache", |b| {
        b.to_async(&rt).iter(|| async { cached.inspect_file(&math).await.unwrap() })
    });
    group.finish();
}

fn verification(c: &mut Criterion) {
    let keys_dir = tempfile::tempdir().expect("key dir");
    let keys = cosign_keygen(keys_dir.path(), "bench");
    let signing_keys = SigningKeys::load([keys.join("cosign.pub")]).expect("the bench key");
    let mut group = c.benchmark_group("verify");
    group.sample_size(20);
    for (name, file) in
        [("stdlib_http_0.9MB", component("stdlib_http")), ("py_dates_18MB", polyglot_component("py_dates"))]
    {
        let tools = ToolsDir::new();
        let path = tools.write("ns", "tool.wasm", &std::fs::read(file).expect("read the component"));
        cosign_sign(&keys, &path, &trust::signature_path(&path));
        let bytes = std::fs::read(&path).expect("read the copy");
        let pin = Pin { sha256: Sha256::of(&bytes), by: path.with_extension("toml"), signed_by: None };
        group.bench_function(format!("pin_{name}"), |b| {
            b.iter(|| trust::verify(&path, &bytes, std::slice::from_ref(&pin), &SigningKeys::none()).unwrap())
        });
        group.bench_function(format!("pin_and_signature_{name}"), |b| {
            b.iter(|| trust::verify(&path, &bytes, std::slice::from_ref(&pin), &signing_keys).unwrap())
        });
    }
    group.finish();
}

/// The programs each interpreter runs: trivial, then with the modules a model reaches for.
const PROGRAMS: [(&str, &str, &str); 3] = [
    ("python", "python_trivial", "1 + 1"),
    (
        "python",
        "python_modules",
        "import math, json, re, datetime, statistics, collections\n\
         json.dumps({'r': math.sqrt(2), 'm': statistics.mean([1, 2, 3]), \
         'd': datetime.date(2026, 12, 6).isoformat(), 'w': re.findall(r'\\w+', 'a b'), \
         'c': collections.Counter('abca').most_common(1)})",
    ),
    ("javascript", "javascript_trivial", "1 + 1"),
];

fn interpreters(c: &mut Criterion) {
    let rt = runtime();
    let cache = tempfile::tempdir().expect("cache dir");
    let mut group = c.benchmark_group("interpreter");
    group.measurement_time(Duration::from_secs(5));
    for (form, crate_path) in [("installed", component as fn(&str) -> std::path::PathBuf), ("built", built_component)] {
        let tools = ToolsDir::new();
        for language in ["python", "javascript"] {
            let crate_name = format!("code-{language}");
            let wasm = std::fs::read(crate_path(&crate_name)).expect("read the component");
            tools.write("code", &format!("{language}.wasm"), &wasm);
            tools.manifest("code", language, &shipped_manifest(&crate_name));
        }
        let builder = ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Dir(cache.path().into()));
        let host = rt.block_on(builder.build()).expect("host");
        for (language, name, code) in PROGRAMS {
            let (tool, input) = (format!("code/{language}"), json!({ "code": code }));
            let reports: Vec<u64> = (0..21)
                .map(|_| rt.block_on(host.call_detailed(&tool, input.clone())))
                .map(|report| {
                    assert!(report.outcome.is_ok(), "{tool} {code}: {:?}", report.outcome);
                    u64::try_from(report.duration.as_micros()).unwrap_or(u64::MAX)
                })
                .collect();
            let mut sorted = reports.clone();
            sorted.sort_unstable();
            println!("interpreter/{name}_{form}: duration_us median {} (of 21: {:?})", sorted[10], reports);
            group.bench_function(format!("{name}_{form}"), |b| {
                b.to_async(&rt).iter(|| async { host.call(&tool, input.clone()).await.unwrap() })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, calls, interpreters, loads, verification);
criterion_main!(benches);
