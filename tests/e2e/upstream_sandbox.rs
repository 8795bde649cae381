//! A stdio upstream server is confined to what its operator granted
//! (`[upstream.sandbox]`): a hostile server (`tests/mcp/hostile_upstream.py`, mode
//! `probe`) tries to read and write files it was not granted, to connect out, to start
//! more processes than its bound and to take more memory than its bound, and each is
//! refused; what was granted works, and a server granted the network connects.

use std::net::TcpListener;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost::{HostConfig, ToolHost};
use toolhost_tests::{mcp_python, python_sandbox};

/// `[[upstream]] NAME` running the hostile server's `probe` mode, its events in `dir`,
/// with `reads` and `grants` added to the sandbox that lets Python run and write in `dir`.
fn prober(dir: &Path, name: &str, reads: &[&Path], grants: &str) -> String {
    let reads: String = reads.iter().map(|path| format!("{:?}, ", path.display().to_string())).collect();
    let sandbox = python_sandbox(&[dir]).replacen("read = [", &format!("read = [{reads}"), 1).replacen(
        " }\n",
        &format!(", {grants} }}\n"),
        1,
    );
    format!(
        "[[upstream]]\nname = {name:?}\ncommand = {:?}\nargs = [{:?}, \"probe\", {:?}]\n{sandbox}",
        mcp_python().display().to_string(),
        Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/hostile_upstream.py").display().to_string(),
        dir.join(format!("{name}.events")).display().to_string(),
    )
}

/// What the server `name` found trying `arguments`.
async fn probe(host: &ToolHost, name: &str, arguments: Value) -> Value {
    let output = host.call(&format!("{name}/probe"), arguments).await.unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(output["content"][0]["text"].as_str().expect("text")).expect("the probe's JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_reaches_only_what_it_was_granted() {
    let (dir, readable, elsewhere) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(readable.path().join("data.txt"), "granted").unwrap();
    std::fs::write(elsewhere.path().join("secret.txt"), "not granted").unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || for _connection in listener.incoming() {});

    let config = [
        prober(dir.path(), "confined", &[readable.path()], "processes = 8, memory = \"256 MiB\""),
        prober(dir.path(), "networked", &[], "network = true"),
    ]
    .concat();
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    let host = HostConfig::load(&dir.path().join("toolhost.toml")).unwrap().builder().build().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(host.snapshot().tools.contains_key("confined/probe")
        && host.snapshot().tools.contains_key("networked/probe"))
    {
        assert!(Instant::now() < deadline, "the servers did not start confined: {:?}", host.load_errors());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Files: what was granted, as granted; nothing else, the host's own files included.
    let file = |path: &Path| path.display().to_string();
    let granted = probe(&host, "confined", json!({ "read": file(&readable.path().join("data.txt")) })).await;
    assert_eq!(granted["read"], "7", "{granted}");
    let written = probe(&host, "confined", json!({ "write": file(&dir.path().join("out.txt")) })).await;
    assert_eq!(written["write"], "7", "{written}");
    let denied = [
        json!({ "read": file(&elsewhere.path().join("secret.txt")) }),
        json!({ "read": format!("/proc/{}/environ", std::process::id()) }),
        json!({ "read": "/etc/shadow" }),
        json!({ "write": file(&readable.path().join("out.txt")) }),
        json!({ "write": file(&elsewhere.path().join("out.txt")) }),
    ];
    for attempt in denied {
        let found = probe(&host, "confined", attempt.clone()).await;
        let outcome =
            found.as_object().and_then(|found| found.values().next()).and_then(Value::as_str).unwrap_or_default();
        assert!(outcome.starts_with("PermissionError"), "{attempt}: {found}");
    }
    assert!(!readable.path().join("out.txt").exists() && !elsewhere.path().join("out.txt").exists());

    // The network: none unless granted.
    let cut_off = probe(&host, "confined", json!({ "connect": port })).await;
    assert!(cut_off["connect"].as_str().is_some_and(|outcome| outcome.contains("Error")), "{cut_off}");
    let connected = probe(&host, "networked", json!({ "connect": port })).await;
    assert_eq!(connected["connect"], "None", "{connected}");

    // Processes and memory: at most the bound.
    let spawned = probe(&host, "confined", json!({ "spawn": 20 })).await;
    let count = spawned["spawn"].as_u64().expect("a count");
    assert!((1..8).contains(&count), "{spawned}");
    let unbounded = probe(&host, "networked", json!({ "spawn": 20 })).await;
    assert_eq!(unbounded["spawn"], 20, "{unbounded}");
    let allocated = probe(&host, "confined", json!({ "allocate": 16 })).await;
    assert_eq!(allocated["allocate"], (16u64 << 20).to_string(), "{allocated}");
    let refused = probe(&host, "confined", json!({ "allocate": 512 })).await;
    assert!(refused["allocate"].as_str().is_some_and(|outcome| outcome.starts_with("MemoryError")), "{refused}");

    // Each server's cgroup goes with it (other tests' servers run in this process too).
    let ours =
        [format!("toolhost-{}-confined-", std::process::id()), format!("toolhost-{}-networked-", std::process::id())];
    let cgroups = || {
        let entries = std::fs::read_dir("/sys/fs/cgroup/pids").expect("the pids cgroup hierarchy");
        let names: Vec<String> =
            entries.flatten().map(|entry| entry.file_name().to_string_lossy().into_owned()).collect();
        names.iter().filter(|name| ours.iter().any(|prefix| name.starts_with(prefix))).count()
    };
    assert_eq!(cgroups(), 2);
    drop(host);
    let deadline = Instant::now() + Duration::from_secs(10);
    while cgroups() > 0 {
        assert!(Instant::now() < deadline, "the servers' cgroups outlived them");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
