//! `toolhost serve`: the MCP server, driven over stdio and Streamable HTTP by the official
//! MCP Python SDK (`tests/mcp/client.py`, in a venv the suite creates), plus raw-wire
//! checks a well-behaved SDK client would never make: a probe of the stateless protocol
//! revision, a foreign `Host` header, stdin closing.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use toolhost_tests::{ToolsDir, component, mcp_python, mcp_typescript_client, spawn_http_server, toolhost_bin};

/// Runs `client.py MODE` against `toolhost serve` over a tools directory holding `math`,
/// `hostile` and `text`; the client replaces `text/text.wasm` with the `json` component
/// mid-session. Returns what the client observed.
fn drive_with_python_sdk(mode: &str) -> Value {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.install("hostile", "hostile", "hostile");
    let target = tools.install("text", "text", "text");
    let json = component("json");
    run_python_client(
        "client.py",
        &[mode.as_ref(), toolhost_bin().as_ref(), tools.path().as_ref(), json.as_ref(), target.as_ref()],
    )
}

/// Runs `tests/mcp/SCRIPT ARGS` with the venv's Python (the official SDK) and returns
/// the JSON object it printed of what it saw.
fn run_python_client(script: &str, args: &[&std::ffi::OsStr]) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp").join(script);
    let output = Command::new(mcp_python()).arg(&path).args(args).output().expect("run the Python MCP client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{script} {args:?} failed ({}):\n{stderr}\n{stdout}", output.status);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{script} printed no JSON ({e}): {stdout}"))
}

/// What both transports must show the SDK client.
fn assert_session(seen: &Value) {
    let mode = seen["transport"].as_str().unwrap_or("?");
    assert_eq!(seen["server_name"], "toolhost", "{mode}");
    assert_eq!(seen["list_changed_capability"], true, "{mode}: the server announces tools.listChanged");
    assert!(seen["protocol_version"].as_str().is_some_and(|v| v.len() == 10), "{mode}: {}", seen["protocol_version"]);

    // tools/list: MCP names, the full name as the title, both schemas.
    let tools = seen["tools"].as_object().expect("tools");
    let mut names: Vec<&String> = tools.keys().collect();
    names.sort();
    for expected in ["math.add", "math.divide", "math.evaluate", "hostile.fail", "text.slugify", "text.word_count"] {
        assert!(tools.contains_key(expected), "{mode}: {expected} in {names:?}");
    }
    let add = &tools["math.add"];
    assert_eq!(add["title"], "math/add", "{mode}");
    assert!(add["description"].as_str().is_some_and(|d| !d.is_empty()), "{mode}: {add}");
    assert_eq!(add["input_schema"]["type"], "object", "{mode}: {add}");
    assert_eq!(add["input_schema"]["required"], json!(["numbers"]), "{mode}: {add}");
    assert_eq!(add["output_schema"]["type"], "object", "{mode}: {add}");

    // tools/call: structured content plus a text block.
    assert_eq!(seen["add"]["is_error"], false, "{mode}: {}", seen["add"]);
    assert_eq!(seen["add"]["structured"], json!({ "value": 6.0 }), "{mode}");
    assert_eq!(serde_json::from_str::<Value>(seen["add"]["text"].as_str().unwrap()).unwrap(), json!({ "value": 6.0 }));
    assert_eq!(seen["add_full_name"]["structured"], json!({ "value": 4.0 }), "{mode}: full names resolve too");

    // Tool failures are results with isError and the kind of failure, not protocol errors.
    let error_text = |key: &str| {
        assert_eq!(seen[key]["is_error"], true, "{mode} {key}: {}", seen[key]);
        assert_eq!(seen[key]["structured"], Value::Null, "{mode} {key}");
        seen[key]["text"].as_str().unwrap().to_owned()
    };
    let divide = error_text("divide_by_zero");
    assert!(divide.starts_with("input_invalid: ") && divide.contains("division by zero"), "{mode}: {divide}");
    let fail = error_text("fail");
    assert!(fail.starts_with("failed: ") && fail.contains("told to fail"), "{mode}: {fail}");
    let trap = error_text("trap");
    assert!(trap.starts_with("trap: "), "{mode}: {trap}");
    let invalid = error_text("invalid_input");
    assert!(invalid.starts_with("input_invalid: ") && invalid.contains("/numbers"), "{mode}: {invalid}");

    // A guest printing 4 KiB to its stdout neither fails nor reaches the protocol stream.
    assert_eq!(seen["stdout_flood"]["is_error"], false, "{mode}: {}", seen["stdout_flood"]);
    assert_eq!(seen["stream_errors"], json!([]), "{mode}: nothing but JSON-RPC on the stream");

    // An unknown tool is a protocol error naming the close match.
    let unknown = &seen["unknown"];
    assert_eq!(unknown["raised"], true, "{mode}: {unknown}");
    assert_eq!(unknown["code"], -32602, "{mode}: {unknown}");
    assert!(unknown["message"].as_str().unwrap().contains("`math.add`"), "{mode}: {unknown}");

    // Replacing text/text.wasm with the json component reaches the client as
    // notifications/tools/list_changed, and the next tools/list shows the new tools.
    assert_eq!(seen["list_changed_received"], true, "{mode}: notifications {}", seen["notifications"]);
    let after: Vec<&str> = seen["tools_after_change"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(after.contains(&"text.patch") && after.contains(&"text.get"), "{mode}: {after:?}");
    assert!(!after.contains(&"text.slugify"), "{mode}: the replaced component's tools are gone: {after:?}");
    assert!(after.contains(&"math.add"), "{mode}: {after:?}");
    assert_eq!(seen["add_after_change"]["structured"], json!({ "value": 9.0 }), "{mode}");
}

#[test]
fn the_python_sdk_client_works_over_stdio() {
    assert_session(&drive_with_python_sdk("stdio"));
}

#[test]
fn the_python_sdk_client_works_over_streamable_http() {
    let seen = drive_with_python_sdk("http");
    assert!(seen["url"].as_str().unwrap().starts_with("http://127.0.0.1:"), "loopback by default: {}", seen["url"]);
    assert_session(&seen);
}

/// Runs `client.mjs ARGS` (the official TypeScript SDK) and returns what it observed.
fn drive_with_typescript_sdk(args: &[&str]) -> Value {
    let client = mcp_typescript_client();
    let output = Command::new("node").arg(client.join("client.mjs")).args(args).output().expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client.mjs {args:?} failed ({}):\n{}\n{stdout}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("client.mjs printed no JSON ({e}): {stdout}"))
}

/// Tools whose schemas the TypeScript SDK is strict about: `json` declares
/// `"document": true`, `shapes` has boolean sub-schemas and a string input.
fn tools_for_the_typescript_sdk() -> ToolsDir {
    let tools = ToolsDir::with_examples();
    tools.install("shapes", "shapes", "shapes");
    tools
}

/// What the TypeScript SDK client must see on either transport: every tool (its
/// `listTools()` rejects the whole list if one definition breaks its schemas), and calls
/// that answer, including a wrapped input and a tool failure.
fn assert_typescript_session(seen: &Value, expected_tools: &Value) {
    let mode = seen["mode"].as_str().unwrap_or("?");
    assert_eq!(seen["server"]["name"], "toolhost", "{mode}");
    let listed: Vec<&String> = seen["tools"].as_object().unwrap().keys().collect();
    let expected: Vec<&str> =
        expected_tools["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    let mut listed_sorted: Vec<&str> = listed.iter().map(|s| s.as_str()).collect();
    listed_sorted.sort_unstable();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort_unstable();
    assert_eq!(listed_sorted, expected_sorted, "{mode}: every tool is listed");
    assert!(listed_sorted.contains(&"json.get") && listed_sorted.contains(&"shapes.keep"), "{mode}");
    assert_eq!(seen["tools"]["json.patch"]["input_schema"]["properties"]["document"], json!({}), "{mode}");
    // JavaScript has one number type: the SDK hands 6.0 back as 6.
    assert_eq!(seen["add"], json!({ "is_error": false, "structured": { "value": 6 }, "text": "{\"value\":6.0}" }));
    assert_eq!(seen["get"]["structured"], json!({ "found": true, "value": 20 }), "{mode}");
    assert_eq!(seen["shout"]["text"], "QUIET", "{mode}: a string output travels as its text, unquoted");
    assert_eq!(seen["divide_by_zero"]["is_error"], true, "{mode}");
    assert!(seen["divide_by_zero"]["text"].as_str().unwrap().starts_with("input_invalid: "), "{mode}");
}

#[test]
fn the_typescript_sdk_client_lists_and_calls_over_stdio() {
    let tools = tools_for_the_typescript_sdk();
    let bin = toolhost_bin();
    let seen = drive_with_typescript_sdk(&["stdio", bin.to_str().unwrap(), tools.path().to_str().unwrap()]);
    assert_typescript_session(&seen, &expected_mcp_tools(&tools));
}

#[test]
fn the_typescript_sdk_client_lists_and_calls_over_streamable_http() {
    let tools = tools_for_the_typescript_sdk();
    let server = HttpServer::start(&tools, &[]);
    let url = format!("http://{}/mcp", server.addr);
    let seen = drive_with_typescript_sdk(&["http", &url]);
    assert_typescript_session(&seen, &expected_mcp_tools(&tools));
}

/// The MCP tool list `toolhost export --format mcp` prints for a tools directory.
fn expected_mcp_tools(tools: &ToolsDir) -> Value {
    let output = Command::new(toolhost_bin())
        .args(["export", "--format", "mcp"])
        .arg(tools.path())
        .output()
        .expect("run toolhost export");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("export prints JSON")
}

/// `toolhost serve` over stdio, as a child process whose stdin and stdout the test holds.
struct StdioServer {
    child: Child,
    stdin: Option<std::process::ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl StdioServer {
    fn start(tools: &ToolsDir) -> StdioServer {
        let mut child = Command::new(toolhost_bin())
            .arg("serve")
            .arg(tools.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start toolhost serve");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        StdioServer { child, stdin, lines }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// `initialize` as a raw client, answered.
    fn initialize(&mut self) {
        self.send(json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": { "name": "raw", "version": "0" } },
        }));
        assert_eq!(self.receive()["id"], 1);
    }

    /// How the server exited, which it must within 30 s (after its stdin closed).
    fn wait_for_exit(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "toolhost serve still runs 30 s after stdin closed");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The next line on stdout, which must be one JSON-RPC message.
    fn receive(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(30)).expect("an answer within 30 s, never a hang");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line}"))
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A client that probes the stateless revision (2026-07-28) with `server/discover` first
/// gets the discovery result (the versions and capabilities served); a probe without the
/// request metadata that revision requires gets an invalid-params error naming it; and
/// the classic lifecycle still works after both.
#[test]
fn a_server_discover_probe_gets_an_answer_and_initialize_still_works() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let mut server = StdioServer::start(&tools);

    server.send(json!({ "jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": { "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "raw", "version": "0" },
    } } }));
    let discovered = server.receive();
    assert_eq!(discovered["id"], 1, "{discovered}");
    let result = &discovered["result"];
    assert_eq!(result["resultType"], "complete", "{discovered}");
    let versions: Vec<&str> =
        result["supportedVersions"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    for version in ["2026-07-28", "2025-11-25", "2025-06-18", "2024-11-05"] {
        assert!(versions.contains(&version), "{version} in {versions:?}");
    }
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true, "{discovered}");

    server.send(json!({ "jsonrpc": "2.0", "id": 9, "method": "server/discover", "params": {} }));
    let refused = server.receive();
    assert_eq!(refused["id"], 9, "{refused}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("io.modelcontextprotocol/protocolVersion"), "{message}");

    server.send(json!({
        "jsonrpc": "2.0", "id": 2, "method": "initialize",
        "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": { "name": "raw", "version": "0" } },
    }));
    let initialized = server.receive();
    assert_eq!(initialized["id"], 2, "{initialized}");
    assert_eq!(initialized["result"]["protocolVersion"], "2025-06-18", "{initialized}");
    assert_eq!(initialized["result"]["capabilities"]["tools"]["listChanged"], true, "{initialized}");
    server.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    server.send(json!({ "jsonrpc": "2.0", "id": 3, "method": "tools/call",
                        "params": { "name": "math.add", "arguments": { "numbers": [20, 22] } } }));
    // While the server starts, `list_changed` may come first, as components load.
    let called = std::iter::repeat_with(|| server.receive())
        .find(|message| message["method"] != "notifications/tools/list_changed")
        .unwrap();
    assert_eq!(called["id"], 3, "{called}");
    assert_eq!(called["result"]["structuredContent"], json!({ "value": 42.0 }), "{called}");
}

/// The stdio server exits by itself once its client closes stdin.
#[test]
fn the_stdio_server_exits_when_stdin_closes() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let mut server = StdioServer::start(&tools);
    server.initialize();
    drop(server.stdin.take());
    let status = server.wait_for_exit();
    assert!(status.success(), "a clean exit: {status}");
}

/// A call still running when the client closes stdin gets its answer before the server
/// exits: calls run outside the SDK's service loop get the same grace as its handlers.
#[test]
fn a_call_in_flight_when_stdin_closes_still_gets_its_answer() {
    let tools = ToolsDir::new();
    tools.install("hostile", "hostile", "hostile");
    tools.manifest("hostile", "hostile", "[limits]\nfuel = 1_000_000_000_000\ntimeout = \"60s\"\n");
    let mut server = StdioServer::start(&tools);
    server.initialize();
    server.send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }));
    // Long enough to outlast its first epoch tick (it goes on on a task of its own),
    // short enough to end well within the grace.
    let iterations: u64 = 100_000_000;
    server.send(json!({
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": { "name": "hostile.busy", "arguments": { "iterations": iterations } },
    }));
    drop(server.stdin.take());
    let answer = loop {
        let message = server.receive();
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["result"]["structuredContent"], json!({ "sum": iterations * (iterations - 1) / 2 }), "{answer}");
    server.wait_for_exit();
}

/// `toolhost serve --http` on a picked port; stops when dropped.
struct HttpServer {
    child: Child,
    addr: String,
}

impl HttpServer {
    fn start(tools: &ToolsDir, extra: &[&str]) -> HttpServer {
        let mut command = Command::new(toolhost_bin());
        command.arg("serve").arg(tools.path()).args(["--http", "0"]).args(extra);
        let (child, addr) = spawn_http_server(command).unwrap_or_else(|e| panic!("the server did not start: {e}"));
        HttpServer { child, addr }
    }

    /// POSTs an `initialize` request with the given `Host` header; returns the status code.
    fn initialize_with_host(&self, host: &str) -> u16 {
        self.initialize_with_headers(&format!("Host: {host}\r\n"))
    }

    /// The status of an `initialize` POST with `headers` (each ending in CRLF).
    fn initialize_with_headers(&self, headers: &str) -> u16 {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": { "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": { "name": "raw", "version": "0" } },
        })
        .to_string();
        self.status_of(&format!(
            "POST /mcp HTTP/1.1\r\n{headers}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    }

    /// The status of a `GET path` naming `host`.
    fn get_with_host(&self, path: &str, host: &str) -> u16 {
        self.status_of(&format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"))
    }

    /// Sends `request` as it is; the answer's status.
    fn status_of(&self, request: &str) -> u16 {
        let mut stream = TcpStream::connect(&self.addr).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut status_line = String::new();
        BufReader::new(stream.try_clone().unwrap()).read_line(&mut status_line).expect("a status line");
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        status_line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("not an HTTP status line: {status_line:?}"))
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// HTTP binds loopback and answers only requests that name a loopback host (or one the
/// operator allowed), so a web page cannot reach it through DNS rebinding.
#[test]
fn the_http_server_binds_loopback_and_checks_the_host_header() {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    let server = HttpServer::start(&tools, &[]);
    assert!(server.addr.starts_with("127.0.0.1:"), "{}", server.addr);
    let port = server.addr.rsplit_once(':').unwrap().1.to_owned();
    assert_eq!(server.initialize_with_host(&server.addr), 200);
    assert_eq!(server.initialize_with_host(&format!("localhost:{port}")), 200);
    assert_eq!(server.initialize_with_host(&format!("attacker.example:{port}")), 403);
    assert_eq!(server.initialize_with_host("tools.internal"), 403);
    // One check in front of every route that answers with data: /metrics names tools.
    assert_eq!(server.get_with_host("/metrics", &server.addr), 200);
    assert_eq!(server.get_with_host("/metrics", &format!("attacker.example:{port}")), 403);
    assert_eq!(server.get_with_host("/metrics", &format!("localhost.attacker.example:{port}")), 403);
    // A page of another site is refused even when it names the right host.
    let from = |origin: &str| format!("Host: {}\r\nOrigin: {origin}\r\n", server.addr);
    assert_eq!(server.initialize_with_headers(&from(&format!("http://localhost:{port}"))), 200);
    assert_eq!(server.initialize_with_headers(&from("http://attacker.example")), 403);
    assert_eq!(server.initialize_with_headers(&from("null")), 403);
    // Probes say only counts, for balancers that reach the server by any address
    // (`/ready` is 503 while the first load runs, never 403).
    assert!([200, 503].contains(&server.get_with_host("/ready", "10.0.0.7:8080")));
    assert_eq!(server.get_with_host("/health", "10.0.0.7:8080"), 200);
    drop(server);

    let server = HttpServer::start(&tools, &["--allow-host", "tools.internal"]);
    assert_eq!(server.initialize_with_host("tools.internal"), 200, "an allowed host");
    assert_eq!(server.initialize_with_host("attacker.example"), 403);
}

/// Runs `approval.py TRANSPORT MODE` (the official Python SDK's `Client`) against a
/// server whose `math/divide` requires approval, and returns what the client saw.
fn drive_approval(transport: &str, mode: &str) -> Value {
    let tools = ToolsDir::new();
    tools.install("math", "math", "math");
    tools.manifest("math", "math", "[tools.divide.policy]\nrequires_approval = true\nrisk = \"high\"\n");
    run_python_client(
        "approval.py",
        &[transport.as_ref(), mode.as_ref(), toolhost_bin().as_ref(), tools.path().as_ref()],
    )
}

/// Approval reaches the person behind the client and only an explicit yes runs the call;
/// progress reports arrive in order, the last one covering the whole.
fn assert_approval_and_progress(seen: &Value) {
    assert_eq!(seen["approved"]["is_error"], false, "{}", seen["approved"]);
    assert_eq!(seen["approved"]["structured"], json!({ "value": 2.0 }));
    let denied = |key: &str, why: &str| {
        let text = seen[key]["text"].as_str().unwrap_or_default();
        assert_eq!(seen[key]["is_error"], true, "{key}: {}", seen[key]);
        assert!(text.starts_with("permission_denied: ") && text.contains(why), "{key}: {text}");
    };
    denied("declined", "the person asked declined");
    denied("cancelled", "dismissed the question");
    denied("no_elicitation", "did not declare the elicitation capability");
    assert_eq!(seen["unasked"]["structured"], json!({ "value": 3.0 }));

    let asked = seen["asked"].as_array().expect("questions");
    assert_eq!(asked.len(), 3, "one question per call needing approval: {asked:?}");
    let message = asked[0]["message"].as_str().unwrap();
    assert!(message.starts_with("local") && message.contains(" asks to run math/divide (risk: high)"), "{message}");
    assert!(message.contains(r#""dividend":6"#), "the question shows the input: {message}");
    assert_eq!(asked[0]["schema"]["properties"]["approve"]["type"], "boolean");

    assert_eq!(seen["primes"]["structured"], json!({ "count": 664_579, "largest": 9_999_991 }), "{}", seen["primes"]);
    let reports = seen["progress"].as_array().expect("progress reports");
    assert!(!reports.is_empty(), "count_primes reports progress");
    let done: Vec<f64> = reports.iter().map(|r| r["progress"].as_f64().unwrap()).collect();
    assert!(done.windows(2).all(|w| w[0] < w[1]), "progress increases: {done:?}");
    let last = reports.last().unwrap();
    assert_eq!(last["progress"], 10_000_000.0, "the last report arrives before the result: {reports:?}");
    assert_eq!(last["total"], 10_000_000.0);
    assert_eq!(last["message"], "sieved the numbers below 10000000");
}

#[test]
fn approval_and_progress_reach_the_python_sdk_over_stdio() {
    let seen = drive_approval("stdio", "legacy");
    assert_approval_and_progress(&seen);
}

#[test]
fn approval_and_progress_reach_the_python_sdk_in_an_http_session() {
    let seen = drive_approval("http", "legacy");
    assert_approval_and_progress(&seen);
}

/// The stateless revision end to end: discovery instead of `initialize`, approval by
/// `input_required` and a retry carrying the answer.
#[test]
fn the_python_sdk_speaks_the_stateless_revision_over_http() {
    let seen = drive_approval("http", "2026-07-28");
    assert_eq!(seen["protocol_version"], "2026-07-28");
    assert_approval_and_progress(&seen);
}
