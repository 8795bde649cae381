//! The Streamable HTTP server under abuse, against the real `toolhost serve --http`
//! process: bodies and headers past their size limits, sessions and streams past their
//! caps, sessions left idle, clients that send a byte at a time or never finish, more
//! connections than the server serves at once, and a flood of a thousand connections,
//! through all of which a well-behaved client is answered. Each server gets small
//! limits in its `toolhost.toml` (`[http]`) so that the tests run in seconds.

use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;
use toolhost_tests::wire::{HttpSession, PROTOCOL_VERSION, call_request, initialize_request};
use toolhost_tests::{ToolsDir, spawn_http_server, toolhost_bin};

/// `toolhost serve --http 0` over the math tools with `http` as its `[http]` table;
/// killed when dropped.
struct Server {
    child: Child,
    addr: String,
    _config: TempDir,
    _tools: ToolsDir,
}

impl Server {
    fn start(http: &str) -> Server {
        let tools = ToolsDir::new();
        tools.install("math", "math", "math");
        let config = tempfile::tempdir().unwrap();
        let path = config.path().join("toolhost.toml");
        std::fs::write(&path, format!("[http]\n{http}\n")).unwrap();
        let mut command = Command::new(toolhost_bin());
        command.arg("--config").arg(&path).arg("serve").arg(tools.path()).args(["--http", "0"]);
        let (child, addr) = spawn_http_server(command).unwrap_or_else(|e| panic!("the server did not start: {e}"));
        Server { child, addr, _config: config, _tools: tools }
    }

    fn session(&self) -> HttpSession {
        HttpSession::start(&self.addr, "/mcp", None)
    }

    /// `session` on a new connection (a kept-alive one may have idled past the header
    /// timeout, which closes it).
    fn rejoin(&self, session: &HttpSession) -> HttpSession {
        let mut again = HttpSession::connect(&self.addr, "/mcp");
        again.session = session.session.clone();
        again
    }

    /// A TCP connection to the server, reads timing out after `read_timeout`.
    fn connect(&self, read_timeout: Duration) -> TcpStream {
        let stream = TcpStream::connect(&self.addr).unwrap_or_else(|e| panic!("connect to {}: {e}", self.addr));
        stream.set_read_timeout(Some(read_timeout)).unwrap();
        stream
    }

    /// Asserts that the server answers `GET /health` on a new connection.
    fn assert_serving(&self) {
        let answer = HttpSession::connect(&self.addr, "/health").request("GET", None, &[]);
        assert_eq!(answer.status, 200, "{answer:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn add(session: &mut HttpSession, numbers: Value) -> Value {
    let answer = session.call("math.add", &json!({ "numbers": numbers }));
    answer["result"]["structuredContent"]["value"].clone()
}

/// Reads a response's status line and headers (the body, if any, stays unread): the
/// status and the headers, names lower-cased, or `None` when the connection closed
/// (or was reset) first.
fn read_head(stream: &mut TcpStream) -> Option<(u16, Vec<(String, String)>)> {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    match reader.read_line(&mut line) {
        Ok(0) | Err(_) => return None,
        Ok(_) => {}
    }
    let status = line.split_whitespace().nth(1)?.parse().ok()?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).ok()? == 0 || line.trim_end().is_empty() {
            break;
        }
        if let Some((name, value)) = line.trim_end().split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    Some((status, headers))
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// Reads until the server closes the connection; how long that took, or `None` if it
/// stayed open for `patience` (the stream's read timeout must be shorter).
fn closed_within(stream: &mut TcpStream, patience: Duration) -> Option<Duration> {
    let started = Instant::now();
    let mut buffer = [0u8; 4096];
    while started.elapsed() < patience {
        if closed_on_read(stream, &mut buffer) {
            return Some(started.elapsed());
        }
    }
    None
}

/// One read of `stream`: whether the server has closed it (a read timeout means not yet).
fn closed_on_read(stream: &mut TcpStream, buffer: &mut [u8]) -> bool {
    match stream.read(buffer) {
        Ok(0) => true,
        Ok(_) => false,
        Err(e) => !matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut),
    }
}

/// Whether the server has neither answered nor closed `stream` yet.
fn still_open(stream: &TcpStream) -> bool {
    stream.set_nonblocking(true).unwrap();
    let open = matches!((&*stream).read(&mut [0u8; 1]), Err(e) if e.kind() == ErrorKind::WouldBlock);
    stream.set_nonblocking(false).unwrap();
    open
}

/// A JSON-RPC error response's body: `(id, code, message)`.
fn json_rpc_error(body: &[u8]) -> (Value, i64, String) {
    let body: Value = serde_json::from_slice(body).unwrap_or_else(|e| panic!("not JSON ({e}): {body:?}"));
    let message = body["error"]["message"].as_str().unwrap_or_default().to_owned();
    (body["id"].clone(), body["error"]["code"].as_i64().unwrap_or_default(), message)
}

#[test]
fn a_body_over_the_limit_is_answered_413_and_the_server_keeps_serving() {
    let server = Server::start("max_body_size = \"64 KiB\"");
    let limit = 64 << 10;

    // Declared too large: refused before a byte of the body is read.
    let mut declared = server.connect(Duration::from_secs(5));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n",
        server.addr,
        10 * limit
    );
    declared.write_all(head.as_bytes()).unwrap();
    let mut reader = BufReader::new(declared.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    assert!(status.starts_with("HTTP/1.1 413"), "{status:?}");
    let mut rest = String::new();
    let _ = reader.read_to_string(&mut rest);
    assert!(rest.to_ascii_lowercase().contains("connection: close"), "{rest}");
    let body = rest.split("\r\n\r\n").nth(1).unwrap_or_default();
    let (id, code, message) = json_rpc_error(body.as_bytes());
    assert_eq!((id, code), (Value::Null, -32600), "{message}");
    assert!(message.contains(&format!("larger than {limit} bytes")), "{message}");

    // Sent in chunks with no length declared: refused once the limit is passed.
    let mut chunked = server.connect(Duration::from_secs(5));
    let head = format!(
        "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
         content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n{:x}\r\n",
        server.addr,
        limit + 1
    );
    chunked.write_all(head.as_bytes()).unwrap();
    chunked.write_all(&vec![b' '; limit + 1]).unwrap();
    let (status, _) = read_head(&mut chunked).expect("an answer");
    assert_eq!(status, 413);

    // A body within the limit is served, on the same server.
    let mut session = server.session();
    assert_eq!(add(&mut session, json!([20, 22])), 42.0);
    let padding = "x".repeat(limit / 2);
    let call = json!({ "jsonrpc": "2.0", "id": 5, "method": "tools/call",
                       "params": { "name": "math.add", "arguments": { "numbers": [1] }, "_meta": { "padding": padding } } });
    let answer = session.post(&call);
    assert_eq!(answer.status, 200, "{answer:?}");
    server.assert_serving();
}

#[test]
fn headers_over_the_limit_are_answered_431_and_the_server_keeps_serving() {
    let server = Server::start("max_header_size = \"8 KiB\"");

    // Exactly 8 KiB of headers that do not end: refused once they have arrived. (Had
    // the client sent more, the server would close with bytes unread, and the kernel
    // would reset the connection, answer and all.)
    let mut endless = server.connect(Duration::from_secs(5));
    let mut head = format!("GET /health HTTP/1.1\r\nhost: {}\r\nx-padding: ", server.addr);
    head.push_str(&"a".repeat((8 << 10) - head.len()));
    endless.write_all(head.as_bytes()).unwrap();
    let (status, _) = read_head(&mut endless).expect("an answer before the close");
    assert_eq!(status, 431);
    assert!(closed_within(&mut endless, Duration::from_secs(5)).is_some(), "and the connection closes");

    // A whole request with 32 KiB of headers: 431, or closed (hyper may close before the
    // client's last bytes arrive, and the kernel then resets the connection).
    let mut oversized = server.connect(Duration::from_secs(5));
    let head = format!("GET /health HTTP/1.1\r\nhost: {}\r\nx-padding: {}\r\n\r\n", server.addr, "a".repeat(32 << 10));
    let _ = oversized.write_all(head.as_bytes());
    if let Some((status, _)) = read_head(&mut oversized) {
        assert_eq!(status, 431);
    }

    // Headers within the limit are served.
    let mut fine = HttpSession::connect(&server.addr, "/health");
    let padding = "a".repeat(4 << 10);
    assert_eq!(fine.request("GET", None, &[("x-padding", padding.as_str())]).status, 200);
    let mut session = server.session();
    assert_eq!(add(&mut session, json!([1, 2])), 3.0);
}

#[test]
fn sessions_are_capped_and_a_closed_one_frees_its_place() {
    let server = Server::start("max_sessions = 2");
    let mut first = server.session();
    let mut second = server.session();

    let refused = HttpSession::connect(&server.addr, "/mcp").post(&initialize_request());
    assert_eq!(refused.status, 503, "{refused:?}");
    assert_eq!(refused.header("content-type"), Some("application/json"));
    assert!(refused.header("mcp-session-id").is_none(), "no session was opened");
    let (id, code, message) = json_rpc_error(&refused.body);
    assert_eq!((id, code), (json!(0), -32000), "the initialize request's id: {message}");
    assert!(message.contains("2 MCP sessions are open"), "{message}");

    // The open sessions are unharmed.
    assert_eq!(add(&mut first, json!([1])), 1.0);
    assert_eq!(add(&mut second, json!([2])), 2.0);

    // Closing one makes room for a new one.
    assert_eq!(first.request("DELETE", None, &[]).status, 204);
    let mut third = server.session();
    assert_eq!(add(&mut third, json!([3])), 3.0);
    assert_eq!(first.post(&call_request(9, "math.add", &json!({ "numbers": [1] }))).status, 404);
    assert_eq!(HttpSession::connect(&server.addr, "/mcp").post(&initialize_request()).status, 503, "full again");
    assert_eq!(add(&mut second, json!([4])), 4.0);
}

/// Opens a standalone event stream (`GET /mcp`) of `session` on a connection of its
/// own; returns the connection, or the status it was refused with.
fn open_event_stream(server: &Server, session: &str) -> Result<TcpStream, u16> {
    let mut stream = server.connect(Duration::from_secs(5));
    let head = format!(
        "GET /mcp HTTP/1.1\r\nhost: {}\r\naccept: text/event-stream\r\nmcp-session-id: {session}\r\n\
         mcp-protocol-version: {PROTOCOL_VERSION}\r\n\r\n",
        server.addr
    );
    stream.write_all(head.as_bytes()).unwrap();
    let (status, headers) = read_head(&mut stream).expect("an answer");
    if status != 200 {
        return Err(status);
    }
    assert!(header(&headers, "content-type").is_some_and(|t| t.starts_with("text/event-stream")), "{headers:?}");
    Ok(stream)
}

#[test]
fn a_session_holds_at_most_its_streams_and_a_closed_one_frees_its_place() {
    let server = Server::start("max_streams_per_session = 2");
    let mut busy = server.session();
    let id = busy.session.clone().expect("a session id");
    let first = open_event_stream(&server, &id).expect("the first stream");
    let _second = open_event_stream(&server, &id).expect("the second stream");

    // A third stream, or a call (whose answer is a stream too), is refused.
    assert_eq!(open_event_stream(&server, &id).err(), Some(429));
    let refused = busy.post(&call_request(7, "math.add", &json!({ "numbers": [1] })));
    assert_eq!(refused.status, 429, "{refused:?}");
    assert_eq!(refused.header("retry-after"), Some("1"));
    let (request_id, code, message) = json_rpc_error(&refused.body);
    assert_eq!((request_id, code), (json!(7), -32000), "{message}");
    assert!(message.contains("2 streams open"), "{message}");

    // Other sessions are not affected.
    let mut other = server.session();
    assert_eq!(add(&mut other, json!([5])), 5.0);

    // The client closes a stream: its place is free once the server sees the close.
    drop(first);
    let started = Instant::now();
    loop {
        let answer = busy.post(&call_request(8, "math.add", &json!({ "numbers": [6] })));
        if answer.status == 200 {
            let result = answer.messages().into_iter().find(|m| m["id"] == 8).expect("the call's answer");
            assert_eq!(result["result"]["structuredContent"]["value"], 6.0);
            break;
        }
        assert_eq!(answer.status, 429, "{answer:?}");
        assert!(started.elapsed() < Duration::from_secs(3), "the closed stream's place was not freed");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_session_unused_for_the_idle_time_is_closed_and_answers_404() {
    let server = Server::start("max_sessions = 2\nsession_idle_timeout = \"1s\"");
    // One session keeps an event stream open (it is in use), the other does nothing.
    let mut listening = server.session();
    let listening_id = listening.session.clone().unwrap();
    let stream = open_event_stream(&server, &listening_id).expect("an event stream");
    let idle = server.session();
    let idle_id = idle.session.clone().unwrap();
    assert_eq!(HttpSession::connect(&server.addr, "/mcp").post(&initialize_request()).status, 503, "no room");

    std::thread::sleep(Duration::from_millis(2000));
    let mut late = HttpSession::connect(&server.addr, "/mcp");
    late.session = Some(idle_id.clone());
    let answer = late.post(&call_request(3, "math.add", &json!({ "numbers": [1] })));
    assert_eq!(answer.status, 404, "the idle session was closed: {answer:?}");
    assert_eq!(open_event_stream(&server, &idle_id).err(), Some(404));
    assert_eq!(add(&mut listening, json!([2])), 2.0, "the session with an open stream stays");
    let mut newcomer = server.session();
    assert_eq!(add(&mut newcomer, json!([3])), 3.0, "the idle session's place is free");

    // Once its stream is closed, the listening session goes idle too.
    drop(stream);
    std::thread::sleep(Duration::from_millis(2000));
    let answer = listening.post(&call_request(4, "math.add", &json!({ "numbers": [1] })));
    assert_eq!(answer.status, 404, "{answer:?}");
}

/// Starts sending `text` a byte every 100 ms; returns how long it took the server to
/// close the connection, or `None` if the whole text went out first.
fn trickle(stream: &mut TcpStream, text: &str) -> Option<Duration> {
    stream.set_read_timeout(Some(Duration::from_millis(100))).unwrap();
    let started = Instant::now();
    let mut buffer = [0u8; 1024];
    for byte in text.bytes() {
        if stream.write_all(&[byte]).is_err() {
            return Some(started.elapsed());
        }
        if closed_on_read(stream, &mut buffer) {
            return Some(started.elapsed());
        }
    }
    None
}

#[test]
fn slow_clients_are_cut_off_without_holding_up_others() {
    let server = Server::start("header_timeout = \"2s\"\nbody_timeout = \"2s\"");

    // Two hundred slow clients at once: half send headers that never end, half a body
    // that never ends.
    let mut slow_headers: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut stream = server.connect(Duration::from_secs(5));
            stream.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
            stream
        })
        .collect();
    let mut slow_bodies: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut stream = server.connect(Duration::from_secs(5));
            let head = format!(
                "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
                 content-type: application/json\r\ncontent-length: 1000\r\n\r\n{{\"jsonrpc\"",
                server.addr
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream
        })
        .collect();
    // Meanwhile a new client opens a session and calls, long before they time out.
    let started = Instant::now();
    let mut session = server.session();
    assert_eq!(add(&mut session, json!([1, 1])), 2.0);
    let answered = started.elapsed();
    assert!(answered < Duration::from_millis(1500), "answered in {answered:?} among slow clients");

    // Every one of them is answered or closed once its time is up.
    for stream in &mut slow_headers {
        let closed = closed_within(stream, Duration::from_secs(4));
        assert!(closed.is_some(), "a connection still sending its headers was not closed");
    }
    for stream in &mut slow_bodies {
        let (status, headers) = read_head(stream).expect("an answer");
        assert_eq!(status, 408);
        assert_eq!(header(&headers, "connection"), Some("close"));
        assert!(closed_within(stream, Duration::from_secs(4)).is_some(), "and the connection closes");
    }

    // Headers sent a byte at a time: cut off at the header timeout, long before the
    // request is complete.
    let mut trickling = server.connect(Duration::from_secs(5));
    let request = format!("GET /health HTTP/1.1\r\nhost: {}\r\nuser-agent: {}\r\n\r\n", server.addr, "slow".repeat(20));
    let closed_after =
        trickle(&mut trickling, &request).unwrap_or_else(|| panic!("the server read {request:?} a byte at a time"));
    assert!(
        closed_after >= Duration::from_millis(1800) && closed_after < Duration::from_secs(4),
        "closed after {closed_after:?}"
    );
    assert_eq!(add(&mut server.rejoin(&session), json!([2, 2])), 4.0);
}

#[test]
fn connections_past_the_limit_wait_their_turn() {
    let server = Server::start("max_connections = 8\nheader_timeout = \"1s\"");
    // Eight connections that never send a request take every place.
    let _idle: Vec<TcpStream> = (0..8).map(|_| server.connect(Duration::from_secs(5))).collect();
    std::thread::sleep(Duration::from_millis(100));
    let started = Instant::now();
    let answer = HttpSession::connect(&server.addr, "/health").request("GET", None, &[]);
    let waited = started.elapsed();
    assert_eq!(answer.status, 200);
    assert!(
        waited >= Duration::from_millis(700) && waited < Duration::from_secs(5),
        "the ninth connection is served when the idle ones time out, not before: {waited:?}"
    );
    let mut session = server.session();
    assert_eq!(add(&mut session, json!([8])), 8.0);
}

#[test]
fn a_flood_of_a_thousand_connections_leaves_a_well_behaved_client_answered() {
    const FLOOD: usize = 1000;
    let open_files = toolhost::serve::raise_open_file_limit();
    assert!(
        open_files >= FLOOD as u64 + 500,
        "this test holds {FLOOD} connections and may open only {open_files} files: raise the hard limit (ulimit -Hn)"
    );
    let server = Server::start("header_timeout = \"3s\"\nbody_timeout = \"3s\"");
    let mut before = server.session();
    assert_eq!(add(&mut before, json!([1])), 1.0);

    // A third of the flood only connects, a third sends half a request line, a third
    // sends headers and half a body.
    let started = Instant::now();
    let mut flood: Vec<TcpStream> = Vec::with_capacity(FLOOD);
    for i in 0..FLOOD {
        let mut stream = server.connect(Duration::from_secs(5));
        match i % 3 {
            0 => {}
            1 => stream.write_all(b"POST /mcp HT").unwrap(),
            _ => {
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nhost: {}\r\naccept: application/json, text/event-stream\r\n\
                     content-type: application/json\r\ncontent-length: 500\r\n\r\n{{",
                    server.addr
                );
                stream.write_all(head.as_bytes()).unwrap();
            }
        }
        flood.push(stream);
    }
    eprintln!("{FLOOD} connections opened in {:?}", started.elapsed());

    // During the flood: a session opened before calls, and a new client connects,
    // opens a session and calls.
    let started = Instant::now();
    assert_eq!(add(&mut server.rejoin(&before), json!([2, 3])), 5.0);
    let mut during = server.session();
    assert_eq!(add(&mut during, json!([4, 5])), 9.0);
    let answered = started.elapsed();
    eprintln!("well-behaved calls answered in {answered:?} during the flood");
    assert!(answered < Duration::from_secs(3), "answered in {answered:?}");
    assert!(still_open(&flood[0]) && still_open(&flood[FLOOD - 1]), "the flood was still in place");

    // And the server hangs up on the whole flood once its time is up.
    std::thread::sleep(Duration::from_secs(3));
    let lingering = flood.iter_mut().position(|stream| {
        stream.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        closed_within(stream, Duration::from_secs(2)).is_none()
    });
    assert_eq!(lingering, None, "a connection of the flood is still open");
    assert_eq!(add(&mut server.rejoin(&during), json!([6])), 6.0);
}

#[cfg(unix)]
#[test]
fn shutdown_ends_sessions_and_is_not_held_up_by_a_stalled_client() {
    let mut server = Server::start("");
    let session = server.session();
    let mut stream = open_event_stream(&server, session.session.as_deref().unwrap()).expect("an event stream");
    let mut stalled = server.connect(Duration::from_secs(10));
    stalled.write_all(b"POST /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(100));

    let started = Instant::now();
    let signalled = Command::new("kill").args(["-TERM", &server.child.id().to_string()]).status().unwrap();
    assert!(signalled.success());
    assert!(closed_within(&mut stream, Duration::from_secs(2)).is_some(), "the session's event stream ends at once");
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(8), "the server did not stop");
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("stopped {:?} after SIGTERM", started.elapsed());
    assert!(status.success(), "{status}");
    assert!(closed_within(&mut stalled, Duration::from_secs(1)).is_some(), "the stalled client was cut off");
}
