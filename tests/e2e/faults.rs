//! Faults of the machine, not of a guest: a full disk under the compile cache and the
//! audit log, a host killed mid-write, a damaged cache entry, an unreadable tools
//! directory. Each costs what it must (a cache entry, a record, a namespace), is said
//! clearly, never costs a call, and the next start recovers without anyone cleaning up.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::{CacheSetting, ToolHost};
use toolhost_tests::wire::StdioSession;
use toolhost_tests::{ToolsDir, component, toolhost_bin, with_custom_section, write_atomically};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `script` with `sh` in a private mount namespace (as root in its own user
/// namespace), where it can mount small tmpfs file systems that fill up for real.
fn in_mount_namespace(script: &str, env: &[(&str, &Path)]) -> Output {
    let mut command = Command::new("unshare");
    command.args(["--map-root-user", "--mount", "sh", "-c", script]);
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().expect("run unshare");
    assert!(output.status.success(), "the script failed: {}\n{}", text(&output.stdout), text(&output.stderr));
    output
}

/// A full disk under the compile cache costs the cache entry, with a warning; under the
/// audit log it costs the records that do not fit, said once, and a later record starts
/// on a line of its own. Every call answers. Once there is room, both work again.
#[test]
fn a_full_disk_costs_the_compile_cache_and_the_audit_log_never_a_call() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let (work, cache_disk, audit_disk) =
        (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        work.path().join("toolhost.toml"),
        format!("[audit]\njsonl = \"{}/audit.jsonl\"\n", audit_disk.path().display()),
    )
    .unwrap();
    let script = r#"
        mount -t tmpfs -o size=64k tmpfs "$CACHE_DISK" || exit 1
        mount -t tmpfs -o size=8k tmpfs "$AUDIT_DISK" || exit 1
        call() { "$TOOLHOST" "$@" call "$TOOLS" math/add --input '{"numbers":[1,2]}'; echo "exit=$?"; }
        echo "== cache on a full disk"
        call --log warn --cache-dir "$CACHE_DISK/cache" 2>"$WORK/cache-full.err"
        ls -A "$CACHE_DISK/cache"/*/
        echo "== cache with room"
        mount -o remount,size=256m "$CACHE_DISK" || exit 1
        call --cache-dir "$CACHE_DISK/cache" 2>/dev/null
        ls -A "$CACHE_DISK/cache"/*/
        echo "== audit on a full disk"
        head -c 4096 /dev/zero > "$AUDIT_DISK/filler"
        for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
            call --config "$WORK/toolhost.toml" --cache-dir "$WORK/cache" 2>>"$WORK/audit-full.err"
        done
        rm "$AUDIT_DISK/filler"
        echo "== audit with room"
        call --config "$WORK/toolhost.toml" --cache-dir "$WORK/cache" 2>/dev/null
        call --config "$WORK/toolhost.toml" --cache-dir "$WORK/cache" 2>/dev/null
        cp "$AUDIT_DISK/audit.jsonl" "$WORK/audit.jsonl"
    "#;
    let output = in_mount_namespace(
        script,
        &[
            ("TOOLHOST", &toolhost_bin()),
            ("TOOLS", tools.path()),
            ("WORK", work.path()),
            ("CACHE_DISK", cache_disk.path()),
            ("AUDIT_DISK", audit_disk.path()),
        ],
    );
    let stdout = text(&output.stdout);
    let sections: Vec<&str> = stdout.split("== ").skip(1).collect();
    assert_eq!(sections.len(), 4, "{stdout}");
    for section in &sections {
        let calls = section.matches("exit=").count();
        assert_eq!(section.matches("exit=0").count(), calls, "every call answers: {section}");
        assert_eq!(section.matches(r#""value": 3.0"#).count(), calls, "{section}");
    }

    // The cache: nothing written on the full disk, not even a temporary file; then whole.
    let files = |section: &str| {
        let cache_file = |line: &&str| line.starts_with(".tmp") || line.ends_with(".cwasm") || line.ends_with(".sum");
        section.lines().filter(cache_file).map(str::to_owned).collect::<Vec<_>>()
    };
    assert_eq!(files(sections[0]), Vec::<String>::new(), "{}", sections[0]);
    let warning = std::fs::read_to_string(work.path().join("cache-full.err")).unwrap();
    assert!(warning.contains("cannot write compile cache entry") && warning.contains("No space left"), "{warning}");
    let written = files(sections[1]);
    assert!(
        written.iter().any(|f| f.ends_with(".cwasm")) && written.iter().any(|f| f.ends_with(".sum")),
        "{written:?}"
    );

    // The audit log: the records that fit, at most one cut short, then the two written
    // once there was room again, each a whole line.
    let errors = std::fs::read_to_string(work.path().join("audit-full.err")).unwrap();
    assert!(errors.contains("cannot append to the audit log") && errors.contains("No space left"), "{errors}");
    assert!(errors.contains(&audit_disk.path().display().to_string()), "the error names the file: {errors}");
    let log = std::fs::read_to_string(work.path().join("audit.jsonl")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let records: Vec<Value> = lines.iter().filter_map(|line| serde_json::from_str(line).ok()).collect();
    assert!(lines.len() - records.len() <= 1, "at most the line the disk cut is not JSON: {log}");
    assert!(records.len() >= 5 && records.len() < 22, "{} records: {log}", records.len());
    for line in &lines[lines.len() - 2..] {
        let record: Value = serde_json::from_str(line).expect("records after the disk had room are whole");
        assert_eq!((&record["requested"], &record["outcome"]), (&json!("math/add"), &json!("ok")));
    }
}

/// A host killed at any moment of a compile — before, during or after writing its
/// cache entry — leaves a cache the next start uses; a truncated entry or checksum is
/// detected and replaced.
#[tokio::test]
async fn hosts_killed_while_writing_the_cache_leave_one_the_next_start_uses() {
    let cache = tempfile::tempdir().unwrap();
    let tools = ToolsDir::new();
    let bytes = with_custom_section(&std::fs::read(component("text")).unwrap(), "killed-mid-write", b"unique");
    tools.write("text", "text.wasm", &bytes);
    let call = || {
        let mut command = Command::new(toolhost_bin());
        command.arg("--cache-dir").arg(cache.path()).arg("call").arg(tools.path());
        command.args(["text/slugify", "--input", r#"{"text":"A B"}"#]);
        command
    };
    for delay in [30, 100, 250, 500, 800, 1200, 1800] {
        let mut child = call().stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        let _ = child.kill();
        child.wait().unwrap();
    }
    let output = call().output().unwrap();
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stdout).contains("a-b"));

    let build =
        || ToolHost::builder().root(tools.path()).compile_cache(CacheSetting::Dir(cache.path().to_owned())).build();
    let from_cache = |host: &ToolHost| host.snapshot().tools["text/slugify"].source.component().unwrap().from_cache;
    let host = build().await.unwrap();
    assert!(from_cache(&host), "the entry the last run wrote is used");
    drop(host);

    for extension in ["cwasm", "sum"] {
        for engine_dir in std::fs::read_dir(cache.path()).unwrap() {
            for entry in std::fs::read_dir(engine_dir.unwrap().path()).unwrap() {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == extension) {
                    let data = std::fs::read(&path).unwrap();
                    write_atomically(&path, &data[..data.len() / 2]);
                }
            }
        }
        let host = build().await.unwrap();
        assert!(!from_cache(&host), "a truncated .{extension} is not trusted");
        assert_eq!(host.call("text/slugify", json!({ "text": "C D" })).await, Ok(json!({ "slug": "c-d" })));
        toolhost_tests::wait_until_optimized(&host).await;
        drop(host);
        assert!(from_cache(&build().await.unwrap()), "and the entry is whole again");
    }
}

/// Every call a client got an answer to is in the audit log, even when the server is
/// killed the moment the last answer went out.
#[test]
fn an_answered_call_is_on_record_when_the_server_is_killed_at_once() {
    let tools = ToolsDir::with_examples();
    let work = tempfile::tempdir().unwrap();
    let audit = work.path().join("audit.jsonl");
    let config = work.path().join("toolhost.toml");
    std::fs::write(&config, format!("[audit]\njsonl = \"{}\"\n", audit.display())).unwrap();
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(&config).arg("serve").arg(tools.path()).stderr(Stdio::null());
    let mut session = StdioSession::start(command);
    let calls = 200;
    for i in 0..calls {
        let answer = session.call("math/add", &json!({ "numbers": [i, 1] }));
        assert_eq!(answer["result"]["structuredContent"]["value"], json!(f64::from(i + 1)), "{answer}");
    }
    let killed = Command::new("kill").args(["-9", &session.pid().to_string()]).status().unwrap();
    assert!(killed.success());
    let log = std::fs::read_to_string(&audit).unwrap();
    let answered = log
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).expect("whole lines"))
        .filter(|record| record["requested"] == "math/add" && record["outcome"] == "ok")
        .count();
    assert_eq!(answered, calls as usize);
}

/// A namespace directory the host may not read is one reported error; the other
/// namespaces are served, and once it is readable again it is served too. (Run as an
/// unprivileged user: root reads everything.)
#[test]
fn an_unreadable_namespace_is_reported_and_the_others_are_served() {
    use std::os::unix::fs::PermissionsExt;
    let tools = ToolsDir::with_examples();
    let set_mode =
        |path: &Path, mode: u32| std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    set_mode(tools.path(), 0o755);
    for namespace in ["math", "json"] {
        set_mode(&tools.path().join(namespace), 0o755);
    }
    let text_dir = tools.path().join("text");
    set_mode(&text_dir, 0o000);
    let as_unprivileged = || {
        let root = Command::new("id").arg("-u").output().unwrap().stdout == b"0\n";
        let mut command = match root {
            true => {
                let mut setpriv = Command::new("setpriv");
                setpriv.args(["--reuid=65534", "--regid=65534", "--clear-groups"]).arg(toolhost_bin());
                setpriv
            }
            false => Command::new(toolhost_bin()),
        };
        command.args(["--no-cache", "list"]).arg(tools.path());
        command.output().unwrap()
    };
    let output = as_unprivileged();
    assert!(output.status.success(), "{}", text(&output.stderr));
    let (stdout, everything) = (text(&output.stdout), text(&output.stdout) + &text(&output.stderr));
    assert!(stdout.contains("math/add") && stdout.contains("json/get"), "{stdout}");
    assert!(!stdout.contains("text/slugify"), "{stdout}");
    assert!(
        everything.contains(&text_dir.display().to_string()) && everything.contains("ermission denied"),
        "{everything}"
    );

    set_mode(&text_dir, 0o755);
    let output = as_unprivileged();
    assert!(text(&output.stdout).contains("text/slugify"), "{}", text(&output.stderr));
}

/// With too few file descriptors for a file watcher, the server says so, falls back to
/// rescanning its roots, and keeps serving; the next start with enough descriptors
/// watches again.
#[test]
fn without_descriptors_for_a_file_watcher_the_server_keeps_serving() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let serve = |limit: Option<u32>| {
        let limit = limit.map_or(String::new(), |limit| format!("ulimit -n {limit}; "));
        let mut command = Command::new("sh");
        command.args(["-c", &format!("{limit}exec \"$0\" --no-cache serve \"$1\"")]);
        command.arg(toolhost_bin()).arg(tools.path()).stderr(stderr.reopen().unwrap());
        std::fs::write(stderr.path(), "").unwrap();
        // Too few descriptors for the server itself: it may stop at once.
        let mut session = StdioSession::try_start(command).ok()?;
        let answer = session.call("math/add", &json!({ "numbers": [1, 2] }));
        Some((session, answer, std::fs::read_to_string(stderr.path()).unwrap()))
    };
    let kill = |session: &StdioSession| {
        let _ = Command::new("kill").args(["-9", &session.pid().to_string()]).status();
    };
    // The descriptors a watcher takes (inotify, epoll, a waker) differ from system to
    // system: look, from plenty down, for the first limit that leaves none for a watcher.
    let mut fallback = None;
    for limit in (8..=32).rev() {
        let Some((session, answer, said)) = serve(Some(limit)) else { continue };
        if said.contains("cannot watch") {
            assert!(said.contains("rescanning the roots every 2s instead"), "limit {limit}: {said}");
            fallback = Some((limit, session, answer));
            break;
        }
        kill(&session);
    }
    let (limit, mut session, first) = fallback.expect("some descriptor limit leaves no room for a watcher");
    // Rescans come and go, short of descriptors too; the server keeps answering, a tool
    // it served stays served, and a call that needs a descriptor says so.
    std::thread::sleep(Duration::from_millis(4500));
    let again = session.call("math/add", &json!({ "numbers": [2, 2] }));
    if first["result"]["structuredContent"] == json!({ "value": 3.0 }) {
        let text = again.to_string();
        let answered = again["result"]["structuredContent"] == json!({ "value": 4.0 });
        assert!(answered || text.contains("memfd") || text.contains("Too many open files"), "limit {limit}: {again}");
        session.send(&json!({ "jsonrpc": "2.0", "id": 900, "method": "tools/list" }));
        let listed = std::iter::repeat_with(|| session.receive()).find(|m| m["id"] == 900).unwrap();
        assert!(listed.to_string().contains("add"), "still served at limit {limit}: {listed}");
    } else {
        assert_eq!(again["error"]["message"], first["error"]["message"], "limit {limit}: {again}");
    }
    kill(&session);

    let (session, answer, said) = serve(None).expect("the server starts");
    assert_eq!(answer["result"]["structuredContent"], json!({ "value": 3.0 }), "{answer}");
    assert!(!said.contains("cannot watch"), "{said}");
    kill(&session);
}
