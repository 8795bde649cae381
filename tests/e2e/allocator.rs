//! The `toolhost` binary runs on jemalloc with the host's options (`host/src/allocator.rs`):
//! its options reach jemalloc only through an exported symbol, which a build can lose
//! without any error. Linux only: the tests read thread names from `/proc` and pin with
//! `sched_setaffinity`.

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
    // Neither jemalloc's background thread nor the runtime's workers start at once, and
    // on a busy machine either may come first.
    let started_both =
        |names: &[String]| ["jemalloc_bg_thd", "tokio-rt-worker"].iter().all(|n| names.iter().any(|name| name == n));
    while !started_both(&names) && started.elapsed() < Duration::from_secs(20) {
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

/// Containers and `taskset` pin a process to some of the machine's CPUs; an allocator
/// option that depends on the CPU count (jemalloc's `percpu_arena`) makes jemalloc refuse
/// to start there, before `main`.
#[test]
fn the_binary_starts_pinned_to_one_cpu() {
    use std::os::unix::process::CommandExt;
    let mut command = Command::new(toolhost_bin());
    command.arg("--version");
    // SAFETY: sched_setaffinity is async-signal-safe; it changes only the child, between
    // fork and exec.
    unsafe {
        command.pre_exec(|| {
            let mut one_cpu: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut one_cpu);
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one_cpu) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let output = command.output().expect("run toolhost --version on one CPU");
    assert!(output.status.success(), "{}: {}", output.status, String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("toolhost "), "{output:?}");
}
