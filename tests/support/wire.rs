//! Raw MCP clients on the wire, for benchmarks and for checks an SDK client would never
//! make: JSON-RPC lines over a child's stdin/stdout, and HTTP/1.1 requests over one
//! keep-alive TCP connection with the operating system's default socket options (Nagle's
//! algorithm on, delayed ACKs), as an ordinary client has them.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

/// The protocol revision the raw clients speak.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// An `initialize` request with id 0.
pub fn initialize_request() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": { "name": "toolhost-wire", "version": "0" },
        },
    })
}

/// The `notifications/initialized` notification.
pub fn initialized_notification() -> Value {
    json!({ "jsonrpc": "2.0", "method": "notifications/initialized" })
}

/// A `tools/call` request.
pub fn call_request(id: u64, name: &str, arguments: &Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } })
}

/// An MCP server on a child's stdio, after the initialize handshake.
pub struct StdioSession {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    notifications: Vec<Value>,
}

impl StdioSession {
    /// Starts `command` with piped stdin and stdout and completes the handshake.
    pub fn start(command: Command) -> StdioSession {
        StdioSession::try_start(command).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`StdioSession::start`], saying why it failed rather than panicking.
    pub fn try_start(mut command: Command) -> Result<StdioSession, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {command:?}: {e}"))?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut session = StdioSession { child, stdin, stdout, next_id: 1, notifications: Vec::new() };
        let mut line = String::new();
        let handshake = session.stdin.write_all(format!("{}\n", initialize_request()).as_bytes());
        match handshake.and_then(|()| session.stdout.read_line(&mut line)) {
            Ok(read) if read > 0 => {}
            Ok(_) => return Err("the server closed its stdout before answering initialize".into()),
            Err(e) => return Err(format!("the server went away during the handshake: {e}")),
        }
        let reply: Value = serde_json::from_str(&line).map_err(|e| format!("not JSON ({e}): {line}"))?;
        if reply.get("result").is_none() {
            return Err(format!("initialize failed: {reply}"));
        }
        session.send(&initialized_notification());
        Ok(session)
    }

    /// Writes one message as one line.
    pub fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write to the server");
        self.stdin.flush().expect("flush to the server");
    }

    /// Reads the next line as a message.
    pub fn receive(&mut self) -> Value {
        let mut line = String::new();
        let read = self.stdout.read_line(&mut line).expect("read from the server");
        assert!(read > 0, "the server closed its stdout");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
    }

    /// Calls a tool and returns the response (skipping notifications).
    pub fn call(&mut self, name: &str, arguments: &Value) -> Value {
        self.request("tools/call", json!({ "name": name, "arguments": arguments }))
    }

    /// Sends a request and returns its response; the notifications that came first are
    /// kept for [`StdioSession::notifications`].
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        loop {
            let message = self.receive();
            if message.get("id") == Some(&json!(id)) {
                return message;
            }
            if message.get("id").is_none() {
                self.notifications.push(message);
            }
        }
    }

    /// The notifications received while waiting for responses, oldest first.
    pub fn notifications(&self) -> &[Value] {
        &self.notifications
    }

    /// Makes `calls` calls keeping `in_flight` requests outstanding, and returns how long
    /// they took. A writer thread sends while this thread reads.
    pub fn pipelined(&mut self, name: &str, arguments: &Value, calls: u64, in_flight: u64) -> Duration {
        let (credit_tx, credit_rx) = std::sync::mpsc::sync_channel::<()>(in_flight as usize);
        for _ in 0..in_flight {
            credit_tx.send(()).expect("credit");
        }
        let first_id = self.next_id;
        self.next_id += calls;
        let requests: Vec<String> = (0..calls)
            .map(|i| {
                let mut line = call_request(first_id + i, name, arguments).to_string();
                line.push('\n');
                line
            })
            .collect();
        let started = std::time::Instant::now();
        std::thread::scope(|scope| {
            let stdin = &mut self.stdin;
            scope.spawn(move || {
                for request in requests {
                    if credit_rx.recv().is_err() {
                        return;
                    }
                    stdin.write_all(request.as_bytes()).expect("write to the server");
                    stdin.flush().expect("flush to the server");
                }
            });
            let mut answered = 0;
            let mut line = String::new();
            while answered < calls {
                line.clear();
                let read = self.stdout.read_line(&mut line).expect("read from the server");
                assert!(read > 0, "the server closed its stdout");
                if line.contains("\"id\"") && line.contains("\"result\"") {
                    answered += 1;
                    let _ = credit_tx.send(());
                }
            }
        });
        started.elapsed()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for StdioSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP response: status, headers (names lower-cased) and the JSON-RPC messages of
/// its body (a JSON body, or the `data:` events of a server-sent event stream).
#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The JSON-RPC messages the body carries.
    pub fn messages(&self) -> Vec<Value> {
        let text = String::from_utf8_lossy(&self.body);
        if self.header("content-type").is_some_and(|t| t.starts_with("text/event-stream")) {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        } else {
            serde_json::from_str(&text).into_iter().collect()
        }
    }
}

/// An MCP session over Streamable HTTP on one keep-alive connection.
pub struct HttpSession {
    stream: BufReader<TcpStream>,
    authority: String,
    path: String,
    /// `Authorization` header value, when the server wants one.
    pub authorization: Option<String>,
    /// The `Mcp-Session-Id` the server gave at initialize.
    pub session: Option<String>,
    next_id: u64,
}

impl HttpSession {
    /// Connects to `authority` (`host:port`) without the handshake.
    pub fn connect(authority: &str, path: &str) -> HttpSession {
        let stream = TcpStream::connect(authority).unwrap_or_else(|e| panic!("connect to {authority}: {e}"));
        stream.set_read_timeout(Some(Duration::from_secs(30))).expect("read timeout");
        HttpSession {
            stream: BufReader::new(stream),
            authority: authority.to_owned(),
            path: path.to_owned(),
            authorization: None,
            session: None,
            next_id: 1,
        }
    }

    /// Connects and completes the initialize handshake.
    pub fn start(authority: &str, path: &str, authorization: Option<&str>) -> HttpSession {
        let mut session = HttpSession::connect(authority, path);
        session.authorization = authorization.map(str::to_owned);
        let response = session.post(&initialize_request());
        assert_eq!(response.status, 200, "initialize: {response:?}");
        session.session = response.header("mcp-session-id").map(str::to_owned);
        let response = session.post(&initialized_notification());
        assert!(response.status == 202 || response.status == 200, "initialized: {response:?}");
        session
    }

    /// Sends one request with `method` and body, and reads the whole response.
    pub fn request(&mut self, method: &str, body: Option<&[u8]>, extra_headers: &[(&str, &str)]) -> HttpResponse {
        self.write_request(method, body, extra_headers);
        read_response(&mut self.stream)
    }

    /// POSTs a message without reading the answer (a client about to go away, or one
    /// that reads it later with [`HttpSession::response`]).
    pub fn send_only(&mut self, message: &Value) {
        self.write_request("POST", Some(message.to_string().as_bytes()), &[]);
    }

    /// Waits until `GET /ready` at `authority` (with `authorization`, if any) answers
    /// 200, failing past `within`; says how long that took.
    pub fn wait_until_ready(authority: &str, authorization: Option<&str>, within: Duration) -> Duration {
        let started = std::time::Instant::now();
        loop {
            let mut probe = HttpSession::connect(authority, "/ready");
            probe.authorization = authorization.map(str::to_owned);
            if probe.request("GET", None, &[]).status == 200 {
                return started.elapsed();
            }
            assert!(started.elapsed() < within, "{authority} not ready within {within:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Reads the whole response to the request sent last.
    pub fn response(&mut self) -> HttpResponse {
        read_response(&mut self.stream)
    }

    fn write_request(&mut self, method: &str, body: Option<&[u8]>, extra_headers: &[(&str, &str)]) {
        let mut head = format!(
            "{method} {} HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n",
            self.path, self.authority
        );
        if let Some(body) = body {
            head.push_str(&format!("content-type: application/json\r\ncontent-length: {}\r\n", body.len()));
        }
        if let Some(session) = &self.session {
            head.push_str(&format!("mcp-session-id: {session}\r\nmcp-protocol-version: {PROTOCOL_VERSION}\r\n"));
        }
        if let Some(authorization) = &self.authorization {
            head.push_str(&format!("authorization: {authorization}\r\n"));
        }
        for (name, value) in extra_headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut request = head.into_bytes();
        request.extend_from_slice(body.unwrap_or_default());
        // One write, as a client with its request in one buffer does.
        self.stream.get_mut().write_all(&request).expect("send the request");
    }

    /// POSTs a JSON-RPC message.
    pub fn post(&mut self, message: &Value) -> HttpResponse {
        self.request("POST", Some(message.to_string().as_bytes()), &[])
    }

    /// Calls a tool and returns the JSON-RPC response.
    pub fn call(&mut self, name: &str, arguments: &Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let response = self.post(&call_request(id, name, arguments));
        assert_eq!(response.status, 200, "tools/call: {response:?}");
        response
            .messages()
            .into_iter()
            .find(|message| message.get("id") == Some(&json!(id)))
            .unwrap_or_else(|| panic!("no response to call {id}: {response:?}"))
    }
}

/// Reads one HTTP/1.1 response: `Content-Length` or chunked bodies.
fn read_response(stream: &mut BufReader<TcpStream>) -> HttpResponse {
    let mut line = String::new();
    stream.read_line(&mut line).expect("status line");
    let status = line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("{line:?}"));
    let mut headers = Vec::new();
    loop {
        line.clear();
        stream.read_line(&mut line).expect("header line");
        let trimmed = line.trim_end();
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let header = |name: &str| headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone());
    let mut body = Vec::new();
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        loop {
            line.clear();
            stream.read_line(&mut line).expect("chunk size");
            let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or("0"), 16).expect("chunk size");
            let mut chunk = vec![0; size + 2];
            stream.read_exact(&mut chunk).expect("chunk");
            if size == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(length) = header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        body.resize(length, 0);
        stream.read_exact(&mut body).expect("body");
    }
    HttpResponse { status, headers, body }
}

/// The `p`-th percentile (0..=100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// Calls/s of `sessions` keep-alive sessions with the server at `address`, each making
/// `calls` calls of `tool` at once with the others, each on its own connection.
pub fn http_sessions_rate(address: &str, sessions: usize, calls: usize, tool: &str, arguments: &Value) -> f64 {
    let mut open: Vec<HttpSession> = (0..sessions).map(|_| HttpSession::start(address, "/mcp", None)).collect();
    let started = std::time::Instant::now();
    std::thread::scope(|scope| {
        for session in &mut open {
            scope.spawn(move || {
                for _ in 0..calls {
                    let response = session.call(tool, arguments);
                    assert!(response.get("result").is_some(), "{response}");
                }
            });
        }
    });
    (sessions * calls) as f64 / started.elapsed().as_secs_f64()
}
