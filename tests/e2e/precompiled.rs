//! `toolhost compile` and `[cache] precompiled`: a toolset compiled once into a directory
//! that replicas only read; code made for another engine is ignored, with a warning, and
//! the replica compiles.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

use serde_json::{Value, json};
use toolhost_tests::{ToolsDir, component, toolhost_bin};

fn toolhost(args: &[&str], config: Option<&Path>) -> Output {
    let mut command = Command::new(toolhost_bin());
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    command.args(args).output().expect("run toolhost")
}

fn stdout_json(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr))
    })
}

/// Every file under `dir` with its size and modification time: what a read-only mount
/// must keep as it is.
fn files_of(dir: &Path) -> BTreeMap<PathBuf, (u64, SystemTime)> {
    let mut files = BTreeMap::new();
    let mut pending = vec![dir.to_owned()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                files.insert(entry.path(), (meta.len(), meta.modified().unwrap()));
            }
        }
    }
    files
}

fn cwasm_count(dir: &Path) -> usize {
    files_of(dir).keys().filter(|path| path.extension().is_some_and(|e| e == "cwasm")).count()
}

#[test]
fn replicas_read_a_precompiled_toolset_without_writing_it_and_compile_when_its_engine_differs() {
    let tools = ToolsDir::with_examples();
    let dir = tempfile::tempdir().unwrap();
    let precompiled = dir.path().join("precompiled");
    let root = tools.path().to_str().unwrap();

    // Compile the toolset, as a build step would.
    let output = toolhost(&["compile", "--root", root, "--into", precompiled.to_str().unwrap()], None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let compiled = stdout_json(&output);
    let engine = compiled["engine"].as_str().expect("the engine key").to_owned();
    assert_eq!(compiled["into"], json!(precompiled.join(&engine)));
    let components = compiled["components"].as_array().unwrap();
    assert_eq!(components.len(), 3, "{compiled}");
    assert!(components.iter().all(|c| c["written"] == json!(true) && c["already_compiled"] == json!(false)));
    assert_eq!(cwasm_count(&precompiled), 3);
    // Again: nothing to compile, nothing lost.
    let again = stdout_json(&toolhost(&["compile", "--root", root, "--into", precompiled.to_str().unwrap()], None));
    assert!(again["components"].as_array().unwrap().iter().all(|c| c["already_compiled"] == json!(true)));

    // A replica: the precompiled directory first, its own cache for anything else.
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!("[[layer]]\nname = \"project\"\nroot = \"{root}\"\n\n[cache]\ndir = \"own\"\nprecompiled = \"precompiled\"\n"),
    )
    .unwrap();
    let before = files_of(&precompiled);
    let output = toolhost(&["--log", "info", "call", "math/add", "--input", r#"{"numbers":[2,3]}"#], Some(&config));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output), json!({ "value": 5.0 }));
    assert!(String::from_utf8_lossy(&output.stderr).contains("precompiled code is read from here"));
    let math = tools.path().join("math/math.wasm");
    let shown = stdout_json(&toolhost(&["inspect", math.to_str().unwrap()], Some(&config)));
    assert_eq!(shown["from_compile_cache"], json!(true), "{shown}");
    assert_eq!(cwasm_count(&dir.path().join("own")), 0, "the replica compiled nothing");

    // A damaged entry is skipped (that component compiles into the replica's own cache)
    // and left as it is: the replica never writes the precompiled directory.
    let entry = precompiled.join(&engine).join(format!("{}.cwasm", shown["hash"].as_str().unwrap()));
    let mut bytes = std::fs::read(&entry).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let before_damaged = files_of(&precompiled);
    let shown = stdout_json(&toolhost(&["inspect", math.to_str().unwrap()], Some(&config)));
    assert_eq!(shown["from_compile_cache"], json!(false), "{shown}");
    assert_eq!(files_of(&precompiled), before_damaged, "the replica changed the precompiled directory");
    assert_eq!(cwasm_count(&dir.path().join("own")), 1);
    assert_eq!(before.len(), before_damaged.len());

    // Code for another engine (another toolhost version made it): ignored, and said so.
    std::fs::rename(precompiled.join(&engine), precompiled.join("0123456789abcdef")).unwrap();
    // A warning: a one-shot command shows it when its log is at `warn`.
    let output = toolhost(&["--log", "warn", "call", "text/slugify", "--input", r#"{"text":"A B"}"#], Some(&config));
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(stdout_json(&output), json!({ "slug": "a-b" }));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("the precompiled cache is not used, components are compiled"), "{stderr}");
    assert!(stderr.contains("0123456789abcdef") && stderr.contains(&engine), "{stderr}");
    assert_eq!(cwasm_count(&dir.path().join("own")), 2, "text was compiled into the replica's own cache");
}

#[test]
fn compile_fails_with_the_load_code_when_a_component_cannot_be_compiled() {
    let tools = ToolsDir::with_examples();
    tools.write("broken", "junk.wasm", b"\0asm\x0d\0\x01\0junk");
    let into = tempfile::tempdir().unwrap();
    let output =
        toolhost(&["compile", "--root", tools.path().to_str().unwrap(), "--into", into.path().to_str().unwrap()], None);
    assert_eq!(output.status.code(), Some(14), "{}", String::from_utf8_lossy(&output.stderr));
    let shown = stdout_json(&output);
    assert_eq!(shown["components"].as_array().unwrap().len(), 3, "the others are compiled: {shown}");
    assert_eq!(shown["errors"].as_array().unwrap().len(), 1, "{shown}");
    assert!(String::from_utf8_lossy(&output.stderr).contains("junk.wasm"));
}

#[test]
fn a_one_shot_command_compiles_with_cranelift_for_its_cache_and_with_winch_without_one() {
    let math = component("math");
    let math = math.to_str().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let cache_dir = cache.path().to_str().unwrap();

    // With a cache: Cranelift's code, which the cache keeps for the next run.
    let first = stdout_json(&toolhost(&["--cache-dir", cache_dir, "inspect", math], None));
    assert_eq!((&first["tier"], &first["from_compile_cache"]), (&json!("optimized"), &json!(false)), "{first}");
    assert_eq!(cwasm_count(cache.path()), 1);
    let second = stdout_json(&toolhost(&["--cache-dir", cache_dir, "inspect", math], None));
    assert_eq!((&second["tier"], &second["from_compile_cache"]), (&json!("optimized"), &json!(true)), "{second}");

    // Without one, nothing outlives the command: Winch's code, made soonest.
    let uncached = stdout_json(&toolhost(&["--no-cache", "inspect", math], None));
    assert_eq!((&uncached["tier"], &uncached["from_compile_cache"]), (&json!("baseline"), &json!(false)), "{uncached}");
    let tools = ToolsDir::with_examples();
    let root = tools.path().to_str().unwrap();
    let called = toolhost(&["--no-cache", "call", root, "math/add", "--input", r#"{"numbers":[1,2]}"#], None);
    assert!(called.status.success(), "{}", String::from_utf8_lossy(&called.stderr));
    assert_eq!(stdout_json(&called), json!({ "value": 3.0 }));
}

#[test]
fn compile_fills_its_directory_with_cranelift_code_under_no_cache_too() {
    let tools = ToolsDir::with_examples();
    let into = tempfile::tempdir().unwrap();
    let args =
        ["--no-cache", "compile", "--root", tools.path().to_str().unwrap(), "--into", into.path().to_str().unwrap()];
    let output = toolhost(&args, None);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let shown = stdout_json(&output);
    let components = shown["components"].as_array().unwrap();
    assert_eq!(components.len(), 3, "{shown}");
    assert!(components.iter().all(|component| component["written"] == json!(true)), "{shown}");
    assert_eq!(cwasm_count(into.path()), 3);
}
