//! Serving many agents over the wire: bearer tokens and the agents they stand for,
//! sessions that belong to their agent, refusing to serve an open network address
//! without credentials, the protocol's answers to bad requests, cancellation of calls
//! by the client (and by a client that goes away), health and readiness.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_tests::wire::{HttpSession, StdioSession, call_request};
use toolhost_tests::{ToolsDir, spawn_http_server, toolhost_bin};

const PLANNER_TOKEN: &str = "planner-token-0123456789";
const CODER_TOKEN: &str = "coder-token-9876543210";

fn sha256_hex(text: &str) -> String {
    toolhost::serve::digest(text).iter().map(|b| format!("{b:02x}")).collect()
}

/// `math`, `text` and `hostile` tools, and a configuration with two agents: the planner
/// (a token given by digest) may call math and hostile tools, the coder (a token read
/// from a file) text tools. Calls are audited to `audit.jsonl` beside it.
fn two_agents() -> (ToolsDir, tempfile::TempDir, PathBuf) {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("text", "text", "text");
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"60s\"\n");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("coder.token"), format!("{CODER_TOKEN}\n")).unwrap();
    let config = dir.path().join("toolhost.toml");
    let text = format!(
        "[audit]\njsonl = \"audit.jsonl\"\n\n\
         [[policy]]\nagent = \"planner\"\nallow = [\"math/*\", \"hostile/*\"]\n\n\
         [[policy]]\nagent = \"coder\"\nallow = [\"text/*\"]\n\n\
         [[token]]\nagent = \"planner\"\nsha256 = \"{}\"\n\n[[token]]\nagent = \"coder\"\nfile = \"coder.token\"\n",
        sha256_hex(PLANNER_TOKEN)
    );
    std::fs::write(&config, text).unwrap();
    (tools, dir, config)
}

/// `toolhost serve --http`; killed when dropped.
struct Server {
    child: Child,
    addr: String,
}

impl Server {
    fn start(config: &Path, tools: &ToolsDir, addr: &str, extra: &[&str]) -> Result<Server, String> {
        let mut command = Command::new(toolhost_bin());
        command.arg("--config").arg(config).arg("serve").arg(tools.path()).args(["--http", addr]).args(extra);
        let (child, addr) = spawn_http_server(command)?;
        Ok(Server { child, addr })
    }

    fn session(&self, token: &str) -> HttpSession {
        HttpSession::start(&self.addr, "/mcp", Some(&format!("Bearer {token}")))
    }

    /// Waits until `GET /ready` answers 200: every component has loaded.
    fn wait_until_ready(&self) {
        HttpSession::wait_until_ready(&self.addr, None, Duration::from_secs(60));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn tool_names(session: &mut HttpSession) -> Vec<String> {
    let response = session.post(&json!({ "jsonrpc": "2.0", "id": 99, "method": "tools/list" }));
    let list = response.messages().into_iter().find(|m| m["id"] == 99).expect("a tools/list answer");
    let mut names: Vec<String> =
        list["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    names.sort();
    names
}

/// Waits until the audit log holds a `cancelled` record of `tool`; returns how long
/// that took. The record is written when the call's future is dropped, which drops its
/// sandbox and frees its instance slot.
fn wait_for_cancelled(config_dir: &Path, tool: &str) -> Duration {
    let started = Instant::now();
    let wanted = ("planner".to_owned(), tool.to_owned(), "cancelled".to_owned());
    while !audit_outcomes(config_dir).contains(&wanted) {
        assert!(started.elapsed() < Duration::from_secs(10), "no cancelled record: {:?}", audit_outcomes(config_dir));
        std::thread::sleep(Duration::from_millis(2));
    }
    started.elapsed()
}

fn audit_outcomes(config_dir: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(config_dir.join("audit.jsonl")).unwrap_or_default();
    text.lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .map(|r| {
            let field = |key: &str| r[key].as_str().unwrap_or_default().to_owned();
            (r["caller"]["agent"].as_str().unwrap_or_default().to_owned(), field("requested"), field("outcome"))
        })
        .collect()
}

#[test]
fn a_bearer_token_is_its_agent_and_a_session_belongs_to_the_agent_that_opened_it() {
    let (tools, dir, config) = two_agents();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();

    // No token, a wrong token: 401 with the challenge, and nothing reaches MCP.
    let mut anonymous = HttpSession::connect(&server.addr, "/mcp");
    let refused = anonymous.post(&toolhost_tests::wire::initialize_request());
    assert_eq!(refused.status, 401);
    assert_eq!(refused.header("www-authenticate"), Some(r#"Bearer realm="toolhost""#));
    anonymous.authorization = Some(format!("Bearer {PLANNER_TOKEN}x"));
    let refused = anonymous.post(&toolhost_tests::wire::initialize_request());
    assert_eq!(refused.status, 401);
    assert!(refused.header("www-authenticate").unwrap().contains(r#"error="invalid_token""#), "{refused:?}");
    anonymous.authorization = Some(format!("Bearer {}", sha256_hex(PLANNER_TOKEN)));
    assert_eq!(anonymous.post(&toolhost_tests::wire::initialize_request()).status, 401, "the digest is no token");

    // Each agent sees and calls only its own tools; another's are not even suggested.
    let mut planner = server.session(PLANNER_TOKEN);
    let mut coder = server.session(CODER_TOKEN);
    let planner_tools = tool_names(&mut planner);
    assert!(planner_tools.iter().all(|t| t.starts_with("math.") || t.starts_with("hostile.")), "{planner_tools:?}");
    assert!(planner_tools.contains(&"math.add".to_owned()));
    assert_eq!(tool_names(&mut coder), ["text.regex_find", "text.slugify", "text.word_count"]);
    let answer = planner.call("math.add", &json!({ "numbers": [1, 2] }));
    assert_eq!(answer["result"]["structuredContent"], json!({ "value": 3.0 }));
    let refused = planner.call("text.slugify", &json!({ "text": "a b" }));
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert_eq!(refused["error"]["message"], "unknown tool `text.slugify`", "no suggestion names a hidden tool");
    let refused = coder.call("math.ad", &json!({ "numbers": [1] }));
    assert_eq!(refused["error"]["message"], "unknown tool `math.ad`", "{refused}");

    // The coder's token in the planner's session: answered like a session that does not
    // exist, and the planner's session is unharmed.
    let mut hijack = HttpSession::connect(&server.addr, "/mcp");
    hijack.authorization = Some(format!("Bearer {CODER_TOKEN}"));
    hijack.session = planner.session.clone();
    let refused = hijack.post(&call_request(5, "math.add", &json!({ "numbers": [1] })));
    assert_eq!(refused.status, 404, "{refused:?}");
    assert_eq!(planner.call("math.add", &json!({ "numbers": [2] }))["result"]["structuredContent"]["value"], 2.0);

    // The audit log names the agent of each call, and the refused one as refused. (It
    // is appended in the background, so that no call waits on the disk: wait for it.)
    let wanted = [
        ("planner".to_owned(), "text.slugify".to_owned(), "permission_denied".to_owned()),
        ("coder".to_owned(), "math.ad".to_owned(), "not_found".to_owned()),
        ("planner".to_owned(), "math.add".to_owned(), "ok".to_owned()),
    ];
    let started = Instant::now();
    while !wanted.iter().all(|record| audit_outcomes(dir.path()).contains(record)) {
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", audit_outcomes(dir.path()));
        std::thread::sleep(Duration::from_millis(5));
    }
    drop(server);
    assert!(!std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap().contains(PLANNER_TOKEN));
}

#[test]
fn an_open_address_without_credentials_is_refused_unless_the_operator_insists() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let dir = tempfile::tempdir().unwrap();
    let no_tokens = dir.path().join("toolhost.toml");
    std::fs::write(&no_tokens, "").unwrap();
    let refused = Server::start(&no_tokens, &tools, "0.0.0.0:0", &[]).err().expect("refused to start");
    assert!(refused.contains("refusing to serve 0.0.0.0:") && refused.contains("--insecure-no-auth"), "{refused}");

    let insisted = Server::start(&no_tokens, &tools, "0.0.0.0:0", &["--insecure-no-auth"]).unwrap();
    let port = insisted.addr.rsplit_once(':').unwrap().1;
    let mut session = HttpSession::start(&format!("127.0.0.1:{port}"), "/mcp", None);
    assert_eq!(session.call("math.add", &json!({ "numbers": [1] }))["result"]["structuredContent"]["value"], 1.0);
    drop(insisted);

    let (tools, _dir, with_tokens) = two_agents();
    let protected = Server::start(&with_tokens, &tools, "0.0.0.0:0", &[]).expect("tokens make an open address fine");
    let port = protected.addr.rsplit_once(':').unwrap().1;
    assert_eq!(
        HttpSession::connect(&format!("127.0.0.1:{port}"), "/mcp").request("POST", Some(b"{}"), &[]).status,
        401
    );
}

#[test]
fn bad_bodies_get_json_rpc_errors_a_closed_session_204_and_probes_answer() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(&config, "").unwrap();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    let mut session = HttpSession::start(&server.addr, "/mcp", None);

    let not_json = session.request("POST", Some(b"{oops"), &[]);
    assert_eq!(not_json.status, 400);
    assert_eq!(not_json.header("content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&not_json.body).unwrap();
    assert_eq!(
        body,
        json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "Parse error: the body is not JSON" } })
    );
    let not_a_message = session.request("POST", Some(br#"{"id": 7, "foo": 1}"#), &[]);
    assert_eq!(not_a_message.status, 400);
    let body: Value = serde_json::from_slice(&not_a_message.body).unwrap();
    assert_eq!((body["id"].clone(), body["error"]["code"].clone()), (json!(7), json!(-32600)));
    assert_eq!(session.call("math.add", &json!({ "numbers": [4] }))["result"]["structuredContent"]["value"], 4.0);

    assert_eq!(session.request("DELETE", None, &[]).status, 204);
    assert_eq!(
        session.post(&call_request(9, "math.add", &json!({ "numbers": [1] }))).status,
        404,
        "the session is gone"
    );

    for (path, status) in [("/health", "ok"), ("/ready", "ready")] {
        let mut probe = HttpSession::connect(&server.addr, path);
        let answer = probe.request("GET", None, &[]);
        assert_eq!(answer.status, 200, "{path}");
        let body: Value = serde_json::from_slice(&answer.body).unwrap();
        assert_eq!(body["status"], status, "{path}: {body}");
    }
}

/// Starts `toolhost serve` over stdio with the two-agents configuration, as the planner.
fn stdio_planner(config: &Path, tools: &ToolsDir) -> StdioSession {
    let mut command = Command::new(toolhost_bin());
    command.arg("--config").arg(config).args(["--agent", "planner", "serve"]).arg(tools.path());
    StdioSession::start(command)
}

/// Spinning for minutes (far beyond the test), within the 60 s limit of its manifest.
fn spin() -> Value {
    json!({ "iterations": 1_000_000_000_000u64 })
}

#[test]
fn a_call_the_client_cancels_stops_frees_its_slot_and_is_recorded() {
    let (tools, dir, config) = two_agents();
    let mut server = stdio_planner(&config, &tools);
    server.send(&call_request(41, "hostile.busy", &spin()));
    std::thread::sleep(Duration::from_millis(300));
    server.send(&json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 41 } }));
    let stopped_after = wait_for_cancelled(dir.path(), "hostile.busy");
    eprintln!("notifications/cancelled → slot free and recorded: {stopped_after:?}");
    assert!(stopped_after < Duration::from_secs(5), "stopped {stopped_after:?} after the cancellation");
    // The cancelled request gets no answer; the next call is served.
    let answer = server.call("math.add", &json!({ "numbers": [1, 1] }));
    assert_eq!(answer["id"], 1, "no answer to request 41 came first: {answer}");
    assert_eq!(answer["result"]["structuredContent"]["value"], 2.0, "{answer}");
}

#[test]
fn a_call_whose_http_client_goes_away_stops_and_is_recorded() {
    let (tools, dir, config) = two_agents();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    let mut planner = server.session(PLANNER_TOKEN);
    // The call on its own connection, closed without reading the answer.
    let mut doomed = HttpSession::connect(&server.addr, "/mcp");
    doomed.authorization = Some(format!("Bearer {PLANNER_TOKEN}"));
    doomed.session = planner.session.clone();
    doomed.send_only(&call_request(7, "hostile.busy", &spin()));
    std::thread::sleep(Duration::from_millis(300));
    drop(doomed);
    let stopped_after = wait_for_cancelled(dir.path(), "hostile.busy");
    eprintln!("client gone → slot free and recorded: {stopped_after:?}");
    assert!(stopped_after < Duration::from_secs(5), "stopped {stopped_after:?} after the client went away");
    let answer = planner.call("math.add", &json!({ "numbers": [3] }));
    assert_eq!(answer["result"]["structuredContent"]["value"], 3.0, "{answer}");
}

/// A server whose planner session, once every tool has loaded (a call of a tool not
/// loaded yet goes through the SDK's session worker), has a spinning `hostile.busy` call
/// running on a connection of its own, whose answer is read later. The call is answered
/// on its connection, or with `through_the_sdk` through the session's worker (it asks
/// for progress, which only the worker can route).
struct BusyCall {
    /// Stopped when dropped.
    _server: Server,
    _tools: ToolsDir,
    dir: tempfile::TempDir,
    planner: HttpSession,
    calling: HttpSession,
    id: u64,
}

impl BusyCall {
    fn start(id: u64, through_the_sdk: bool) -> BusyCall {
        let (tools, dir, config) = two_agents();
        let server = Server::start(&config, &tools, "0", &[]).unwrap();
        server.wait_until_ready();
        let planner = server.session(PLANNER_TOKEN);
        let mut calling = HttpSession::connect(&server.addr, "/mcp");
        calling.authorization = Some(format!("Bearer {PLANNER_TOKEN}"));
        calling.session = planner.session.clone();
        let mut request = call_request(id, "hostile.busy", &spin());
        if through_the_sdk {
            request["params"]["_meta"] = json!({ "progressToken": "busy" });
        }
        calling.send_only(&request);
        std::thread::sleep(Duration::from_millis(300));
        BusyCall { _server: server, _tools: tools, dir, planner, calling, id }
    }

    /// Waits for the call's `cancelled` record, which must come within 5 s of `what`.
    fn assert_stopped_after(&self, what: &str) {
        let stopped_after = wait_for_cancelled(self.dir.path(), "hostile.busy");
        eprintln!("{what} → call stopped and recorded: {stopped_after:?}");
        assert!(stopped_after < Duration::from_secs(5), "stopped {stopped_after:?} after {what}");
    }

    /// The call's event stream ends without an answer.
    fn assert_no_answer(&mut self) {
        let stream = self.calling.response();
        assert_eq!(stream.status, 200, "{stream:?}");
        assert!(stream.messages().iter().all(|message| message.get("id") != Some(&json!(self.id))), "{stream:?}");
    }
}

#[test]
fn a_call_cancelled_in_an_http_session_stops_gets_no_answer_and_is_recorded() {
    let mut busy = BusyCall::start(41, false);
    let cancel = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": { "requestId": 41 } });
    assert_eq!(busy.planner.post(&cancel).status, 202);
    busy.assert_stopped_after("notifications/cancelled over HTTP");
    // The call's event stream ends, without an answer; the connection serves on.
    busy.assert_no_answer();
    let answer = busy.calling.call("math.add", &json!({ "numbers": [2, 2] }));
    assert_eq!(answer["result"]["structuredContent"]["value"], 4.0, "{answer}");
}

#[test]
fn closing_an_http_session_stops_its_calls_in_flight() {
    for through_the_sdk in [false, true] {
        let mut busy = BusyCall::start(9, through_the_sdk);
        assert_eq!(busy.planner.request("DELETE", None, &[]).status, 204);
        // At once: the SDK alone would give its own calls 5 s to end.
        let stopped_after = wait_for_cancelled(busy.dir.path(), "hostile.busy");
        eprintln!(
            "the session closed (through the SDK: {through_the_sdk}) → call stopped and recorded: {stopped_after:?}"
        );
        assert!(
            stopped_after < Duration::from_secs(2),
            "through the SDK: {through_the_sdk}: stopped {stopped_after:?} after the session closed"
        );
        busy.assert_no_answer();
        // The session is gone for every connection.
        assert_eq!(busy.calling.post(&call_request(10, "math.add", &json!({ "numbers": [1] }))).status, 404);
    }
}

/// `GET /metrics` with `token`, parsed by the official Prometheus client's parser:
/// `(name, labels, value)` per sample.
fn scrape(addr: &str, token: Option<&str>) -> Result<Vec<(String, Value, f64)>, u16> {
    let mut scraper = HttpSession::connect(addr, "/metrics");
    scraper.authorization = token.map(|token| format!("Bearer {token}"));
    let answer = scraper.request("GET", None, &[]);
    if answer.status != 200 {
        return Err(answer.status);
    }
    assert_eq!(answer.header("content-type"), Some("text/plain; version=0.0.4; charset=utf-8"));
    let parse = "import json, sys\n\
                 from prometheus_client.parser import text_string_to_metric_families\n\
                 print(json.dumps([[s.name, s.labels, s.value] for f in text_string_to_metric_families(sys.stdin.read()) for s in f.samples]))";
    let mut python = Command::new(toolhost_tests::mcp_python())
        .args(["-c", parse])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run the Prometheus parser");
    std::io::Write::write_all(&mut python.stdin.take().unwrap(), &answer.body).unwrap();
    let output = python.wait_with_output().unwrap();
    assert!(output.status.success(), "not the Prometheus text format: {}", String::from_utf8_lossy(&output.stderr));
    let samples: Vec<(String, Value, f64)> = serde_json::from_slice(&output.stdout).unwrap();
    Ok(samples)
}

fn sample(samples: &[(String, Value, f64)], name: &str, labels: Value) -> Option<f64> {
    samples.iter().find(|(n, l, _)| n == name && *l == labels).map(|(_, _, value)| *value)
}

#[test]
fn metrics_count_calls_by_tool_and_outcome_slots_in_use_and_loads() {
    let (tools, _dir, config) = two_agents();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    assert_eq!(scrape(&server.addr, None).unwrap_err(), 401, "metrics need credentials when tokens are configured");
    assert_eq!(scrape(&server.addr, Some("wrong")).unwrap_err(), 401);

    let mut planner = server.session(PLANNER_TOKEN);
    for numbers in [json!([1, 2]), json!([3])] {
        assert!(planner.call("math.add", &json!({ "numbers": numbers }))["result"]["structuredContent"].is_object());
    }
    let failed = planner.call("hostile.fail", &json!({ "message": "no" }));
    assert_eq!(failed["result"]["isError"], true, "{failed}");

    // A spinning call holds a slot until its client goes away.
    let mut doomed = HttpSession::connect(&server.addr, "/mcp");
    doomed.authorization = Some(format!("Bearer {PLANNER_TOKEN}"));
    doomed.session = planner.session.clone();
    doomed.send_only(&call_request(7, "hostile.busy", &spin()));
    let in_use =
        || sample(&scrape(&server.addr, Some(PLANNER_TOKEN)).unwrap(), "toolhost_instance_slots_in_use", json!({}));
    let started = Instant::now();
    while in_use() != Some(1.0) {
        assert!(started.elapsed() < Duration::from_secs(20), "the spinning call never held a slot");
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(doomed);
    while in_use() != Some(0.0) {
        assert!(started.elapsed() < Duration::from_secs(20), "the cancelled call kept its slot");
        std::thread::sleep(Duration::from_millis(5));
    }

    // An agent reads the series of the tools it may see, and the host's totals.
    let coder = scrape(&server.addr, Some(CODER_TOKEN)).unwrap();
    let named: Vec<&Value> = coder.iter().filter_map(|(_, labels, _)| labels.get("tool")).collect();
    assert!(named.iter().all(|tool| tool.as_str().is_some_and(|tool| tool.starts_with("text/"))), "{named:?}");
    assert!(sample(&coder, "toolhost_tools", json!({})).is_some_and(|t| t > 5.0));

    let samples = scrape(&server.addr, Some(PLANNER_TOKEN)).unwrap();
    let calls = |tool: &str, outcome: &str| {
        sample(&samples, "toolhost_calls_total", json!({ "tool": tool, "outcome": outcome }))
    };
    assert_eq!(calls("math/add", "ok"), Some(2.0), "{samples:?}");
    assert_eq!(calls("hostile/fail", "failed"), Some(1.0));
    assert_eq!(calls("hostile/busy", "cancelled"), Some(1.0));
    let histogram =
        |suffix: &str, labels: Value| sample(&samples, &format!("toolhost_call_duration_seconds{suffix}"), labels);
    assert_eq!(histogram("_count", json!({ "tool": "math/add" })), Some(2.0));
    assert_eq!(histogram("_bucket", json!({ "tool": "math/add", "le": "+Inf" })), Some(2.0));
    assert!(histogram("_sum", json!({ "tool": "math/add" })).is_some_and(|s| s > 0.0));
    assert!(sample(&samples, "toolhost_fuel_consumed_total", json!({ "tool": "math/add" })).is_some_and(|f| f > 0.0));
    assert_eq!(sample(&samples, "toolhost_instance_slots", json!({})), Some(64.0));
    assert_eq!(sample(&samples, "toolhost_component_loads_total", json!({})), Some(3.0));
    assert!(sample(&samples, "toolhost_reloads_total", json!({})).is_some_and(|r| r >= 1.0), "the first load counts");
    assert_eq!(sample(&samples, "toolhost_failing_files", json!({})), Some(0.0));
    assert!(sample(&samples, "toolhost_tools", json!({})).is_some_and(|t| t > 5.0));

    // A reload is counted, with the component it loaded and the error it found.
    std::fs::write(tools.path().join("math/broken.wasm"), b"not wasm").unwrap();
    let started = Instant::now();
    loop {
        let samples = scrape(&server.addr, Some(PLANNER_TOKEN)).unwrap();
        if sample(&samples, "toolhost_failing_files", json!({})) == Some(1.0) {
            assert_eq!(sample(&samples, "toolhost_load_errors_total", json!({})), Some(1.0));
            assert!(sample(&samples, "toolhost_reloads_total", json!({})).is_some_and(|r| r >= 2.0));
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(20), "the reload never showed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `tools/list` over stdio; returns the listed names and whether a
/// `notifications/tools/list_changed` came before the answer.
fn stdio_tool_names(session: &mut StdioSession, id: u64) -> (Vec<String>, bool) {
    session.send(&json!({ "jsonrpc": "2.0", "id": id, "method": "tools/list" }));
    let mut list_changed = false;
    loop {
        let message = session.receive();
        if message["method"] == "notifications/tools/list_changed" {
            list_changed = true;
        }
        if message["id"] == id {
            let tools = message["result"]["tools"].as_array().expect("a tools/list answer").iter();
            return (tools.map(|tool| tool["name"].as_str().unwrap().to_owned()).collect(), list_changed);
        }
    }
}

/// `toolhost serve` answers calls as soon as their component is loaded, while a slower
/// one is still loading; a tool the slow file may override is not served until it is
/// done. The first `tools/list` waits for the whole first load (within
/// `FIRST_LIST_WAIT`), so a client that ignores `list_changed` still sees every tool;
/// one that listens hears it when the slow file's tools are served.
#[test]
fn the_server_answers_while_a_slow_component_loads_and_its_first_list_waits_for_it() {
    let project = ToolsDir::new();
    project.install("slow-listing", "text", "slow");
    project.manifest("text", "slow", "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"8s\"\n");
    let lower = ToolsDir::with_examples();
    let stderr = tempfile::NamedTempFile::new().unwrap();
    let mut command = Command::new(toolhost_bin());
    command.arg("--root").arg(project.path()).arg("--root").arg(lower.path()).args(["--no-cache", "serve"]);
    command.stderr(stderr.reopen().unwrap());
    let mut session = StdioSession::start(command);
    // Should list_changed never come, the read below ends with the server, not never.
    let (done, watchdog) = std::sync::mpsc::channel::<()>();
    let pid = session.pid();
    std::thread::spawn(move || {
        if watchdog.recv_timeout(Duration::from_secs(90)).is_err() {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    });

    let answer = session.call("math/add", &json!({ "numbers": [2, 2] }));
    assert_eq!(answer["result"]["structuredContent"], json!({ "value": 4.0 }), "{answer}");
    let log = std::fs::read_to_string(stderr.path()).unwrap();
    assert!(!log.contains("slow.wasm"), "the slow listing has not run out of time yet: {log}");

    // The first list waits until the slow file ran out of time: every tool is in it.
    let started = std::time::Instant::now();
    let (names, mut list_changed) = stdio_tool_names(&mut session, 1000);
    let log = std::fs::read_to_string(stderr.path()).unwrap();
    assert!(log.contains("text/slow.wasm") && log.contains("8s time limit"), "{log}");
    assert!(names.iter().any(|name| name.contains("add")), "{names:?}");
    assert!(names.iter().any(|name| name.starts_with("text") && name.contains("slugify")), "{names:?}");
    assert!(started.elapsed() < toolhost::serve::FIRST_LIST_WAIT, "the list waited out its bound");
    // A client that listens is told too (before or after the list's answer).
    while !list_changed {
        list_changed = session.receive()["method"] == "notifications/tools/list_changed";
    }
    drop(done);
}

/// `GET /ready` says `loading` (503) while a component is still loading, so a balancer
/// sends traffic to replicas that serve everything, and `ready` once all have loaded.
#[test]
fn readiness_waits_for_the_first_load() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("slow-listing", "slow", "slow");
    tools.manifest("slow", "slow", "[limits]\nfuel = 1_000_000_000_000_000\ntimeout = \"3s\"\n");
    let mut command = Command::new(toolhost_bin());
    command.args(["serve", "--http", "127.0.0.1:0"]).arg(tools.path());
    let (child, addr) = spawn_http_server(command).expect("the server starts");
    let server = Server { child, addr };
    let ready = || {
        let answer = HttpSession::connect(&server.addr, "/ready").request("GET", None, &[]);
        let body: Value = serde_json::from_slice(&answer.body).unwrap();
        (answer.status, body["status"].as_str().unwrap_or_default().to_owned())
    };
    assert_eq!(ready(), (503, "loading".to_owned()));
    HttpSession::wait_until_ready(&server.addr, None, Duration::from_secs(60));
    assert_eq!(ready(), (200, "ready".to_owned()));
}

/// Two agents on one server, side by side: each keeps its own state (the stdlib's task
/// list as shipped is one list per agent, a component's bucket is one per agent, and a
/// component granted to know its caller learns the agent its token stands for); one is
/// throttled by its quota while the other is served; and no endpoint tells one the
/// other's tool names.
#[test]
fn two_agents_over_http_side_by_side_keep_their_own_state_quota_and_tool_names() {
    let tools = ToolsDir::new();
    tools.install("stdlib-task", "task", "task");
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib/task/manifest.toml");
    tools.manifest("task", "task", &std::fs::read_to_string(shipped).unwrap());
    tools.install("kv", "who", "kv");
    tools.manifest("who", "kv", "[grants]\ncaller = true\n[grants.storage]\nbuckets = [\"default\"]\n");
    tools.install("math", "math", "math");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    // Only alice may use the math tools; bob may make three calls a minute.
    let text = format!(
        "[storage]\npath = \"state.sqlite3\"\n\n\
         [[policy]]\nagent = \"alice\"\nallow = [\"task/*\", \"who/*\", \"math/*\"]\n\n\
         [[policy]]\nagent = \"bob\"\nallow = [\"task/*\", \"who/*\"]\n\n\
         [[quota]]\nagent = \"bob\"\ncalls_per_minute = 3\n\n\
         [[token]]\nagent = \"alice\"\nsha256 = \"{}\"\n\n[[token]]\nagent = \"bob\"\nsha256 = \"{}\"\n",
        sha256_hex(PLANNER_TOKEN),
        sha256_hex(CODER_TOKEN)
    );
    std::fs::write(&config, text).unwrap();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    server.wait_until_ready();
    let mut alice = server.session(PLANNER_TOKEN);
    let mut bob = server.session(CODER_TOKEN);
    crate::agents::clear_of_a_minute_boundary();

    // Each keeps its own tasks and buckets, and learns only its own name.
    let titles = |session: &mut HttpSession| {
        let listed = session.call("task.list", &json!({}));
        let tasks =
            listed["result"]["structuredContent"]["tasks"].as_array().cloned().unwrap_or_else(|| panic!("{listed}"));
        tasks.iter().map(|task| task["title"].as_str().unwrap().to_owned()).collect::<Vec<_>>()
    };
    let run = |session: &mut HttpSession, op: Value| {
        let answer = session.call("who.run", &json!({ "ops": [op] }));
        answer["result"]["structuredContent"]["results"][0]["ok"].clone()
    };
    let created = alice.call("task.create", &json!({ "title": "alice's errand" }));
    assert_eq!(created["result"]["structuredContent"]["id"], 1, "{created}");
    run(&mut alice, json!({ "op": "set", "bucket": "default", "key": "note", "value": "alice's" }));
    assert_eq!(run(&mut alice, json!({ "op": "caller" }))["agent"], "alice");
    // Bob's three calls of the minute.
    let created = bob.call("task.create", &json!({ "title": "bob's errand" }));
    assert_eq!(created["result"]["structuredContent"]["id"], 1, "bob's list has its own ids: {created}");
    assert_eq!(titles(&mut bob), ["bob's errand"]);
    assert_eq!(run(&mut bob, json!({ "op": "get", "bucket": "default", "key": "note" })), Value::Null);

    // Bob is over his quota: 429 at once, while alice goes on being served.
    let refused = bob.post(&call_request(50, "who.run", &json!({ "ops": [{ "op": "caller" }] })));
    assert_eq!(refused.status, 429, "{refused:?}");
    assert!(refused.header("retry-after").is_some(), "{refused:?}");
    assert_eq!(titles(&mut alice), ["alice's errand"]);
    assert_eq!(run(&mut alice, json!({ "op": "get", "bucket": "default", "key": "note" })), "alice's");
    let added = alice.call("math.add", &json!({ "numbers": [1, 2] }));
    assert_eq!(added["result"]["structuredContent"]["value"], 3.0, "{added}");

    // No endpoint tells bob alice's tool names: not the list, not an unknown tool's
    // suggestions, not the metrics, not the probes.
    let bob_tools = tool_names(&mut bob);
    assert!(bob_tools.iter().all(|t| t.starts_with("task.") || t.starts_with("who.")), "{bob_tools:?}");
    let typo = bob.call("math.ad", &json!({ "numbers": [1] }));
    let message = typo["error"]["message"].as_str().unwrap_or_else(|| panic!("an unknown tool: {typo}"));
    assert!(message.starts_with("unknown tool `math.ad`") && !message.contains("math.add"), "{typo}");
    let metrics = scrape(&server.addr, Some(CODER_TOKEN)).expect("bob's metrics");
    assert!(
        metrics.iter().all(|(_, labels, _)| !labels["tool"].as_str().unwrap_or("").starts_with("math")),
        "{metrics:?}"
    );
    let alice_metrics = scrape(&server.addr, Some(PLANNER_TOKEN)).expect("alice's metrics");
    assert!(alice_metrics.iter().any(|(_, labels, _)| labels["tool"] == "math/add"), "{alice_metrics:?}");
    for path in ["/ready", "/health"] {
        let mut probe = HttpSession::connect(&server.addr, path);
        assert!(!String::from_utf8_lossy(&probe.request("GET", None, &[]).body).contains("math"), "{path}");
    }
}

/// Tokens and policy reload from `toolhost.toml` while the server serves: a new token
/// works, a removed one is refused from its next request, a new policy narrows what an
/// agent sees, and a broken edit keeps the last good configuration.
#[test]
fn tokens_and_policy_reload_without_a_restart_and_a_broken_edit_changes_nothing() {
    let (tools, _dir, config) = two_agents();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    server.wait_until_ready();
    let settle = |what: &str, done: &mut dyn FnMut() -> bool| {
        let started = Instant::now();
        while !done() {
            assert!(started.elapsed() < Duration::from_secs(15), "{what} did not take effect");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let initialize_status = |token: &str| {
        let mut session = HttpSession::connect(&server.addr, "/mcp");
        session.authorization = Some(format!("Bearer {token}"));
        session.post(&toolhost_tests::wire::initialize_request()).status
    };
    const NEW_TOKEN: &str = "reviewer-token-5555555555";
    assert_eq!(initialize_status(NEW_TOKEN), 401);

    // The reviewer gets a token and a rule; the planner loses `hostile/*`.
    let edited = format!(
        "[audit]\njsonl = \"audit.jsonl\"\n\n\
         [[policy]]\nagent = \"planner\"\nallow = [\"math/*\"]\n\n\
         [[policy]]\nagent = \"coder\"\nallow = [\"text/*\"]\n\n\
         [[policy]]\nagent = \"reviewer\"\nallow = [\"text/slugify\"]\n\n\
         [[token]]\nagent = \"planner\"\nsha256 = \"{}\"\n\n[[token]]\nagent = \"coder\"\nfile = \"coder.token\"\n\n\
         [[token]]\nagent = \"reviewer\"\nsha256 = \"{}\"\n",
        sha256_hex(PLANNER_TOKEN),
        sha256_hex(NEW_TOKEN)
    );
    std::fs::write(&config, &edited).unwrap();
    settle("the new token", &mut || initialize_status(NEW_TOKEN) == 200);
    let mut reviewer = server.session(NEW_TOKEN);
    assert_eq!(tool_names(&mut reviewer), ["text.slugify"]);
    let mut planner = server.session(PLANNER_TOKEN);
    settle("the planner's new rule", &mut || tool_names(&mut planner).iter().all(|t| t.starts_with("math.")));

    // A broken edit: the last good configuration keeps serving, tokens and policy alike.
    std::fs::write(&config, format!("{edited}\n[[token]]\nagent = \"\"\n")).unwrap();
    std::thread::sleep(Duration::from_millis(800));
    assert_eq!(initialize_status(NEW_TOKEN), 200, "the broken edit took no token away");
    assert_eq!(tool_names(&mut reviewer), ["text.slugify"]);

    // The reviewer's token is taken out: its open session is refused from its next request.
    let without_reviewer = edited.split("[[token]]\nagent = \"reviewer\"").next().unwrap();
    std::fs::write(&config, without_reviewer).unwrap();
    settle("taking the token out", &mut || initialize_status(NEW_TOKEN) == 401);
    let refused = reviewer.post(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/list" }));
    assert_eq!(refused.status, 401, "{refused:?}");
    assert_eq!(initialize_status(PLANNER_TOKEN), 200, "the others' tokens stay");
}

/// Over HTTP an agent over its quota gets `429` with `Retry-After` and a JSON-RPC error;
/// the other agent goes on, and the refusals are counted in `/metrics`.
#[test]
fn an_agent_over_its_quota_gets_429_with_retry_after_and_the_other_is_served() {
    let (tools, dir, config) = two_agents();
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, format!("{text}\n[[quota]]\nagent = \"planner\"\ncalls_per_minute = 2\n")).unwrap();
    let server = Server::start(&config, &tools, "0", &[]).unwrap();
    server.wait_until_ready();
    let mut planner = server.session(PLANNER_TOKEN);
    let mut coder = server.session(CODER_TOKEN);
    crate::agents::clear_of_a_minute_boundary();
    for _ in 0..2 {
        let answer = planner.call("math.add", &json!({ "numbers": [1, 2] }));
        assert_eq!(answer["result"]["structuredContent"]["value"], 3.0, "{answer}");
    }
    let refused = planner.post(&call_request(50, "math.add", &json!({ "numbers": [1] })));
    assert_eq!(refused.status, 429, "{refused:?}");
    let retry_after: u64 = refused.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&retry_after), "{retry_after}");
    let error: Value = serde_json::from_slice(&refused.body).unwrap();
    assert_eq!((error["id"].clone(), error["error"]["code"].clone()), (json!(50), json!(-32000)), "{error}");
    assert!(error["error"]["message"].as_str().unwrap().contains("2 calls per minute"), "{error}");
    assert!(tool_names(&mut planner).len() > 1, "listing is no call: it is served");
    let answer = coder.call("text.slugify", &json!({ "text": "Not Slowed" }));
    assert_eq!(answer["result"]["structuredContent"]["slug"], "not-slowed", "{answer}");
    let metrics = scrape(&server.addr, Some(PLANNER_TOKEN)).expect("metrics");
    let refusals = metrics.iter().find(|(name, labels, _)| {
        name == "toolhost_calls_total" && labels["outcome"] == "quota_exceeded" && labels["tool"] == "math/add"
    });
    assert_eq!(refusals.map(|(_, _, value)| *value), Some(1.0), "{metrics:?}");
    let started = Instant::now();
    while !audit_outcomes(dir.path()).contains(&("planner".into(), "math.add".into(), "quota_exceeded".into())) {
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", audit_outcomes(dir.path()));
        std::thread::sleep(Duration::from_millis(5));
    }
}
