//! What a component lists, kept beside the compile cache: a load from the cache runs no
//! guest code and leaves the code out of memory until a call, and a one-shot call loads
//! only the files that may offer its tool.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use toolhost::{CacheSetting, EngineSettings, Tiering, ToolHost};
use toolhost_tests::{ToolsDir, compiled_hashes, component, toolhost_bin, with_custom_section};

/// Cranelift only, so that the first load writes the cache entry at once.
fn optimized_only() -> EngineSettings {
    EngineSettings { tiering: Tiering::OptimizedOnly, ..EngineSettings::default() }
}

async fn host_on(tools: &ToolsDir, cache: &Path) -> ToolHost {
    ToolHost::builder()
        .root(tools.path())
        .engine_settings(optimized_only())
        .compile_cache(CacheSetting::Dir(cache.to_owned()))
        .build()
        .await
        .unwrap()
}

/// Of this process's mappings of the compile cache's code under `cache`: kilobytes
/// resident, and kilobytes mapped.
fn code_mappings_kb(cache: &Path) -> (u64, u64) {
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let prefix = format!("{}/", cache.display());
    let mut in_cache = false;
    let (mut resident, mut mapped) = (0, 0);
    let kb = |value: &str| value.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap();
    for line in smaps.lines() {
        if line.split_whitespace().next().is_some_and(|range| range.contains('-') && !range.ends_with(':')) {
            in_cache = line.contains(&prefix) && line.ends_with(".cwasm");
        } else if in_cache && let Some(value) = line.strip_prefix("Rss:") {
            resident += kb(value);
        } else if in_cache && let Some(value) = line.strip_prefix("Size:") {
            mapped += kb(value);
        }
    }
    (resident, mapped)
}

#[tokio::test]
async fn a_load_from_the_cache_runs_no_guest_code_and_holds_no_code_until_a_call() {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    let bytes = with_custom_section(&std::fs::read(component("math")).unwrap(), "listings-test", b"unique");
    tools.write("math", "math.wasm", &bytes);

    // The first load lists by running the guest, and keeps what it listed.
    let first = host_on(&tools, cache.path()).await;
    let hash = first.snapshot().tools["math/add"].source.hash().unwrap().to_owned();
    let kept = cache.path().join("listings").join(format!("{hash}.json"));
    let mut listing: Value = serde_json::from_slice(&std::fs::read(&kept).expect("the listing is kept")).unwrap();
    let guest_description = first.snapshot().tools["math/add"].def().description().to_owned();
    drop(first);
    // The first host ran the guest from the same entry; wait until its mappings are gone,
    // so that only the second host's are looked at below.
    let started = std::time::Instant::now();
    while code_mappings_kb(cache.path()).1 > 0 {
        assert!(started.elapsed() < std::time::Duration::from_secs(10), "the first host's code stays mapped");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    // A later load reads it instead of running the guest: a listing changed on disk is
    // what it serves (the cache directory is as trusted as the code in it).
    let add = listing["tools"].as_array_mut().unwrap().iter_mut().find(|tool| tool["name"] == "add").unwrap();
    add["description"] = json!("Adds numbers (from the kept listing).");
    std::fs::write(&kept, serde_json::to_vec(&listing).unwrap()).unwrap();
    let second = host_on(&tools, cache.path()).await;
    let served = second.snapshot().tools["math/add"].clone();
    assert!(served.source.component().unwrap().from_cache);
    assert_eq!(served.def().description(), "Adds numbers (from the kept listing).");

    // Its code is mapped, but (but for a stray page window) not in memory until a call
    // runs it; before, loading left nearly all of it resident (0.78 MB of 0.80).
    let (resident, mapped) = code_mappings_kb(cache.path());
    assert!(mapped > 0, "the code is mapped from the cache");
    assert!(resident * 10 <= mapped, "loading from the cache left {resident} of {mapped} kB of code resident");
    assert_eq!(second.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    assert!(code_mappings_kb(cache.path()).0 > resident, "the call ran code from the mapping");
    drop(second);

    // A listing that does not parse is a miss: the guest lists again, and the listing
    // is whole again.
    std::fs::write(&kept, b"{\"format\": 1, \"tools\": [").unwrap();
    let third = host_on(&tools, cache.path()).await;
    assert_eq!(third.snapshot().tools["math/add"].def().description(), guest_description);
    let rewritten: Value = serde_json::from_slice(&std::fs::read(&kept).unwrap()).expect("rewritten whole");
    assert_eq!(rewritten["format"], 1);
    assert!(third.call("math/add", json!({ "numbers": [2, 2] })).await.is_ok());

    // Without a compile cache nothing is kept, and the guest lists at every load.
    let uncached = ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Disabled).build().await.unwrap();
    assert_eq!(uncached.snapshot().tools["math/add"].def().description(), guest_description);
}

fn remove_code(cache: &Path, hash: &str) {
    for engine in std::fs::read_dir(cache).unwrap().flatten().filter(|entry| entry.file_name() != "listings") {
        for extension in ["cwasm", "sum"] {
            let _ = std::fs::remove_file(engine.path().join(format!("{hash}.{extension}")));
        }
    }
}

fn one_shot(cache: &Path, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(toolhost_bin());
    command.arg("--cache-dir").arg(cache).args(args);
    command.output().unwrap()
}

fn hash_of(path: &PathBuf) -> String {
    format!("blake3:{}", blake3::hash(&std::fs::read(path).unwrap()).to_hex())
}

#[test]
fn a_one_shot_call_loads_only_the_files_that_may_offer_its_tool() {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    // One namespace, two files with different tools: `pair/add` (math) and
    // `pair/slugify` (text).
    let math = tools.write("pair", "a-math.wasm", &std::fs::read(component("math")).unwrap());
    let text = tools.write("pair", "b-text.wasm", &std::fs::read(component("text")).unwrap());
    let root = tools.path().to_str().unwrap();
    assert!(one_shot(cache.path(), &["list", root]).status.success());
    let (math_hash, text_hash) = (hash_of(&math), hash_of(&text));
    assert!(compiled_hashes(cache.path()).contains(&text_hash));

    // With text's code gone, a call of `pair/add` does not compile it again: its
    // listing says it offers no `add`.
    remove_code(cache.path(), &text_hash);
    let called = one_shot(cache.path(), &["call", root, "pair/add", "--input", r#"{"numbers":[1,2]}"#]);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    assert!(String::from_utf8_lossy(&called.stdout).contains("3.0"));
    assert!(!compiled_hashes(cache.path()).contains(&text_hash), "a file without the tool was compiled");

    // A file never listed may offer it, so it is loaded (and takes part in the
    // same-layer conflict as it would on a server: the first file by name keeps it).
    let copy = tools.write("pair", "c-copy.wasm", &with_custom_section(&std::fs::read(&math).unwrap(), "copy", b"c"));
    let called = one_shot(cache.path(), &["call", root, "pair/add", "--input", r#"{"numbers":[2,2]}"#, "--report"]);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    let report: Value = serde_json::from_slice(&called.stdout).unwrap();
    assert_eq!(report["component_hash"], json!(math_hash), "{report}");
    assert!(compiled_hashes(cache.path()).contains(&hash_of(&copy)), "the unlisted file was loaded");
    assert!(!compiled_hashes(cache.path()).contains(&text_hash));

    // The tool of the skipped file is still one call away.
    let called = one_shot(cache.path(), &["call", root, "pair/slugify", "--input", r#"{"text":"A B"}"#]);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    assert!(String::from_utf8_lossy(&called.stdout).contains("a-b"));
    assert!(compiled_hashes(cache.path()).contains(&text_hash));
}

/// A host of `tools` without a compile cache, so that it lists every component by
/// running it, once it offers `tool`.
async fn listing_host(tools: &ToolsDir, engine: EngineSettings, tool: &str) -> ToolHost {
    let host =
        ToolHost::builder().root(tools.path()).engine_settings(engine).compile_cache(CacheSetting::Disabled).build();
    let host = host.await.unwrap();
    let snapshot = host.snapshot();
    let errors: Vec<String> = snapshot.load_errors().map(ToString::to_string).collect();
    assert!(snapshot.tools.contains_key(tool), "{errors:?}");
    host
}

/// A listing makes a spare instance once it is done, so that calls do not reuse the
/// listing's slot (`Sandbox::list_tools`). With one slot there is none to spare: the
/// load still lists, and the tools still answer.
#[tokio::test]
async fn a_host_with_one_instance_slot_lists_without_a_spare_and_calls() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let host = listing_host(&tools, EngineSettings { max_instances: 1, ..optimized_only() }, "math/add").await;
    for _ in 0..3 {
        assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    }
}

/// A spare instance is made inside the listing's run, within its time limit, so it gets
/// little time of its own (`SPARE_TIME` in `sandbox/store.rs`): a component that takes
/// 1.5 s to instantiate, under a limit of 2 s, would otherwise time its listing out with
/// a second instantiation.
#[tokio::test]
async fn a_component_slow_to_instantiate_lists_within_its_limit_despite_the_spare() {
    let tools = ToolsDir::new();
    tools.install("slow-start", "slow", "slow");
    tools.manifest("slow", "slow", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"2s\"\n");
    let host = listing_host(&tools, optimized_only(), "slow/ping").await;
    assert_eq!(host.call("slow/ping", json!({})).await, Ok(json!("pong")));
}
