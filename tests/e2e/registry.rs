//! The registry: layered roots with precedence, bare stdlib names, same-layer conflicts,
//! the compile cache, and hot reload that never fails a call.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolhost::{CacheSetting, CallError, EngineSettings, Layer, Tier, ToolHost};
use toolhost_tests::{ToolsDir, component, next_change, wait_until_optimized, with_custom_section, write_atomically};

fn layer(name: &str, tools: &ToolsDir, stdlib: bool) -> Layer {
    Layer { name: name.into(), root: Some(tools.path().to_owned()), stdlib }
}

#[tokio::test]
async fn a_higher_layer_shadows_a_lower_one_and_says_so() {
    let project = ToolsDir::new();
    let stdlib = ToolsDir::new();
    // The same full name `util/echo` in both layers, from different components.
    let project_file = project.install("hostile", "util", "hostile");
    let stdlib_file = stdlib.install("hostile", "util", "hostile");
    stdlib.install("math", "math", "math");
    let host = ToolHost::builder()
        .layer(layer("project", &project, false))
        .layer(layer("stdlib", &stdlib, true))
        .build()
        .await
        .unwrap();
    let snapshot = host.snapshot();
    let echo = &snapshot.tools["util/echo"];
    assert_eq!(echo.source.file().unwrap(), project_file);
    assert_eq!(snapshot.layers[echo.layer].name, "project");
    assert_eq!(echo.overrides.len(), 1);
    assert_eq!(echo.overrides[0].layer, "stdlib");
    assert_eq!(echo.overrides[0].origin, stdlib_file.display().to_string());

    // Bare names reach the stdlib layer; an overridden stdlib name reaches the override.
    assert_eq!(host.call("add", json!({ "numbers": [1, 2] })).await.unwrap(), json!({ "value": 3.0 }));
    let report = host.call_detailed("echo", json!({ "x": 1 })).await;
    assert_eq!(report.tool.as_deref(), Some("util/echo"));
    assert_eq!(report.component_hash.as_deref(), echo.source.hash());
    // Bare names of tools only in a non-stdlib layer do not resolve.
    let project_only = ToolsDir::new();
    project_only.install("text", "words", "text");
    let host = ToolHost::builder()
        .layer(layer("project", &project_only, false))
        .layer(layer("stdlib", &stdlib, true))
        .build()
        .await
        .unwrap();
    assert!(matches!(host.call("slugify", json!({ "text": "x" })).await, Err(CallError::NotFound { .. })));
    assert!(host.call("words/slugify", json!({ "text": "x" })).await.is_ok());
}

#[tokio::test]
async fn two_components_of_one_layer_with_one_name_is_a_reported_conflict() {
    let tools = ToolsDir::new();
    let bytes = std::fs::read(component("hostile")).unwrap();
    let first = tools.write("util", "a-first.wasm", &bytes);
    let second = tools.write("util", "b-second.wasm", &with_custom_section(&bytes, "copy", b"2"));
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let snapshot = host.snapshot();
    assert_eq!(snapshot.tools["util/echo"].source.file().unwrap(), first, "the first file by name keeps the tool");
    let conflict = snapshot.conflicts.iter().find(|c| c.full_name == "util/echo").expect("conflict reported");
    assert_eq!(
        (conflict.kept.clone(), conflict.ignored.clone()),
        (first.display().to_string(), second.display().to_string())
    );
    assert_eq!(snapshot.conflicts.len(), snapshot.tools.len(), "every tool of the second component conflicts");
}

#[tokio::test]
async fn bare_names_exported_by_two_stdlib_namespaces_are_ambiguous() {
    let stdlib = ToolsDir::new();
    stdlib.install("hostile", "one", "hostile");
    stdlib.install("hostile", "two", "hostile");
    let host = ToolHost::builder().layer(layer("stdlib", &stdlib, true)).build().await.unwrap();
    assert!(host.call("one/echo", json!({})).await.is_ok());
    let error = host.call("echo", json!({})).await.unwrap_err();
    let CallError::NotFound { suggestions, .. } = error else { panic!("{error:?}") };
    assert!(
        suggestions.contains(&"one/echo".to_owned()) && suggestions.contains(&"two/echo".to_owned()),
        "{suggestions:?}"
    );
}

#[tokio::test]
async fn the_compile_cache_serves_a_restart_and_survives_corruption() {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    let bytes = with_custom_section(&std::fs::read(component("text")).unwrap(), "cache-test", b"unique");
    tools.write("text", "text.wasm", &bytes);
    let build =
        || ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Dir(cache.path().to_owned())).build();

    let first = build().await.unwrap();
    let compiled = first.snapshot().tools["text/slugify"].source.component().unwrap().clone();
    assert!(!compiled.from_cache, "first load compiles");
    assert_eq!(compiled.tier(), Some(Tier::Baseline), "with Winch first");
    wait_until_optimized(&first).await;
    assert_eq!(compiled.tier(), Some(Tier::Optimized), "then Cranelift's code replaces Winch's");
    let second = build().await.unwrap();
    let cached = second.snapshot().tools["text/slugify"].source.component().unwrap().clone();
    assert!(cached.from_cache, "a restart loads native code from the cache");
    assert_eq!(second.call("text/slugify", json!({ "text": "A B" })).await.unwrap(), json!({ "slug": "a-b" }));

    // Corrupt every entry: the next load detects it, recompiles and serves. (Replaced,
    // not written in place: the hosts above map their entries, and nothing but a
    // rename ever changes an entry.)
    let mut entries = 0;
    for engine_dir in std::fs::read_dir(cache.path()).unwrap() {
        for entry in std::fs::read_dir(engine_dir.unwrap().path()).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|extension| extension == "cwasm") {
                let mut data = std::fs::read(&path).unwrap();
                let middle = data.len() / 2;
                data[middle] ^= 0xff;
                write_atomically(&path, &data);
                entries += 1;
            }
        }
    }
    assert_eq!(entries, 1);
    let third = build().await.unwrap();
    wait_until_optimized(&third).await;
    assert!(
        !third.snapshot().tools["text/slugify"].source.component().unwrap().from_cache,
        "a corrupt entry is recompiled, not trusted"
    );
    assert_eq!(third.call("text/slugify", json!({ "text": "C D" })).await.unwrap(), json!({ "slug": "c-d" }));
    let fourth = build().await.unwrap();
    assert!(
        fourth.snapshot().tools["text/slugify"].source.component().unwrap().from_cache,
        "and the cache is whole again"
    );
}

#[tokio::test]
async fn hot_reload_adds_changes_breaks_renames_and_removes() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let mut changes = host.subscribe();
    let _watch = host.watch(Duration::from_millis(50)).unwrap();

    // Add.
    let text_bytes = std::fs::read(component("text")).unwrap();
    write_atomically(&tools.path().join("math/text.wasm"), &text_bytes);
    let change = next_change(&mut changes, 20).await;
    assert!(change.added.contains(&"math/slugify".to_owned()), "{change:?}");
    assert_eq!(host.call("math/slugify", json!({ "text": "x y" })).await.unwrap(), json!({ "slug": "x-y" }));

    // Change: new bytes for the same file.
    let before = host.snapshot().tools["math/slugify"].source.hash().unwrap().to_owned();
    write_atomically(&tools.path().join("math/text.wasm"), &with_custom_section(&text_bytes, "v", b"2"));
    let change = next_change(&mut changes, 20).await;
    assert!(change.changed.contains(&"math/slugify".to_owned()), "{change:?}");
    assert_ne!(host.snapshot().tools["math/slugify"].source.hash().unwrap(), before);

    // Broken: the last good version keeps serving, and the error is reported.
    write_atomically(&tools.path().join("math/text.wasm"), b"\0asm\x0d\0\x01\0garbage");
    let change = next_change(&mut changes, 20).await;
    assert_eq!(change.errors.len(), 1, "{change:?}");
    assert!(change.added.is_empty() && change.removed.is_empty() && change.changed.is_empty(), "{change:?}");
    assert_eq!(
        host.call("math/slugify", json!({ "text": "still here" })).await.unwrap(),
        json!({ "slug": "still-here" })
    );
    assert_eq!(host.load_errors().len(), 1);

    // Fixed again.
    write_atomically(&tools.path().join("math/text.wasm"), &text_bytes);
    let change = next_change(&mut changes, 20).await;
    assert!(change.changed.contains(&"math/slugify".to_owned()), "{change:?}");
    assert!(host.load_errors().is_empty());

    // Rename into another namespace.
    std::fs::create_dir(tools.path().join("words")).unwrap();
    std::fs::rename(tools.path().join("math/text.wasm"), tools.path().join("words/text.wasm")).unwrap();
    let change = next_change(&mut changes, 20).await;
    assert!(
        change.added.contains(&"words/slugify".to_owned()) && change.removed.contains(&"math/slugify".to_owned()),
        "{change:?}"
    );

    // Remove.
    std::fs::remove_file(tools.path().join("words/text.wasm")).unwrap();
    let change = next_change(&mut changes, 20).await;
    assert!(change.removed.contains(&"words/slugify".to_owned()), "{change:?}");
    assert!(matches!(host.call("words/slugify", json!({ "text": "x" })).await, Err(CallError::NotFound { .. })));
    assert_eq!(host.call("math/add", json!({ "numbers": [1] })).await.unwrap(), json!({ "value": 1.0 }));
}

/// Creates `root/math/`, lets the watcher see the new directories, then installs the math
/// component and waits until `math/add` is served.
async fn install_into_new_root(
    root: &std::path::Path,
    math: &[u8],
    changes: &mut tokio::sync::broadcast::Receiver<toolhost::RegistryChange>,
) {
    std::fs::create_dir_all(root.join("math")).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    write_atomically(&root.join("math/math.wasm"), math);
    for _ in 0..5 {
        if next_change(changes, 10).await.added.contains(&"math/add".to_owned()) {
            return;
        }
    }
    panic!("math/add was not served from {}", root.display());
}

#[tokio::test]
async fn a_root_created_after_the_watch_starts_is_served_and_survives_being_recreated() {
    let parent = ToolsDir::new();
    // Two levels missing: the watch must follow the path as it appears.
    let root = parent.path().join("project/tools");
    let host = ToolHost::builder().root(&root).build().await.unwrap();
    let mut changes = host.subscribe();
    let _watch = host.watch(Duration::from_millis(50)).unwrap();
    let math = std::fs::read(component("math")).unwrap();

    install_into_new_root(&root, &math, &mut changes).await;
    assert_eq!(host.call("math/add", json!({ "numbers": [2, 3] })).await.unwrap(), json!({ "value": 5.0 }));

    // Removed: its tools go. Created again: the new directory is watched too.
    std::fs::remove_dir_all(&root).unwrap();
    let change = next_change(&mut changes, 10).await;
    assert!(change.removed.contains(&"math/add".to_owned()), "{change:?}");
    install_into_new_root(&root, &math, &mut changes).await;
    assert_eq!(host.call("math/add", json!({ "numbers": [1] })).await.unwrap(), json!({ "value": 1.0 }));
}

#[tokio::test]
async fn a_root_that_never_goes_quiet_still_reloads() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let mut changes = host.subscribe();
    // Settles after 150 ms of quiet; a write every 20 ms never gives it that.
    let _watch = host.watch(Duration::from_millis(150)).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let busy_log = tools.path().join("math/notes.log");
    let writer = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let started = std::time::Instant::now();
            while !stop.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(20) {
                std::fs::write(&busy_log, format!("{:?}", started.elapsed())).unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    write_atomically(&tools.path().join("math/text.wasm"), &std::fs::read(component("text")).unwrap());
    // The reload waits at most ten debounce periods (at least 1 s) for quiet.
    let change = tokio::time::timeout(Duration::from_secs(10), changes.recv()).await;
    let still_writing = !writer.is_finished();
    stop.store(true, Ordering::Relaxed);
    writer.join().unwrap();
    let change = change.expect("a reload while the directory is still busy").unwrap();
    assert!(still_writing, "the writer must still be busy when the reload happens");
    assert!(change.added.contains(&"math/slugify".to_owned()), "{change:?}");
}

#[tokio::test]
async fn a_manifest_change_reloads_its_component() {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    let manifest = tools.manifest("hostile", "hostile", "[grants]\nconfig = { version = \"1\" }\n");
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let mut changes = host.subscribe();
    let _watch = host.watch(Duration::from_millis(50)).unwrap();
    write_atomically(&manifest, b"[grants]\nconfig = { version = \"2\" }\n");
    next_change(&mut changes, 20).await;
    assert_eq!(host.call("hostile/config", json!({ "name": "version" })).await.unwrap(), json!({ "value": "2" }));
}

#[tokio::test]
async fn calls_never_fail_while_files_are_replaced_many_times() {
    let tools = ToolsDir::with_examples();
    let wasm = tools.install("hostile", "hostile", "hostile");
    let manifest = tools.manifest("hostile", "hostile", "[grants]\nconfig = { version = \"0\" }\n");
    let hostile_bytes = std::fs::read(component("hostile")).unwrap();
    let host = ToolHost::builder().root(tools.path()).build().await.unwrap();
    let _watch = host.watch(Duration::from_millis(20)).unwrap();

    let written_versions = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let callers: Vec<_> = (0..4)
        .map(|_| {
            let (host, stop, written_versions) = (host.clone(), stop.clone(), written_versions.clone());
            tokio::spawn(async move {
                let mut calls = 0;
                while !stop.load(Ordering::SeqCst) {
                    let answer = host.call("hostile/config", json!({ "name": "version" })).await;
                    let version: usize = match answer {
                        Ok(value) => value["value"].as_str().expect("a version").parse().unwrap(),
                        Err(error) => panic!("call {calls} failed during reloads: {error}"),
                    };
                    assert!(
                        version <= written_versions.load(Ordering::SeqCst),
                        "answered by version {version}, never written"
                    );
                    let sum = host
                        .call("math/add", json!({ "numbers": [1, 2] }))
                        .await
                        .expect("an untouched tool never fails");
                    assert_eq!(sum, json!({ "value": 3.0 }));
                    calls += 1;
                }
                calls
            })
        })
        .collect();

    for version in 1..=30usize {
        written_versions.store(version, Ordering::SeqCst);
        let new_manifest = format!("[grants]\nconfig = {{ version = \"{version}\" }}\n");
        if version % 3 == 0 {
            // In place and in two steps, like a slow copy: a half-written component
            // must never stick.
            let bytes = with_custom_section(&hostile_bytes, "version", version.to_string().as_bytes());
            std::fs::write(&wasm, &bytes[..bytes.len() / 2]).unwrap();
            tokio::time::sleep(Duration::from_millis(30)).await;
            std::fs::write(&wasm, &bytes).unwrap();
            std::fs::write(&manifest, new_manifest).unwrap();
        } else {
            write_atomically(&manifest, new_manifest.as_bytes());
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    // The final state wins: the last version is served once reloads settle.
    let mut last = json!(null);
    for _ in 0..200 {
        last = host.call("hostile/config", json!({ "name": "version" })).await.unwrap();
        if last == json!({ "value": "30" }) && host.load_errors().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(last, json!({ "value": "30" }));
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    stop.store(true, Ordering::SeqCst);
    let mut total = 0;
    for caller in callers {
        total += caller.await.expect("no caller panicked");
    }
    assert!(total > 50, "the callers kept calling ({total} rounds)");
}

#[tokio::test]
async fn optimized_code_replaces_baseline_code_without_harming_calls_in_flight() {
    // A switch that lands just as a call ends shows nothing; such a run is tried again,
    // on new bytes (so a new background compile), a few times.
    for attempt in 0..3 {
        if switch_with_a_call_in_flight(attempt).await {
            return;
        }
    }
    panic!("in three runs the switch never came while a call was in flight");
}

/// Runs calls on baseline code until the optimized code replaces it; `false` when the
/// switch came as a call ended (inconclusive), else checks the call in flight.
async fn switch_with_a_call_in_flight(attempt: u32) -> bool {
    let tools = ToolsDir::new();
    let hostile = std::fs::read(component("hostile")).unwrap();
    tools.write("hostile", "hostile.wasm", &with_custom_section(&hostile, "attempt", &attempt.to_le_bytes()));
    tools.manifest("hostile", "hostile", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"60s\"\n");
    let host = ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Disabled).build().await.unwrap();
    let component = host.snapshot().tools["hostile/busy"].source.component().unwrap().clone();
    assert_eq!(component.tier(), Some(Tier::Baseline), "a component the cache does not hold starts on Winch's code");

    // Calls that run on the baseline code, one after another, until the optimizing
    // compile (a niced background thread, slow on a busy machine) replaces it while one
    // of them is in flight.
    let iterations: u64 = 2_000_000_000;
    let expected = json!({ "sum": iterations * (iterations - 1) / 2 });
    let optimized = async {
        while component.tier() != Some(Tier::Optimized) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    };
    tokio::pin!(optimized);
    let in_flight = loop {
        if component.tier() != Some(Tier::Baseline) {
            return false;
        }
        let mut busy = tokio::spawn({
            let host = host.clone();
            async move { host.call("hostile/busy", json!({ "iterations": iterations })).await }
        });
        tokio::select! {
            biased;
            finished = &mut busy => assert_eq!(finished.unwrap(), Ok(expected.clone()), "a call before the switch"),
            () = &mut optimized => break busy,
        }
    };
    assert_eq!(component.tier(), Some(Tier::Optimized));
    if in_flight.is_finished() {
        return false;
    }
    assert_eq!(in_flight.await.unwrap(), Ok(expected.clone()), "a call in flight finished on the code it started on");
    assert_eq!(host.call("hostile/busy", json!({ "iterations": iterations })).await, Ok(expected));
    assert_eq!(host.call("hostile/count_calls", json!({})).await, Ok(json!({ "calls": 1 })), "fresh instance");
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_change_keeps_the_compiled_code_and_its_background_compile() {
    for cache in [Some(tempfile::tempdir().unwrap()), None] {
        let tools = ToolsDir::new();
        tools.install("hostile", "hostile", "hostile");
        let manifest = |version: u32| {
            tools.manifest("hostile", "hostile", &format!("[grants]\nconfig = {{ version = \"{version}\" }}\n"));
        };
        manifest(1);
        let setting = cache.as_ref().map_or(CacheSetting::Disabled, |dir| CacheSetting::Dir(dir.path().to_owned()));
        let host = ToolHost::builder().root(tools.path()).compile_cache(setting).build().await.unwrap();
        let served = |host: &ToolHost| host.snapshot().tools["hostile/config"].source.component().unwrap().clone();
        let version = async |host: &ToolHost| host.call("hostile/config", json!({ "name": "version" })).await.unwrap();
        let first = served(&host);
        assert_eq!(first.tier(), Some(Tier::Baseline), "cold: Winch's code first");

        // Same bytes, new grants: the new version links the code the last one had.
        manifest(2);
        let change = host.reload().await;
        assert!(change.errors.is_empty(), "{change:?}");
        let second = served(&host);
        assert!(!Arc::ptr_eq(&first, &second), "a new version");
        assert_eq!(version(&host).await, json!({ "value": "2" }), "with the new grants");
        assert_eq!(second.compile_time, first.compile_time, "its code was not compiled again");
        drop(first);

        // The background compile still replaces the baseline code of the new version.
        wait_until_optimized(&host).await;
        assert_eq!(second.tier(), Some(Tier::Optimized), "cache: {}", cache.is_some());

        // And optimized code is kept across a manifest change too.
        manifest(3);
        let change = host.reload().await;
        assert!(change.errors.is_empty(), "{change:?}");
        let third = served(&host);
        assert_eq!(third.tier(), Some(Tier::Optimized), "cache: {}", cache.is_some());
        assert_eq!(host.optimizations_pending(), 0, "nothing to compile again");
        assert_eq!(version(&host).await, json!({ "value": "3" }));
    }
}

#[tokio::test]
async fn idle_code_leaves_memory_and_the_next_call_maps_it_again() {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    // Long enough that a loaded machine does not idle the code between a call and the
    // check after it; short enough to keep the test quick.
    let settings = EngineSettings { drop_idle_code_after: Duration::from_secs(1), ..EngineSettings::default() };
    let host = ToolHost::builder()
        .root(tools.path())
        .engine_settings(settings)
        .compile_cache(CacheSetting::Dir(cache.path().to_owned()))
        .build()
        .await
        .unwrap();
    wait_until_optimized(&host).await;
    let component = host.snapshot().tools["math/add"].source.component().unwrap().clone();
    // Checked after a call: on a loaded machine the optimized code may idle out between
    // its install and the check, and the call maps it again.
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    assert_eq!(component.tier(), Some(Tier::Optimized));

    let started = std::time::Instant::now();
    while component.tier().is_some() {
        assert!(started.elapsed() < Duration::from_secs(10), "idle code was never dropped");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Nothing keeps the dropped code mapped: no instance slot, warm or waiting to be
    // decommitted, holds its memory image (which holds the whole compiled module).
    let cache_files = format!("{}/", cache.path().display());
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mapped: Vec<&str> = maps.lines().filter(|line| line.contains(&cache_files)).collect();
    assert!(mapped.is_empty(), "the dropped code is still mapped: {mapped:#?}");
    // The compiled schemas left with the code; the boundary still checks both ways.
    let add = host.snapshot().tools["math/add"].def().clone();
    assert!(!add.input_schema().is_compiled() && !add.output_schema().is_compiled());
    let refused = host.call("math/add", json!({ "numbers": "2, 3" })).await;
    assert!(matches!(refused, Err(CallError::InputInvalid { .. })), "{refused:?}");
    assert_eq!(host.call("math/add", json!({ "numbers": [2, 3] })).await, Ok(json!({ "value": 5.0 })));
    assert_eq!(component.tier(), Some(Tier::Optimized), "mapped again from the compile cache");

    // Without its cache entry the code comes back from the file, compiled again.
    for entry in std::fs::read_dir(cache.path()).unwrap() {
        std::fs::remove_dir_all(entry.unwrap().path()).unwrap();
    }
    while component.tier().is_some() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(host.call("math/add", json!({ "numbers": [3, 4] })).await, Ok(json!({ "value": 7.0 })));
}

#[tokio::test]
async fn code_without_a_cache_entry_stays_resident() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let settings = EngineSettings { drop_idle_code_after: Duration::from_millis(50), ..EngineSettings::default() };
    let host = ToolHost::builder()
        .root(tools.path())
        .engine_settings(settings)
        .compile_cache(CacheSetting::Disabled)
        .build()
        .await
        .unwrap();
    wait_until_optimized(&host).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let component = host.snapshot().tools["math/add"].source.component().unwrap().clone();
    assert_eq!(component.tier(), Some(Tier::Optimized), "nothing could map it again, so it stays");
}

/// A server's start: each component is served once it loads, while components whose
/// `list-tools` never returns spend their own time limit only. Until a namespace's files
/// are loaded a call into it waits rather than hearing "not found", and no lower layer
/// serves a tool a higher layer's file still loading may override.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_slow_components_load_the_loaded_ones_are_served() {
    let project = ToolsDir::new();
    let stdlib = ToolsDir::new();
    let endless_listing = "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"4s\"\n";
    // More endless listings than cores: none may hold up the other files' loads.
    for namespace in ["slow1", "slow2", "slow3", "text"] {
        project.install("slow-listing", namespace, "slow");
        project.manifest(namespace, "slow", endless_listing);
    }
    stdlib.install("math", "math", "math");
    stdlib.install("text", "text", "text");
    let host = ToolHost::builder()
        .layer(layer("project", &project, false))
        .layer(layer("stdlib", &stdlib, true))
        .compile_cache(CacheSetting::Disabled)
        .serve_while_loading(true)
        .build()
        .await
        .unwrap();
    assert!(!host.is_loaded());

    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await, Ok(json!({ "value": 3.0 })));
    assert!(!host.is_loaded(), "math answered while the endless listings still ran");
    let served = host.snapshot();
    assert!(served.generation >= 1 && served.tools.contains_key("math/add"), "a partial snapshot serves math");
    // The project's `text/slow.wasm` may yet override the stdlib's text tools.
    assert!(!served.tools.keys().any(|name| name.starts_with("text/")), "{:?}", served.tools.keys());

    // So a call to one waits for that file, which runs out of time; then the stdlib answers.
    let slug = host.call("text/slugify", json!({ "text": "Crème brûlée" })).await;
    assert_eq!(slug, Ok(json!({ "slug": "creme-brulee" })));
    let failed: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert!(failed.iter().any(|error| error.contains("text/slow.wasm")), "{failed:?}");

    host.loaded().await;
    assert!(host.is_loaded());
    let failed: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert!(failed.iter().all(|error| error.contains("slow.wasm") && error.contains("4s")), "{failed:?}");
    assert_eq!(host.call("slow1/anything", json!({})).await.unwrap_err().kind(), toolhost::ErrorKind::NotFound);
}
