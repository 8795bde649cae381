//! What bounds an upstream MCP server: hostile servers written as raw JSON-RPC
//! (`tests/mcp/hostile_upstream.py`) that list without end, list too much, never
//! answer, flood the host with change notifications, name their tools as MCP allows
//! and toolhost does not, and refuse to exit. Each is contained to its own namespace,
//! named in its load error, and the host keeps serving the rest.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;
use tempfile::TempDir;
use toolhost::upstream::UpstreamState;
use toolhost::{ErrorKind, HostConfig, ToolHost};
use toolhost_tests::{mcp_python, python_sandbox};

fn hostile_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp/hostile_upstream.py")
}

/// `[[upstream]] NAME` running the hostile server in `mode`, its events in `dir/NAME.events`.
fn hostile(dir: &Path, name: &str, mode: &str, extra: &str) -> String {
    format!(
        "[[upstream]]\nname = {name:?}\ncommand = {:?}\nargs = [{:?}, {mode:?}, {:?}]\n{}{extra}\n",
        mcp_python().display().to_string(),
        hostile_script().display().to_string(),
        dir.join(format!("{name}.events")).display().to_string(),
        python_sandbox(&[dir]),
    )
}

fn events(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(format!("{name}.events"))).unwrap_or_default()
}

async fn host(dir: &TempDir, config: &str) -> ToolHost {
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, config).expect("write toolhost.toml");
    let config = HostConfig::load(&path).unwrap_or_else(|e| panic!("{e}"));
    config.builder().metrics(true).build().await.expect("host builds")
}

/// The problem of the server `name`, once it failed (within 20 s).
async fn failure(host: &ToolHost, name: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let statuses = host.upstreams().await;
        let status = statuses.iter().find(|status| status.server.name == name).expect("declared");
        if let UpstreamState::Failed { problem } = &status.state {
            return problem.clone();
        }
        assert!(Instant::now() < deadline, "{name} did not fail within 20 s: {status:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listing_past_a_bound_is_its_namespaces_load_error_naming_the_bound() {
    let dir = tempfile::tempdir().unwrap();
    let config = [
        hostile(dir.path(), "endless", "endless-cursor", ""),
        hostile(dir.path(), "many", "many-tools", ""),
        hostile(dir.path(), "big", "big-listing", ""),
        hostile(dir.path(), "fine", "names", ""),
    ]
    .concat();
    let host = host(&dir, &config).await;
    for (name, bound) in [
        ("endless", "goes on past 64 pages"),
        ("many", "it offers 100000 tools; at most 256 are served from one source"),
        ("big", "more than 32 MiB of JSON"),
    ] {
        let problem = failure(&host, name).await;
        assert!(problem.contains(bound), "{name}: {problem}");
        let errors = host.load_errors();
        let error = errors.iter().find(|error| error.to_string().contains(&format!("`{name}`")));
        assert!(error.is_some_and(|error| error.to_string().contains(bound)), "{name}'s load error: {errors:?}");
        assert!(!host.list(&toolhost::Caller::new("a")).iter().any(|tool| tool.name.starts_with(&format!("{name}/"))));
    }
    // The endless server was asked for 64 pages, not more, on each attempt.
    let pages = events(dir.path(), "endless").matches("tools/list").count();
    let attempts = events(dir.path(), "endless").matches("initialize").count();
    assert!(pages <= 64 * attempts, "{pages} pages over {attempts} attempts");
    // The others' tools serve.
    assert_eq!(
        host.call("fine/plain", json!({})).await.unwrap(),
        json!({ "content": [{ "type": "text", "text": "plain" }] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_server_fails_within_its_connect_timeout_and_calls_name_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = [
        hostile(dir.path(), "mute", "silent-initialize", "connect_timeout = \"1s\""),
        hostile(dir.path(), "quiet", "silent-list", "connect_timeout = \"1s\""),
    ]
    .concat();
    let started = Instant::now();
    let host = host(&dir, &config).await;
    assert!(started.elapsed() < Duration::from_secs(10), "the build waited {:?}", started.elapsed());
    let mute = failure(&host, "mute").await;
    assert!(mute.contains("did not complete `initialize` within 1 s"), "{mute}");
    let quiet = failure(&host, "quiet").await;
    assert!(quiet.contains("`tools/list` did not complete within 1 s"), "{quiet}");

    // A call of a tool there names the server and its problem, not close matches.
    let error = host.call("quiet/plain", json!({})).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::Host, "{error}");
    assert!(error.to_string().contains("upstream MCP server `quiet`"), "{error}");
    assert!(error.to_string().contains("within 1 s"), "{error}");
    // A namespace nobody declared is still just not found.
    let error = host.call("nobody/plain", json!({})).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::NotFound, "{error}");
    // The failures are counted where an operator's alerts look.
    let metrics = host.metrics_text().expect("metrics are on");
    assert!(metrics.contains("toolhost_upstream_servers{state=\"failed\"} 2"), "{metrics}");
    assert!(metrics.contains("toolhost_upstream_servers{state=\"serving\"} 0"), "{metrics}");
    // Every server is tried again with backoff.
    let deadline = Instant::now() + Duration::from_secs(10);
    while events(dir.path(), "quiet").matches("initialize").count() < 2 {
        assert!(Instant::now() < deadline, "quiet was not retried: {}", events(dir.path(), "quiet"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// What the MCP library cannot read is still an answer: a listing with a tool whose
/// schema nests 200 levels deep serves the others and refuses that one by the depth
/// rule; an answer past 16 MiB (its `id` last) fails its call at once as too large,
/// and the connection goes on serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_the_library_cannot_read_fails_alone_and_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let config = [
        hostile(dir.path(), "deep", "deep-schema", "connect_timeout = \"5s\""),
        hostile(dir.path(), "huge", "huge-answer", "timeout = \"60s\""),
    ]
    .concat();
    let host = host(&dir, &config).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    while !(host.snapshot().tools.contains_key("deep/plain") && host.snapshot().tools.contains_key("huge/small")) {
        assert!(Instant::now() < deadline, "not served: {:?}", host.load_errors());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!host.snapshot().tools.contains_key("deep/deep"));
    let errors: Vec<String> = host.load_errors().iter().map(ToString::to_string).collect();
    assert!(
        errors.iter().any(|error| error.contains("tool `deep`: its input schema nests deeper than 64 levels")),
        "{errors:?}"
    );
    assert_eq!(
        host.call("deep/plain", json!({})).await.unwrap(),
        json!({ "content": [{ "type": "text", "text": "plain" }] })
    );

    let started = Instant::now();
    let error = host.call("huge/huge", json!({})).await.unwrap_err();
    assert_eq!(error.kind(), ErrorKind::OutputTooLarge, "{error}");
    assert!(started.elapsed() < Duration::from_secs(20), "it waited {:?}", started.elapsed());
    assert!(error.to_string().contains("huge/huge"), "{error}");
    assert_eq!(
        host.call("huge/small", json!({})).await.unwrap(),
        json!({ "content": [{ "type": "text", "text": "small" }] })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_change_notifications_with_an_unchanged_list_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let host = host(&dir, &hostile(dir.path(), "flood", "flood", "")).await;
    assert!(host.list(&toolhost::Caller::new("a")).iter().any(|tool| tool.name == "flood/plain"));
    let mut changes = host.subscribe();
    let listed_before = events(dir.path(), "flood").matches("tools/list").count();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let listed = events(dir.path(), "flood").matches("tools/list").count() - listed_before;
    assert!(listed <= 4, "listed {listed} times in 3 s under thousands of notifications");
    assert!(changes.try_recv().is_err(), "an unchanged listing is no change");
    let metrics = host.metrics_text().expect("metrics are on");
    assert!(metrics.contains("toolhost_upstream_servers{state=\"serving\"} 1"), "{metrics}");
    assert_eq!(host.call("flood/plain", json!({})).await.unwrap()["content"][0]["text"], "plain");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mcp_tool_name_is_served_by_one_rule_and_called_by_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let config = hostile(dir.path(), "names", "names", "rename = { UPPER = \"loud\" }");
    let host = host(&dir, &config).await;
    assert_eq!(host.load_errors(), vec![]);
    let listed: Vec<String> = host
        .list(&toolhost::Caller::new("a"))
        .into_iter()
        .filter_map(|tool| tool.name.strip_prefix("names/").map(str::to_owned))
        .collect();
    assert_eq!(listed.len(), 9, "every tool is served: {listed:?}");
    for name in ["print_env", "get_tiny_image", "get_weather", "get-weather", "t_123start", "loud", "plain"] {
        assert!(listed.contains(&name.to_owned()), "{name} in {listed:?}");
    }
    // `get.weather` meets `get_weather`, which keeps its name; the long one is cut.
    let suffixed: Vec<&String> = listed.iter().filter(|name| name.starts_with("get_weather_")).collect();
    assert_eq!(suffixed.len(), 1, "{listed:?}");
    let long = listed.iter().find(|name| name.starts_with("a_very_long")).expect("the long name");
    assert_eq!(long.len(), 38, "{long}");
    // Each is called upstream by the server's own name.
    for (served, remote) in [("print_env", "printEnv"), ("loud", "UPPER"), (suffixed[0].as_str(), "get.weather")] {
        let output = host.call(&format!("names/{served}"), json!({})).await.unwrap();
        assert_eq!(output["content"][0]["text"], remote, "{served}");
        assert!(events(dir.path(), "names").contains(&format!("called {remote}\n")), "{remote}");
    }
}

/// Process ids the stubborn server wrote: its own and its child's.
async fn stubborn_pids(dir: &Path, name: &str) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(line) = events(dir, name).lines().find(|line| line.starts_with("pids ")) {
            return line.split_whitespace().skip(1).map(|pid| pid.parse().unwrap()).collect();
        }
        assert!(Instant::now() < deadline, "the stubborn server did not start");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

/// Waits up to the grace period and 5 s more for every one of `pids` to end.
async fn all_end(pids: &[i32], after: &str) {
    let deadline = Instant::now() + toolhost::upstream::STOP_GRACE + Duration::from_secs(5);
    while pids.iter().any(|pid| running(*pid)) {
        assert!(Instant::now() < deadline, "{pids:?} outlived {after}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_its_end_is_stopped_with_its_children() {
    let dir = tempfile::tempdir().unwrap();
    // Removed from the declaration.
    let host = host(&dir, &hostile(dir.path(), "first", "stubborn", "")).await;
    let pids = stubborn_pids(dir.path(), "first").await;
    assert!(pids.iter().all(|pid| running(*pid)), "{pids:?}");
    host.set_upstreams(Vec::new()).await.unwrap();
    all_end(&pids, "its removal").await;
    // The host dropped.
    let host = self::host(&dir, &hostile(dir.path(), "second", "stubborn", "")).await;
    let pids = stubborn_pids(dir.path(), "second").await;
    drop(host);
    all_end(&pids, "the host").await;
}

#[test]
fn a_one_shot_command_leaves_no_server_behind() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("toolhost.toml"), hostile(dir.path(), "cli", "stubborn", "")).unwrap();
    let output = std::process::Command::new(toolhost_tests::toolhost_bin())
        .current_dir(dir.path())
        .args(["--config", "toolhost.toml", "list"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let line = events(dir.path(), "cli");
    let pids: Vec<i32> = line
        .lines()
        .find(|l| l.starts_with("pids "))
        .expect("started")
        .split_whitespace()
        .skip(1)
        .map(|p| p.parse().unwrap())
        .collect();
    // `toolhost list` waits out the grace period before it exits: nothing is left.
    assert!(pids.iter().all(|pid| !running(*pid)), "{pids:?} outlived `toolhost list`");
}

/// An HTTP server on loopback that refuses every request quoting its `Authorization`
/// header: `/401` in the `WWW-Authenticate` challenge, `/500` in a JSON-RPC error.
struct QuotingServer {
    addr: std::net::SocketAddr,
}

impl QuotingServer {
    fn start() -> QuotingServer {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let (mut first, mut authorization, mut length) = (String::new(), String::new(), 0usize);
                reader.read_line(&mut first).unwrap_or_default();
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or_default() == 0 || line == "\r\n" {
                        break;
                    }
                    let (name, value) = line.split_once(':').unwrap_or_default();
                    match name.to_ascii_lowercase().as_str() {
                        "authorization" => authorization = value.trim().to_owned(),
                        "content-length" => length = value.trim().parse().unwrap_or(0),
                        _ => {}
                    }
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                let quoted = format!("{authorization} {}", serde_json::to_string(&authorization).unwrap());
                let response = if first.contains("/401") {
                    let challenge =
                        format!("Bearer error=\"invalid_token\", error_description=\"revoked: {authorization}\"");
                    format!(
                        "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: {challenge}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                } else {
                    let error = json!({ "jsonrpc": "2.0", "id": 0, "error": { "code": -32000, "message": format!("bad credentials: {quoted}") } });
                    let error = error.to_string();
                    format!(
                        "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{error}",
                        error.len()
                    )
                };
                let _ = stream.write_all(response.as_bytes());
            }
        });
        QuotingServer { addr }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_upstream_quoting_its_credential_in_a_refusal_shows_it_nowhere() {
    const SECRET: &str = "quoted-secret-6612";
    let server = QuotingServer::start();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("token"), SECRET).unwrap();
    let upstream = |name: &str, path: &str| {
        format!(
            "[[upstream]]\nname = {name:?}\nurl = \"http://{}{path}\"\nconnect_timeout = \"5s\"\n\
             headers = {{ Authorization = {{ file = \"token\", prefix = \"Bearer \" }} }}\n",
            server.addr
        )
    };
    let host = host(&dir, &[upstream("challenged", "/401"), upstream("failing", "/500")].concat()).await;
    for name in ["challenged", "failing"] {
        let problem = failure(&host, name).await;
        assert!(!problem.contains(SECRET), "{name}: {problem}");
        let call = host.call(&format!("{name}/anything"), json!({})).await.unwrap_err().to_string();
        assert!(call.contains(&format!("upstream MCP server `{name}`")) && !call.contains(SECRET), "{call}");
    }
    let errors = format!("{:?}", host.load_errors());
    assert!(!errors.contains(SECRET), "{errors}");
    assert!(errors.contains("[secret]"), "the refusals quoted it, and it was blanked: {errors}");
}
