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
use toolhost::upstream::UpstreamState;
use toolhost::{Caller, ErrorKind, ExportFormat, HostConfig, SourceKind, ToolHost};
use toolhost_tests::wire::StdioSession;
use toolhost_tests::{mcp_python, python_sandbox};

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
        "[[upstream]]\nname = \"py\"\ncommand = {:?}\nargs = [{:?}, \"stdio\", {:?}]\nenv = [\"HOME\"]\n{}{extra}\n",
        mcp_python().display().to_string(),
        server_script().display().to_string(),
        events.display().to_string(),
        python_sandbox(&[events.parent().expect("the events' directory")]),
    )
}

/// `[[upstream]] NAME` running the Python server on stdio, its events in `dir/NAME.events`.
fn named_stdio_upstream(dir: &Path, name: &str, extra: &str) -> String {
    stdio_upstream(&dir.join(format!("{name}.events")), extra).replacen("name = \"py\"", &format!("name = {name:?}"), 1)
}

/// How many times the server `name` of [`named_stdio_upstream`] started.
fn starts(dir: &Path, name: &str) -> usize {
    events(&dir.join(format!("{name}.events"))).matches("started").count()
}

/// Whether process `pid` still runs (a zombie does not).
fn running(pid: u64) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
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
    // The child gets HOME, and HOME again under another name.
    let server = stdio_upstream(&events_file, "timeout = \"20s\"").replacen(
        "env = [\"HOME\"]",
        "env = [\"HOME\", \"PY_HOME=HOME\"]",
        1,
    );
    let config = format!(
        "{server}[[policy]]\nagent = \"intruder\"\ndeny = [\"py/*\"]\n\n[[policy]]\nagent = \"*\"\nallow = [\"*\"]\n"
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
    assert_eq!(add.risk, toolhost::Risk::Low, "a read-only tool's risk is low unless the operator says otherwise");
    let echo = listed.iter().find(|tool| tool.name == "py/echo").expect("py/echo is listed");
    assert_eq!(echo.risk, toolhost::Risk::Medium, "no annotations: medium, like any tool that says nothing");
    assert_eq!(add.layer, "upstream", "the default layer");
    assert_eq!(add.source, SourceKind::McpServer);
    let [status] = host.upstreams().await.try_into().expect("one server");
    let UpstreamState::Connected { protocol, implementation, tools_served } = &status.state else {
        panic!("{status:?}")
    };
    assert_eq!(protocol, "2025-11-25", "the revision both sides speak");
    assert_eq!(implementation.as_ref().map(|i| i.name.as_str()), Some("upstream-test"), "what the server says it is");
    assert_eq!(*tools_served, listed.iter().filter(|tool| tool.name.starts_with("py/")).count());
    for name in ["py/echo", "py/fail", "py/slow", "py/environment", "py/grow", "py/crash"] {
        assert!(listed.iter().any(|tool| tool.name == name), "{name} is listed");
    }
    // Exports name them like any tool, with the server's schemas.
    let openai = host.export(ExportFormat::OpenAi, &Caller::new("anyone"));
    let exported = openai.as_array().expect("a list").iter().find(|t| t["function"]["name"] == "py__add");
    let exported = exported.unwrap_or_else(|| panic!("py__add in {openai}"));
    assert_eq!(exported["function"]["parameters"]["required"], json!(["a", "b"]), "{exported}");
    let anthropic = host.export(ExportFormat::Anthropic, &Caller::new("anyone"));
    assert!(anthropic.as_array().unwrap().iter().any(|t| t["name"] == "py__add"), "{anthropic}");

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

    // An output that breaks the server's own output schema is not passed on: the SDK
    // catches its own mistake when it can (a failure), toolhost when it cannot.
    let wrong = host.call("py/wrong_output", json!({})).await.unwrap_err();
    assert!(matches!(wrong.kind(), ErrorKind::OutputInvalid | ErrorKind::Failed), "{wrong}");
    let lie = host.call("py/lies", json!({})).await.unwrap_err();
    assert_eq!(lie.kind(), ErrorKind::OutputInvalid, "toolhost checks the declared schema itself: {lie}");
    assert!(lie.to_string().contains("/value"), "the error points at the value: {lie}");

    // The caller policy applies: a denied agent reaches nothing, and sees nothing.
    let calls_before = events(&events_file).matches("called add").count();
    let denied = host.call_as(&Caller::new("intruder"), "py/add", json!({ "a": 1, "b": 1 })).await.unwrap_err();
    assert_eq!(denied.kind(), ErrorKind::NotFound, "a refused tool is hidden: {denied}");
    assert!(!host.list(&Caller::new("intruder")).iter().any(|tool| tool.name.starts_with("py/")));
    assert_eq!(events(&events_file).matches("called add").count(), calls_before, "nothing reached the server");

    // The child got only the variables listed.
    let environment = host.call("py/environment", json!({})).await.unwrap();
    let names: Vec<String> = serde_json::from_value(environment["result"].clone()).unwrap();
    assert!(names.contains(&"HOME".to_owned()) && names.contains(&"PY_HOME".to_owned()), "{names:?}");
    assert!(!names.contains(&"PATH".to_owned()), "nothing inherited: {names:?}");
    assert!(names.iter().all(|name| name == "HOME" || name == "PY_HOME" || name.starts_with("LC_")), "{names:?}");
    let home = std::env::var("HOME").expect("the test runs with HOME");
    for name in ["HOME", "PY_HOME"] {
        let value = host.call("py/variable", json!({ "name": name })).await.unwrap();
        assert_eq!(value["result"], json!(home), "{name} is the host's HOME");
    }

    // Every call is recorded under the upstream's namespace, with the server's name.
    let mut recorded = Vec::new();
    while let Ok(record) = records.try_recv() {
        recorded.push(record);
    }
    let outcomes: Vec<(&str, &str)> = recorded.iter().map(|r| (r.requested.as_str(), r.outcome.as_str())).collect();
    assert!(outcomes.contains(&("py/add", "ok")), "{outcomes:?}");
    assert!(outcomes.contains(&("py/lies", "output_invalid")), "{outcomes:?}");
    assert!(
        outcomes.iter().any(|(tool, outcome)| *tool == "py/add" && *outcome == "permission_denied"),
        "{outcomes:?}"
    );
    let answered = recorded.iter().find(|r| r.requested == "py/add" && r.outcome == "ok").unwrap();
    assert_eq!(answered.upstream.as_deref(), Some("py"), "{answered:?}");
    assert_eq!(answered.source, Some(SourceKind::McpServer), "{answered:?}");
    let line = serde_json::to_value(answered).unwrap();
    assert_eq!((&line["upstream"], &line["source"]), (&json!("py"), &json!("mcp_server")), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_calls_wait_for_approval_and_answers_past_the_size_limit_fail() {
    use futures::FutureExt;
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events");
    let path = dir.path().join("toolhost.toml");
    let config = format!(
        "{}\n[[policy]]\nagent = \"*\"\nallow = [\"*\"]\napprove_above = \"low\"\n",
        stdio_upstream(&events_file, "max_response = \"1 KiB\"")
    );
    std::fs::write(&path, config).unwrap();
    // The person approves inputs that start with "yes".
    let hook: toolhost::ApprovalHook = std::sync::Arc::new(|request: toolhost::ApprovalRequest| {
        let yes = request.input["text"].as_str().is_some_and(|text| text.starts_with("yes"));
        async move {
            match yes {
                true => toolhost::Approval::Approved,
                false => toolhost::Approval::Denied { reason: "the person said no".into() },
            }
        }
        .boxed()
    });
    let host = HostConfig::load(&path).unwrap().builder().approval_hook(hook).build().await.unwrap();

    let denied = host.call("py/echo", json!({ "text": "no thanks" })).await.unwrap_err();
    assert_eq!(denied.kind(), ErrorKind::PermissionDenied, "{denied}");
    assert!(denied.to_string().contains("the person said no"), "{denied}");
    assert!(!events(&events_file).contains("called echo"), "a call not approved reaches no server");

    let echoed = host.call("py/echo", json!({ "text": "yes please" })).await.unwrap();
    assert_eq!(echoed, json!({ "content": [{ "type": "text", "text": "yes please" }] }));
    let long = format!("yes {}", "x".repeat(2000));
    let too_large = host.call("py/echo", json!({ "text": long })).await.unwrap_err();
    assert_eq!(too_large.kind(), ErrorKind::OutputTooLarge, "{too_large}");
    assert_eq!(events(&events_file).matches("called echo").count(), 2, "both approved calls reached the server");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_the_upstream_declarations_starts_stops_and_restarts_only_what_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let path = d.join("toolhost.toml");
    let declared = |servers: &[(&str, &str)]| -> String {
        servers.iter().map(|(name, extra)| named_stdio_upstream(d, name, extra)).collect()
    };
    std::fs::write(&path, declared(&[("keep", ""), ("gone", ""), ("changed", "timeout = \"20s\"")])).unwrap();
    let config = HostConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let host = config.clone().builder().build().await.expect("host builds");
    let _watch = config.watch(&host, &path, Duration::from_millis(50), None).expect("watch toolhost.toml");
    for namespace in ["keep", "gone", "changed"] {
        let added = host.call(&format!("{namespace}/add"), json!({ "a": 1, "b": 2 })).await;
        assert_eq!(added.unwrap(), json!({ "result": 3 }), "{namespace}");
    }
    let gone_pid = host.call("gone/pid", json!({})).await.unwrap()["result"].as_u64().expect("a pid");
    assert!(running(gone_pid));

    toolhost_tests::write_atomically(
        &path,
        declared(&[("keep", ""), ("changed", "timeout = \"25s\""), ("new", "")]).as_bytes(),
    );
    eventually("the new server serves and the removed one is gone", async || {
        host.call("new/add", json!({ "a": 2, "b": 2 })).await.is_ok()
            && host.call("gone/add", json!({ "a": 1, "b": 2 })).await.is_err()
    })
    .await;
    eventually("the changed server was restarted", async || {
        starts(d, "changed") == 2 && host.call("changed/add", json!({ "a": 1, "b": 1 })).await.is_ok()
    })
    .await;
    assert_eq!(starts(d, "keep"), 1, "an unchanged server keeps its connection");
    let gone = host.call("gone/add", json!({ "a": 1, "b": 2 })).await.unwrap_err();
    assert_eq!(gone.kind(), ErrorKind::NotFound, "{gone}");
    eventually("the removed server's process ended", async || !running(gone_pid)).await;
    assert_eq!(starts(d, "gone"), 1, "and it was not started again");
    assert_eq!(host.load_errors(), vec![]);

    // A file that does not parse changes nothing; the next good one is applied.
    toolhost_tests::write_atomically(&path, b"[[upstream]\nname = ");
    tokio::time::sleep(Duration::from_millis(600)).await;
    for namespace in ["keep", "changed", "new"] {
        assert!(host.call(&format!("{namespace}/add"), json!({ "a": 1, "b": 2 })).await.is_ok(), "{namespace}");
    }
    assert_eq!((starts(d, "keep"), starts(d, "changed"), starts(d, "new")), (1, 2, 1));
    toolhost_tests::write_atomically(&path, declared(&[("keep", "")]).as_bytes());
    eventually("only `keep` is left", async || {
        let names: Vec<String> = host.list(&Caller::new("anyone")).into_iter().map(|tool| tool.name).collect();
        names.iter().all(|name| name.starts_with("keep/")) && names.contains(&"keep/add".to_owned())
    })
    .await;
    assert_eq!(starts(d, "keep"), 1);
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
    // The header reached the server, and the server's answer quoting it shows none of it.
    let authorization = host.call("web/header", json!({ "name": "authorization" })).await.unwrap();
    assert!(events(&dir.path().join("events")).contains(&format!("header authorization: Bearer {SECRET}\n")));
    assert_eq!(authorization, json!({ "result": "[secret]" }), "the answer quoting it");
    let echoed = host.call("web/echo_authorization", json!({})).await.unwrap().to_string();
    assert!(!echoed.contains("s3cret") && !echoed.contains("czNjcmV0"), "{echoed}");
    assert_eq!(echoed.matches("[secret]").count(), 4, "literal, JSON-escaped, percent-encoded, base64: {echoed}");
    let refused = host.call("web/refuse_authorization", json!({})).await.unwrap_err().to_string();
    assert!(!refused.contains("s3cret") && refused.contains("[secret]"), "{refused}");
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

/// Lists the tools of `session` until `name` is among them; fails after 20 s of `what`.
fn wait_until_listed(session: &mut StdioSession, name: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let tools = session.request("tools/list", json!({}));
        if tools["result"]["tools"].as_array().is_some_and(|tools| tools.iter().any(|tool| tool["name"] == name)) {
            return;
        }
        assert!(Instant::now() < deadline, "{name} was not listed within 20 s {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_server_applies_upstream_edits_and_its_trace_log_holds_no_secret() {
    const SECRET: &str = "trace-secret-7731";
    let dir = tempfile::tempdir().unwrap();
    let web = HttpUpstream::start(&dir.path().join("web.events"));
    let path = dir.path().join("toolhost.toml");
    let web_only = format!(
        "[[upstream]]\nname = \"web\"\nurl = {:?}\nheaders = {{ Authorization = {{ env = \"WEB_TOKEN\", prefix = \"Bearer \" }} }}\n",
        web.url
    );
    std::fs::write(&path, &web_only).unwrap();
    let log = dir.path().join("stderr.log");
    let mut command = std::process::Command::new(toolhost_tests::toolhost_bin());
    command
        .args(["serve", "--log", "trace", "--config"])
        .arg(&path)
        .current_dir(dir.path())
        .env("WEB_TOKEN", SECRET)
        .stderr(std::fs::File::create(&log).unwrap());
    let mut session = StdioSession::start(command);
    wait_until_listed(&mut session, "web.add", "of the start");
    let added = session.call("web.add", &json!({ "a": 1, "b": 2 }));
    assert_eq!(added["result"]["structuredContent"], json!({ "result": 3 }), "{added}");

    toolhost_tests::write_atomically(
        &path,
        format!("{web_only}\n{}", stdio_upstream(&dir.path().join("py.events"), "")).as_bytes(),
    );
    wait_until_listed(&mut session, "py.add", "of the edit");
    let added = session.call("py.add", &json!({ "a": 2, "b": 2 }));
    assert_eq!(added["result"]["structuredContent"], json!({ "result": 4 }), "{added}");
    // A tool without an output schema answers MCP clients with its content blocks as
    // the upstream server sent them, and is listed without an output schema, as there.
    let echoed = session.call("py.echo", &json!({ "text": "as it came" }));
    assert_eq!(echoed["result"]["content"], json!([{ "type": "text", "text": "as it came" }]), "{echoed}");
    assert!(echoed["result"].get("structuredContent").is_none(), "{echoed}");
    assert_ne!(echoed["result"]["isError"], json!(true), "{echoed}");
    let tools = session.request("tools/list", json!({}));
    let listed = |name: &str| tools["result"]["tools"].as_array().unwrap().iter().find(|t| t["name"] == name).cloned();
    assert!(listed("py.echo").expect("py.echo").get("outputSchema").is_none(), "{tools}");
    assert!(listed("py.add").expect("py.add").get("outputSchema").is_some(), "{tools}");
    let heard = |session: &StdioSession| {
        session.notifications().iter().filter(|n| n["method"] == "notifications/tools/list_changed").count()
    };
    assert!(heard(&session) > 0, "the client heard of the change: {:?}", session.notifications());

    // The upstream's own list_changed reaches toolhost's clients: `grow` adds a tool.
    let heard_before = heard(&session);
    let grown = session.call("py.grow", &json!({}));
    assert_eq!(grown["result"]["structuredContent"], json!({ "result": "grown" }), "{grown}");
    wait_until_listed(&mut session, "py.extra", "after the upstream said its list changed");
    let deadline = Instant::now() + Duration::from_secs(20);
    while heard(&session) == heard_before {
        assert!(Instant::now() < deadline, "no list_changed reached the client: {:?}", session.notifications());
        session.request("ping", json!({}));
        std::thread::sleep(Duration::from_millis(20));
    }
    let extra = session.call("py.extra", &json!({}));
    assert_eq!(extra["result"]["structuredContent"], json!({ "result": "extra" }), "{extra}");
    drop(session);
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("upstream MCP servers changed"), "the edit is logged");
    assert!(log.lines().count() > 50, "a trace log has something to say");
    assert!(!log.contains(SECRET), "the secret is in the trace log");
}

/// Runs `toolhost ARGS --config DIR/toolhost.toml` in `dir` with `env` added.
fn toolhost_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    std::process::Command::new(toolhost_tests::toolhost_bin())
        .args(args)
        .arg("--config")
        .arg(dir.join("toolhost.toml"))
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .expect("run toolhost")
}

fn stdout_json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn the_cli_lists_each_tools_source_and_inspects_an_upstream_server_by_name() {
    const SECRET: &str = "inspect-secret-5512";
    let dir = tempfile::tempdir().unwrap();
    let tools = toolhost_tests::ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("plain-geometry", "geometry", "geometry");
    let forecast = "description = \"Weather for a city.\"\nurl = \"https://api.example.com/{city}\"\n\
                    network = [\"api.example.com\"]\n\n[input_schema]\ntype = \"object\"\nrequired = [\"city\"]\n\
                    properties = { city = { type = \"string\" } }\n\n[output_schema]\ntype = \"object\"\n";
    tools.write("weather", "forecast.http.toml", forecast.as_bytes());
    let web = HttpUpstream::start(&dir.path().join("web.events"));
    let config = format!(
        "{}\n[[upstream]]\nname = \"web\"\nurl = {:?}\ntimeout = \"7s\"\n\
         headers = {{ Authorization = {{ env = \"WEB_TOKEN\", prefix = \"Bearer \" }}, X-Team = \"{SECRET}\" }}\n\n\
         [[upstream]]\nname = \"down\"\ncommand = \"/nonexistent/mcp-server\"\n",
        stdio_upstream(&dir.path().join("py.events"), ""),
        web.url
    );
    std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
    let secret_env = [("WEB_TOKEN", SECRET)];

    let listed = toolhost_in(dir.path(), &["list", tools.path().to_str().unwrap()], &secret_env);
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let listing = stdout_json(&listed);
    let source = |name: &str| {
        let tool = listing["tools"].as_array().unwrap().iter().find(|tool| tool["name"] == name);
        tool.unwrap_or_else(|| panic!("{name} is not listed: {listing}"))["source"].clone()
    };
    assert_eq!(source("math/add"), "component");
    assert_eq!(source("geometry/measure"), "plain_component");
    assert_eq!(source("weather/forecast"), "http");
    assert_eq!(source("py/add"), "mcp_server");
    assert_eq!(source("web/add"), "mcp_server");
    let errors = listing["errors"].to_string();
    assert!(errors.contains("[[upstream]] down") && errors.contains("cannot start"), "{errors}");

    // By name: the declaration (where secrets come from), the connection, the tools.
    let inspected = toolhost_in(dir.path(), &["inspect", "web"], &secret_env);
    assert!(inspected.status.success(), "{}", String::from_utf8_lossy(&inspected.stderr));
    let web_shown = stdout_json(&inspected);
    assert_eq!(web_shown["contract"], "mcp server");
    assert_eq!(
        (&web_shown["state"], &web_shown["protocol"]),
        (&json!("connected"), &json!("2025-11-25")),
        "{web_shown}"
    );
    assert_eq!(web_shown["implementation"]["name"], "upstream-test");
    assert_eq!(web_shown["server"]["url"], web.url.as_str());
    assert_eq!(web_shown["server"]["timeout_ms"], 7000);
    assert_eq!(web_shown["server"]["headers"]["Authorization"], json!({ "env": "WEB_TOKEN", "prefix": "Bearer " }));
    let names: Vec<&str> = web_shown["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"web/add") && names.iter().all(|name| name.starts_with("web/")), "{names:?}");
    assert_eq!(web_shown["tools_served"], names.len());
    for (stream, text) in [("stdout", &inspected.stdout), ("stderr", &inspected.stderr)] {
        assert!(!String::from_utf8_lossy(text).contains(SECRET), "a secret is on {stream}: {web_shown}");
    }

    let py_shown = stdout_json(&toolhost_in(dir.path(), &["inspect", "py"], &[]));
    assert_eq!(py_shown["server"]["env"], json!({ "HOME": { "env": "HOME" } }), "{py_shown}");
    assert_eq!(py_shown["server"]["layer"], "upstream");
    let add = py_shown["tools"].as_array().unwrap().iter().find(|t| t["name"] == "py/add").expect("py/add");
    assert_eq!((&add["source"], &add["input_schema"]["required"]), (&json!("mcp_server"), &json!(["a", "b"])));

    // A server that cannot start: shown with its problem, and the load error's exit code.
    let down = toolhost_in(dir.path(), &["inspect", "down"], &[]);
    assert_eq!(down.status.code(), Some(i32::from(toolhost::exit::LOAD)), "{down:?}");
    let down_shown = stdout_json(&down);
    assert_eq!(down_shown["state"], "failed");
    assert!(down_shown["problem"].as_str().unwrap().contains("cannot start `/nonexistent/mcp-server`"), "{down_shown}");
    let stderr = String::from_utf8_lossy(&down.stderr);
    let last = stderr.trim_end().lines().last().unwrap_or_default();
    assert!(last.starts_with("error[load]: upstream `down`: cannot start"), "{stderr}");

    // A name that is neither a file nor a server is a missing file, as before.
    let neither = toolhost_in(dir.path(), &["inspect", "nothing"], &[]);
    assert_eq!(neither.status.code(), Some(i32::from(toolhost::exit::LOAD)), "{neither:?}");
    assert!(neither.stdout.is_empty(), "{neither:?}");
}

/// `@modelcontextprotocol/server-everything` from the npm registry, under
/// `<target>/toolchains/mcp-everything`: its entry point.
fn server_everything() -> PathBuf {
    everything_package().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

/// Where [`server_everything`] is installed.
fn everything_package() -> PathBuf {
    toolhost_tests::npm_package(&toolhost_tests::test_programs::MCP_EVERYTHING)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_server_from_npm_is_listed_and_called() {
    let entry = server_everything();
    let node = which("node");
    let dir = tempfile::tempdir().unwrap();
    let config = format!(
        "[[upstream]]\nname = \"everything\"\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\nenv = [\"HOME\"]\n\
         sandbox = {{ read = [{:?}] }}\n",
        node.display().to_string(),
        entry.display().to_string(),
        everything_package().display().to_string(),
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

/// An HTTP server that dies says nothing: the host finds it out by the ping it no
/// longer answers, and reports it as a failed load (its tools gone, calls naming it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_http_upstream_is_found_out_and_reported_like_a_failed_load() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = HttpUpstream::start(&dir.path().join("events"));
    let config = format!("[[upstream]]\nname = \"web\"\nurl = {:?}\nconnect_timeout = \"2s\"\n", server.url);
    let host = host(&dir, &config).await;
    assert_eq!(host.call("web/add", json!({ "a": 1, "b": 2 })).await.unwrap(), json!({ "result": 3 }));
    let _ = server.child.kill();
    let _ = server.child.wait();
    let deadline = Instant::now() + Duration::from_secs(30);
    let problem = loop {
        if let [status] = host.upstreams().await.as_slice()
            && let UpstreamState::Failed { problem } = &status.state
        {
            break problem.clone();
        }
        assert!(Instant::now() < deadline, "the dead server was not found out within 30 s");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(problem.contains("ping") || problem.contains("ended"), "{problem}");
    assert!(!host.list(&Caller::new("anyone")).iter().any(|tool| tool.name.starts_with("web/")));
    let errors: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert!(errors.iter().any(|error| error.contains("upstream MCP server `web`")), "{errors:?}");
    let call = host.call("web/add", json!({ "a": 1, "b": 2 })).await.unwrap_err();
    assert_eq!(call.kind(), ErrorKind::Host, "{call}");
    assert!(call.to_string().contains("upstream MCP server `web`"), "{call}");
}

/// An agent's share of an upstream server (`upstream_calls`): that many of its calls run
/// there at once, one more is refused at once, and other agents go on being served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_takes_only_its_share_of_an_upstream_server() {
    let dir = tempfile::tempdir().unwrap();
    let events_file = dir.path().join("events");
    let server = stdio_upstream(&events_file, "timeout = \"20s\"");
    let host = host(&dir, &format!("{server}\n[[quota]]\nagent = \"greedy\"\nupstream_calls = 1\n")).await;
    eventually("the server's tools", async || host.snapshot().tools.contains_key("py/slow")).await;
    let greedy = Caller::new("greedy");
    let running = tokio::spawn({
        let (host, greedy) = (host.clone(), greedy.clone());
        async move { host.call_as(&greedy, "py/slow", json!({ "seconds": 5 })).await }
    });
    eventually("the slow call runs upstream", async || events(&events_file).contains("called slow")).await;
    let refused = host.call_as(&greedy, "py/add", json!({ "a": 1, "b": 2 })).await.unwrap_err();
    let toolhost::CallError::QuotaExceeded { ref quota, .. } = refused else { panic!("{refused:?}") };
    assert_eq!(quota, "1 calls at once on upstream `py`", "{refused}");
    assert!(host.refuse_over_quota(&greedy, "py/add").await.is_some(), "and says so before a call");
    let other = host.call_as(&Caller::new("other"), "py/add", json!({ "a": 1, "b": 2 })).await;
    assert!(other.is_ok(), "another agent is served meanwhile: {other:?}");
    running.await.unwrap().unwrap();
    let again = host.call_as(&greedy, "py/add", json!({ "a": 1, "b": 2 })).await;
    assert!(again.is_ok(), "its place is given back when its call ends: {again:?}");
}

/// An upstream tool's progress notifications reach the caller's progress hook, through
/// the same checks as a component's reports (moving forward, finite), with the server's
/// own numbers (halves here), and only while the call runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_tools_progress_reaches_the_caller() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(&dir, &stdio_upstream(&dir.path().join("events"), "")).await;
    host.loaded().await;
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = seen.clone();
    let options = toolhost::CallOptions {
        progress: Some(std::sync::Arc::new(move |p: toolhost::Progress| sink.lock().unwrap().push(p))),
        ..toolhost::CallOptions::default()
    };
    let report = host.call_with(&Caller::local(), "py/steps", json!({ "count": 4 }), &options).await;
    assert_eq!(report.outcome.unwrap(), json!({ "result": "4 steps" }));
    let reports: Vec<(f64, Option<f64>, Option<String>)> =
        seen.lock().unwrap().iter().map(|p| (p.done, p.total, p.message.clone())).collect();
    let step = |n: u32| (f64::from(n) / 2.0, Some(2.0), Some(format!("step {n} of 4")));
    assert_eq!(reports, [step(1), step(2), step(3), step(4)], "the server's own numbers, in halves");
    // A call without a progress hook gets its answer as before.
    assert_eq!(host.call("py/steps", json!({ "count": 1 })).await.unwrap(), json!({ "result": "1 steps" }));

    // A caller that wants progress and goes away cancels the call upstream too.
    let events_file = dir.path().join("events");
    let caller = Caller::local();
    let call = host.call_with(&caller, "py/slow", json!({ "seconds": 0.8 }), &options);
    assert!(tokio::time::timeout(Duration::from_millis(300), call).await.is_err());
    eventually("the server hears the abandoned call was cancelled", async || {
        events(&events_file).matches("cancelled slow").count() == 1
    })
    .await;
}
