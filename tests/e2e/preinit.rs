//! `toolhost preinit` and `toolhost::preinitialize`: a component snapshotted after its
//! initialization export ran once (wasmtime-wizer), so that every fresh instance starts
//! where the initialization ended; and the initializations a snapshot must refuse.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::{Preinit, PreinitError, ToolHost};
use toolhost_tests::{ToolsDir, component, toolhost_bin};

/// `toolhost preinit COMPONENT --output OUTPUT ARGS…`, as a process.
fn preinit_command(component: &Path, output: &Path, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(toolhost_bin());
    command.arg("preinit").arg(component).arg("--output").arg(output).args(args);
    command.output().expect("run toolhost preinit")
}

/// What the test guest's initialization leaves: a flag and the sum of the table of
/// 100,000 squares it builds on its heap; and a first call.
fn initialized_state() -> Value {
    let table_sum: u64 = (0..100_000u64).map(|i| i * i).sum();
    json!({ "initialized": true, "calls": 1, "table_sum": table_sum })
}

#[tokio::test]
async fn a_snapshot_starts_every_call_where_its_initialization_ended() {
    let tools = ToolsDir::new();
    let built = component("preinit");
    let snapshot = tools.path().join("snap/snap.wasm");
    std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
    let output = preinit_command(&built, &snapshot, &[]);
    assert!(output.status.success(), "toolhost preinit: {}", String::from_utf8_lossy(&output.stderr));
    let printed: Value = serde_json::from_slice(&output.stdout).expect("JSON on stdout");
    let built_size = std::fs::metadata(&built).unwrap().len();
    assert_eq!(printed["bytes_before"], json!(built_size));
    assert_eq!(printed["bytes_after"], json!(std::fs::metadata(&snapshot).unwrap().len()));
    // The table of squares is data of the snapshot: 800 kB beside the code.
    assert!(printed["bytes_after"].as_u64().unwrap() > built_size + 700_000, "{printed}");
    tools.install("preinit", "built", "built");

    let host = ToolHost::builder().root(tools.path()).build().await.expect("host builds");
    assert_eq!(host.load_errors(), vec![], "both load");
    let mut names: Vec<String> = host.snapshot().tools.keys().cloned().collect();
    names.sort();
    // The `wizer-initialize` export the snapshot keeps is no tool.
    assert_eq!(names, ["built/state", "snap/state"]);

    // Every call is a fresh instance of the initialized state: one after another and
    // many at once, none sees another's call.
    for _ in 0..3 {
        assert_eq!(host.call("snap/state", json!({})).await, Ok(initialized_state()));
    }
    let concurrent = (0..16).map(|_| {
        let host = host.clone();
        tokio::spawn(async move { host.call("snap/state", json!({})).await })
    });
    for call in concurrent {
        assert_eq!(call.await.unwrap(), Ok(initialized_state()));
    }
    // The same code, not snapshotted, starts uninitialized.
    assert_eq!(
        host.call("built/state", json!({})).await,
        Ok(json!({ "initialized": false, "calls": 1, "table_sum": 0 }))
    );
}

/// Runs the test guest's `export` as its initialization, within `timeout` and 64 MiB.
async fn preinitialize(export: &str, timeout: Duration) -> Result<Vec<u8>, PreinitError> {
    let bytes = std::fs::read(component("preinit")).unwrap();
    let preinit = Preinit { init_export: export.to_owned(), timeout, max_memory: 64 << 20 };
    toolhost::preinitialize(&bytes, &preinit).await
}

#[tokio::test]
async fn an_initialization_that_keeps_a_handle_traps_loops_sleeps_or_outgrows_its_memory_is_refused() {
    let ample = Duration::from_secs(60);
    // A handle kept across the initialization would dangle in every instance.
    match preinitialize("init-keeps-a-stream", ample).await {
        Err(PreinitError::HeldResources { export, count }) => {
            assert_eq!((export.as_str(), count), ("init-keeps-a-stream", 1))
        }
        other => panic!("a kept stream: {:?}", other.map(|bytes| bytes.len())),
    }
    let reason = |result: Result<Vec<u8>, PreinitError>| match result {
        Err(PreinitError::InitFailed { reason, .. }) => reason,
        other => panic!("expected a failed initialization, got {:?}", other.map(|bytes| bytes.len())),
    };
    let trapped = reason(preinitialize("init-traps", ample).await);
    assert!(trapped.contains("the initialization fails"), "the guest's panic message: {trapped}");
    let looped = reason(preinitialize("init-loops", Duration::from_secs(1)).await);
    assert!(looped.contains("1s time limit"), "{looped}");
    let slept = reason(preinitialize("init-sleeps", Duration::from_secs(1)).await);
    assert!(slept.contains("1s time limit, waiting in a host call"), "{slept}");
    let grown = reason(preinitialize("init-grows", ample).await);
    assert!(grown.contains("limit of 67108864 bytes of linear memory"), "{grown}");

    // The same component with its well-behaved initialization, in the same limits.
    assert!(preinitialize("wizer-initialize", ample).await.is_ok());
    // An export that is not there, and bytes that are no component.
    assert!(matches!(
        preinitialize("no-such-init", ample).await,
        Err(PreinitError::NoInitExport { export, .. }) if export == "no-such-init"
    ));
    let module = wat::parse_str("(module (func (export \"wizer-initialize\")))").unwrap();
    let refused = toolhost::preinitialize(&module, &Preinit::default()).await.unwrap_err();
    assert!(matches!(&refused, PreinitError::Unsupported(why) if why.contains("core WebAssembly module")), "{refused}");
}

#[test]
fn the_command_says_why_and_writes_nothing_when_it_refuses() {
    let dir = tempfile::tempdir().unwrap();
    let output_path = dir.path().join("out.wasm");
    let output = preinit_command(&component("preinit"), &output_path, &["--init", "init-traps"]);
    assert_eq!(output.status.code(), Some(i32::from(toolhost::exit::LOAD)));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("initialization `init-traps` failed") && stderr.contains("the initialization fails"),
        "{stderr}"
    );
    assert!(!output_path.exists(), "a refused snapshot is not written");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nor any temporary file");

    let output = preinit_command(&component("preinit"), &output_path, &["--init", "init-loops", "--timeout", "500ms"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("500ms time limit"), "{stderr}");
    assert!(!output_path.exists());
}
