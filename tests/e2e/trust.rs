//! What bytes may run: a manifest's `sha256` pin and cosign signatures under the keys of
//! `[signatures]`. Refused bytes are never compiled (the compile cache of an
//! optimizing-only host gains no entry for them), the version served until then keeps
//! serving, and the errors name what an operator needs to act.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;
use toolhost::{CacheSetting, EngineSettings, HostConfig, ToolHost};
use toolhost_tests::{
    ToolsDir, compiled_hashes, component, cosign_keygen, cosign_sign, next_change, sha256sum, toolhost_bin,
    write_atomically,
};

/// Compiled components in a compile cache (`<dir>/<engine key>/<hash>.cwasm`).
fn cache_entries(dir: &Path) -> usize {
    compiled_hashes(dir).len()
}

#[tokio::test]
async fn a_pinned_component_refuses_other_bytes_uncompiled_and_keeps_its_last_good_version() {
    let tools = ToolsDir::new();
    let math = tools.install("math", "math", "math");
    let math_digest = sha256sum(&math);
    let text_digest = sha256sum(&component("text"));
    let manifest = tools.manifest("math", "math", &format!("# pinned\nsha256 = \"{math_digest}\"\n"));
    let cache = tempfile::tempdir().unwrap();
    let host = ToolHost::builder()
        .root(tools.path())
        .engine_settings(EngineSettings { tiering: toolhost::Tiering::OptimizedOnly, ..EngineSettings::default() })
        .compile_cache(CacheSetting::Dir(cache.path().to_owned()))
        .build()
        .await
        .unwrap();
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 2] })).await.unwrap(), json!({ "value": 3.0 }));
    let shown = serde_json::to_value(host.inspect_file(&math).await.unwrap()).unwrap();
    assert_eq!(shown["verified"], json!({ "sha256": math_digest, "pinned_by": [manifest] }));
    let compiled = cache_entries(cache.path());
    assert_eq!(compiled, 1);

    // Other bytes under the same pin: refused before any compile, naming both digests.
    let mut changes = host.subscribe();
    let _watch = host.watch(Duration::from_millis(50)).unwrap();
    write_atomically(&math, &std::fs::read(component("text")).unwrap());
    let change = next_change(&mut changes, 20).await;
    assert_eq!(change.errors.len(), 1, "{change:?}");
    let errors = host.load_errors();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0].path, math);
    let message = errors[0].to_string();
    assert!(message.contains(&format!("its bytes are {text_digest}")), "{message}");
    assert!(message.contains(&format!("{} pins {math_digest}", manifest.display())), "{message}");
    assert_eq!(cache_entries(cache.path()), compiled, "refused bytes were compiled");
    assert_eq!(host.call("math/add", json!({ "numbers": [2, 2] })).await.unwrap(), json!({ "value": 4.0 }));
    assert!(host.call("math/slugify", json!({ "text": "a b" })).await.is_err(), "the refused version is not served");

    // The pin moved to the new bytes: they are compiled and served.
    write_atomically(&manifest, format!("sha256 = \"{text_digest}\"\n").as_bytes());
    let change = next_change(&mut changes, 20).await;
    assert!(change.added.contains(&"math/slugify".to_owned()), "{change:?}");
    assert!(host.load_errors().is_empty(), "{:?}", host.load_errors());
    assert_eq!(cache_entries(cache.path()), compiled + 1);
    assert_eq!(host.call("math/slugify", json!({ "text": "a b" })).await.unwrap(), json!({ "slug": "a-b" }));

    // A host started on bytes that do not match has nothing to fall back on.
    write_atomically(&manifest, format!("sha256 = \"{math_digest}\"\n").as_bytes());
    let fresh = ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Disabled).build().await.unwrap();
    assert!(fresh.snapshot().tools.is_empty(), "{:?}", fresh.snapshot().tools.keys().collect::<Vec<_>>());
    assert!(fresh.load_errors()[0].to_string().contains("pins"), "{:?}", fresh.load_errors());
}

fn inspect(config: &Path, file: &Path) -> (i32, serde_json::Value, String) {
    let output = Command::new(toolhost_bin())
        .arg("--config")
        .arg(config)
        .arg("inspect")
        .arg(file)
        .env("TOOLHOST_CACHE_DIR", config.parent().unwrap().join("cli-cache"))
        .output()
        .expect("run toolhost inspect");
    let shown = serde_json::from_slice(&output.stdout).unwrap_or(serde_json::Value::Null);
    (output.status.code().unwrap_or(-1), shown, String::from_utf8_lossy(&output.stderr).into_owned())
}

#[tokio::test]
async fn with_signing_keys_only_bytes_signed_by_a_configured_key_are_compiled_and_served() {
    let dir = tempfile::tempdir().unwrap();
    let ours = cosign_keygen(dir.path(), "ours");
    let theirs = cosign_keygen(dir.path(), "theirs");
    let tools = ToolsDir::new();
    let math = tools.install("math", "math", "math");
    cosign_sign(&ours, &math, &dir.path().join("math.sig"));
    std::fs::copy(dir.path().join("math.sig"), tools.path().join("math/math.wasm.sig")).unwrap();
    // No signature at all.
    let text = tools.install("text", "text", "text");
    // A good signature by our key, over other bytes (math's).
    let json_tool = tools.install("json", "json", "json");
    std::fs::copy(dir.path().join("math.sig"), tools.path().join("json/json.wasm.sig")).unwrap();
    // The right bytes, signed by a key the operator did not configure.
    let other = tools.install("math", "other", "math");
    cosign_sign(&theirs, &other, &tools.path().join("other/math.wasm.sig"));

    let cache = dir.path().join("cache");
    let config = dir.path().join("toolhost.toml");
    let text_config = format!(
        "[[layer]]\nname = \"project\"\nroot = \"{}\"\n\n[signatures]\nkeys = [\"ours/cosign.pub\"]\n\n\
         [engine]\ntiering = \"optimized\"\n\n[cache]\ndir = \"cache\"\n",
        tools.path().display()
    );
    std::fs::write(&config, text_config).unwrap();
    let host = HostConfig::load(&config).unwrap().builder().build().await.unwrap();

    let snapshot = host.snapshot();
    let namespaces: std::collections::BTreeSet<&str> =
        snapshot.tools.keys().filter_map(|name| name.split('/').next()).collect();
    assert_eq!(namespaces.into_iter().collect::<Vec<_>>(), ["math"]);
    let mut errors: Vec<(PathBuf, String)> =
        host.load_errors().into_iter().map(|error| (error.path.clone(), error.to_string())).collect();
    errors.sort();
    assert_eq!(errors.len(), 3, "{errors:?}");
    let of = |path: &Path| errors.iter().find(|(p, _)| p == path).map(|(_, message)| message.as_str()).unwrap();
    assert!(of(&text).contains("unsigned") && of(&text).contains("text.wasm.sig does not exist"), "{errors:?}");
    assert!(of(&json_tool).contains("not valid for these bytes"), "{errors:?}");
    assert!(of(&other).contains("under any configured key") && of(&other).contains("ours/cosign.pub"), "{errors:?}");
    assert_eq!(cache_entries(&cache), 1, "only the signed component was compiled");
    assert_eq!(host.call("math/add", json!({ "numbers": [5] })).await.unwrap(), json!({ "value": 5.0 }));

    // The CLI says the same, and shows who signed what it serves.
    let (code, shown, _) = inspect(&config, &math);
    assert_eq!(code, 0);
    assert_eq!(shown["verified"]["signed_by"], json!(ours.join("cosign.pub")));
    assert_eq!(shown["verified"]["sha256"], json!(sha256sum(&math)));
    let (code, shown, stderr) = inspect(&config, &text);
    assert_eq!((code, shown), (14, serde_json::Value::Null));
    assert!(stderr.contains("error[load]") && stderr.contains("unsigned"), "{stderr}");

    // Signing the new bytes serves them; replacing signed bytes keeps the signed version.
    let mut changes = host.subscribe();
    let _watch = host.watch(Duration::from_millis(50)).unwrap();
    // Written whole at once, as a deployment would: a half-written signature is refused.
    cosign_sign(&ours, &text, &dir.path().join("text.sig"));
    write_atomically(&tools.path().join("text/text.wasm.sig"), &std::fs::read(dir.path().join("text.sig")).unwrap());
    let change = next_change(&mut changes, 20).await;
    assert!(change.added.contains(&"text/slugify".to_owned()), "{change:?}");
    write_atomically(&math, &std::fs::read(component("json")).unwrap());
    let change = next_change(&mut changes, 20).await;
    assert_eq!(change.errors.len(), 1, "{change:?}");
    assert_eq!(change.errors[0].path, math);
    assert!(change.errors[0].to_string().contains("not valid for these bytes"), "{change:?}");
    assert_eq!(host.load_errors().len(), 3, "json and other still refused, math's new bytes too");
    assert_eq!(host.call("math/add", json!({ "numbers": [1, 1] })).await.unwrap(), json!({ "value": 2.0 }));
    assert_eq!(cache_entries(&cache), 2, "text, now signed, was compiled; math's new bytes were not");
}
