//! The `toolhost` binary runs on jemalloc with the host's options (`host/src/allocator.rs`):
//! its options reach jemalloc only through an exported symbol, which a build can lose
//! without any error.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use toolhost_tests::{ToolsDir, toolhost_bin};

/// The names of a process's threads (Linux's `comm`).
fn thread_names(pid: u32) -> Vec<String> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Vec::new() };
    tasks
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn a_server_runs_on_jemalloc_whose_background_thread_gives_freed_pages_back() {
    let tools = ToolsDir::with_examples();
    let mut server = Command::new(toolhost_bin())
        .args(["serve", "--stdlib", "/nonexistent", "--root"])
        .arg(tools.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start toolhost serve");
    let started = Instant::now();
    let mut names = thread_names(server.id());
    // The runtime's threads come first; jemalloc starts its own with its first purge.
    while !names.iter().any(|name| name == "jemalloc_bg_thd") && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
        names = thread_names(server.id());
    }
    server.kill().expect("stop the server");
    server.wait().expect("reap the server");
    assert!(
        names.iter().any(|name| name == "jemalloc_bg_thd"),
        "no jemalloc background thread: the binary runs on another allocator, or without \
         the options of host/src/allocator.rs; its threads: {names:?}"
    );
    assert!(names.iter().any(|name| name == "tokio-rt-worker"), "{names:?}");
}
