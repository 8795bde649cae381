//! Upstream MCP servers as namespaces: a server written with the official Python SDK
//! (`tests/mcp/upstream_server.py`, `MCPServer`) over stdio and over Streamable HTTP,
//! and the reference server from the npm registry
//! (`@modelcontextprotocol/server-everything`), each started by the test. Their tools
//! are listed and called through toolhost's pipeline: schemas, policy, timeouts,
//! cancellation forwarded upstream, a crashing child restarted, a changing tool list,
//! and secrets that stay out of errors, listings and records.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;
use toolhost::{Caller, ErrorKind, HostConfig, ToolHost};
use toolhost_tests::mcp_python;

/// The Python SDK server script.
fn server_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/upstream_server.py")
}

/// A host configured by `toolhost.toml` text (written into `dir`).
async fn host(dir: &TempDir, config: &str) -> ToolHost {
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, config).expect("write toolhost.toml");
    let config = HostConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    config.builder().build().await.expect("host builds")
}

/// `[[upstream]] py` running the Python server on stdio, its events in `events`.
fn stdio_upstream(events: &Path, extra: &str) -> String {
    format!(
        "[[upstream]]\nname = \"py\"\ncommand = {:?}\nargs = [{:?}, \"stdio\", {:?}]\nenv = [\"HOME\"]\n{extra}\n",
        mcp_python().display().to_string(),
        server_script().display().to_string(),
        events.display().to_string(),
    )
}

fn events(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Waits up to 15 s for `condition`.
async fn eventually(what: &str, mut condition: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !condition().await {
        assert!(Instant::now() < deadline, "not within 15 s: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_servers_tools_are_a_namespace_governed_like_any_tool() {
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events");
    let config = format!(
        "{}[[policy]]\nagent = \"intruder\"\ndeny = [\"py/*\"]\n\n[[policy]]\nagent = \"*\"\nallow = [\"*\"]\n",
        stdio_upstream(&events_file, "timeout = \"20s\"")
    );
    let host = host(&dir, &config).await;
    assert_eq!(host.load_errors(), vec![], "the server started and was listed");
    let mut records = host.subscribe_calls();

    let listed = host.list(&Caller::new("anyone"));
    let add = listed.iter().find(|tool| tool.name == "py/add").expect("py/add is listed");
    assert_eq!(add.description, "Adds two integers.");
    assert_eq!(add.input_schema["required"], json!(["a", "b"]), "the server's input schema");
    assert_eq!(add.output_schema["properties"]["result"]["type"], "integer", "and its output schema");
    assert_eq!((add.hints.read_only, add.hints.idempotent), (Some(true), Some(true)), "annotations are hints");
    assert_eq!(add.layer, "upstream", "the default layer");
    for name in ["py/echo", "py/fail", "py/slow", "py/environment", "py/grow", "py/crash"] {
        assert!(listed.iter().any(|tool| tool.name == name), "{name} is listed");
    }

    // Structured content is the output; text content comes as its blocks; isError fails.
    assert_eq!(host.call("py/add", json!({ "a": 2, "b": 3 })).await.unwrap(), json!({ "result": 5 }));
    assert_eq!(
        host.call("py/echo", json!({ "text": "hi there" })).await.unwrap(),
        json!({ "content": [{ "type": "text", "text": "hi there" }] })
    );
    let failed = host.call("py/fail", json!({ "message": "the city is unknown" })).await.unwrap_err();
    assert_eq!(failed.kind(), ErrorKind::Failed, "{failed}");
    assert!(failed.to_string().contains("the city is unknown"), "{failed}");

    // The input is checked against the server's schema before anything is sent.
    let calls_before = events(&events_file).matches("called add").count();
    let invalid = host.call("py/add", json!({ "a": "two", "b": 3 })).await.unwrap_err();
    assert_eq!(invalid.kind(), ErrorKind::InputInvalid, "{invalid}");
    assert_eq!(events(&events_file).matches("called add").count(), calls_before, "nothing reached the server");

    // An output that breaks the server's own output schema is not passed on.
    let wrong = host.call("py/wrong_output", json!({})).await.unwrap_err();
    assert!(matches!(wrong.kind(), ErrorKind::OutputInvalid | ErrorKind::Failed), "{wrong}");

    // The caller policy applies: a denied agent reaches nothing, and sees nothing.
    let calls_before = events(&events_file).matches("called add").count();
    let denied = host.call_as(&Caller::new("intruder"), "py/add", json!({ "a": 1, "b": 1 })).await.unwrap_err();
    assert_eq!(denied.kind(), ErrorKind::NotFound, "a refused tool is hidden: {denied}");
    assert!(!host.list(&Caller::new("intruder")).iter().any(|tool| tool.name.starts_with("py/")));
    assert_eq!(events(&events_file).matches("called add").count(), calls_before, "nothing reached the server");

    // The child got only the variables listed.
    let environment = host.call("py/environment", json!({})).await.unwrap();
    let names: Vec<String> = serde_json::from_value(environment["result"].clone()).unwrap();
    assert!(names.contains(&"HOME".to_owned()), "{names:?}");
    assert!(!names.contains(&"PATH".to_owned()), "nothing inherited: {names:?}");
    assert!(names.iter().all(|name| name == "HOME" || name.starts_with("LC_")), "{names:?}");

    // Every call is recorded under the upstream's namespace.
    let mut recorded = Vec::new();
    while let Ok(record) = records.try_recv() {
        recorded.push((record.requested.clone(), record.outcome.clone()));
    }
    assert!(recorded.contains(&("py/add".to_owned(), "ok".to_owned())), "{recorded:?}");
    assert!(recorded.iter().any(|(tool, outcome)| tool == "py/add" && outcome == "permission_denied"), "{recorded:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_upstream_times_out_and_cancellation_reaches_it() {
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events");
    let host = host(&dir, &stdio_upstream(&events_file, "timeout = \"1s\"")).await;

    let started = Instant::now();
    let timed_out = host.call("py/slow", json!({ "seconds": 30 })).await.unwrap_err();
    assert_eq!(timed_out.kind(), ErrorKind::Timeout, "{timed_out}");
    assert!(started.elapsed() < Duration::from_secs(5), "the per-server timeout: {:?}", started.elapsed());
    eventually("the server hears the timed-out call was cancelled", async || {
        events(&events_file).matches("cancelled slow").count() == 1
    })
    .await;

    // A caller that goes away cancels the call upstream too.
    let call = host.call("py/slow", json!({ "seconds": 0.8 }));
    assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
    eventually("the server hears the abandoned call was cancelled", async || {
        events(&events_file).matches("cancelled slow").count() == 2
    })
    .await;
    // And the server still answers.
    assert_eq!(host.call("py/add", json!({ "a": 1, "b": 1 })).await.unwrap(), json!({ "result": 2 }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_child_is_a_load_error_until_it_is_restarted_and_listed_again() {
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events");
    let host = host(&dir, &stdio_upstream(&events_file, "")).await;
    let crashed = host.call("py/crash", json!({})).await.unwrap_err();
    assert_eq!(crashed.kind(), ErrorKind::Failed, "{crashed}");
    eventually("the dead server is a load error of its namespace", async || {
        host.load_errors().iter().any(|error| error.to_string().contains("upstream MCP server `py`"))
    })
    .await;
    eventually("the restarted server serves again", async || {
        host.call("py/add", json!({ "a": 20, "b": 22 })).await.is_ok_and(|output| output == json!({ "result": 42 }))
    })
    .await;
    assert_eq!(host.load_errors(), vec![], "the error is gone with the restart");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_list_change_is_a_registry_change() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(&dir, &stdio_upstream(&dir.path().join("events"), "")).await;
    let mut changes = host.subscribe();
    assert!(host.call("py/extra", json!({})).await.is_err(), "not there yet");
    assert_eq!(host.call("py/grow", json!({})).await.unwrap(), json!({ "result": "grown" }));
    let change = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            let change = changes.recv().await.expect("changes");
            if change.added.contains(&"py/extra".to_owned()) {
                return change;
            }
        }
    })
    .await
    .expect("the new tool is announced");
    assert!(change.removed.is_empty(), "{change:?}");
    assert_eq!(host.call("py/extra", json!({})).await.unwrap(), json!({ "result": "extra" }));
}

/// The Python server on Streamable HTTP, on a free loopback port; killed when dropped.
struct HttpUpstream {
    child: std::process::Child,
    url: String,
}

impl HttpUpstream {
    fn start(events: &Path) -> HttpUpstream {
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).unwrap().port();
        let child = std::process::Command::new(mcp_python())
            .arg(server_script())
            .arg("http")
            .arg(events)
            .arg(port.to_string())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start the Python MCP server");
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the Python MCP server did not listen on {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpUpstream { child, url: format!("http://127.0.0.1:{port}/mcp") }
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_upstream_gets_its_headers_and_the_secret_shows_nowhere_else() {
    const SECRET: &str = "s3cret-token-0042";
    let dir = tempfile::tempdir().unwrap();
    let server = HttpUpstream::start(&dir.path().join("events"));
    std::fs::write(dir.path().join("token"), format!("{SECRET}\n")).unwrap();
    let config = format!(
        "[[upstream]]\nname = \"web\"\nurl = {:?}\ntimeout = \"10s\"\nheaders = {{ Authorization = {{ file = \"token\", prefix = \"Bearer \" }}, X-Team = \"blue\" }}\n\n\
         [[upstream]]\nname = \"broken\"\nurl = {:?}\nheaders = {{ Authorization = {{ file = \"missing-token\" }} }}\n",
        server.url, server.url
    );
    let host = host(&dir, &config).await;
    let mut records = host.subscribe_calls();

    assert_eq!(host.call("web/add", json!({ "a": 1, "b": 2 })).await.unwrap(), json!({ "result": 3 }));
    let authorization = host.call("web/header", json!({ "name": "authorization" })).await.unwrap();
    assert_eq!(authorization, json!({ "result": format!("Bearer {SECRET}") }), "the header reached the server");
    let team = host.call("web/header", json!({ "name": "x-team" })).await.unwrap();
    assert_eq!(team, json!({ "result": "blue" }));

    // A header that cannot be read is the server's load error, naming the file only.
    let errors: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    let broken = errors.iter().find(|e| e.contains("upstream MCP server `broken`")).expect("broken is an error");
    assert!(broken.contains("missing-token"), "{broken}");
    assert!(host.call("broken/add", json!({ "a": 1, "b": 2 })).await.is_err(), "and serves nothing");

    // The secret is in no listing, error, configuration dump or call record.
    let listing = serde_json::to_string(&host.list(&Caller::new("anyone"))).unwrap();
    let config = format!("{:?}", HostConfig::load(&dir.path().join("toolhost.toml")).unwrap());
    let mut recorded = String::new();
    while let Ok(record) = records.try_recv() {
        recorded.push_str(&serde_json::to_string(&*record).unwrap());
    }
    for (what, text) in [("listing", &listing), ("errors", &errors.join("\n")), ("config", &config)] {
        assert!(!text.contains(SECRET), "the secret is in the {what}: {text}");
    }
    assert!(recorded.contains("web/header"), "{recorded}");
    assert!(!recorded.contains(SECRET), "records hold no output: {recorded}");
}

/// `@modelcontextprotocol/server-everything` from the npm registry, under
/// `<target>/toolchains/mcp-everything`: its entry point.
fn server_everything() -> PathBuf {
    toolhost_tests::npm_package("mcp-everything", "@modelcontextprotocol/server-everything@2026.8.31")
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_from_npm_is_listed_and_called() {
    let entry = server_everything();
    let node = which("node");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[upstream]]\nname = \"everything\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = [\"HOME\"]\n",
        node.display().to_string(),
        entry.display().to_string()
    );
    let host = host(&dir, &config).await;
    assert_eq!(host.load_errors(), vec![]);
    let names: Vec<String> = host.list(&Caller::new("anyone")).into_iter().map(|tool| tool.name).collect();
    assert!(names.contains(&"everything/echo".to_owned()), "{names:?}");
    let echoed = host.call("everything/echo", json!({ "message": "from toolhost" })).await.unwrap();
    let text = echoed["content"][0]["text"].as_str().unwrap_or_default();
    assert!(text.contains("from toolhost"), "{echoed}");
    let summed = host.call("everything/get-sum", json!({ "a": 2, "b": 40 })).await.unwrap();
    assert!(summed.to_string().contains("42"), "{summed}");
}

fn which(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").expect("PATH");
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

#[test]
fn upstream_declarations_are_checked_with_file_and_line() {
    let cases: [(&str, &str); 6] = [
        ("[[upstream]]\nname = \"x\"\n", "takes `command`"),
        ("[[upstream]]\nname = \"x\"\ncommand = \"a\"\nurl = \"http://h/mcp\"\n", "takes `command`"),
        ("[[upstream]]\nname = \"x\"\nurl = \"ftp://h/mcp\"\n", "must be an http:// or https:// URL"),
        ("[[upstream]]\nname = \"x\"\ncommand = \"a\"\nheaders = { A = \"b\" }\n", "`headers` go with `url`"),
        ("[[upstream]]\nname = \"x\"\ncommand = \"a\"\nlayer = \"nowhere\"\n", "no [[layer]] is named `nowhere`"),
        ("[[upstream]]\nname = \"x\"\ncommand = \"a\"\nenv = [\"A B\"]\n", "is not `NAME` or `NAME=HOST_NAME`"),
    ];
    for (text, expected) in cases {
        let error = HostConfig::parse(Path::new("toolhost.toml"), text).unwrap_err();
        assert!(error.problem.contains(expected), "{text}: {error}");
        assert_eq!(error.line, 1, "{text}: {error}");
    }
}
