//! What state costs, on both databases, through the library's whole call path (the
//! `kv` test guest, one fresh instance per call):
//!
//! - `storage/<db>/empty_call`: a call that opens nothing (the floor for the rows below);
//! - `storage/<db>/get_then_set`: one `get` and one `set` of a small value in a granted
//!   bucket, committed before the call returns (SQLite: `synchronous=FULL`; Redis: a
//!   local `redis-server` without persistence, started here);
//! - `storage/<db>/commits_8_writers`: 800 calls that each set one key of their own, from
//!   8 concurrent tasks (throughput: commits per second);
//!
//! and what the stdlib costs to start: `stdlib/<component>/first_load_baseline` and
//! `first_load_optimized`, from the file to callable tools with no compile cache. The
//! components' sizes are printed before the measurements.

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use toolhost::storage::StorageSetting;
use toolhost::{CacheSetting, EngineSettings, Tiering, ToolHost};
use toolhost_tests::{RedisServer, ToolsDir, component};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime")
}

fn round_trips(c: &mut Criterion) {
    let rt = runtime();
    let tools = ToolsDir::new();
    tools.install("kv", "app", "kv");
    tools.manifest("app", "kv", "[grants.storage]\nbuckets = [\"default\"]\n");
    let state = tempfile::tempdir().expect("temp dir");
    let redis = RedisServer::start();
    let databases = [
        ("sqlite", StorageSetting::File(state.path().join("state.sqlite3"))),
        ("redis", StorageSetting::Redis(redis.url.clone())),
    ];
    for (name, setting) in databases {
        let host = rt.block_on(ToolHost::builder().root(tools.path()).storage(setting).build()).expect("host");
        let mut group = c.benchmark_group(format!("storage/{name}"));
        group.measurement_time(Duration::from_secs(8));
        group.bench_function("empty_call", |b| {
            b.to_async(&rt).iter(|| async { host.call("app/run", json!({ "ops": [] })).await.unwrap() })
        });
        let get_then_set = json!({ "ops": [
            { "op": "get", "bucket": "default", "key": "counter" },
            { "op": "set", "bucket": "default", "key": "counter", "value": { "n": 1, "by": "bench" } },
        ]});
        group.bench_function("get_then_set", |b| {
            b.to_async(&rt).iter(|| async { host.call("app/run", get_then_set.clone()).await.unwrap() })
        });
        group.throughput(Throughput::Elements(800));
        group.sample_size(10);
        group.bench_function("commits_8_writers", |b| {
            b.to_async(&rt).iter(|| async {
                let writers: Vec<_> = (0..8)
                    .map(|writer| {
                        let host = host.clone();
                        tokio::spawn(async move {
                            for call in 0..100 {
                                let key = format!("writer-{writer}-{call}");
                                let set =
                                    json!({ "ops": [{ "op": "set", "bucket": "default", "key": key, "value": call }] });
                                host.call("app/run", set).await.unwrap();
                            }
                        })
                    })
                    .collect();
                for writer in writers {
                    writer.await.unwrap();
                }
            })
        });
        group.finish();
    }
}

/// The stdlib's components, as the test build made them (release, `wasm32-wasip2`).
const STDLIB: [&str; 6] = ["stdlib-file", "stdlib-http", "stdlib-web", "stdlib-task", "code-javascript", "code-python"];

fn stdlib_loads(c: &mut Criterion) {
    let rt = runtime();
    println!("\nstdlib component sizes:");
    for name in STDLIB {
        let bytes = std::fs::metadata(component(name)).map(|m| m.len()).unwrap_or_else(|e| panic!("{name}: {e}"));
        println!("  {name:<26} {:>8.2} MiB", bytes as f64 / (1024.0 * 1024.0));
    }
    for (tier, tiering) in [("baseline", Tiering::BaselineOnly), ("optimized", Tiering::OptimizedOnly)] {
        let settings = EngineSettings { tiering, ..EngineSettings::default() };
        let host = rt
            .block_on(ToolHost::builder().engine_settings(settings).compile_cache(CacheSetting::Disabled).build())
            .expect("host");
        for name in STDLIB {
            let file = component(name);
            let mut group = c.benchmark_group(format!("stdlib/{}", name.trim_start_matches("stdlib-")));
            group.sample_size(10);
            group.bench_function(format!("first_load_{tier}"), |b| {
                b.to_async(&rt).iter(|| async { host.inspect_file(&file).await.unwrap() })
            });
            group.finish();
        }
    }
}

criterion_group!(benches, round_trips, stdlib_loads);
criterion_main!(benches);
